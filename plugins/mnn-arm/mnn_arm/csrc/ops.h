/* mnn-arm op layer: one state and one mnn_run_fn per op family. The Python
 * side (mnn_arm/ops_*.py through _arm.pyx) fills a state at prepare (shapes,
 * packed weights, scratch, the path's kernel table); the run function only
 * reads it, calls the kernels and never allocates. */
#ifndef MNN_ARM_OPS_H
#define MNN_ARM_OPS_H

#include "arm.h"
#include "mnn_core/abi.h"

typedef struct arm_op {
    const char *error;
    int32_t threads; /* the session's thread count (Session(threads=...)); 0 or 1: one */
} arm_op;
const char *arm_op_error(void *state);

/* a tensor's first element: the core hands host tensors as data (byte_offset 0) and tensors of
 * mnn-arm's fp16 domain as the arena's address plus byte_offset */
static inline void *arm_data(const mnn_tensor *t) { return (char *)t->data + t->byte_offset; }

typedef struct arm_conv_state {
    arm_op op;
    const arm_fkernels *k;
    int32_t depthwise, bias_input; /* bias_input >= 0: the bias arrives at run */
    int32_t winograd; /* Winograd F(2x2, 3x3), 1 fp32 / 2 fp16: w holds the 16 transformed, packed points */
    int64_t N, O, group, og;
    arm_conv_geom g;
    void *w;              /* gemm: packed A per group; depthwise: [C][kh*kw] fp32 */
    int64_t w_group_bytes;
    const float *bias;
    arm_epilogue epi;
    void *work;                    /* slices x work_bytes: one scratch slice per thread */
    int64_t chunk_cols;            /* winograd: tiles per chunk */
    int64_t work_bytes;
    int32_t slices;
} arm_conv_state;
int arm_conv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_matmul_state {
    arm_op op;
    const arm_fkernels *k;
    int64_t M, N, K, batch;
    int64_t a_rs, a_cs, b_rs, b_cs;
    const void *b_packed; /* constant B packed at prepare, or NULL: packed at run into b_work */
    void *a_work, *b_work;
    int32_t bias_input;
    /* 1: C^T = B^T A^T into c_work, then transposed into C (a few rows of A fill the tile's NR columns
     * better than its MR rows); b_packed then holds B^T packed as the A operand, a_work A^T as the B one */
    int32_t transposed;
    /* 1: y receives C^T, by a transpose out of c_work (a convolution by its input windows: ops_conv.py) */
    int32_t write_ct;
    void *c_work;
    int64_t a_bs; /* elements from one batch's A to the next (M * K, or a convolution's image) */
    arm_epilogue epi;
} arm_matmul_state;
int arm_matmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* MatMul with batch dims on both sides (broadcast): output batch t reads A at a_off[t] and B at
 * b_off[t] (elements); B is packed at run, once per distinct offset in a row (matmul_batch.c) */
