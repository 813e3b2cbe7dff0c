#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// float16 -> float32, element-wise: under float16 storage, an op with no float16
// variant reads float32 copies of its float inputs (and narrow.comp stores back).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer S { float16_t src[]; };
layout(std430, binding = 1) writeonly buffer D { float dst[]; };

layout(push_constant) uniform Params {
    uint total;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    dst[i] = float(src[i]);
}
