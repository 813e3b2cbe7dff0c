/* Reductions and the ops near them on x86 (mnn_x86/_reduce.pyx, ops_reduce.py).
 *
 * A reduction over any set of axes is laid out at prepare (ops_reduce.py): size-1 axes dropped,
 * adjacent axes of the same kind merged, so the input is kept axes (kdim/kstr) around reduced ones
 * (rdim/rstr) and two contiguous ends: `inner` kept elements (the outputs of one row, vectorized
 * across) or, when the last axis is reduced, a `run` of reduced elements (vectorized along). */
#ifndef MNN_X86_REDUCE_H
#define MNN_X86_REDUCE_H

#include "family.h"

/* what each element adds to its output's accumulator */
enum x86_reduce_kind { X86_R_SUM, X86_R_ABS, X86_R_SQ, X86_R_PROD, X86_R_MAX, X86_R_MIN, X86_R_EXP, X86_R_POW };
/* what is done to an accumulator when it is stored */
enum x86_reduce_fin { X86_F_NONE, X86_F_MEAN, X86_F_SQRT, X86_F_LOG, X86_F_LSE, X86_F_ROOT };

#define X86_REDUCE_DIMS 4 /* kept (or reduced) axes between the others: at most 4 of 8 after merging */

typedef struct {
    x86_op op;
    int32_t dtype, kind, fin; /* dtype: the input's, set at each run */
    int32_t nk, nr;
    int64_t kdim[X86_REDUCE_DIMS], kstr[X86_REDUCE_DIMS], rdim[X86_REDUCE_DIMS], rstr[X86_REDUCE_DIMS];
    int64_t inner, run;  /* one of them is 1 */
    int64_t n_out;       /* outputs: prod(kdim) * inner */
    int64_t n_red;       /* reduced positions a run starts at: prod(rdim) */
    double count;        /* elements per output: n_red * run (ReduceMean's divisor) */
    double power;        /* X86_R_POW adds |x|^power, X86_F_ROOT takes the power-th root (GlobalLpPool) */
    int64_t parts;       /* > 1: the reduction is cut into parts (few outputs, many threads) */
    void *partial;       /* parts * n_out accumulators (8 bytes each) when parts > 1 */
    double *shift;       /* ReduceLogSumExp: each output's maximum (n_out), else NULL */
} x86_reduction_state;
int x86_reduction_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* ArgMax / ArgMin / Hardmax / CumSum / CumProd / TopK / LpNormalization / LRN: along (LRN: across)
 * one axis of [outer][axis][inner] */
typedef struct {
    x86_op op;
    int32_t dtype;       /* the input's, set at each run */
    int32_t mode;        /* arg: 0 max, 1 min; cumulative: 0 sum, 1 prod; topk: 1 largest, 0 smallest; lpnorm: p */
    int32_t last;        /* arg: the last index on ties; cumulative: exclusive */
    int32_t reverse;     /* cumulative: from the end of the axis */
    int64_t outer, axis, inner, k; /* k: TopK's count, LRN's size */
    double alpha, beta, bias;      /* LRN */
    int64_t *work;       /* topk: (axis) indices per thread */
} x86_axis_state;
int x86_arg_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_hardmax_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_cumulative_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_topk_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
/* LpNormalization (mode: p, 1 or 2) along the axis; LRN across it (k: size; alpha, beta, bias) */
int x86_lpnorm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_lrn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* LayerNormalization whose scale and bias broadcast to the normalized shape (or are absent): each
 * row of n normalized in double, then y = x^ * scale + bias, both walked by their own strides over
 * the normalized axes (merged; a stride 0 repeats) */
typedef struct {
    x86_op op;
    int32_t dtype, nd;
    int32_t scale_input, bias_input; /* the kernel's inputs they arrive at, or -1: absent */
    int64_t rows, n;
    int64_t dim[MNN_MAX_DIMS], sstr[MNN_MAX_DIMS], bstr[MNN_MAX_DIMS];
    double eps;
} x86_layernorm_state;
int x86_layernorm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
