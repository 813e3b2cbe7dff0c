// Broadcasting binary arithmetic with an optional fused activation, up to 6
// collapsed dims: y[i] = act(a[idx . sa] (op) b[idx . sb]).
// P: total, ndim, op, act, alpha, beta, a_off, b_off, y_off, shape[6], sa[6], sb[6]
#include "act.glsl"
#include "pow.glsl"

float apply_op(int op, float a, float b) {
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return mnn_pow(a, b);
    case 5: return max(a, b);
    case 6: return min(a, b);
    case 7: return a >= 0.0 ? a : a * b;  // PRelu
    }
    return a;
}

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int ai = pi(6), bi = pi(7), rem = i;
    for (int d = pi(1) - 1; d >= 0; --d) {
        int n = pi(9 + d);
        int k = rem % n;
        rem /= n;
        ai += k * pi(15 + d);
        bi += k * pi(21 + d);
    }
    A[pi(8) + i] = apply_act(apply_op(pi(2), A[ai], A[bi]), pi(3), pf(4), pf(5));
}
