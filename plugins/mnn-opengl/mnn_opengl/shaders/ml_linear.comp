// LinearClassifier (ai.onnx.ml): per row, scores x . coefficients[c] + intercepts[c], the label of
// the first best score (int64), the scores after the post transform; with one score (k = 1) its sign
// picks one of two labels and it becomes two scores (ml_one_score). One invocation per row; the table
// (kit.ml.linear_table: coefficients [k, f], intercepts, labels) follows the parameters.
// P: n, f, k, how, icpt, labels, x_off, label_off, z_off, table...
#include "ml.glsl"

uint T(int i) { return P[pbase + 9 + i]; }

void main() {
    int r = flat_index();
    if (r >= pi(0)) return;
    int f = pi(1), k = pi(2), icpt = pi(4), labels = pi(5), x = pi(6) + r * f;
    uint how = pu(3);
    int best = 0;
    for (int c = 0; c < k; ++c) {
        float s = 0.0;
        for (int j = 0; j < f; ++j) s += uintBitsToFloat(A[x + j]) * uintBitsToFloat(T(c * f + j));
        score[c] = s + uintBitsToFloat(T(icpt + c));
        if (score[c] > score[best]) best = c;
    }
    if (k == 1) best = score[0] > 0.0 ? 1 : 0;
    A[pi(7) + 2 * r] = T(labels + 2 * best);
    A[pi(7) + 2 * r + 1] = T(labels + 2 * best + 1);
    if (k == 1) {
        ml_one_score(score[0], how, 0);
    } else {
        ml_post_transform(uint(k), how);
    }
    int cols = max(k, 2);
    for (int c = 0; c < cols; ++c) A[pi(8) + r * cols + c] = floatBitsToUint(score[c]);
}
