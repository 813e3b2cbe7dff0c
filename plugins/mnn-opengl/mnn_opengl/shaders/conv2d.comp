// Direct 2-D convolution, NCHW input, OIHW weight, any stride, padding,
// dilation and group, fused bias and activation. Each invocation computes a
// register tile of OUT_C consecutive output channels by OUT_X consecutive
// output columns (both compile-time defines), so each input value loaded is
// used OUT_C times and each weight OUT_X times.
// P: N, C, H, W, O, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW, group,
//    x_off, w_off, b_off (-1: none), y_off, act, alpha, beta
#include "act.glsl"

void main() {
    int C = pi(1), H = pi(2), W = pi(3), O = pi(4), OH = pi(5), OW = pi(6);
    int KH = pi(7), KW = pi(8), SH = pi(9), SW = pi(10), PT = pi(11), PL = pi(12), DH = pi(13), DW = pi(14);
    int G = pi(15);
    int og = O / G, cg = C / G;
    int blocks = (og + OUT_C - 1) / OUT_C;  // channel blocks per group
    int xtiles = (OW + OUT_X - 1) / OUT_X;
    int tiles = OH * xtiles;
    int i = flat_index();
    if (i >= pi(0) * G * blocks * tiles) return;
    int p = i % tiles;  // neighbouring invocations take neighbouring columns: coalesced on a GPU
    int t = i / tiles;
    int blk = t % blocks;
    t /= blocks;
    int g = t % G;
    int n = t / G;
    int oy = p / xtiles, ox0 = (p % xtiles) * OUT_X;
    int o0 = g * og + blk * OUT_C;
    int nout = min(OUT_C, g * og + og - o0);
    float acc[OUT_C * OUT_X];
    for (int j = 0; j < OUT_C * OUT_X; ++j) acc[j] = 0.0;
    int xbase = pi(16) + (n * C + g * cg) * H * W;
    int wstride = cg * KH * KW;  // one output channel's weights
    int wbase = pi(17) + o0 * wstride;
    int iy0 = oy * SH - PT, ix0 = ox0 * SW - PL;
    float w[OUT_C];
    for (int c = 0; c < cg; ++c) {
        int xc = xbase + c * H * W;
        int wc = wbase + c * KH * KW;
        for (int ky = 0; ky < KH; ++ky) {
            int iy = iy0 + ky * DH;
            if (iy < 0 || iy >= H) continue;
            int xrow = xc + iy * W;
            for (int kx = 0; kx < KW; ++kx) {
                int wk = wc + ky * KW + kx;
                for (int j = 0; j < OUT_C; ++j) w[j] = j < nout ? A[wk + j * wstride] : 0.0;
                for (int q = 0; q < OUT_X; ++q) {
                    int ix = ix0 + q * SW + kx * DW;
                    float v = (ix >= 0 && ix < W) ? A[xrow + ix] : 0.0;
                    for (int j = 0; j < OUT_C; ++j) acc[j * OUT_X + q] += v * w[j];
                }
            }
        }
    }
    int b_off = pi(18), y_off = pi(19), act = pi(20);
    float alpha = pf(21), beta = pf(22);
    for (int j = 0; j < OUT_C; ++j) {
        if (j >= nout) break;
        int o = o0 + j;
        float b = b_off >= 0 ? A[b_off + o] : 0.0;
        int yrow = y_off + ((n * O + o) * OH + oy) * OW;
        for (int q = 0; q < OUT_X; ++q)
            if (ox0 + q < OW) A[yrow + ox0 + q] = apply_act(acc[j * OUT_X + q] + b, act, alpha, beta);
    }
}
