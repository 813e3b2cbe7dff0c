// Gather along an axis of raw 32-bit words: the data is (outer, dim, inner),
// the n indices (int32, or int64 read by their low word) pick rows, negative
// ones counting from the end: y[o][j][i] = data[o][idx[j]][i]. Out-of-range
// indices are clamped (a recorded dispatch cannot raise).
// P: total, inner, dim, n, idx64, data_off, idx_off, y_off
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int inner = pi(1), dim = pi(2), n = pi(3);
    int in_i = i % inner, t = i / inner;
    int j = t % n, o = t / n;
    int k = int(A[pi(6) + (pi(4) != 0 ? 2 * j : j)]);
    if (k < 0) k += dim;
    k = clamp(k, 0, dim - 1);
    A[pi(7) + i] = A[pi(5) + (o * dim + k) * inner + in_i];
}
