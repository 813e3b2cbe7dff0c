// 2-D ConvTranspose, NCHW input, (C, O/group, KH, KW) weight, any stride,
// padding, dilation, output padding and group, fused bias and activation. One
// invocation per output element gathers the input cells that scatter into it:
// oy = iy * SH - PT + ky * DH, so ky contributes where oy + PT - ky * DH is a
// multiple of SH inside the input (likewise for x).
// P: total, C, H, W, O, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW, group,
//    x_off, w_off, b_off (-1: none), y_off, act, alpha, beta
#include "act.glsl"

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int C = pi(1), H = pi(2), W = pi(3), O = pi(4), OH = pi(5), OW = pi(6);
    int KH = pi(7), KW = pi(8), SH = pi(9), SW = pi(10), PT = pi(11), PL = pi(12), DH = pi(13), DW = pi(14);
    int G = pi(15);
    int og = O / G, cg = C / G;
    int ox = i % OW, t = i / OW;
    int oy = t % OH;
    t /= OH;
    int o = t % O, n = t / O;
    int g = o / og, m = o % og;
    int xb = pi(16), wb = pi(17);
    float acc = pi(18) >= 0 ? A[pi(18) + o] : 0.0;
    for (int ky = 0; ky < KH; ++ky) {
        int ty = oy + PT - ky * DH;
        if (ty < 0 || ty % SH != 0 || ty / SH >= H) continue;
        int iy = ty / SH;
        for (int kx = 0; kx < KW; ++kx) {
            int tx = ox + PL - kx * DW;
            if (tx < 0 || tx % SW != 0 || tx / SW >= W) continue;
            int ix = tx / SW;
            for (int ci = 0; ci < cg; ++ci) {
                int c = g * cg + ci;
                acc += A[xb + ((n * C + c) * H + iy) * W + ix] * A[wb + ((c * og + m) * KH + ky) * KW + kx];
            }
        }
    }
    A[pi(19) + i] = apply_act(acc, pi(20), pf(21), pf(22));
}
