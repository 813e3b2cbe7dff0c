/* A convolution of one group as an implicit GEMM on 4x4 register tiles (mnn-vulkan's conv2d.comp in
 * OpenCL C): a work-group of TX x TY work-items computes a (4*TY) x (4*TX) block, each work-item the
 * rows ty + i*TY and the columns tx + j*TX (i, j < 4), so neighbouring work-items read neighbouring
 * local words and store neighbouring output pixels (coalesced, where conv8's 8x8 blocks store 4
 * apart). Smaller blocks than conv8's give a layer more work-groups; no K split is needed as often.
 *
 * conv4_<name> (and conv4p_<name>, below) takes conv8_<name>'s arguments (kernels/gemm8.cl): x, the OIHW weight as stored (K =
 * C*KH*KW), the per-k gather table, bias, y, a residual of y's shape (has_res), the geometry, the K
 * slice KS of work-group z (raw sums to y's part z when split: conv.cl's splitk_reduce adds them),
 * the activation. Launched with exactly the blocks' work-groups: no work-item returns ahead of a
 * barrier. Each work-item stages the same column of B at every step (NT is a multiple of BN).
 */
#define CONV4(NAME, TX, TY, BK, POINTWISE)                                                                           \
    __kernel __attribute__((reqd_work_group_size(TX, TY, 1))) void NAME(                                             \
        __global const float *x, int xo, __global const float *w, int wo, __global const int *ktab, int kto,         \
        __global const float *bias, int bo, int has_bias, __global float *y, int yo, __global const float *res,      \
        int ro, int has_res, int M, int N, int K, int C, int H, int W, int OH, int OW, int SH, int SW, int PT,       \
        int PL, int KS, int act, float aa, float ab) {                                                               \
        const int NT = TX * TY, BM = 4 * TY, BN = 4 * TX, AS = 4 * TY + 1, BS = 4 * TX + 1;                          \
        __local float As[BK * (4 * TY + 1)];                                                                         \
        __local float Bs[BK * (4 * TX + 1)];                                                                         \
        const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * TX + tx;                                    \
        const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;                                              \
        const int plane = OH * OW, nn = tid % BN, k_first = tid / BN;                                                \
        const int gn_own = n0 + nn, img = gn_own / plane, pix = gn_own % plane;                                      \
        const int ih0 = (pix / OW) * SH - PT, iw0 = (pix % OW) * SW - PL;                                            \
        const int xbase = xo + img * C * H * W + ih0 * W + iw0;                                                      \
        const int kbeg = get_group_id(2) * KS, kend = min(K, kbeg + KS);                                             \
        float acc[16];                                                                                               \
        _Pragma("unroll") for (int i = 0; i < 16; ++i) acc[i] = 0.0f;                                                \
        for (int k0 = kbeg; k0 < kend; k0 += BK) {                                                                   \
            _Pragma("unroll") for (int r = 0; r < BK * BM / NT; ++r) {                                               \
                int e = tid + r * NT, kk = e % BK, mm = e / BK;                                                      \
                int gm = m0 + mm, gk = k0 + kk;                                                                      \
                As[kk * AS + mm] = (gm < M && gk < kend) ? w[wo + gm * K + gk] : 0.0f;                               \
            }                                                                                                        \
            _Pragma("unroll") for (int r = 0; r < BK * BN / NT; ++r) {                                               \
                int kk = k_first + r * (NT / BN), gk = k0 + kk;                                                      \
                float v = 0.0f;                                                                                      \
                if (POINTWISE && gn_own < N && gk < kend) {                                                          \
                    v = x[xbase + gk * plane];                                                                       \
                } else if (gn_own < N && gk < kend) {                                                                \
                    int4 kt = vload4(gk, ktab + kto);                                                                \
                    int ih = ih0 + kt.s1, iw = iw0 + kt.s2;                                                          \
                    if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = x[xbase + kt.s0];                                \
                }                                                                                                    \
                Bs[kk * BS + nn] = v;                                                                                \
            }                                                                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                            \
            _Pragma("unroll") for (int kk = 0; kk < BK; ++kk) {                                                      \
                float av[4], bv[4];                                                                                  \
                _Pragma("unroll") for (int i = 0; i < 4; ++i) av[i] = As[kk * AS + ty + i * TY];                     \
                _Pragma("unroll") for (int j = 0; j < 4; ++j) bv[j] = Bs[kk * BS + tx + j * TX];                     \
                _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                                      \
                    _Pragma("unroll") for (int j = 0; j < 4; ++j) acc[i * 4 + j] = mad(av[i], bv[j], acc[i * 4 + j]); \
                }                                                                                                    \
            }                                                                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                            \
        }                                                                                                            \
        _Pragma("unroll") for (int j = 0; j < 4; ++j) {                                                              \
            int gn = n0 + tx + j * TX;                                                                               \
            if (gn < N) {                                                                                            \
                int oimg = gn / plane, opix = gn % plane;                                                            \
                __global float *yc = y + yo + get_group_id(2) * M * N + oimg * M * plane + opix;                     \
                __global const float *rc = res + ro + oimg * M * plane + opix;                                       \
                _Pragma("unroll") for (int i = 0; i < 4; ++i) {                                                      \
                    int gm = m0 + ty + i * TY;                                                                       \
                    if (gm < M) {                                                                                    \
                        float o = acc[i * 4 + j];                                                                    \
                        if (has_bias) o += bias[bo + gm];                                                            \
                        if (has_res) o += rc[gm * plane];                                                            \
                        yc[gm * plane] = activate(o, act, aa, ab);                                                   \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
    }

/* the blocks of blocks8.CONV4_BLOCKS: NAME, TX, TY, BK (64x64 blocks of the output), and conv4p_<name> for
 * 1x1s of stride 1 without padding (POINTWISE: B read straight from the input, no table; opencl.conv4_pw) */
CONV4(conv4_c64, 16, 16, 16, 0)
CONV4(conv4p_c64, 16, 16, 16, 1)
