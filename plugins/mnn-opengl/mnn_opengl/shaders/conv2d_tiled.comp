// 2-D convolution as an implicit GEMM with shared-memory tiles, one group per z:
// for group g, Y[o][col] = act(sum_k W[o][k] * X~[k][col] + bias[o]), k over
// (input channel, ky, kx) of the group, col over (image, oy, ox). X~ is gathered
// from the NCHW input on the fly (padding reads as zero): no im2col buffer.
// A work group of LOCAL_X x LOCAL_Y invocations computes a BM x BN block
// (BM = LOCAL_Y*TM output channels, BN = LOCAL_X*TN columns): per step it stages
// a BK-deep slice of W (BM x BK) and X~ (BK x BN) in shared memory, then each
// invocation accumulates TM x TN outputs at rows ty + i*LOCAL_Y, columns
// tx + j*LOCAL_X (neighbouring invocations read neighbouring words). TM, TN, BK
// are compile-time defines, so the short loops over them have constant trip
// counts and acc[] is indexed by constants once the compiler unrolls them.
// Split-K (ksplit > 1, SPLIT_K defined; for outputs too small to fill a GPU): z = group *
// ksplit + split, each split sums kchunk of K into its slice of the scratch words, and
// splitk_reduce.comp adds the slices, the bias and the activation.
// The host makes LOCAL_X*LOCAL_Y a multiple of BN, and tabulates after
// the parameters, per k, the input offset and the kernel tap (dy, dx), so the
// staging loop divides nothing.
// P: N, C, H, W, O, OH, OW, SH, SW, PT, PL, group, K (per group),
//    x_off, w_off, b_off (-1: none), y_off, act, alpha, beta, ksplit, kchunk,
//    scratch (from the buffer's end), then ktab[3 * K]
#include "act.glsl"

// GLSL ES has no [[unroll]]: NVIDIA's compiler takes this pragma instead (others ignore it),
// so acc[] is indexed by constants and stays in registers.
#pragma optionNV(unroll all)

#ifndef TM  // the host defines all three; these defaults let the shader compile alone
#define TM 4
#define TN 4
#define BK 16
#endif
#define BM (LOCAL_Y * TM)
#define BN (LOCAL_X * TN)
#define NT (LOCAL_X * LOCAL_Y)
#define AS (BM + 1)  // padded rows of the staged tiles
#define BS (BN + 1)
#define KTAB 23

shared float As[BK * AS];  // As[k * AS + m]
shared float Bs[BK * BS];  // Bs[k * BS + n]

void main() {
    int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
    int tid = ty * LOCAL_X + tx;
    int C = pi(1), H = pi(2), W = pi(3), O = pi(4), OH = pi(5), OW = pi(6);
    int SH = pi(7), SW = pi(8), PT = pi(9), PL = pi(10), G = pi(11), K = pi(12);
    int ksplit = pi(20), kchunk = pi(21);
    int g = int(gl_WorkGroupID.z) / ksplit, split = int(gl_WorkGroupID.z) % ksplit;
    int k_end = min(K, (split + 1) * kchunk);
    int og = O / G, cg = C / G;
    int OHW = OH * OW, NCOL = pi(0) * OHW;
    int m0 = int(gl_WorkGroupID.y) * BM, n0 = int(gl_WorkGroupID.x) * BN;

    // The X~ column this invocation stages is the same at every step: decompose it once.
    int bn = tid % BN;
    int col = n0 + bn;
    bool col_ok = col < NCOL;
    int img = col_ok ? col / OHW : 0, pix = col_ok ? col % OHW : 0;
    int iy0 = (pix / OW) * SH - PT, ix0 = (pix % OW) * SW - PL;
    int xbase = pi(13) + (img * C + g * cg) * H * W + iy0 * W + ix0;
    int wbase = pi(14) + g * og * K;

    float acc[TM * TN];
    for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0;

    for (int k0 = split * kchunk; k0 < k_end; k0 += BK) {
        for (int e = tid; e < BK * BM; e += NT) {  // weights: neighbouring invocations read neighbouring k
            int kk = e % BK, mm = e / BK;
            int gm = m0 + mm, gk = k0 + kk;
            As[kk * AS + mm] = (gm < og && gk < k_end) ? A[wbase + gm * K + gk] : 0.0;
        }
        for (int kk = tid / BN; kk < BK; kk += NT / BN) {
            int gk = k0 + kk;
            float v = 0.0;
            if (col_ok && gk < k_end) {
                int t = pbase + KTAB + 3 * gk;
                int iy = iy0 + int(P[t + 1]), ix = ix0 + int(P[t + 2]);
                if (iy >= 0 && iy < H && ix >= 0 && ix < W) v = A[xbase + int(P[t])];
            }
            Bs[kk * BS + bn] = v;
        }
        memoryBarrierShared();
        barrier();
        for (int kk = 0; kk < BK; ++kk) {
            float av[TM];
            float bv[TN];
            for (int i = 0; i < TM; ++i) av[i] = As[kk * AS + ty + i * LOCAL_Y];
            for (int j = 0; j < TN; ++j) bv[j] = Bs[kk * BS + tx + j * LOCAL_X];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) acc[i * TN + j] += av[i] * bv[j];
        }
        barrier();
    }

    int b_off = pi(15), y_off = pi(16), act = pi(17);
    float alpha = pf(18), beta = pf(19);
    for (int i = 0; i < TM; ++i) {
        int gm = m0 + ty + i * LOCAL_Y;
        if (gm >= og) continue;
        int oc = g * og + gm;
        float b = b_off >= 0 ? A[b_off + oc] : 0.0;
        for (int j = 0; j < TN; ++j) {
            int c = n0 + tx + j * LOCAL_X;
            if (c >= NCOL) continue;
            int at = ((c / OHW) * O + oc) * OHW + c % OHW;
#ifdef SPLIT_K
            P[int(P.length()) + pi(22) + split * pi(0) * O * OHW + at] = floatBitsToUint(acc[i * TN + j]);
#else
            A[y_off + at] = apply_act(acc[i * TN + j] + b, act, alpha, beta);
#endif
        }
    }
}
