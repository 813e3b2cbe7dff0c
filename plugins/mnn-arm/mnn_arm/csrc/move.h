/* mnn-arm data movement and reductions (move.c, reduce.c): the states their run functions read.
 * Layout plans (merged dims, strides, per-axis maps) are made at prepare in mnn_arm/ops_move.py
 * and ops_reduce.py; the run functions only walk them. */
#ifndef MNN_ARM_MOVE_H
#define MNN_ARM_MOVE_H

#include "ops.h"

#define ARM_MOVE_MAX_DIMS 16 /* Tile doubles the dims of its input: one repeat axis per axis */

/* out (dense) [i0..in-1] = in[base + sum i_d * st[d]], elements of `elem` bytes: Slice, Transpose,
 * Expand, Tile, DepthToSpace, SpaceToDepth */
typedef struct arm_strided_state {
    arm_op op;
    int32_t ndim, elem;
    int64_t base;
    int64_t dims[ARM_MOVE_MAX_DIMS], st[ARM_MOVE_MAX_DIMS];
} arm_strided_state;
int arm_strided_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
/* y[a][b] = x[a + b * sb] (A x B, dense), by 4x4 NEON blocks */
void arm_transpose_f32(float *y, const float *x, int64_t A, int64_t B, int64_t sb);

/* Split: the inverse of Concat (arm_concat_state): output k takes block[k] of every outer row */
int arm_split_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Gather along an axis: x [outer][axis][inner], indices (int32 / int64, any shape, n of them)
 * -> y [outer][n][inner]; negative indices count from the end, others are an error */
typedef struct arm_gather_state {
    arm_op op;
    int32_t idx_bytes;
    int64_t outer, axis, inner_bytes;
} arm_gather_state;
int arm_gather_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* GatherElements: y[i] = x[i with axis coordinate idx[i]]; y, idx dense [outer][n][inner],
 * x [outer][axis][inner] */
typedef struct arm_gather_el_state {
    arm_op op;
    int32_t idx_bytes, elem;
    int64_t outer, n, axis, inner;
} arm_gather_el_state;
int arm_gather_elements_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Where(cond, x, y) with broadcasting: per output dim the element strides of the three inputs */
typedef struct arm_where_state {
    arm_op op;
    int32_t ndim, elem;
    int64_t dims[MNN_MAX_DIMS], sc[MNN_MAX_DIMS], sx[MNN_MAX_DIMS], sy[MNN_MAX_DIMS];
} arm_where_state;
int arm_where_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Pad: per output axis d, map[off[d] + i] is the input element offset of output index i along d
 * (input index times its stride), or -1 for the constant; the output is dense */
typedef struct arm_pad_state {
    arm_op op;
    int32_t ndim, elem;
    int64_t dims[MNN_MAX_DIMS], off[MNN_MAX_DIMS];
    const int64_t *map;
    uint8_t value[8]; /* the constant, in the tensor's dtype */
} arm_pad_state;
int arm_pad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* reductions (reduce.c), float32. kinds: enum arm_reduce_kind. The reduced axes either form one
 * block (x [outer][n][inner] -> y [outer][inner], NEON over rows or over inner) or, scattered, are
 * walked by kdims/kst (kept, dense output) and rdims/rst (reduced) */
enum arm_reduce_kind {
    ARM_RED_SUM, ARM_RED_MEAN, ARM_RED_MAX, ARM_RED_MIN, ARM_RED_PROD, ARM_RED_SUMSQ, ARM_RED_L1, ARM_RED_L2,
    ARM_RED_LOGSUM, ARM_RED_LOGSUMEXP
};
typedef struct arm_reduce_any_state {
    arm_op op;
    int32_t kind, block;
    int64_t outer, n, inner;
    int32_t nk, nr;
    int64_t kdims[MNN_MAX_DIMS], kst[MNN_MAX_DIMS], rdims[MNN_MAX_DIMS], rst[MNN_MAX_DIMS];
} arm_reduce_any_state;
int arm_reduce_any_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* element-wise math (math.c). Unary float32 kinds (Not: bool -> bool, IsNaN: float32 -> bool) */
enum arm_math_kind {
    ARM_MATH_EXP, ARM_MATH_LOG, ARM_MATH_SQRT, ARM_MATH_NEG, ARM_MATH_ABS, ARM_MATH_RECIPROCAL, ARM_MATH_ERF,
    ARM_MATH_FLOOR, ARM_MATH_CEIL, ARM_MATH_SIN, ARM_MATH_COS, ARM_MATH_SOFTPLUS, ARM_MATH_ELU, ARM_MATH_SELU,
    ARM_MATH_MISH, ARM_MATH_NOT, ARM_MATH_ISNAN, ARM_MATH_ROUND
};
typedef struct arm_math_state {
    arm_op op;
    int32_t kind;
    float alpha, gamma; /* Elu, Selu */
} arm_math_state;
int arm_math_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* dtype codes of the math and Cast kernels */
enum arm_dtype { ARM_DT_F32, ARM_DT_F64, ARM_DT_I32, ARM_DT_I64, ARM_DT_I16, ARM_DT_I8, ARM_DT_U8, ARM_DT_BOOL };

