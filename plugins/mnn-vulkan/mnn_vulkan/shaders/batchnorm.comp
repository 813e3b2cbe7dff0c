#version 450
#extension GL_GOOGLE_include_directive : require
// BatchNormalization with running statistics (inference), element-wise:
// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Scale { float scale[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer Mean { float mean[]; };
layout(std430, binding = 4) readonly buffer Var { float var[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint total, inner, C;
    float eps;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint c = (i / p.inner) % p.C;
    y[i] = (x[i] - mean[c]) / sqrt(var[c] + p.eps) * scale[c] + bias[c];
}
