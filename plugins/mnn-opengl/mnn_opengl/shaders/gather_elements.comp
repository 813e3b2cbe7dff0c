// GatherElements of raw 32-bit words: y has the indices' shape and
// y[i0..] = data[i0.., idx[i0..] along axis, ..]; indices int32 or int64 (low
// word), negative ones counting from the end, out-of-range ones clamped; data
// elements are `words` words each.
// P: total, ndim, axis, words, dim, idx64, data_off, idx_off, y_off, shape[6], dstride[6]
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int dim = pi(4), words = pi(3);
    int k = int(A[pi(7) + (pi(5) != 0 ? 2 * i : i)]);
    if (k < 0) k += dim;
    k = clamp(k, 0, dim - 1);
    int src = 0, rem = i;
    for (int d = pi(1) - 1; d >= 0; --d) {
        int n = pi(9 + d);
        int c = rem % n;
        rem /= n;
        src += (d == pi(2) ? k : c) * pi(15 + d);
    }
    for (int w = 0; w < words; ++w) A[pi(8) + i * words + w] = A[pi(6) + src * words + w];
}
