/* Large register blocks for GPUs (mnn-vulkan's gemm_big.comp, in OpenCL C): a work-group of TX x TY
 * work-items computes a (8*TY) x (8*TX) block of the product, each work-item 8x8 outputs as four 4x4
 * quarters (rows ty*4.. and 4*TY + ty*4.., columns likewise). The staged slices are k-major with a
 * padding float4 per row, so for one k a work-item reads its 4 rows of A and 4 columns of B as one
 * float4 each: 4 local loads feed 64 FMAs (gemm.cl's tiles: one load per TM or TN FMAs).
 * Two local buffers: the global loads of slice t go to registers before slice t-1's FMAs and are
 * stored into the other buffer after them, so memory latency overlaps arithmetic; one barrier a slice.
 *
 * gemm8_<name>  gemm.cl's arguments (any strides, a table of per-batch offsets, alpha, beta * C, act)
 * conv8_<name>  a convolution of one group as an implicit GEMM: rows are output channels (A is the
 *               OIHW weight as stored, K = C*KH*KW), columns are every image's output pixels, and B
 *               is gathered from the input while staging through a table of (input offset, row
 *               shift, column shift) per k; bias per row, a residual of y's shape (has_res), activation
 *               (act(sum + bias + residual): a ResNet block's last convolution, Add and Relu). 1x1s are the case
 *               of one shift. Split-K: work-group z takes K slice [z*KS, z*KS + KS) and writes raw sums
 *               to its own [M x N] part (conv.cl's splitk_reduce adds them, with bias and activation).
 * gemm8 split-K (S > 1, one batch): work-group z takes K slice [z*KS, z*KS + KS) and stores raw sums to
 * part[z][M][N]; gemm8_splitk_reduce adds them up with alpha, beta * C and the activation.
 * Launched with exactly the blocks' work-groups: no work-item returns ahead of a barrier.
 */

/* FMAs of one staged slice (buffer `cur`) into acc[16] */
#define GEMM8_FMA(TX, TY, BK, cur)                                                                                   \
    _Pragma("unroll") for (int kk = 0; kk < BK; ++kk) {                                                              \
        float4 av0 = As[(cur) * BK * AS4 + kk * AS4 + ty];                                                           \
        float4 av1 = As[(cur) * BK * AS4 + kk * AS4 + TY + ty];                                                      \
        float4 bv0 = Bs[(cur) * BK * BS4 + kk * BS4 + tx];                                                           \
        float4 bv1 = Bs[(cur) * BK * BS4 + kk * BS4 + TX + tx];                                                      \
        acc[0] = mad((float4)(av0.s0), bv0, acc[0]);                                                                 \
        acc[1] = mad((float4)(av0.s0), bv1, acc[1]);                                                                 \
        acc[2] = mad((float4)(av0.s1), bv0, acc[2]);                                                                 \
        acc[3] = mad((float4)(av0.s1), bv1, acc[3]);                                                                 \
        acc[4] = mad((float4)(av0.s2), bv0, acc[4]);                                                                 \
        acc[5] = mad((float4)(av0.s2), bv1, acc[5]);                                                                 \
        acc[6] = mad((float4)(av0.s3), bv0, acc[6]);                                                                 \
        acc[7] = mad((float4)(av0.s3), bv1, acc[7]);                                                                 \
        acc[8] = mad((float4)(av1.s0), bv0, acc[8]);                                                                 \
        acc[9] = mad((float4)(av1.s0), bv1, acc[9]);                                                                 \
        acc[10] = mad((float4)(av1.s1), bv0, acc[10]);                                                               \
        acc[11] = mad((float4)(av1.s1), bv1, acc[11]);                                                               \
        acc[12] = mad((float4)(av1.s2), bv0, acc[12]);                                                               \
        acc[13] = mad((float4)(av1.s2), bv1, acc[13]);                                                               \
        acc[14] = mad((float4)(av1.s3), bv0, acc[14]);                                                               \
        acc[15] = mad((float4)(av1.s3), bv1, acc[15]);                                                               \
    }

/* row (or column) offset within the block of acc[i]'s outputs: i / 2 picks the row, i % 2 the
 * column quarter */
