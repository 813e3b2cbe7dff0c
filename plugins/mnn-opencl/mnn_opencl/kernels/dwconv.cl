/* Depthwise convolution (one input channel per output channel), stride 1, no dilation, a square
 * K x K window (ConvNeXt's 7x7s, MobileNet's 3x3s and 5x5s): one work-group per (image, channel)
 * plane. The plane's input window, padding included, is staged once in local memory and the K*K
 * weights are registers (K is a compile-time constant); each work-item computes 4 rows of one
 * output column from K + 3 rows of K local reads: K*(K+3) reads for 4*K*K FMAs, neighbouring
 * work-items on neighbouring columns (no bank conflicts). conv2d_c1 reads every tap and weight
 * from global memory.
 *
 * dwconv<K>: x, w (C x 1 x K x K), bias, y, C, H, W, OH, OW, PT, PL, the staged window `tile`
 * (TH x TW floats: OW + K - 1 wide, OH rounded up to 4 plus K - 1 high, zeros outside the input),
 * the activation. Work-groups of any size along dim 0; one per plane along dim 1 (N*C).
 */
#define DWCONV(K)                                                                                                    \
    __kernel void dwconv##K(__global const float *x, int xo, __global const float *w, int wo,                        \
                            __global const float *bias, int bo, int has_bias, __global float *y, int yo, int C,      \
                            int H, int W, int OH, int OW, int PT, int PL, __local float *tile, int TW, int TH,       \
                            int act, float aa, float ab) {                                                           \
        const int plane = get_group_id(1), c = plane % C, lid = get_local_id(0), ls = get_local_size(0);             \
        __global const float *xp = x + xo + plane * H * W;                                                           \
        for (int i = lid; i < TW * TH; i += ls) {                                                                    \
            int r = i / TW - PT, q = i % TW - PL;                                                                    \
            tile[i] = (r >= 0 && r < H && q >= 0 && q < W) ? xp[r * W + q] : 0.0f;                                  \
        }                                                                                                            \
        float wk[K * K];                                                                                             \
        _Pragma("unroll") for (int i = 0; i < K * K; ++i) wk[i] = w[wo + c * K * K + i];                             \
        const float b = has_bias ? bias[bo + c] : 0.0f;                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                                \
        __global float *yp = y + yo + plane * OH * OW;                                                               \
        const int strips = OW * ((OH + 3) / 4);                                                                      \
        for (int s = lid; s < strips; s += ls) {                                                                     \
            const int ox = s % OW, oy0 = (s / OW) * 4;                                                               \
            float acc[4] = {b, b, b, b};                                                                             \
            _Pragma("unroll") for (int r = 0; r < K + 3; ++r) {                                                      \
                __local const float *row = tile + (oy0 + r) * TW + ox;                                               \
                float v[K];                                                                                          \
                _Pragma("unroll") for (int kx = 0; kx < K; ++kx) v[kx] = row[kx];                                    \
                _Pragma("unroll") for (int j = 0; j < 4; ++j) {                                                      \
                    if (r - j >= 0 && r - j < K) {                                                                   \
                        _Pragma("unroll") for (int kx = 0; kx < K; ++kx) {                                           \
                            acc[j] = mad(v[kx], wk[(r - j) * K + kx], acc[j]);                                       \
                        }                                                                                            \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
            _Pragma("unroll") for (int j = 0; j < 4; ++j) {                                                          \
                if (oy0 + j < OH) yp[(oy0 + j) * OW + ox] = activate(acc[j], act, aa, ab);                           \
            }                                                                                                        \
        }                                                                                                            \
    }

DWCONV(3)
DWCONV(5)
DWCONV(7)
