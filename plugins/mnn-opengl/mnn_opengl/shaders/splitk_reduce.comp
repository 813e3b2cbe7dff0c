// The second pass of a split-K convolution (conv2d_tiled.comp with SPLIT_K): each output is
// the sum of its ksplit partial sums in the scratch words, plus the bias, through the activation.
// P: total (N*O*OH*OW), ksplit, OH*OW, O, b_off (-1: none), y_off, act, alpha, beta,
//    scratch (from the buffer's end)
#include "act.glsl"

void main() {
    int i = flat_index();
    int total = pi(0);
    if (i >= total) return;
    int base = int(P.length()) + pi(9) + i;
    float s = 0.0;
    for (int k = 0; k < pi(1); ++k) s += uintBitsToFloat(P[base + k * total]);
    int b_off = pi(4);
    float b = b_off >= 0 ? A[b_off + (i / pi(2)) % pi(3)] : 0.0;
    A[pi(5) + i] = apply_act(s + b, pi(6), pf(7), pf(8));
}
