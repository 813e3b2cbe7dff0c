/* mnn-x86 op layer: one state struct and one mnn_run_fn per op family.
 *
 * The Python side (mnn_x86/ops_*.py through _x86.pyx) fills a state at
 * prepare: shapes, strides, pre-packed weights, scratch. The run function is
 * what the core's run loop calls without the GIL; it only reads the state,
 * calls the ISA kernels through `op.k` and never allocates. */
#ifndef MNN_X86_OPS_H
#define MNN_X86_OPS_H

#include "op_head.h" /* x86_op, the head of every state */

struct x86_bf16_conv;   /* bf16.h */
struct x86_bf16_matmul; /* bf16.h */

/* floats a tensor takes: its elements, or an NC16 tensor's channels rounded up to blocks of 16
 * (what the element-wise ops walk over: the padding lanes go along, they are don't-care) */
static inline int64_t x86_tensor_floats(const mnn_tensor *t) {
    if (t->layout != X86_LAYOUT_NC16 || t->ndim != 4) return mnn_tensor_numel(t);
    return t->shape[0] * x86_nc16_channels(t->shape[1]) * t->shape[2] * t->shape[3];
}

/* Conv: im2col (or plain 1x1) + packed GEMM per (image, group), or depthwise */
typedef struct x86_conv_state {
    x86_op op;
    int32_t depthwise;
    int32_t weight_input; /* 1: weights arrive at run (packed into wpack then); -1: packed at prepare */
    int32_t bias_input;   /* 2: bias arrives at run; -1: constant (or none) */
    int64_t N, O, group, og;
    x86_conv_geom g;      /* one group: g.C = channels per group */
    float *w;             /* gemm: packed A of every group; depthwise: [C][kh*kw] */
    int64_t w_group_stride;
    const float *bias;    /* O floats or NULL */
    x86_epilogue epi;
    const struct x86_bf16_conv *bf16; /* non-NULL: the GEMM path on bf16 operands (precision="low", bf16.h) */
    float *work;          /* gemm: a packed im2col chunk per thread; depthwise: a padded plane per thread */
    int64_t chunk_cols, chunk_floats; /* gemm: output columns per chunk, floats per thread's chunk */
    int32_t per_item;                 /* gemm: one thread per work item (see x86_conv_plan); transposed:
                                       * one thread per chunk (x86_conv_transposed_plan) */
    /* -- inference (x86infer) -- */
    int32_t winograd; /* 1: F(4x4, 3x3); w holds 36 packed operands w_group_stride apart, chunk_cols is
                       * the tiles per chunk, per_item whether threads take whole chunks */
    int32_t wino_gemm_t; /* winograd with its GEMMs transposed: w holds 36 packed B operands (U^T) */
    int32_t transposed; /* 1: small planes, computed as C^T = X^T W^T (pixels as the GEMM's rows,
                         * see conv_transposed in op_conv.c); w then holds W^T packed as B */
    float *t_work;      /* transposed: the padded input, X^T of a chunk of chunk_cols pixels packed, its C^T */
    int64_t merge_h;    /* transposed, > 0: the N images run as one image of N * merge_h rows (g holds that
                         * geometry): kh = sh = 1 and no vertical padding make every row independent, so a
                         * batch of short 1-D sequences fills the GEMM's row tiles (op_conv.c) */
    int32_t pointwise;  /* 1: a 1x1 with an NC16 side (g.in_nc16 / g.out_nc16), by the kernels' pointwise;
                         * w then holds W^T packed as B, as for transposed */
    int32_t direct;     /* 1: few input channels, by the kernels' direct_conv; 2: output channels along the
                         * vectors, by dco_conv; w holds its packed weights, work d_worker_floats per thread */
    int64_t d_rows, d_parts, d_worker_floats; /* direct: its plan (x86_kernels.direct_plan or dco_plan) */
    int32_t pool;       /* direct: 1 when a max pooling follows (x86.ConvMaxPool), pg its geometry; d_rows
                         * and the rest then from x86_kernels.direct_pool_plan */
    x86_pool_geom pg;
    int32_t gap;        /* a plain 1x1 whose output only a global average pooling reads
                         * (x86.ConvGlobalAvgPool): y is [N][O], one mean per output channel, and w holds
                         * W^T in pack_b panels (x86_kernels.gap_panel) */
    int32_t res_input;  /* x86.ConvAdd: the input added to the convolution's result (a residual), else -1.
                         * The pointwise kernel adds it in registers before epi's activation; any other
                         * path runs with no activation and adds it, then res_act's, in passes over y */
    x86_epilogue res_act;
    int32_t pwdw;       /* x86.ConvDepthwise: the pointwise 1x1 above (w: W^T packed as B), then the
                         * depthwise convolution of dg (its C: this op's O) on its output, by the kernels'
                         * pointwise_dw; work x86_pwdw_floats(&dg) per thread */
    x86_conv_geom dg;
    const float *dw_w;  /* [C][kh*kw] */
    const float *dw_bias;
    x86_epilogue dw_epi;
} x86_conv_state;
int x86_conv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
/* a transposed convolution's pixels per chunk (a multiple of MR, or all of them), whether each thread
 * takes whole chunks (per_item) and the scratch (floats) */
void x86_conv_transposed_plan(const x86_kernels *k, const x86_conv_geom *g, int64_t O, int threads, int merged, int64_t *chunk,
                              int32_t *per_item, int64_t *work_floats);

