#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// float32 -> float16 (round to nearest even), element-wise: the way back of
// widen.comp, for the float outputs of an op with no float16 variant.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer S { float src[]; };
layout(std430, binding = 1) writeonly buffer D { float16_t dst[]; };

layout(push_constant) uniform Params {
    uint total;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    dst[i] = float16_t(src[i]);
}