typedef struct arm_bmatmul_state {
    arm_op op;
    const arm_fkernels *k;
    int64_t M, N, K, batch;
    const int64_t *a_off, *b_off;
    void *a_work, *b_work;
    arm_epilogue epi;
} arm_bmatmul_state;
int arm_bmatmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_binary_state {
    arm_op op;
    int32_t binop, ndim, half; /* half: fp16 tensors (the fp16 domain) */
    int64_t dims[MNN_MAX_DIMS], sa[MNN_MAX_DIMS], sb[MNN_MAX_DIMS];
} arm_binary_state;
int arm_binary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_unary_state {
    arm_op op;
    arm_epilogue epi;
    int32_t half;
} arm_unary_state;
int arm_unary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_affine_state {
    arm_op op;
    int64_t outer, C, inner;
    const float *scale, *shift;
} arm_affine_state;
int arm_affine_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_norm_state {
    arm_op op;
    int64_t rows, n, per_row;
    float eps;
    const float *scale, *shift;
    int32_t scale_input, shift_input;
} arm_norm_state;
int arm_norm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_reduce_state {
    arm_op op;
    int64_t rows, n;
    int32_t kind;
    int32_t half; /* fp16 rows in, fp16 results out (the fp16 domain) */
} arm_reduce_state;
int arm_reduce_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_softmax_state {
    arm_op op;
    int64_t outer, axis, inner;
    int32_t log;
    float scale; /* softmax of scale * x (a Mul by a constant scalar fused in: fuse.py) */
} arm_softmax_state;
int arm_softmax_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_pool_state {
    arm_op op;
    int64_t planes;
    arm_pool_geom g;
    float *work;                   /* slices x work_floats */
    int64_t work_floats;
    int32_t slices;
    int32_t half; /* fp16 planes in and out (the fp16 domain) */
} arm_pool_state;
int arm_pool_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_concat_state {
    arm_op op;
    int64_t outer, elem;
    int32_t n;
    const int64_t *block;
} arm_concat_state;
int arm_concat_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* QLinearConv / ConvInteger with constant weights and quantization parameters */
typedef struct arm_qconv_state {
    arm_op op;
    const arm_qkernels *k;
    int32_t depthwise, is_uint8, zx, out_bytes, bias_input;
    int64_t N, O, group, og;
    arm_conv_geom g;
    const int8_t *w;       /* gemm: packed per group */
    const int16_t *w16;    /* depthwise: w - zw */
    int64_t w_group_bytes;
    arm_qepilogue epi;     /* per-row arrays cover all O rows */
    int8_t *bwork;
    int32_t *colsum, *acc;
    int16_t *dwork;
    int64_t chunk_cols;
    int32_t slices;                          /* scratch slices: one per thread */
    int64_t bwork_bytes, acc_elems, dwork_elems; /* the size of each slice */
    int32_t zx_input; /* >= 0: x's zero point arrives at run (ConvInteger's input 2): zx and epi.db set then */
    /* 3x3 stride-1 pad-1 read in place (arm_q_conv3x3_tiles): w packed in its k order, xq the padded quads
     * (plane pixels each), off the taps' byte offsets, the quads and the step between them; direct 0: im2col */
    int32_t direct;
    int64_t groups, plane;
    int8_t *xq;
    const int64_t *off;
} arm_qconv_state;
int arm_qconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* QLinearMatMul / MatMulInteger: A [M][K] (uint8/int8) at run, B [K][N] packed at prepare when constant */
typedef struct arm_qmatmul_state {
    arm_op op;
    const arm_qkernels *k;
    int32_t a_uint8, out_bytes;
    int64_t M, K, N;
    const int8_t *bp;
    arm_qepilogue epi; /* da, db per column, colsum of B, mult per column, zy; rowsum filled at run */
    int8_t *ap;
    int32_t *rowsum, *acc;
    /* MatMulInteger's inputs that may arrive at run (-1: constant, taken at prepare): B (packed into
     * bp, colsum), A's and B's zero points (into da, db); b_uint8: B's dtype */
    int32_t b_input, za_input, zb_input, b_uint8;
} arm_qmatmul_state;
int arm_qmatmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* -- threads.c: the op layer's work split over the session's threads (parallel.h) -- */
static inline int arm_threads(const void *state) {
    const int t = ((const arm_op *)state)->threads;
    return t > 1 ? t : 1;
}
/* C = epilogue(A @ B) of packed operands, split into row or column panel ranges across threads */
void arm_gemm_par(const arm_fkernels *k, int threads, int64_t M, int64_t N, int64_t K, const void *ap, const void *bp,
                  void *c, int64_t ldc, const arm_epilogue *e);
/* the float Conv (GEMM, Winograd or depthwise) of arm_conv_run */
void arm_conv_par(const arm_conv_state *s, const char *x, char *y, const float *bias);
/* the int8 Conv (GEMM or depthwise) of arm_qconv_run; e: its epilogue with a run-time bias placed */
void arm_qconv_par(const arm_qconv_state *s, const char *x, char *y, const arm_qepilogue *e);
/* int32 C[M][N] (row stride ldc) = A @ B of packed int8 operands, split into column panel ranges */
void arm_qgemm_par(const arm_qkernels *k, int threads, int64_t M, int64_t N, int64_t K4, const int8_t *ap,
                   const int8_t *bp, int32_t *c, int64_t ldc);
/* whether M*N*K multiply-adds are worth more than one thread */
int arm_par_parts(int threads, double macs);

/* an fp32 execution run on fp16-domain tensors (ops.c); buffers NULL for tensors that are not fp16 */
#define ARM_WIDEN_MAX_IN 16
#define ARM_WIDEN_MAX_OUT 4
typedef struct arm_widen_state {
    arm_op op;
    mnn_run_fn run;
    void *inner;
    int32_t n_in, n_out;
    float *in_buf[ARM_WIDEN_MAX_IN], *out_buf[ARM_WIDEN_MAX_OUT];
} arm_widen_state;
int arm_widen_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
