// y = cond ? a : b with three-way numpy broadcasting; cond is bool bytes, a and
// b elements of `words` 32-bit words (1: float32/int32, 2: int64).
// P: total, ndim, words, c_off, a_off, b_off, y_off, shape[6], sc[6], sa[6], sb[6]
#include "elements.glsl"

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int ic = 0, ia = 0, ib = 0, rem = i;
    for (int d = pi(1) - 1; d >= 0; --d) {
        int n = pi(7 + d);
        int k = rem % n;
        rem /= n;
        ic += k * pi(13 + d);
        ia += k * pi(19 + d);
        ib += k * pi(25 + d);
    }
    bool pick = byte_at(A[pi(3) + (ic >> 2)], uint(ic)) != 0u;
    int words = pi(2);
    int src = pick ? pi(4) + ia * words : pi(5) + ib * words;
    for (int w = 0; w < words; ++w) A[pi(6) + i * words + w] = A[src + w];
}
