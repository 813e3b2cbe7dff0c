#version 450
#extension GL_GOOGLE_include_directive : require
// TreeEnsembleClassifier (ai.onnx.ml), k >= 3 classes: each row walks every tree to a leaf and adds
// the leaf's class weights, tree by tree in float32 (ONNX Runtime's order); base values are added
// and vote; the label is the first best score among the classes voted for, and the scores (0 where
// none voted) are post-transformed. One invocation per row; the table is kit.ml.trees_table's.
#include "common.glsl"
#include "elements.glsl"
#include "ml.glsl"

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer T { uint table[]; };
layout(std430, binding = 2) writeonly buffer L { uint label[]; };
layout(std430, binding = 3) writeonly buffer Z { float z[]; };

layout(push_constant) uniform Params {
    uint n, f, k, how, trees, thr, w, has, roots, labels, base, n_base, steps;
} p;

bool voted[ML_MAX_CLASSES];

// the mode's comparison (kit.ml: LEQ, LT, GTE, GT, EQ, NEQ); NaN goes true where it tracks missing values
bool goes_true(uint bits, float t, uint mode) {
    if (bits_nan(bits)) return (mode >> 8u) != 0u || (mode & 255u) == 5u;  // NaN != t holds
    float v = uintBitsToFloat(bits);
    switch (mode & 255u) {
    case 0u: return v <= t;
    case 1u: return v < t;
    case 2u: return v >= t;
    case 3u: return v > t;
    case 4u: return v == t;
    default: return v != t;
    }
}

void main() {
    uint r = flat_index();
    if (r >= p.n) return;
    for (uint c = 0u; c < p.k; ++c) {
        score[c] = 0.0;
        voted[c] = false;
    }
    for (uint t = 0u; t < p.trees; ++t) {
        uint node = table[p.roots + t];
        for (uint s = 0u; s < p.steps; ++s) {
            uint mode = table[4u * node + 1u];
            if ((mode & 255u) == 6u) break;  // a leaf
            uint bits = x[r * p.f + table[4u * node]];
            bool go = goes_true(bits, uintBitsToFloat(table[p.thr + node]), mode);
            node = table[4u * node + (go ? 2u : 3u)];
        }
        for (uint c = 0u; c < p.k; ++c) {
            score[c] += uintBitsToFloat(table[p.w + node * p.k + c]);
            voted[c] = voted[c] || table[p.has + node * p.k + c] != 0u;
        }
    }
    for (uint c = 0u; c < p.n_base; ++c) {
        score[c] += uintBitsToFloat(table[p.base + c]);
        voted[c] = true;
    }
    uint best = 0u;
    bool any = false;
    for (uint c = 0u; c < p.k; ++c) {
        if (voted[c] && (!any || score[c] > score[best])) best = c;
        any = any || voted[c];
        if (!voted[c]) score[c] = 0.0;
    }
    label[2u * r] = table[p.labels + 2u * best];
    label[2u * r + 1u] = table[p.labels + 2u * best + 1u];
    ml_post_transform(p.k, p.how);
    for (uint c = 0u; c < p.k; ++c) z[r * p.k + c] = score[c];
}
