// Ops with a bool result, with numpy broadcasting (strides as in binary.comp):
// comparisons of float32, int32, int64 or bool tensors; And, Or, Xor, Not of
// bools; IsNaN and IsInf of floats. Each invocation writes one word: four bool
// bytes (every tensor starts on a word and is planned in whole words).
// P: total, ndim, op, kind, a_off, b_off, y_off, shape[6], sa[6], sb[6]
// op: 0 ==, 1 <, 2 >, 3 <=, 4 >=, 5 and, 6 or, 7 xor, 8 not, 9 isnan, 10 isinf(+), 11 isinf(-),
//     12 isinf(either), 13 false
#include "elements.glsl"

bool bool_at(int base, int i) { return byte_at(A[base + (i >> 2)], uint(i)) != 0u; }

// -1, 0, 1 as x <, ==, > y; 2 when unordered (a NaN)
int order(int kind, int ia, int ib) {
    int a = pi(4), b = pi(5);
    if (kind == KIND_F32) {
        uint u = A[a + ia], v = A[b + ib];
        if (bits_nan(u) || bits_nan(v)) return 2;
        float x = uintBitsToFloat(u), y = uintBitsToFloat(v);
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (kind == KIND_I32) {
        int x = int(A[a + ia]), y = int(A[b + ib]);
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (kind == KIND_I64) {
        int xh = int(A[a + 2 * ia + 1]), yh = int(A[b + 2 * ib + 1]);
        uint xl = A[a + 2 * ia], yl = A[b + 2 * ib];
        if (xh != yh) return xh < yh ? -1 : 1;
        return xl < yl ? -1 : (xl > yl ? 1 : 0);
    }
    int x = bool_at(a, ia) ? 1 : 0, y = bool_at(b, ib) ? 1 : 0;
    return x < y ? -1 : (x > y ? 1 : 0);
}

bool result(int op, int ia, int ib) {
    if (op == 13) return false;
    if (op >= 9) {
        uint u = A[pi(4) + ia];
        bool neg = (u & 0x80000000u) != 0u;
        return op == 9 ? bits_nan(u) : bits_inf(u) && (op == 12 || (op == 11) == neg);
    }
    if (op >= 5) {
        bool x = bool_at(pi(4), ia), y = bool_at(pi(5), ib);
        return op == 5 ? x && y : (op == 6 ? x || y : (op == 7 ? x != y : !x));
    }
    int o = order(pi(3), ia, ib);
    if (o == 2) return false;  // every comparison with NaN is false
    if (op == 0) return o == 0;
    if (op == 1) return o < 0;
    if (op == 2) return o > 0;
    if (op == 3) return o <= 0;
    return o >= 0;
}

void main() {
    int w = flat_index(), first = w * 4, total = pi(0);
    if (first >= total) return;
    uint four = 0u;
    for (int k = 0; k < 4 && first + k < total; ++k) {
        int ia = 0, ib = 0, rem = first + k;
        for (int d = pi(1) - 1; d >= 0; --d) {
            int n = pi(7 + d);
            int i = rem % n;
            rem /= n;
            ia += i * pi(13 + d);
            ib += i * pi(19 + d);
        }
        if (result(pi(2), ia, ib)) four |= 1u << uint(k * 8);
    }
    A[pi(6) + w] = four;
}
