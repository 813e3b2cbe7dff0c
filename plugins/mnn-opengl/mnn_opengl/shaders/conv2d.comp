// Direct 2-D convolution, NCHW input, OIHW weight, any stride, padding,
// dilation and group, fused bias and activation. Each invocation computes
// OUT_C consecutive output channels of one output pixel (OUT_C is a define),
// so every input value loaded is used OUT_C times.
// P: N, C, H, W, O, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW, group,
//    x_off, w_off, b_off (-1: none), y_off, act, alpha, beta
#include "act.glsl"

void main() {
    int C = pi(1), H = pi(2), W = pi(3), O = pi(4), OH = pi(5), OW = pi(6);
    int KH = pi(7), KW = pi(8), SH = pi(9), SW = pi(10), PT = pi(11), PL = pi(12), DH = pi(13), DW = pi(14);
    int G = pi(15);
    int og = O / G, cg = C / G;
    int blocks = (og + OUT_C - 1) / OUT_C;  // channel blocks per group
    int i = flat_index();
    int pixels = OH * OW;
    int total = pi(0) * G * blocks * pixels;
    if (i >= total) return;
    int p = i % pixels;
    int t = i / pixels;
    int blk = t % blocks;
    t /= blocks;
    int g = t % G;
    int n = t / G;
    int oy = p / OW, ox = p % OW;
    int o0 = g * og + blk * OUT_C;
    int nout = min(OUT_C, g * og + og - o0);
    float acc[OUT_C];
    for (int j = 0; j < OUT_C; ++j) acc[j] = 0.0;
    int xbase = pi(16) + (n * C + g * cg) * H * W;
    int wstride = cg * KH * KW;  // one output channel's weights
    int wbase = pi(17) + o0 * wstride;
    int iy0 = oy * SH - PT, ix0 = ox * SW - PL;
    for (int c = 0; c < cg; ++c) {
        int xc = xbase + c * H * W;
        int wc = wbase + c * KH * KW;
        for (int ky = 0; ky < KH; ++ky) {
            int iy = iy0 + ky * DH;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < KW; ++kx) {
                int ix = ix0 + kx * DW;
                if (ix < 0 || ix >= W) continue;
                float v = A[xc + iy * W + ix];
                int wk = wc + ky * KW + kx;
                for (int j = 0; j < OUT_C; ++j)
                    if (j < nout) acc[j] += v * A[wk + j * wstride];
            }
        }
    }
    int b_off = pi(18), y_off = pi(19), act = pi(20);
    float alpha = pf(21), beta = pf(22);
    for (int j = 0; j < OUT_C; ++j) {
        if (j >= nout) break;
        int o = o0 + j;
        float v = acc[j] + (b_off >= 0 ? A[b_off + o] : 0.0);
        A[y_off + ((n * O + o) * OH + oy) * OW + ox] = activate(v, act, alpha, beta);
    }
}
