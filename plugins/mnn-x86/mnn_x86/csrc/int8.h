/* mnn-x86 int8: QLinearConv (and the 1x1 "fully connected" form) with uint8
 * activations, int8 weights, int32 bias, requantized to uint8.
 *
 * Arithmetic (docs/QUANT.md "Rounding rules", bit-exact to the reference):
 *   acc[m][n] = sum_k w[m][k] * (x[k][n] - zx) + bias[m]        exact int32
 *   y[m][n]   = clamp(rint(float(acc) * mult[m]) + zy, qmin, qmax)
 * with one float32 product and round-half-even (the default MXCSR mode).
 *
 * Operands: w[m][k] int8 widened to int16 pairs, one int32 word per pair:
 *   a[m * K2 + k2] = (uint16)w[m][2*k2] | (uint16)w[m][2*k2+1] << 16   (odd K: zero)
 * the activations minus their zero point as int16, pairs of k interleaved per column, in
 * column panels of nb that are contiguous (K2 pairs deep; int8_impl.h QB_AT):
 *   bp[((n / nb * K2 + k / 2) * nb + n % nb) * 2 + k % 2] = x[k][n] - zx     (padding: 0)
 * so _mm256_madd_epi16 of a broadcast word and 8 columns adds two exact
 * products per column (|255 * 127| * 2 never saturates an int32), the AVX2 form
 * of an int8 dot product with no int16 saturation (unlike maddubs on u8 x s8).
 * Own table and dispatch, next to the float one (x86.h), filled per ISA
 * translation unit by int8_impl.h. */
#ifndef MNN_X86_INT8_H
#define MNN_X86_INT8_H

#include <stdint.h>

#include "ops.h"

/* The VNNI convolutions' view of one (image, group) input, without im2col (int8_vnni_impl.h): the padded
 * input (padding zx) split into sh x sw phase planes of QH x QW pixels, each pstride pixels apart (the slack
 * past QH * QW is read by the last tile, never written); conv: 4 channels per pixel (C4 words),
 * [phase][C4][pstride] words; depthwise: one channel, [phase][pstride] bytes. Output (oh, ow) is the
 * flattened n = oh * QW + ow (n < Nf); tap t reads pixel n + tap_off[t]. Filled by x86_qphase_init. */
typedef struct x86_qphase {
    int64_t QH, QW, pstride;
    int64_t QP;          /* the sw column phases' width; QW too unless shifted */
    int32_t shifted;     /* conv: a plane per (row phase a, kernel column j), X[r][c] = P[r * sh + a][c * sw + j * dw]
                          * for c < QW = OW: the flattened outputs are the output plane, no thrown-away columns */
    int32_t reserved;
    int64_t C4, taps, Nf;
    uint64_t phase_mask; /* the phase planes (a * sw + b) some tap reads */
    int32_t direct;      /* 1x1, stride 1, no padding: the phase plane is the input plane */
    int32_t window;      /* depthwise, column stride and dilation 1, kw <= 4: a kernel row's taps are 4 adjacent
                          * bytes, one weight word per kernel row (else one per 4 taps in order) */
    int64_t groups;      /* depthwise: weight words per channel (kh with window, else ceil(taps / 4)) */
    const int64_t *tap_off; /* taps (rounded up to 4 for depthwise: the extra ones 0) */
} x86_qphase;

typedef struct x86_int8_kernels {
    const char *name;
    int32_t nb; /* B columns are padded to a multiple of nb */
    /* one group of one image: bp = im2col(x) - zx, np columns */
    void (*im2col)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, int16_t *bp, int64_t np);
    /* fully connected: bp[k][n] = x[n * K + k] - zx for the N rows of x */
    void (*pack_rows)(const uint8_t *x, int32_t zx, int64_t N, int64_t K, int16_t *bp, int64_t np);
    /* y[m * ys_m + n * ys_n] for m < M, n < N; a has M rounded up to 4 rows (zero) */
    void (*gemm_requant)(int64_t M, int64_t N, int64_t K2, int64_t np, const int32_t *a, const int16_t *bp,
                         const int32_t *bias, const float *mult, int32_t zy, int32_t qmin, int32_t qmax,
                         uint8_t *y, int64_t ys_m, int64_t ys_n);
    /* depthwise, one channel: y plane from x plane, weights w[kh*kw], exact int32 then requant */
    void (*depthwise)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, const int8_t *w, int32_t bias,
                      float mult, int32_t zy, int32_t qmin, int32_t qmax, uint8_t *y, int16_t *work);
    /* QuantizeLinear float -> uint8 (y = sat(rint(x / scale) + zp)), DequantizeLinear uint8 -> float */
    void (*quantize)(const float *x, int64_t n, float scale, int32_t zp, uint8_t *y);
    void (*dequantize)(const uint8_t *x, int64_t n, float scale, int32_t zp, float *y);
    void (*maxpool)(const x86_pool_geom *g, const uint8_t *x, uint8_t *y); /* one uint8 plane */
    /* -- AVX-512 VNNI without im2col (int8_vnni_impl.h; NULL where not compiled in) -- */
    void (*pack_c4)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, const x86_qphase *q, int64_t c4_0,
                    int64_t c4_1, uint8_t *xq, uint8_t *tmp);
    void (*conv_c4)(const x86_qphase *q, const uint8_t *xq, int64_t M, int64_t p0, int64_t p1, const int32_t *a,
                    const int32_t *bias_eff, const float *mult, int32_t zy, int32_t qmin, int32_t qmax, uint8_t *y,
                    int64_t OW, int64_t plane);
    void (*depthwise_vnni)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, const x86_qphase *q,
                           const int32_t *wq, int32_t bias_eff, float mult, int32_t zy, int32_t qmin, int32_t qmax,
                           uint8_t *y, uint8_t *xd);
    void (*conv_px)(const x86_qphase *q, const uint8_t *xq, int64_t OH, int64_t OW, int64_t mb0, int64_t mb1,
                    int64_t Mp, const int32_t *wt, const int32_t *bias_eff, const float *mult, int32_t zy,
                    int32_t qmin, int32_t qmax, uint8_t *ypx);
    void (*maxpool_vnni)(const uint8_t *x, const x86_conv_geom *g, const x86_qphase *q, uint8_t *y, uint8_t *xd);
    void (*fc_vnni)(const uint8_t *x, int64_t N, int64_t K, int64_t O, const int32_t *wp, const int32_t *bias_eff,
                    const float *mult, int32_t zy, int32_t qmin, int32_t qmax, uint8_t *y, uint8_t *xrow);
    /* QLinearAdd, equal shapes: y = sat(rint(float32((a - za) * ma) + float32((b - zb) * mb)) + zc), no FMA */
    void (*add)(const uint8_t *a, const uint8_t *b, int64_t n, float ma, float mb, int32_t za, int32_t zb,
                int32_t zc, uint8_t *y);
    /* conv_px's [P][Mp] bytes into the NCHW plane [O][P] (VNNI only) */
    void (*px_to_nchw)(const uint8_t *ypx, int64_t P, int64_t Mp, int64_t O, uint8_t *y);
    /* pack_c4's planes [plane][c4][pstride] words -> [plane][pstride][C4] (conv_px's input; VNNI only) */
    void (*px_pack)(const uint8_t *xq, const x86_qphase *q, uint8_t *xpm);
} x86_int8_kernels;

