// 2-D convolution as an implicit GEMM, register-blocked: conv2d_tiled.comp's product (same
// parameters, same split-K) with its one tiling, 16x16 invocations of 4x4 outputs (64x64
// blocks, BK 16), written so that no compiler has to unroll anything to keep the tile in
// registers: the 4x4 accumulators are four vec4s, and the staged tiles hold vec4s (rows
// ty, ty+16, ty+32, ty+48 of W; columns tx, tx+16, tx+32, tx+48 of X~), one 16-byte shared
// load each per k. Every invocation stages one vec4 of each tile per slice, fetched from
// global memory while the previous slice is multiplied, into the other of two buffers:
// one barrier per slice.
// P: as conv2d_tiled.comp: N, C, H, W, O, OH, OW, SH, SW, PT, PL, group, K (per group),
//    x_off, w_off, b_off (-1: none), y_off, act, alpha, beta, ksplit, kchunk, scratch,
//    then ktab[3 * K]
#include "act.glsl"

#define BK 16
#define KTAB 23

shared vec4 As[2 * BK * 16];  // As[buf][k][ty]: W rows ty + 16 * i
shared vec4 Bs[2 * BK * 16];  // Bs[buf][k][tx]: X~ columns tx + 16 * j

// This invocation's vec4 of each tile for the slice at k0 (zeros past k_end, the block or the image).
void fetch(int k0, int k_end, int K, int H, int W, int wrow, bvec4 row_ok, int sl, int sk, bvec4 col_ok,
           ivec4 iy0, ivec4 ix0, ivec4 xbase, out vec4 wv, out vec4 xv) {
    int wk = k0 + sl;
    bool wk_ok = wk < k_end;
    wv = vec4(wk_ok && row_ok.x ? A[wrow + wk] : 0.0, wk_ok && row_ok.y ? A[wrow + 16 * K + wk] : 0.0,
              wk_ok && row_ok.z ? A[wrow + 32 * K + wk] : 0.0, wk_ok && row_ok.w ? A[wrow + 48 * K + wk] : 0.0);
    xv = vec4(0.0);
    int xk = k0 + sk;
    if (xk >= k_end) return;
    int t = pbase + KTAB + 3 * xk;
    int off = int(P[t]);
    ivec4 iy = iy0 + int(P[t + 1]), ix = ix0 + int(P[t + 2]);
    bvec4 inside = bvec4(uvec4(col_ok) & uvec4(greaterThanEqual(iy, ivec4(0))) & uvec4(lessThan(iy, ivec4(H))) &
                         uvec4(greaterThanEqual(ix, ivec4(0))) & uvec4(lessThan(ix, ivec4(W))));
    xv = vec4(inside.x ? A[xbase.x + off] : 0.0, inside.y ? A[xbase.y + off] : 0.0,
              inside.z ? A[xbase.z + off] : 0.0, inside.w ? A[xbase.w + off] : 0.0);
}

void main() {
    int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
    int tid = ty * 16 + tx;
    int C = pi(1), H = pi(2), W = pi(3), O = pi(4), OH = pi(5), OW = pi(6);
    int SH = pi(7), SW = pi(8), PT = pi(9), PL = pi(10), G = pi(11), K = pi(12);
    int ksplit = pi(20), kchunk = pi(21);
    int g = int(gl_WorkGroupID.z) / ksplit, split = int(gl_WorkGroupID.z) % ksplit;
    int k_begin = split * kchunk, k_end = min(K, k_begin + kchunk);
    int og = O / G, cg = C / G;
    int OHW = OH * OW, NCOL = pi(0) * OHW;
    int m0 = int(gl_WorkGroupID.y) * 64, n0 = int(gl_WorkGroupID.x) * 64;

    // Staging: this invocation fetches W at k = sl of a slice for rows sk + 16 * i (neighbouring
    // invocations read neighbouring k), and X~ at k = sk for columns sl + 16 * j (neighbouring
    // invocations read neighbouring pixels).
    int sk = tid / 16, sl = tid % 16;
    int wrow = pi(14) + (g * og + m0 + sk) * K;
    bvec4 row_ok = lessThan(ivec4(m0 + sk) + ivec4(0, 16, 32, 48), ivec4(og));
    ivec4 cols = ivec4(n0 + sl) + ivec4(0, 16, 32, 48);
    bvec4 col_ok = lessThan(cols, ivec4(NCOL));
    ivec4 safe = min(cols, ivec4(NCOL - 1));
    ivec4 img = safe / OHW, pix = safe - img * OHW;
    ivec4 oyc = pix / OW;
    ivec4 iy0 = oyc * SH - PT, ix0 = (pix - oyc * OW) * SW - PL;
    ivec4 xbase = pi(13) + (img * C + g * cg) * H * W + iy0 * W + ix0;

    vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
    vec4 wv, xv;
    fetch(k_begin, k_end, K, H, W, wrow, row_ok, sl, sk, col_ok, iy0, ix0, xbase, wv, xv);
    int buf = 0;
    for (int k0 = k_begin; k0 < k_end; k0 += BK) {
        int base = buf * BK * 16;
        As[base + sl * 16 + sk] = wv;  // As[k][row block]
        Bs[base + sk * 16 + sl] = xv;  // Bs[k][column block]
        memoryBarrierShared();
        barrier();
        // the next slice's loads are in flight while this one is multiplied
        fetch(k0 + BK, k_end, K, H, W, wrow, row_ok, sl, sk, col_ok, iy0, ix0, xbase, wv, xv);
        for (int kk = 0; kk < BK; ++kk) {
            vec4 a = As[base + kk * 16 + ty];
            vec4 b = Bs[base + kk * 16 + tx];
            acc0 += a.x * b;
            acc1 += a.y * b;
            acc2 += a.z * b;
            acc3 += a.w * b;
        }
        buf ^= 1;  // the next slice goes to the other buffer: one barrier a slice
    }

    int b_off = pi(15), y_off = pi(16), act = pi(17);
    float alpha = pf(18), beta = pf(19);
    for (int i = 0; i < 4; ++i) {
        int gm = m0 + ty + 16 * i;
        if (gm >= og) break;
        vec4 r = i == 0 ? acc0 : i == 1 ? acc1 : i == 2 ? acc2 : acc3;
        int oc = g * og + gm;
        float b = b_off >= 0 ? A[b_off + oc] : 0.0;
        for (int j = 0; j < 4; ++j) {
            int c = n0 + tx + 16 * j;
            if (c >= NCOL) break;
            float v = j == 0 ? r.x : j == 1 ? r.y : j == 2 ? r.z : r.w;
            int at = ((c / OHW) * O + oc) * OHW + c % OHW;
#ifdef SPLIT_K
            P[int(P.length()) + pi(22) + split * pi(0) * O * OHW + at] = floatBitsToUint(v);
#else
            A[y_off + at] = apply_act(v + b, act, alpha, beta);
#endif
        }
    }
}
