/* Spatial ops on x86 (mnn_x86/_spatial.pyx, ops_spatial.py): ConvTranspose and 3-D Conv on _x86's
 * packed GEMM (an inner MatMul execution, called per image and group), and Resize from index and
 * weight tables computed at prepare. 1-D and 2-D geometry runs as 3-D with unit leading axes. */
#ifndef MNN_X86_SPATIAL_H
#define MNN_X86_SPATIAL_H

#include <string.h>

#include "family.h"

/* a prepared _x86.matmul execution this op calls: C = A @ B (+ bias) for the A, B, C it is handed */
typedef struct {
    mnn_run_fn run;
    void *state;
} x86_inner_gemm;

/* C = A @ B (+ bias: the inner execution was built to read it from its input 2) through `g`; a
 * failure's message goes to `op` */
static inline int x86_inner_gemm_call(x86_op *op, const x86_inner_gemm *g, const float *a, const float *b,
                                      const float *bias, float *c) {
    mnn_tensor t[4];
    memset(t, 0, sizeof t);
    t[0].data = (void *)a;
    t[1].data = (void *)b;
    t[2].data = (void *)bias;
    t[3].data = c;
    for (int i = 0; i < 4; ++i) t[i].dtype = MNN_FLOAT32;
    if (g->run(g->state, t, bias ? 3 : 2, &t[3], 1) == 0) return 0;
    op->error = ((const x86_op *)g->state)->error;
    return 1;
}

/* 3-D window geometry: input and output sizes, kernel, strides, dilations, begin pads (D, H, W) */
typedef struct {
    int64_t in[3], out[3], k[3], s[3], d[3], p[3];
} x86_window3;

/* the indices i in [0, n) whose place i*s + t*d - p (tap t) falls in [0, bound): [*lo, *hi). For
 * ConvTranspose i is an input index and bound the output size; for Conv, an output index and the input's */
static inline void x86_tap_range(int64_t n, int64_t bound, int64_t s, int64_t d, int64_t p, int64_t t, int64_t *lo,
                                 int64_t *hi) {
    const int64_t off = t * d - p, last = bound - 1 - off;
    const int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t h = last < 0 ? 0 : last / s + 1;
    if (h > n) h = n;
    *lo = l;
    *hi = h > l ? h : l;
}

/* ConvTranspose: per image and group, col (Mg*K, S) = W_g^T (Mg*K, Cg) @ X_g (Cg, S) by the inner GEMM
 * (K: kernel taps, S: input pixels), then each output channel is its bias plus the col rows of its
 * taps added at their strided, dilated places (col2im), then the fused activation. */
typedef struct {
    x86_op op;
    x86_inner_gemm gemm;
    x86_window3 g;
    int64_t C, M, group;        /* input channels, output channels, groups */
    const float *weight, *bias; /* constants copied at prepare, or NULL: read inputs 1 and 2 at run */
    int32_t bias_input;         /* input holding the bias at run (-1: none or constant) */
    float *col;                 /* group * (M/group)*K * S floats */
    int32_t act;
    float act_alpha, act_beta;
} x86_deconv_state;
int x86_deconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Conv over 3 spatial axes: per image and group, col (Cg*K, OS) gathered from the padded input
 * (im2col), then Y_g (Og, OS) = W_g (Og, Cg*K) @ col with bias and activation in the GEMM's epilogue */
typedef struct {
    x86_op op;
    x86_inner_gemm gemm;
    x86_window3 g;
    int64_t C, O, group;
    const float *weight, *bias; /* as in x86_deconv_state */
    int32_t bias_input;
    float *col;                 /* (C/group)*K * OS floats */
} x86_conv3d_state;
int x86_conv3d_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Resize of NCHW planes. nearest: any element size, out[oh][ow] = in[row[oh]][col[ow]] (offsets in
 * elements). linear (float32): rows lo/hi with the hi weight per output row and column; each worker
 * blends two horizontally interpolated rows (work: threads * 2 * OW floats). */
typedef struct {
    x86_op op;
    int32_t linear;
    int32_t repeat;  /* nearest, float32 and the like: col[ow] = ow / repeat over whole rows (2x upsampling), or 0 */
    int64_t planes, H, W, OH, OW;
    const int64_t *row_lo, *row_hi, *col_lo, *col_hi; /* row_*: input row per output row; col_*: column */
    const float *row_w, *col_w;                       /* linear: the weight of hi */
    float *work;
} x86_resize_state;
int x86_resize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Resize of any rank and mode (cubic, antialias, tf_crop_and_resize, any axes) as separable passes, one
 * per resized axis, float32: the tensor seen as (outer, in, inner) becomes (outer, out, inner) with
 * y[o][j][i] = sum_k w[j*taps + k] * x[o][idx[j*taps + k]][i], or `extrapolation` where outside[j].
 * Passes ping-pong between two scratch tensors (work[0], work[1]); the last writes the output. */
#define X86_RESIZE_PASSES 8
typedef struct {
    int64_t outer, in, out, inner;
    int32_t taps;
    const int32_t *idx;
    const float *w;
    const int32_t *outside; /* NULL: every position reads the input */
} x86_resize_pass;

typedef struct {
    x86_op op;
    int32_t n_pass;
    float extrapolation;
    x86_resize_pass pass[X86_RESIZE_PASSES];
    float *work[2];
} x86_resize_nd_state;
int x86_resize_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
