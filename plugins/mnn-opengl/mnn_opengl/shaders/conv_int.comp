// ConvInteger (2-D): int32 sums of (x - x_zero_point) * (w - w_zero_point) over each window, x and w
// int8 or uint8, the weight's zero point per tensor or per output channel; padding contributes 0
// (it holds the zero point). One invocation per output element.
// P: total, flags (1: x signed, 2: w signed, 4: has x zp, 8: has w zp, 16: w's per channel),
//    C, H, W, M, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G (kit.quant.conv_int_params),
//    x_off, w_off, xzp_off, wzp_off, y_off
#include "bytes.glsl"

int byte_of(int base, int i, bool s) { return byte_value(A[base + (i >> 2)], uint(i), s); }

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int flags = pi(1), C = pi(2), H = pi(3), W = pi(4), M = pi(5), OH = pi(6), OW = pi(7);
    int KH = pi(8), KW = pi(9), SH = pi(10), SW = pi(11), PH = pi(12), PW = pi(13), DH = pi(14), DW = pi(15);
    int G = pi(16), x = pi(17), w = pi(18);
    int ox = i % OW, t = i / OW;
    int oy = t % OH;
    t /= OH;
    int m = t % M, n = t / M;
    bool xs = (flags & 1) != 0, ws = (flags & 2) != 0;
    int xz = (flags & 4) != 0 ? byte_of(pi(19), 0, xs) : 0;
    int wz = (flags & 8) != 0 ? byte_of(pi(20), (flags & 16) != 0 ? m : 0, ws) : 0;
    int cg = C / G, g = m / (M / G);
    int acc = 0;
    for (int c = 0; c < cg; ++c) {
        int xc = (n * C + g * cg + c) * H;
        int wc = (m * cg + c) * KH;
        for (int ky = 0; ky < KH; ++ky) {
            int iy = oy * SH + ky * DH - PH;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < KW; ++kx) {
                int ix = ox * SW + kx * DW - PW;
                if (ix < 0 || ix >= W) continue;
                acc += (byte_of(x, (xc + iy) * W + ix, xs) - xz) * (byte_of(w, (wc + ky) * KW + kx, ws) - wz);
            }
        }
    }
    A[pi(21) + i] = uint(acc);
}