/* MatMul / Gemm: batch of C[t] = epilogue(A[t] @ B[t]) */
typedef struct x86_matmul_state {
    x86_op op;
    int64_t M, N, K, batch;
    int64_t a_rs, a_cs, b_rs, b_cs;   /* element strides within one matrix of the inputs */
    const int64_t *a_off, *b_off;     /* per output matrix: element offset into the input */
    const float *b_packed;            /* B packed at prepare, or NULL: packed at run */
    int64_t b_packed_stride;          /* floats between the batches of b_packed (0: one B for all) */
    int64_t a_work_floats, b_work_floats; /* A's packing (and B's, where it arrives at run): the run's scratch */
    int32_t bias_input;               /* >= 0: epi.bias is this input's data at run */
    x86_epilogue epi;
    const struct x86_bf16_matmul *bf16; /* non-NULL: B packed as bf16 at prepare (precision="low", bf16.h) */
    const float *b_narrow;            /* non-NULL: a constant B of N <= X86_NARROW_N columns as B^T, [N][kp] */
    int64_t b_narrow_kp;              /* K rounded up to 16, the rows zero-padded */
} x86_matmul_state;
/* op_narrow.c: C = epilogue(A @ B) for a constant B of few columns, by dot products with B^T's rows */
#define X86_NARROW_N 8
void x86_matmul_narrow(const x86_matmul_state *s, const float *a, float *y, const x86_epilogue *e);
/* one row of A times the packed constant B, panel by panel in order (M = 1, N <= X86_ROW_MAX_N) */
#define X86_ROW_MAX_N 4096
int x86_matmul_row_fits(const x86_matmul_state *s);
void x86_matmul_row(const x86_matmul_state *s, const float *a, float *y, const x86_epilogue *e);
int x86_matmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Where batch matrix t of an x86.Attention operand lies: at off + (t / heads) * bs + (t % heads) * hs, its
 * rows rs floats apart. Dense: heads 1, bs rows * cols, rs cols. A [b][rows][heads][cols] tensor read in
 * place (the heads split or merged by a Transpose that the op takes in): heads h, bs rows * h * cols,
 * hs cols, rs h * cols. Part i of a [b][rows][3][h][cols] qkv projection: off i * h * cols, bs and rs
 * 3 times those. */
typedef struct x86_attention_walk {
    int64_t heads, bs, hs, rs;
    int64_t off; /* the first matrix's first element (Q, K and V parts of one packed qkv projection) */
} x86_attention_walk;

/* x86.Attention (op_attention.c): per batch matrix t, Y = softmax(scale * Q K^T + mask) V with Q [M][D],
 * K^T [D][N] (or K [N][D]: k_rows), V [N][Dv] and Y [M][Dv], each where its walk says */
typedef struct x86_attention_state {
    x86_op op;
    int64_t batch, M, N, D, Dv;
    int32_t k_rows;        /* 1: input 1 is K ([N][D]), 0: K^T ([D][N]) */
    int32_t mask_input;    /* input index of the additive mask, or -1 */
    const int64_t *mask_off; /* per batch matrix: the offset of its mask row */
    int64_t mask_cs;       /* 1: the mask row runs along the keys, 0: one value for them all */
    x86_attention_walk q, k, v, y;
    float scale;
    x86_epilogue epi;      /* no bias, no activation: the GEMMs' epilogue, alpha set per GEMM */
} x86_attention_state;
int x86_attention_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* binary element-wise op over collapsed, broadcast dims */
typedef struct x86_binary_state {
    x86_op op;
    int32_t binop, ndim;
    int64_t dims[MNN_MAX_DIMS], sa[MNN_MAX_DIMS], sb[MNN_MAX_DIMS];
} x86_binary_state;
int x86_binary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* activation, in place or not */
typedef struct x86_unary_state {
    x86_op op;
    x86_epilogue epi;
} x86_unary_state;
int x86_unary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* y = x * scale[c] + shift[c]: inference batch norm, folded at prepare when its
 * parameters are constants, else folded at each run from inputs 1..4 */
typedef struct x86_affine_state {
    x86_op op;
    int64_t outer, C, inner;
    float *scale, *shift; /* C floats each */
    int32_t runtime_params;
    float eps;
} x86_affine_state;
int x86_affine_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* LayerNormalization (per-element affine) and InstanceNormalization (per channel) */
typedef struct x86_norm_state {
    x86_op op;
    int64_t rows, n, per_row;
    float eps;
    const float *scale, *shift; /* constants, or NULL */
    int32_t scale_input, shift_input; /* >= 0: taken from this input at run */
} x86_norm_state;
int x86_norm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* GlobalMaxPool (kind 0), GlobalAveragePool (kind 1): one value per row */
typedef struct x86_reduce_state {
    x86_op op;
    int64_t rows, n;
    int32_t kind;
} x86_reduce_state;
int x86_reduce_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct x86_softmax_state {
    x86_op op;
    int64_t outer, axis, inner;
    int32_t log; /* 1: LogSoftmax */
} x86_softmax_state;
int x86_softmax_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct x86_pool_state {
    x86_op op;
    int64_t planes;
    x86_pool_geom g;
    float *work;
} x86_pool_state;
int x86_pool_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* layout ops: Concat (blocks of every input, in turn, per outer index) and
 * Transpose (strided copy); Reshape and friends are views the core handles */
typedef struct x86_concat_state {
    x86_op op;
    int64_t outer;
    int32_t n;
    const int64_t *block; /* elements of input i per outer index */
} x86_concat_state;
int x86_concat_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

typedef struct x86_transpose_state {
    x86_op op;
    int32_t ndim;
    int64_t dims[MNN_MAX_DIMS];    /* output shape */
    int64_t strides[MNN_MAX_DIMS]; /* input element stride of each output axis */
} x86_transpose_state;
int x86_transpose_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
