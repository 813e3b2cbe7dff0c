#version 450
#extension GL_GOOGLE_include_directive : require
// Scaler (ai.onnx.ml): y[i] = (x[i] - offset[j]) * scale[j], j = (i % width) % count, where the
// table holds `count` offsets then `count` scales (count 1: one for every feature).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer T { float table[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint total, width, count;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint j = p.count == 1u ? 0u : i % p.width;
    y[i] = (x[i] - table[j]) * table[p.count + j];
}
