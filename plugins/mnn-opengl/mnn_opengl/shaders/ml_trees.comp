// TreeEnsembleClassifier (ai.onnx.ml), the algorithm of the backend kit's ml_trees.comp: each row
// walks every tree to a leaf and adds the leaf's class weights, tree by tree in float32 (ONNX
// Runtime's order). k >= 3: base values are added and vote; the label is the first best score among
// the classes voted for, and the scores (0 where none voted) are post-transformed. k = 2: ONNX
// Runtime's two-class rules (two_class()). One invocation per row; the table (kit.ml.trees_table)
// follows the parameters.
// P: n, f, k, how, trees, thr, w, has, roots, labels, base, n_base, steps, binary (kit.ml.TREE_PARAMS),
//    x_off, label_off, z_off, table...
#include "elements.glsl"
#include "ml.glsl"

uint T(int i) { return P[pbase + 17 + i]; }
float TF(int i) { return uintBitsToFloat(T(i)); }

bool voted[ML_MAX_CLASSES];

// the mode's comparison (kit.ml: LEQ, LT, GTE, GT, EQ, NEQ); NaN goes true where it tracks missing values
bool goes_true(uint bits, float t, uint mode) {
    if (bits_nan(bits)) return (mode >> 8u) != 0u || (mode & 255u) == 5u;  // NaN != t holds
    float v = uintBitsToFloat(bits);
    uint m = mode & 255u;
    if (m == 0u) return v <= t;
    if (m == 1u) return v < t;
    if (m == 2u) return v >= t;
    if (m == 3u) return v > t;
    if (m == 4u) return v == t;
    return v != t;
}

// two classes: the label index (or 0/1 itself, as 4/5) and the scores, from score/voted [0..1]
int two_class(uint how) {
    int base = pi(10), n_base = pi(11), binary = pi(13);
    float s0 = score[0], s1 = score[1];
    bool h0 = voted[0], h1 = voted[1], two = true;
    int extra = -1;
    if (n_base == 2) {
        float b1 = TF(base + 1);
        s1 = h1 ? b1 + score[0] : score[1] + b1;
        s0 = h1 ? -(b1 + score[0]) : score[0] + TF(base);
    } else if (n_base == 1) {
        s0 += TF(base);
        two = h1;
    } else {
        extra = 3;
        two = h1;
    }
    float pos = two && h1 ? s1 : (h0 ? s0 : 0.0);
    int best;
    if ((binary & 1) != 0) {
        bool positive = (binary & 2) != 0;
        bool win = pos > (positive ? 0.5 : 0.0);
        extra = (win ? 0 : 1) + (positive ? 0 : 2);
        best = win ? 1 : 0;
    } else {
        best = pos > 0.0 ? 5 : 4;  // the value 1 or 0 itself, not a label
    }
    float v0 = h0 ? s0 : 0.0, v1 = h1 ? s1 : 0.0;
    if (two) {
        score[0] = v0;
        score[1] = v1;
        ml_post_transform(2u, how);
    } else {
        ml_one_score(v0, how, extra);
    }
    return best;
}

void main() {
    int r = flat_index();
    if (r >= pi(0)) return;
    int f = pi(1), k = pi(2), thr = pi(5), w = pi(6), has = pi(7), roots = pi(8), labels = pi(9);
    uint how = pu(3);
    int x = pi(14) + r * f, lab = pi(15) + 2 * r;
    for (int c = 0; c < k; ++c) {
        score[c] = 0.0;
        voted[c] = false;
    }
    for (int t = 0; t < pi(4); ++t) {
        int node = int(T(roots + t));
        for (int s = 0; s < pi(12); ++s) {
            uint mode = T(4 * node + 1);
            if ((mode & 255u) == 6u) break;  // a leaf
            uint bits = A[x + int(T(4 * node))];
            bool go = goes_true(bits, TF(thr + node), mode);
            node = int(T(4 * node + (go ? 2 : 3)));
        }
        for (int c = 0; c < k; ++c) {
            score[c] += TF(w + node * k + c);
            voted[c] = voted[c] || T(has + node * k + c) != 0u;
        }
    }
    if (k == 2) {
        int pick = two_class(how);
        A[lab] = pick >= 4 ? uint(pick - 4) : T(labels + 2 * pick);
        A[lab + 1] = pick >= 4 ? 0u : T(labels + 2 * pick + 1);
        A[pi(16) + 2 * r] = floatBitsToUint(score[0]);
        A[pi(16) + 2 * r + 1] = floatBitsToUint(score[1]);
        return;
    }
    for (int c = 0; c < pi(11); ++c) {
        score[c] += TF(pi(10) + c);
        voted[c] = true;
    }
    int best = 0;
    bool any = false;
    for (int c = 0; c < k; ++c) {
        if (voted[c] && (!any || score[c] > score[best])) best = c;
        any = any || voted[c];
        if (!voted[c]) score[c] = 0.0;
    }
    A[lab] = T(labels + 2 * best);
    A[lab + 1] = T(labels + 2 * best + 1);
    ml_post_transform(uint(k), how);
    for (int c = 0; c < k; ++c) A[pi(16) + r * k + c] = floatBitsToUint(score[c]);
}
