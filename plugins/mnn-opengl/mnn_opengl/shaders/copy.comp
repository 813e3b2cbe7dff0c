// Strided N-d copy of 32-bit elements, up to 6 collapsed dims: for every
// index of `shape`, dst[dst_off + idx . ds] = src[src_off + idx . ss].
// Transpose, Slice, Concat and Split pieces, non-aliased reshapes.
// P: total, ndim, src_off, dst_off, shape[6], ss[6], ds[6]
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int si = pi(2), di = pi(3), rem = i;
    for (int d = pi(1) - 1; d >= 0; --d) {
        int n = pi(4 + d);
        int k = rem % n;
        rem /= n;
        si += k * pi(10 + d);
        di += k * pi(16 + d);
    }
    A[di] = A[si];
}
