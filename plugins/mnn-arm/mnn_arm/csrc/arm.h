/* mnn-arm: the kernels every path provides and the drivers that call them.
 *
 * Three paths, each its own translation unit compiled with its own flags:
 *   fp32.c      -march=armv8-a            NEON fp32 (every aarch64 CPU)
 *   fp16.c      -march=armv8.2-a+fp16     vfmaq_f16, used when the CPU has asimdhp
 *   int8_dot.c  -march=armv8.2-a+dotprod  vdotq_s32 (sdot), used when the CPU has asimddp
 * plus int8.c (armv8-a: int8 packing, requantization, the GEMM without sdot) and
 * winograd.c (armv8-a: the fp32 path's Winograd F(2x2, 3x3) convolution; winograd_fp16.c, built
 * with fp16's flags, the fp16 path's).
 * caps.c reads getauxval(AT_HWCAP) and hands out a path's table only when
 * the CPU reports the instructions it needs, so no path ever runs where it
 * would raise SIGILL.
 *
 * Packed GEMM operands (K padded to the path's k-step, rows/cols zero padded):
 *   float paths  A: panel p, rows [p*MR, p*MR+MR): ap[p*MR*K + k*MR + r]
 *                B: panel q, cols [q*NR, q*NR+NR): bp[q*NR*K + k*NR + c]
 *   int8 path    K in groups of 4; A: ap[p*MR*K4 + g*MR*4 + r*4 + j]
 *                                   B: bp[q*NR*K4 + g*NR*4 + c*4 + j]   (k = 4g + j)
 */
#ifndef MNN_ARM_H
#define MNN_ARM_H

#include <stddef.h>
#include <stdint.h>

#include "mnn_core/abi.h" /* enum mnn_activation: an epilogue's act (MNN_ACT_*) */