#define QC_MR 8  /* weight rows per register tile of conv_c4 (the packed weights' row block) */
#define QC_NB 32 /* flattened outputs per tile of conv_c4: two zmm of int32 */

typedef struct x86_qconv_state {
    x86_op op;
    const x86_int8_kernels *k8;
    int64_t N, O, group, og, ogp, K2, np; /* ogp: og rounded up to 4 */
    int32_t fc;                           /* 1x1 on 1x1 planes: the images are the GEMM's columns */
    x86_conv_geom g;
    const int32_t *w;    /* [group][ogp][K2] */
    const int32_t *bias; /* [O] */
    const float *mult;   /* [O] */
    int32_t zx, zy, qmin, qmax;
    int16_t *work;       /* per thread: K2 * np * 2 int16 */
    int64_t work_stride;
    /* kind: 0 the int16-pair GEMM above, 1 the VNNI convolution on phase planes (conv_c4), 2 depthwise,
     * 3 depthwise on AVX-512 VNNI (depthwise_vnni), 4 fully connected on AVX-512 VNNI (fc_vnni), 5 the VNNI
     * convolution with output channels in the lanes (conv_px: small planes, group 1; wq holds its weights) */
    int32_t kind, reserved;
    int64_t K4;              /* kind 1: taps * C4 weight words per output channel */
    const int32_t *bias_eff; /* kinds 1, 3, 4: bias - zx * sum w */
    const int8_t *wdw;       /* kind 2: [O][kh * kw] */
    const int32_t *wq;       /* kind 3: [O][ceil(taps / 4)] words of 4 weights; kind 4: [ceil(O / 16)][K4][16] */
    uint8_t *xq, *tmp;       /* kind 1: phase planes of all channel quads, row scratch; kinds 3, 4: per thread */
    int64_t xq_stride;       /* kinds 3, 4: bytes of one thread's scratch; kind 5: of the planes (the pixel-major
                              * copy follows them) */
    int64_t tmp_stride;      /* kinds 1, 5: bytes of one thread's row scratch (x86_qphase_tmp_bytes) */
    x86_qphase q;            /* kinds 1, 3, 5 */
    uint8_t *ypx;            /* kind 5 (conv_px, group 1): the output bytes [P][Mp] */
} x86_qconv_state;

/* uint8 elementwise ops (QuantizeLinear, DequantizeLinear, QLinearAdd) and uint8 MaxPool */
typedef struct x86_qelt_state {
    x86_op op;
    const x86_int8_kernels *k8;
    int32_t kind, zp; /* kind 0 quantize, 1 dequantize, 2 max pool, 3 QLinearAdd */
    float scale;
    int64_t planes;
    x86_pool_geom pg;
    /* max pool on AVX-512 VNNI CPUs (maxpool_vnni), else NULL xq: the window as a conv geometry, its phase
     * planes, per-thread scratch */
    x86_conv_geom cg;
    x86_qphase q;
    uint8_t *xq;
    int64_t xq_stride;
} x86_qelt_state;

int x86_qelt_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

int x86_qconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
const x86_int8_kernels *x86_int8_kernels_for(const char *isa);
int x86_int8_vnni(const char *isa);
int64_t x86_int8_dw_work_bytes(const x86_conv_geom *g);
int64_t x86_qphase_tmp_bytes(const x86_qphase *q, const x86_conv_geom *g);
int64_t x86_qphase_init(x86_qphase *q, const x86_conv_geom *g, int64_t C4, int depthwise, int shifted,
                        int64_t *tap_off);

#endif
