#version 450
#extension GL_GOOGLE_include_directive : require
// Normalizer (ai.onnx.ml): each row of `cols` divided by its max (norm 0), L1 norm (1) or, for
// L2 (2), sign(x) * sqrt(x^2 / sum x^2); a zero norm leaves the row. One invocation per row.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint rows, cols, norm;
} p;

void main() {
    uint r = flat_index();
    if (r >= p.rows) return;
    uint base = r * p.cols;
    float d = p.norm == 0u ? x[base] : 0.0;
    for (uint c = 0u; c < p.cols; ++c) {
        float v = x[base + c];
        d = p.norm == 0u ? max(d, v) : d + (p.norm == 1u ? abs(v) : v * v);
    }
    for (uint c = 0u; c < p.cols; ++c) {
        float v = x[base + c];
        if (p.norm == 2u) {
            y[base + c] = d == 0.0 ? v : sqrt(v * v / d) * (v < 0.0 ? -1.0 : 1.0);
        } else {
            y[base + c] = v / (d == 0.0 ? 1.0 : d);
        }
    }
}