#define ROW8(TY, i) (((i) / 8) * 4 * TY + ty * 4 + ((i) / 2) % 4)
#define COL8(TX, i) (((i) % 2) * 4 * TX + tx * 4)

#define GEMM8(NAME, TX, TY, BK)                                                                                      \
    __kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void gemm8_##NAME(                                     \
        __global const float *a, int ao, __global const float *b, int bo, __global float *y, int yo,                 \
        __global const int *boffs, int bto, int B, int M, int N, int K, int y_sm, int a_sm, int a_sk, int b_sk,      \
        int b_sn, __global const float *c, int co, int has_c, int c_sm, int c_sn, float alpha, float beta, int act,  \
        float aa, float ab, int S, int KS, __global float *part, int parto) {                                        \
        const int NT = TX * TY, BM = 8 * TY, BN = 8 * TX, AS4 = 2 * TY + 1, BS4 = 2 * TX + 1;                        \
        const int A_PER = BK * BM / NT, B_PER = BK * BN / NT;                                                        \
        __local float4 As[2 * BK * (2 * TY + 1)];                                                                    \
        __local float4 Bs[2 * BK * (2 * TX + 1)];                                                                    \
        __local float *Af = (__local float *)As, *Bf = (__local float *)Bs;                                          \
        const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * TX + tx, bi = S > 1 ? 0 : get_group_id(2);  \
        const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN, sl = S > 1 ? get_group_id(2) : 0;            \
        const int kbeg = sl * KS, kend = min(K, kbeg + KS);                                                          \
        __global const float *pa = a + ao + boffs[bto + 3 * bi];                                                     \
        __global const float *pb = b + bo + boffs[bto + 3 * bi + 1];                                                 \
        float4 acc[16];                                                                                              \
        _Pragma("unroll") for (int i = 0; i < 16; ++i) acc[i] = (float4)(0.0f);                                      \
        float ra[BK * 8 * TY / (TX * TY)], rb[BK * 8 * TX / (TX * TY)];                                              \
        const int steps = (kend - kbeg + BK - 1) / BK;                                                               \
        for (int t = 0; t <= steps; ++t) {                                                                           \
            if (t < steps) {                                                                                         \
                int k0 = kbeg + t * BK;                                                                              \
                _Pragma("unroll") for (int r = 0; r < A_PER; ++r) {                                                  \
                    int e = tid + r * NT;                                                                            \
                    int mm = a_sk == 1 ? e / BK : e % BM, kk = a_sk == 1 ? e % BK : e / BM;                          \
                    int gm = m0 + mm, gk = k0 + kk;                                                                  \
                    ra[r] = (gm < M && gk < kend) ? pa[gm * a_sm + gk * a_sk] : 0.0f;                                \
                }                                                                                                    \
                _Pragma("unroll") for (int r = 0; r < B_PER; ++r) {                                                  \
                    int e = tid + r * NT;                                                                            \
                    int nn = b_sn == 1 ? e % BN : e / BK, kk = b_sn == 1 ? e / BN : e % BK;                          \
                    int gn = n0 + nn, gk = k0 + kk;                                                                  \
                    rb[r] = (gn < N && gk < kend) ? pb[gk * b_sk + gn * b_sn] : 0.0f;                                \
                }                                                                                                    \
            }                                                                                                        \
            if (t > 0) {                                                                                             \
                GEMM8_FMA(TX, TY, BK, (t - 1) & 1)                                                                   \
            }                                                                                                        \
            if (t < steps) {                                                                                         \
                int buf = t & 1;                                                                                     \
                _Pragma("unroll") for (int r = 0; r < A_PER; ++r) {                                                  \
                    int e = tid + r * NT;                                                                            \
                    int mm = a_sk == 1 ? e / BK : e % BM, kk = a_sk == 1 ? e % BK : e / BM;                          \
                    Af[(buf * BK + kk) * AS4 * 4 + mm] = ra[r];                                                      \
                }                                                                                                    \
                _Pragma("unroll") for (int r = 0; r < B_PER; ++r) {                                                  \
                    int e = tid + r * NT;                                                                            \
                    int nn = b_sn == 1 ? e % BN : e / BK, kk = b_sn == 1 ? e / BN : e % BK;                          \
                    Bf[(buf * BK + kk) * BS4 * 4 + nn] = rb[r];                                                      \
                }                                                                                                    \
            }                                                                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                            \
        }                                                                                                            \
        __global float *yb = y + yo + boffs[bto + 3 * bi + 2];                                                       \
        _Pragma("unroll") for (int i = 0; i < 16; ++i) {                                                             \
            int gm = m0 + ROW8(TY, i), gn0 = n0 + COL8(TX, i);                                                       \
            float v[4] = {acc[i].s0, acc[i].s1, acc[i].s2, acc[i].s3};                                               \
            if (gm < M) {                                                                                            \
                _Pragma("unroll") for (int q = 0; q < 4; ++q) {                                                      \
                    int gn = gn0 + q;                                                                                \
                    if (gn < N && S > 1) {                                                                           \
                        part[parto + (sl * M + gm) * N + gn] = v[q];                                                 \
                    } else if (gn < N) {                                                                             \
                        float o = alpha * v[q];                                                                      \
                        if (has_c) o += beta * c[co + gm * c_sm + gn * c_sn];                                        \
                        yb[gm * y_sm + gn] = activate(o, act, aa, ab);                                               \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
    }

/* y[img][o][pix] = act(bias[o] + sum_k w[o][k] * x[img][...]): M = O, N = images * OH * OW,
 * K = C*KH*KW; ktab[4k..]: (input offset c*H*W + kh*DH*W + kw*DW, kh*DH, kw*DW) of k. Each
 * work-item always stages the same column of B (NT is a multiple of BN), so its image and input
 * position are worked out once. */
#define CONV8(NAME, TX, TY, BK)                                                                                      \
    __kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void conv8_##NAME(                                     \
        __global const float *x, int xo, __global const float *w, int wo, __global const int *ktab, int kto,         \
        __global const float *bias, int bo, int has_bias, __global float *y, int yo, __global const float *res,      \
        int ro, int has_res, int M, int N, int K, int C,                                                             \
        int H, int W, int OH, int OW, int SH, int SW, int PT, int PL, int KS, int act, float aa, float ab) {         \
        const int NT = TX * TY, BM = 8 * TY, BN = 8 * TX, AS4 = 2 * TY + 1, BS4 = 2 * TX + 1;                        \
        const int A_PER = BK * BM / NT, B_PER = BK * BN / NT;                                                        \
        __local float4 As[2 * BK * (2 * TY + 1)];                                                                    \
        __local float4 Bs[2 * BK * (2 * TX + 1)];                                                                    \
        __local float *Af = (__local float *)As, *Bf = (__local float *)Bs;                                          \
        const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * TX + tx;                                    \
        const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;                                              \
        const int plane = OH * OW, nn = tid % BN, k_first = tid / BN;                                                \
        const int gn_own = n0 + nn, img = gn_own / plane, pix = gn_own % plane;                                      \
        const int ih0 = (pix / OW) * SH - PT, iw0 = (pix % OW) * SW - PL;                                            \
        const int xbase = xo + img * C * H * W + ih0 * W + iw0;                                                      \
        const int kbeg = get_group_id(2) * KS, kend = min(K, kbeg + KS);                                             \
        float4 acc[16];                                                                                              \
        _Pragma("unroll") for (int i = 0; i < 16; ++i) acc[i] = (float4)(0.0f);                                      \
        float ra[BK * 8 * TY / (TX * TY)], rb[BK * 8 * TX / (TX * TY)];                                              \
        const int steps = (kend - kbeg + BK - 1) / BK;                                                               \
        for (int t = 0; t <= steps; ++t) {                                                                           \
            if (t < steps) {                                                                                         \
                int k0 = kbeg + t * BK;                                                                              \
                _Pragma("unroll") for (int r = 0; r < A_PER; ++r) {                                                  \
                    int e = tid + r * NT;                                                                            \
                    int gm = m0 + e / BK, gk = k0 + e % BK;                                                          \
                    ra[r] = (gm < M && gk < kend) ? w[wo + gm * K + gk] : 0.0f;                                      \
                }                                                                                                    \
                _Pragma("unroll") for (int r = 0; r < B_PER; ++r) {                                                  \
                    int gk = k0 + k_first + r * (NT / BN);                                                           \
                    float v = 0.0f;                                                                                  \
                    if (gn_own < N && gk < kend) {                                                                   \
                        int4 kt = vload4(gk, ktab + kto);                                                            \
                        int ih = ih0 + kt.s1, iw = iw0 + kt.s2;                                                      \
                        if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = x[xbase + kt.s0];                            \
                    }                                                                                                \
                    rb[r] = v;                                                                                       \
                }                                                                                                    \
            }                                                                                                        \
            if (t > 0) {                                                                                             \
                GEMM8_FMA(TX, TY, BK, (t - 1) & 1)                                                                   \
            }                                                                                                        \
            if (t < steps) {                                                                                         \
                int buf = t & 1;                                                                                     \
                _Pragma("unroll") for (int r = 0; r < A_PER; ++r) {                                                  \
                    int e = tid + r * NT;                                                                            \
                    Af[(buf * BK + e % BK) * AS4 * 4 + e / BK] = ra[r];                                              \
                }                                                                                                    \
                _Pragma("unroll") for (int r = 0; r < B_PER; ++r) {                                                  \
                    Bf[(buf * BK + k_first + r * (NT / BN)) * BS4 * 4 + nn] = rb[r];                                 \
                }                                                                                                    \
            }                                                                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                            \
        }                                                                                                            \
        _Pragma("unroll") for (int h = 0; h < 2; ++h) {                                                              \
            _Pragma("unroll") for (int q = 0; q < 4; ++q) {                                                          \
                int gn = n0 + h * 4 * TX + tx * 4 + q;                                                               \
                if (gn < N) {                                                                                        \
                    int oimg = gn / plane, opix = gn % plane;                                                        \
                    __global float *yc = y + yo + get_group_id(2) * M * N + oimg * M * plane + opix;                 \
                    __global const float *rc = res + ro + oimg * M * plane + opix;                                   \
                    _Pragma("unroll") for (int i = h; i < 16; i += 2) {                                              \
                        int gm = m0 + ROW8(TY, i);                                                                   \
                        float4 av = acc[i];                                                                          \
                        float o = q == 0 ? av.s0 : q == 1 ? av.s1 : q == 2 ? av.s2 : av.s3;                          \
                        if (has_bias) o += gm < M ? bias[bo + gm] : 0.0f;                                            \
                        if (has_res) o += gm < M ? rc[gm * plane] : 0.0f;                                            \
                        if (gm < M) yc[gm * plane] = activate(o, act, aa, ab);                                       \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
    }

/* the blocks of blocks8.BLOCKS: NAME, TX, TY, BK (128x128, 64x128, 128x64 and 128x96 blocks of the output;
 * BK * BM and BK * BN multiples of TX * TY: 12 deep for the 192 work-items of 128x96) */
GEMM8(b128, 16, 16, 16)
GEMM8(b64, 16, 8, 16)
GEMM8(n64, 8, 16, 16)
GEMM8(n96, 12, 16, 12)
CONV8(b128, 16, 16, 16)
CONV8(b64, 16, 8, 16)
CONV8(n64, 8, 16, 16)
CONV8(n96, 12, 16, 12)

__kernel void gemm8_splitk_reduce(__global const float *part, int parto, int S, int M, int N, __global float *y,
                                  int yo, int y_sm, __global const float *c, int co, int has_c, int c_sm, int c_sn,
                                  float alpha, float beta, int act, float aa, float ab) {
    int i = get_global_id(0);
    if (i >= M * N) return;
    int gm = i / N, gn = i - gm * N;
    float sum = 0.0f;
    for (int s = 0; s < S; ++s) sum += part[parto + s * M * N + i];
    float o = alpha * sum;
    if (has_c) o += beta * c[co + gm * c_sm + gn * c_sn];
    y[yo + gm * y_sm + gn] = activate(o, act, aa, ab);
}
