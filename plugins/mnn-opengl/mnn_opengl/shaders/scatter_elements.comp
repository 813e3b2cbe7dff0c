// ScatterElements of raw 32-bit words, after y holds a copy of the data: each
// invocation walks one line of indices along the axis in order and writes (or
// reduces) updates[.., j, ..] into y[.., idx[.., j, ..], ..]. Only one line's
// indices can name the same element, so duplicates apply in index order: add /
// mul / max / min (reduction 1..4) accumulate them on float or, with int_data,
// int32 values; a plain write (0) keeps the last and moves `words` words a value.
// Indices int32 or int64 (low word), negative ones counting from the end,
// out-of-range ones clamped.
// P: lines, ndim, axis, words, dim, count, idx64, reduction, int_data, idx_off, upd_off, y_off,
//    shape[6] (the index shape, the axis as 1), dstride[6], istride[6]
void main() {
    int line = flat_index();
    if (line >= pi(0)) return;
    int dst = 0, src = 0, rem = line;
    for (int d = pi(1) - 1; d >= 0; --d) {
        int n = pi(12 + d);
        int c = rem % n;
        rem /= n;
        dst += c * pi(18 + d);
        src += c * pi(24 + d);
    }
    int axis = pi(2), words = pi(3), dim = pi(4), red = pi(7);
    int step = pi(24 + axis), dstep = pi(18 + axis);
    for (int j = 0; j < pi(5); ++j, src += step) {
        int k = int(A[pi(9) + (pi(6) != 0 ? 2 * src : src)]);
        if (k < 0) k += dim;
        int at = pi(11) + (dst + clamp(k, 0, dim - 1) * dstep) * words;
        uint u = A[pi(10) + src * words];
        if (red == 0) {
            for (int w = 0; w < words; ++w) A[at + w] = A[pi(10) + src * words + w];
        } else if (pi(8) != 0) {
            int a = int(A[at]), b = int(u);
            A[at] = uint(red == 1 ? a + b : red == 2 ? a * b : red == 3 ? max(a, b) : min(a, b));
        } else {
            float a = uintBitsToFloat(A[at]), b = uintBitsToFloat(u);
            A[at] = floatBitsToUint(red == 1 ? a + b : red == 2 ? a * b : red == 3 ? max(a, b) : min(a, b));
        }
    }
}
