#version 450
#extension GL_GOOGLE_include_directive : require
// TreeEnsembleClassifier (ai.onnx.ml): each row walks every tree to a leaf and adds the leaf's class
// weights, tree by tree in float32 (ONNX Runtime's order). k >= 3: base values are added and vote;
// the label is the first best score among the classes voted for, and the scores (0 where none voted)
// are post-transformed. k = 2: ONNX Runtime's two-class rules (two_class(), as mnn_core.ops.ml_trees.
// _binary_scores). One invocation per row; the table is kit.ml.trees_table's.
#include "common.glsl"
#include "elements.glsl"
#include "ml.glsl"

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer T { uint table[]; };
layout(std430, binding = 2) writeonly buffer L { uint label[]; };
layout(std430, binding = 3) writeonly buffer Z { float z[]; };

layout(push_constant) uniform Params {
    uint n, f, k, how, trees, thr, w, has, roots, labels, base, n_base, steps;
    uint binary;  // k = 2: 1 when every vote is for one class id, | 2 when all its weights are >= 0
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

// two classes: the label index (or 0/1 itself, bit 2) and the scores, from score/voted [0..1]
uint two_class() {
    float s0 = score[0], s1 = score[1];
    bool h0 = voted[0], h1 = voted[1], two = true;
    int extra = -1;
    if (p.n_base == 2u) {
        float b1 = uintBitsToFloat(table[p.base + 1u]);
        s1 = h1 ? b1 + score[0] : score[1] + b1;
        s0 = h1 ? -(b1 + score[0]) : score[0] + uintBitsToFloat(table[p.base]);
    } else if (p.n_base == 1u) {
        s0 += uintBitsToFloat(table[p.base]);
        two = h1;
    } else {
        extra = 3;
        two = h1;
    }
    float pos = two && h1 ? s1 : (h0 ? s0 : 0.0);
    uint best;
    if ((p.binary & 1u) != 0u) {
        bool positive = (p.binary & 2u) != 0u;
        bool win = pos > (positive ? 0.5 : 0.0);
        extra = (win ? 0 : 1) + (positive ? 0 : 2);
        best = win ? 1u : 0u;
    } else {
        best = pos > 0.0 ? 5u : 4u;  // the value 1 or 0 itself, not a label
    }
    float v0 = h0 ? s0 : 0.0, v1 = h1 ? s1 : 0.0;
    if (two) {
        score[0] = v0;
        score[1] = v1;
        ml_post_transform(2u, p.how);
    } else {
        ml_one_score(v0, p.how, extra);
    }
    return best;
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
    if (p.k == 2u) {
        uint pick = two_class();
        label[2u * r] = pick >= 4u ? pick - 4u : table[p.labels + 2u * pick];
        label[2u * r + 1u] = pick >= 4u ? 0u : table[p.labels + 2u * pick + 1u];
        z[2u * r] = score[0];
        z[2u * r + 1u] = score[1];
        return;
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
