#version 450
#extension GL_GOOGLE_include_directive : require
// LinearClassifier (ai.onnx.ml): per row, scores x . coefficients[c] + intercepts[c], the label of
// the first best score (int64), the scores after the post transform; with one score (k = 1) its sign
// picks one of two labels and it becomes two scores (ml_one_score). One invocation per row; the table
// is kit.ml.linear_table's (coefficients [k, f], intercepts, labels).
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
    if (p.k == 1u) best = score[0] > 0.0 ? 1u : 0u;
    label[2u * r] = table[p.labels + 2u * best];
    label[2u * r + 1u] = table[p.labels + 2u * best + 1u];
    if (p.k == 1u) {
        ml_one_score(score[0], p.how, 0);
    } else {
        ml_post_transform(p.k, p.how);
    }
    uint cols = max(p.k, 2u);
    for (uint c = 0u; c < cols; ++c) z[r * cols + c] = score[c];
}