/* broadcasting binary ops besides arm_binary's arithmetic: Pow (float32), comparisons (float32 / int32 /
 * int64 -> bool), And / Or / Xor (bool); per output dim the element strides of both inputs */
enum arm_bin2_kind {
    ARM_BIN_POW, ARM_BIN_EQUAL, ARM_BIN_LESS, ARM_BIN_GREATER, ARM_BIN_LESS_EQ, ARM_BIN_GREATER_EQ, ARM_BIN_AND,
    ARM_BIN_OR, ARM_BIN_XOR,
    /* int32 / int64 arithmetic (numpy's: wrapping two's complement) */
    ARM_BIN_IADD, ARM_BIN_ISUB, ARM_BIN_IMUL, ARM_BIN_IMAX, ARM_BIN_IMIN
};
typedef struct arm_bin2_state {
    arm_op op;
    int32_t kind, dtype, ndim, in_elem, out_elem;
    int64_t dims[MNN_MAX_DIMS], sa[MNN_MAX_DIMS], sb[MNN_MAX_DIMS];
} arm_bin2_state;
int arm_bin2_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct arm_cast_state {
    arm_op op;
    int32_t from, to;
} arm_cast_state;
int arm_cast_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Resize (resize.c), float32: one separable pass per resized axis, x [outer][in][inner] ->
 * y [outer][out][inner], y[j] = sum_k w[j][k] * x[idx[j][k]] (or `extrap` where outside[j]); the passes
 * chain through work buffers, the last one writes the output */
typedef struct arm_resize_pass {
    int64_t outer, in, out, inner, taps;
    const int64_t *idx;
    const float *w;
    const uint8_t *outside; /* NULL: none */
    float extrap;
    int32_t nearest;
} arm_resize_pass;
typedef struct arm_resize_state {
    arm_op op;
    int32_t npass;
    const arm_resize_pass *pass;
    float *work[2];
    int32_t half; /* fp16 tensors (the fp16 domain); only when every pass is nearest: 2-byte copies */
} arm_resize_state;
int arm_resize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* ConvTranspose, 1-D and 2-D (deconv.c): per image and group, cols [og*kh*kw][H*W] = W_g^T X_g on the
 * path's packed GEMM (W_g^T packed at prepare), then col2im adds each tap's plane at its strided,
 * dilated place in the output (bias first, the activation after) */
typedef struct arm_deconv_state {
    arm_op op;
    const arm_fkernels *k;
    int64_t N, C, H, W, O, OH, OW, group, cg, og, kh, kw, sh, sw, dh, dw, pt, pl;
    const void *w;
    int64_t w_group_bytes;
    const float *bias; /* NULL: none */
    arm_epilogue act;  /* the fused activation, run over the output afterwards */
    float *cols;
    void *bwork;
} arm_deconv_state;
int arm_deconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* GatherND (move.c): per batch (the first batch_dims axes), each index tuple (k int64 values) picks
 * a block of inner_bytes; dims/strides (in blocks) of the k indexed axes */
typedef struct arm_gather_nd_state {
    arm_op op;
    int32_t k;
    int64_t nbatch, nidx, inner_bytes, batch_blocks;
    int64_t dims[MNN_MAX_DIMS], st[MNN_MAX_DIMS];
} arm_gather_nd_state;
int arm_gather_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* BatchNormalization with parameters that arrive at run (math.c): scale and shift per channel
 * computed into work, then the per-channel affine */
typedef struct arm_bn_rt_state {
    arm_op op;
    int64_t outer, C, inner;
    float eps;
    float *scale, *shift;
} arm_bn_rt_state;
int arm_bn_rt_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* OneHot (math.c): y [outer][depth][inner] = values[1] where the index (any numeric dtype, negative
 * from the end) equals the position along depth, else values[0]; elements of `elem` bytes */
typedef struct arm_onehot_state {
    arm_op op;
    int32_t idx_dtype, elem;
    int64_t outer, depth, inner;
} arm_onehot_state;
int arm_onehot_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Scaler and Normalizer of ai.onnx.ml (math.c), float32 results: Scaler (x - offset[f]) * scale[f] per
 * feature f (the last of `features`), in float64 for float64 input; Normalizer each row of `features`
 * values divided by its max (kind 0), L1 (1) or L2 (2) norm, a zero norm leaving the row */
typedef struct arm_ml_state {
    arm_op op;
    int32_t kind, dtype;
    int64_t features;
    const double *offset, *scale; /* Scaler: one per feature */
} arm_ml_state;
int arm_scaler_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int arm_normalizer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* LinearClassifier of ai.onnx.ml (ml.c): scores = x coef^T + intercepts in double, the label of the
 * first highest score (k >= 2) or of the sign (k == 1), scores post-transformed (ml.h's arm_ml_post) */
typedef struct arm_linclass_state {
    arm_op op;
    int32_t dtype, post, has_labels;
    int64_t rows, features, k;
    const double *coef, *intercepts; /* [k][features], [k] (zeros when absent) */
    const int64_t *labels;
    double *work; /* [k] */
} arm_linclass_state;
int arm_linclass_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
