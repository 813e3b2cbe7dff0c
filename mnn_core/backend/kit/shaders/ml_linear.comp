#version 450
#extension GL_GOOGLE_include_directive : require
// LinearClassifier (ai.onnx.ml), k >= 2 classes: per row, scores x . coefficients[c] + intercepts[c],
// the label of the first best score (int64), the scores after the post transform. One invocation
// per row; the table is kit.ml.linear_table's (coefficients [k, f], intercepts, labels).
#include "common.glsl"
#include "ml.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer T { uint table[]; };
layout(std430, binding = 2) writeonly buffer L { uint label[]; };
layout(std430, binding = 3) writeonly buffer Z { float z[]; };

layout(push_constant) uniform Params {
    uint n, f, k, how, icpt, labels;
} p;

void main() {
    uint r = flat_index();
    if (r >= p.n) return;
    uint best = 0u;
    for (uint c = 0u; c < p.k; ++c) {
        float s = 0.0;
        for (uint j = 0u; j < p.f; ++j) s += x[r * p.f + j] * uintBitsToFloat(table[c * p.f + j]);
        score[c] = s + uintBitsToFloat(table[p.icpt + c]);
        if (score[c] > score[best]) best = c;
    }
    label[2u * r] = table[p.labels + 2u * best];
    label[2u * r + 1u] = table[p.labels + 2u * best + 1u];
    ml_post_transform(p.k, p.how);
    for (uint c = 0u; c < p.k; ++c) z[r * p.k + c] = score[c];
}