#ifdef __cplusplus
extern "C" {
#endif

enum arm_binop { ARM_ADD = 0, ARM_SUB, ARM_MUL, ARM_DIV, ARM_MAX, ARM_MIN };

/* y = act(alpha * acc + beta * bias[row * bias_rs + col * bias_cs]); bias NULL: no bias */
typedef struct arm_epilogue {
    float alpha, beta;
    const float *bias;
    int64_t bias_rs, bias_cs;
    int32_t act;
    float act_alpha, act_beta;
} arm_epilogue;

/* one group of a convolution: C input channels of H x W to OH x OW */
typedef struct arm_conv_geom {
    int64_t C, H, W, OH, OW;
    int64_t kh, kw, sh, sw, dh, dw, pt, pl;
} arm_conv_geom;

/* pooling; kind 0 max, 1 average = window sum * inv_rows[oh] * inv_cols[ow] */
typedef struct arm_pool_geom {
    int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl;
    int32_t kind, reserved;
    const float *inv_rows, *inv_cols;
} arm_pool_geom;

/* A floating-point path. Activation pointers (x, a and b of the packing functions, the GEMM's c,
 * the depthwise y) are void *: their elements are io_bytes wide — fp32 for "fp32" and "fp16" (the
 * fp16 path converts while packing and widens its results), fp16 for "fp16h" (the fp16 path on
 * activations kept in half precision between ops: nothing converted). Weights are packed with
 * pack_a, so for "fp16h" they are handed over as fp16; depthwise weights and biases are fp32. */
typedef struct arm_fkernels {
    const char *name;
    int32_t mr, nr, elem_bytes, io_bytes;
    void (*pack_a)(const void *a, int64_t rs, int64_t cs, int64_t M, int64_t K, void *ap);
    void (*pack_b)(const void *b, int64_t rs, int64_t cs, int64_t K, int64_t N, void *bp);
    /* B = im2col of one group's input (C*kh*kw rows), output columns [n0, n0 + ncols), packed */
    void (*im2col_b)(const void *x, const arm_conv_geom *g, int64_t n0, int64_t ncols, void *bp);
    /* C[M][N] (row stride ldc) = epilogue(A @ B) */
    void (*gemm)(int64_t M, int64_t N, int64_t K, const void *ap, const void *bp, void *c, int64_t ldc,
                 const arm_epilogue *e);
    /* planes = N*C; w: [C][kh*kw] fp32; bias: C floats or NULL; work: arm_depthwise_work_bytes */
    void (*depthwise)(const void *x, const float *w, const float *bias, void *y, int64_t planes,
                      const arm_conv_geom *g, const arm_epilogue *e, void *work);
} arm_fkernels;

/* The int8 GEMM: C[M][N] int32 = A(int8) @ B(int8), packed as above. */
typedef struct arm_qkernels {
    const char *name;
    int32_t mr, nr;
    void (*gemm)(int64_t M, int64_t N, int64_t K4, const int8_t *ap, const int8_t *bp, int32_t *c, int64_t ldc);
    /* depthwise int32 sums, the contract of arm_q_depthwise (below) */
    void (*depthwise)(const void *x, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias, int32_t *acc,
                      int64_t planes, const struct arm_conv_geom *g, int16_t *work);
    /* NULL, or the depthwise requantized as its tiles are stored: planes of uint8 / int8 (out_kind 1 / 2),
     * clamp(rint(float32(sum) * mult[c * mult_rs]) + zy) as arm_q_finish; acc: one plane of int32 scratch */
    void (*depthwise_q)(const void *x, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias,
                        const double *mult, int64_t mult_rs, int32_t zy, int out_kind, void *y, int32_t *acc,
                        int64_t planes, const struct arm_conv_geom *g, int16_t *work);
} arm_qkernels;

#define ARM_Q_MR 8  /* int8 register tile: 8 rows x 12 columns, K in groups of 4 */
#define ARM_Q_NR 12

/* -- caps.c: what this CPU runs --------------------------------------------------------- */
/* FP16H: the fp16 path's kernels reading and writing fp16 activations (needs asimdhp, like FP16) */
enum arm_path { ARM_PATH_FP32 = 0, ARM_PATH_FP16 = 1, ARM_PATH_INT8 = 2, ARM_PATH_INT8_DOT = 3, ARM_PATH_FP16H = 4 };
uint64_t arm_hwcap(void);               /* getauxval(AT_HWCAP) (0 off aarch64 Linux) */
int arm_path_runnable(int path);        /* the CPU has every instruction the path uses */
const char *arm_path_name(int path);
const arm_fkernels *arm_fkernels_for(int path); /* NULL unless runnable (fp32 / fp16) */
const arm_qkernels *arm_qkernels_for(int path); /* NULL unless runnable (int8 / int8_dot) */

/* -- fp32.c: element-wise, pooling, norms (fp32 on every CPU) ----------------------------- */
void arm_activation(const arm_epilogue *e, const float *x, float *y, int64_t n);
void arm_binary(int op, const float *a, const float *b, float *y, int ndim, const int64_t *dims,
                const int64_t *sa, const int64_t *sb);
void arm_channel_affine(const float *x, const float *scale, const float *shift, float *y, int64_t outer,
                        int64_t C, int64_t inner);
void arm_pool(const float *x, float *y, int64_t planes, const arm_pool_geom *g, float *work);
int64_t arm_pool_work_floats(const arm_pool_geom *g);
void arm_reduce_rows(const float *x, float *y, int64_t rows, int64_t n, int kind);
void arm_softmax(const float *x, float *y, int64_t outer, int64_t axis, int64_t inner, int log, float scale);
void arm_normalize_rows(const float *x, float *y, int64_t rows, int64_t n, float eps, const float *scale,
                        const float *shift, int64_t per_row);
/* the generic epilogue pass over rows of C, for what the GEMM tiles do not fuse */
void arm_epilogue_rows(float *c, int64_t ldc, int64_t m0, int64_t n0, int64_t rows, int64_t cols,
                       const arm_epilogue *e);
int arm_epilogue_in_tile(const arm_epilogue *e); /* bias per row (or none) and relu/clip/none */
int64_t arm_depthwise_work_bytes(const arm_conv_geom *g);
/* the 3x3 depthwise kernels: which geometries they take, the element stride of their padded rows */
int arm_dw3x3(const arm_conv_geom *g);
/* the fp32 / fp16 register-held depthwise kernels: 3 or 5 (the window) where they take g, else 0 */
int arm_dwk(const arm_conv_geom *g);
int64_t arm_dw_row(const arm_conv_geom *g);

/* fp32 <-> fp16 (fcvtl / fcvtn: base ARMv8, every aarch64 CPU), for the fp16 domain's boundaries */
void arm_f16_to_f32(const void *x, float *y, int64_t n);
void arm_f32_to_f16(const float *x, void *y, int64_t n);

/* -- fp16h.c: element-wise on fp16 activations (asimdhp; reached only through the fp16h path) -- */
void arm_binary_h(int op, const void *a, const void *b, void *y, int ndim, const int64_t *dims,
                  const int64_t *sa, const int64_t *sb);
void arm_activation_h(const arm_epilogue *e, const void *x, void *y, int64_t n);
/* arm_reduce_rows on halves (kind 0: max, else mean; the mean's sums in fp32) */
void arm_reduce_rows_h(const void *x, void *y, int64_t rows, int64_t n, int kind);
/* arm_pool on halves (work: arm_pool_work_floats floats, which hold the padded plane's halves) */
void arm_pool_h(const void *x, void *y, int64_t planes, const arm_pool_geom *g, void *work);

/* -- conv.c: drivers over a path's kernels ----------------------------------------------- */
/* Floats of B scratch a GEMM conv needs for `cols` output columns. */
int64_t arm_conv_chunk_cols(const arm_fkernels *k, const arm_conv_geom *g);
/* one image, one group: y[og][OH*OW] = epilogue(wpacked @ im2col(x)); work: chunk * K elements */
void arm_conv_gemm(const arm_fkernels *k, const arm_conv_geom *g, int64_t og, const void *wpacked,
                   const void *x, void *y, const arm_epilogue *e, int64_t chunk_cols, void *work);
int64_t arm_packed_a_elems(int64_t mr, int64_t M, int64_t K);
/* one chunk of arm_conv_gemm: output columns [n0, n0 + nc) */
void arm_conv_gemm_cols(const arm_fkernels *k, const arm_conv_geom *g, int64_t og, const void *wpacked,
                        const void *x, void *y, const arm_epilogue *e, int64_t n0, int64_t nc, void *work);

/* -- winograd.c: F(2x2, 3x3) on the fp32 path (3x3, stride 1, dilation 1, one group) ---------- */
int arm_wino_applies(const arm_conv_geom *g);
/* floats of the transformed, packed weights: 16 A operands of O x C */
int64_t arm_wino_weight_elems(const arm_fkernels *k, int64_t O, int64_t C);
/* w: [O][C][3][3]; tmp: 16 * O * C floats of scratch */
void arm_wino_pack_weights(const arm_fkernels *k, const float *w, int64_t O, int64_t C, float *packed, float *tmp);
int64_t arm_wino_chunk_tiles(const arm_fkernels *k, const arm_conv_geom *g);
int64_t arm_wino_work_bytes(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, int64_t chunk);
/* one image: y[O][OH*OW] = epilogue(conv3x3(x)); e: bias per output channel (bias_rs), any activation */
void arm_wino_conv(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, const float *wpacked, const float *x,
                   float *y, const arm_epilogue *e, int64_t chunk, void *work);
/* the same with its chunks of tiles split across threads: work holds the padded image and `slices`
 * V/M buffers (arm_wino_work_bytes_mt); slices >= the threads used */
int64_t arm_wino_work_bytes_mt(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, int64_t chunk, int slices);
void arm_wino_conv_mt(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, const float *wpacked, const float *x,
                      float *y, const arm_epilogue *e, int64_t chunk, void *work, int threads);

/* -- winograd_fp16.c: the same F(2x2, 3x3) on the fp16 path (armv8.2-a+fp16; reached only where it runs) -- */
/* bytes of the 16 transformed points, packed for the fp16h tile (the layout depends on the geometry) */
int64_t arm_wino_h_weight_bytes(const arm_conv_geom *g, int64_t O);
/* w: [O][g->C][3][3] fp32; tmp: 16 * O * C halves of scratch */
void arm_wino_h_pack_weights(const arm_conv_geom *g, const float *w, int64_t O, void *packed, void *tmp);
int64_t arm_wino_h_chunk_tiles(const arm_conv_geom *g);
int64_t arm_wino_h_work_bytes_mt(const arm_conv_geom *g, int64_t O, int64_t chunk, int slices);
/* one image; x and y hold io_bytes-wide elements (2: fp16 activations, 4: fp32) */
void arm_wino_h_conv_mt(const arm_conv_geom *g, int64_t O, const void *wpacked, const void *x, void *y, int io_bytes,
                        const arm_epilogue *e, int64_t chunk, void *work, int threads);

/* -- int8.c --------------------------------------------------------------------------------- */
/* The true operands are a = as + da[row], b = bs + db[col] with as/bs the packed int8 values. */
typedef struct arm_qepilogue {
    int64_t K;             /* real (unpadded) depth */
    const int32_t *da;     /* per row (da_rs 1) or one value (da_rs 0) */
    const int32_t *db;
    int64_t da_rs, db_cs;
    const int32_t *rowsum; /* sum over k of as, per row */
    const int32_t *colsum; /* sum over k of bs, per col */
    const int32_t *bias;   /* per row or NULL */
    /* output: out_kind 0 int32; 1 uint8; 2 int8 = clamp(rint(float32(acc) * mult) + zy), the product in float32
     * (mnn_core/ops/quant.py's rule); mult holds float32 values */
    int32_t out_kind;
    const double *mult;    /* per row (mult_rs 1, mult_cs 0), per col (0, 1) or one (0, 0) */
    int64_t mult_rs, mult_cs;
    double zy;
    const int32_t *bias_col; /* per column or NULL (a 1x1 QLinearConv on one-pixel images: tokens as rows) */
} arm_qepilogue;
int64_t arm_k4(int64_t K);
/* pack rows of a [M][K] int8/uint8 matrix (strides rs, cs), shifted by -offset; rowsum per row */
void arm_q_pack_a(const void *a, int is_uint8, int64_t rs, int64_t cs, int64_t M, int64_t K, int8_t *ap,
                  int32_t *rowsum);
void arm_q_pack_b(const void *b, int is_uint8, int64_t rs, int64_t cs, int64_t K, int64_t N, int8_t *bp,
                  int32_t *colsum);
/* im2col of one group (padding = the zero point zx), packed, shifted; colsum per output column (or NULL) */
void arm_q_im2col_b(const void *x, int is_uint8, int32_t zx, const arm_conv_geom *g, int64_t n0, int64_t ncols,
                    int8_t *bp, int32_t *colsum);
/* whether a convolution's epilogue reads the column sums: only rows whose weights have a zero point
 * (da != 0) do; im2col skips them otherwise (colsum NULL) */
int arm_q_needs_colsum(const arm_qepilogue *e, int64_t rows);
/* out[r * ldo + c] for the M x N block, from raw accumulators acc[r * ldacc + c];
 * m0/n0: where the block starts (to index da/db/rowsum/colsum/mult/bias) */
void arm_q_finish(const int32_t *acc, int64_t ldacc, void *out, int64_t ldo, int64_t m0, int64_t n0, int64_t M,
                  int64_t N, const arm_qepilogue *e);
/* int8 depthwise: planes of x (uint8/int8, zero point zx), weights w (int16, already minus zw) [C][kh*kw];
 * writes int32 accumulators of the true products plus bias (no requantization) */
void arm_q_depthwise(const void *x, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias,
                     int32_t *acc, int64_t planes, const arm_conv_geom *g, int16_t *work);
int64_t arm_q_depthwise_work_elems(const arm_conv_geom *g);
/* a 3x3 stride-1 pad-1 convolution's input for arm_q_conv3x3_tiles: padded planes of channel quads (int8.c) */
void arm_q_pad_quads(const void *x, int is_uint8, int32_t zx, int64_t C, int64_t H, int64_t W, int8_t *xq,
                     int64_t plane);
/* its tiles on the sdot path, B read in place from those planes (int8_dot.c; only where asimddp runs) */
void arm_q_conv3x3_tiles(int64_t og, const int8_t *wp, int64_t groups, const int8_t *xq, const int64_t *off,
                         int64_t p0, int64_t ncols, int32_t *acc, int64_t ldacc);
/* conv.c: one image, one group of an int8 convolution. e holds this group's rows (da, rowsum,
 * bias, mult already offset); y: og rows of OH*OW outputs of out_bytes each.
 * work: bwork K4 * chunk_cols bytes, colsum chunk_cols, acc og * chunk_cols int32 */
int64_t arm_qconv_chunk_cols(const arm_conv_geom *g);
void arm_qconv_gemm(const arm_qkernels *k, const arm_conv_geom *g, int64_t og, const int8_t *wpacked, const void *x,
                    int is_uint8, int32_t zx, void *y, int out_bytes, const arm_qepilogue *e, int64_t chunk_cols,
                    int8_t *bwork, int32_t *colsum, int32_t *acc);

#ifdef __cplusplus
}
#endif
#endif
