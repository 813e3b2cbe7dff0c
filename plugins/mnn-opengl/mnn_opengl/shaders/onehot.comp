// OneHot of raw 32-bit words: y[o][k][i] = values[1] where indices[o][i]
// (negative ones counting from the end) equals k, else values[0]; k runs along
// the inserted axis (depth cells). Elements of `words` words (float32/int32: 1,
// int64: 2); indices int32, int64 (low word) or float32.
// P: total, inner, depth, words, idx_kind (0 int32, 1 int64, 2 float32), idx_off, values_off, y_off
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int inner = pi(1), depth = pi(2), words = pi(3), kind = pi(4);
    int e = i / words, w = i % words;
    int in_i = e % inner, t = e / inner;
    int k = t % depth, o = t / depth;
    int at = o * inner + in_i;
    uint raw = A[pi(5) + (kind == 1 ? 2 * at : at)];
    int v = kind == 2 ? int(uintBitsToFloat(raw)) : int(raw);
    if (v < 0) v += depth;
    A[pi(7) + i] = A[pi(6) + (v == k ? words : 0) + w];
}
