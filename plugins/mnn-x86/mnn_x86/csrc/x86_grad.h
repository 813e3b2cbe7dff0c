/* mnn-x86 training kernels: what each ISA translation unit provides for the
 * backward ops and the optimizer updates of a compiled training step.
 *
 * Like x86.h, one table per ISA level (grad_impl.h fills it in each isa_*.c);
 * x86_grad_kernels_for() hands out the one this CPU runs. It is a table of its
 * own, not part of x86_kernels, so the inference kernels and their table stay
 * untouched by training. */
#ifndef MNN_X86_GRAD_H
#define MNN_X86_GRAD_H

#include <stdint.h>

#include "x86.h"

#ifdef __cplusplus
extern "C" {
#endif

#define X86_GRAD_MAX_DIMS 8 /* MNN_MAX_DIMS of the C ABI: the dims SumToShape collapses to */

/* A whole convolution for its backward: N images, O output channels in
 * `group` groups; g is one group's geometry (g.C = input channels per group). */
typedef struct x86_convgrad_geom {
    x86_conv_geom g;
    int64_t N, O, group;
} x86_convgrad_geom;

/* SoftmaxCrossEntropy over logits [outer][C][inner]: target is per item
 * (int64 or int32 class, `ignore_index` skipped) or soft (float, [outer][C][inner]). */
enum x86_target_kind { X86_TARGET_I64 = 0, X86_TARGET_I32 = 1, X86_TARGET_F32 = 2 };
enum x86_reduction { X86_RED_NONE = 0, X86_RED_MEAN = 1, X86_RED_SUM = 2 };
typedef struct x86_ce_geom {
    int64_t outer, C, inner, ignore_index;
    float label_smoothing;
    int32_t target_kind, reduction;
} x86_ce_geom;

/* Fused optimizer updates (PyTorch's rules; see mnn_core/ops/optim_ops.py).
 * step is the 1-based step count (0 when the op has no step input). */
typedef struct x86_optim_params {
    float lr, step;
    float momentum, dampening, weight_decay;
    int32_t nesterov, decoupled;
    float beta1, beta2, eps;
} x86_optim_params;

typedef struct x86_grad_kernels {
    const char *name;
    /* y = act(conv(x, w) + bias) (act: relu or none; bias may be NULL), for weights that change every run.
     * work: x86_conv_forward_work_floats() per thread */
    void (*conv_forward)(const float *x, const float *w, const float *bias, float *y, const x86_convgrad_geom *g,
                         int relu, float *work, int threads);
    /* dw [O][C/group*kh*kw] and db [O] (db may be NULL) of a convolution from dy and x.
     * work: x86_conv_grad_weight_work_floats() per thread */
    void (*conv_grad_weight)(const float *dy, const float *x, float *dw, float *db, const x86_convgrad_geom *g,
                             float *work, int threads);
    /* dx [N][C][H][W] from dy and w [O][C/group][kh][kw]; work: x86_conv_grad_input_work_floats() per thread */
    void (*conv_grad_input)(const float *dy, const float *w, float *dx, const x86_convgrad_geom *g, float *work,
                            int threads);
    /* dx of max pooling over `planes` planes: each dy to its window's first maximum */
    void (*max_pool_grad)(const float *dy, const float *x, float *dx, int64_t planes, const x86_pool_geom *g,
                          int threads);
    /* MaxPool forward of 2x2 windows at stride 2, no padding, OH = H/2, OW = W/2 (NaN propagates) */
    void (*max_pool_2x2)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, int threads);
    /* C [M][N] = act(A @ B + bias) for runtime operands, nothing packed: A(m, k) = a[m*ars + k*acs] (acs == 1
     * when transB), B [K][N] or (transB) [N][K] contiguous, bias N floats or NULL, act relu or none */
    void (*gemm_rt)(int64_t M, int64_t N, int64_t K, const float *a, int64_t ars, int64_t acs, const float *b,
                    int transB, const float *bias, int relu, float *c, int threads);
    /* dx = dy * (y > 0) */
    void (*relu_grad)(const float *dy, const float *y, float *dx, int64_t n, int threads);
    /* y = x summed over the reduced axes of ndim collapsed dims (reduced: ystride 0) */
    void (*sum_to)(const float *x, float *y, int64_t ysize, int ndim, const int64_t *dims, const int64_t *ystrides);
    /* loss of SoftmaxCrossEntropy (loss: 1 float, or outer*inner for reduction none);
     * returns 0, or 1 when a class index is out of range */
    int (*softmax_ce)(const float *logits, const void *target, float *loss, const x86_ce_geom *g);
    /* dlogits of SoftmaxCrossEntropy; dloss: 1 float, or outer*inner for reduction none */
    int (*softmax_ce_grad)(const float *dloss, const float *logits, const void *target, float *dlogits,
                           const x86_ce_geom *g);
    /* p, buf -> new p, new buf (the outputs may alias the inputs) */
    void (*sgd_momentum)(const float *p, const float *g, const float *buf, float *p_out, float *buf_out, int64_t n,
                         const x86_optim_params *o, int threads);
    void (*sgd)(const float *p, const float *g, float *p_out, int64_t n, const x86_optim_params *o, int threads);
    void (*adam)(const float *p, const float *g, const float *m, const float *v, float *p_out, float *m_out,
                 float *v_out, int64_t n, const x86_optim_params *o, int threads);
} x86_grad_kernels;

/* scratch sizes (floats); even multiples of 16, so every thread's part stays 64-byte aligned.
 * An im2col buffer has GRAD_SLACK floats after it: its rows are written by whole vectors. */
#define GRAD_SLACK 16
static inline int64_t x86_grad_round16(int64_t n) { return (n + 15) / 16 * 16; }

/* The direct path of stride-1 convolutions (no im2col, no col2im). The input of one
 * image is copied into zero-padded planes of Hp x Wp (Hp = OH + (kh-1)*dh,
 * Wp = OW + (kw-1)*dw), and output positions are numbered "wide", p = oh*Wp + ow
 * for ow < Wp (the Wp - OW extra columns per row are junk, thrown away or zero).
 * Then tap (i, j) of channel c is one contiguous run of the padded input,
 * starting at c*plane + i*dh*Wp + j*dw, for every p at once: the convolution is
 * a GEMM whose B rows are offsets into the padded input instead of im2col rows.
 * Wide rows are Pr = Pw rounded up to 16 floats long (whole vectors on every ISA; the
 * positions past Pw junk too), so a run past the last plane reaches at most
 * (kw-1)*dw + 15 floats further: `slack`. */
typedef struct x86_direct_geom {
    int64_t Hp, Wp, plane, Pw, Pr, slack;
} x86_direct_geom;
static inline int x86_conv_direct(const x86_convgrad_geom *g) { return g->g.sh == 1 && g->g.sw == 1; }
static inline x86_direct_geom x86_direct_geometry(const x86_convgrad_geom *g) {
    x86_direct_geom d;
    d.Hp = g->g.OH + (g->g.kh - 1) * g->g.dh;
    d.Wp = g->g.OW + (g->g.kw - 1) * g->g.dw;
    d.plane = d.Hp * d.Wp;
    d.Pw = g->g.OH * d.Wp;
    d.Pr = x86_grad_round16(d.Pw);
    d.slack = x86_grad_round16((g->g.kw - 1) * g->g.dw + 16);
    return d;
}
/* per thread, direct path: the tap offsets (int64), then the padded planes of all C*group input channels */
static inline int64_t x86_direct_offsets_floats(const x86_convgrad_geom *g) {
    return x86_grad_round16(2 * (g->g.C * g->g.kh * g->g.kw + g->O + g->g.kh * g->g.kw));
}
static inline int64_t x86_direct_padded_floats(const x86_convgrad_geom *g) {
    const x86_direct_geom d = x86_direct_geometry(g);
    return x86_grad_round16(g->g.C * g->group * d.plane + d.slack);
}
/* per thread, direct path: one image's O output (or dy) rows in wide positions */
static inline int64_t x86_direct_wide_floats(const x86_convgrad_geom *g) {
    return g->O * x86_direct_geometry(g).Pr;
}
/* images whose im2col (or, direct, padded input and wide dy) a thread holds at once for the
 * weight gradient: about 256 KB (L2), at most 8 */
static inline int64_t x86_conv_grad_weight_block(const x86_convgrad_geom *g) {
    const int64_t per_image = x86_conv_direct(g)
                                  ? (x86_direct_padded_floats(g) + x86_direct_wide_floats(g)) * 4
                                  : g->g.OH * g->g.OW * g->g.C * g->g.kh * g->g.kw * g->group * 4;
    int64_t b = per_image > 0 ? (256 * 1024) / per_image : 8;
    return b < 1 ? 1 : b > 8 ? 8 : b;
}
/* per thread: the im2col of a block of images (direct: the offsets, then per image its padded input and
 * wide dy), then the dw [O][R] and db [O] accumulators */
static inline int64_t x86_conv_grad_weight_cols_floats(const x86_convgrad_geom *g) {
    const int64_t P = g->g.OH * g->g.OW, R = g->g.C * g->g.kh * g->g.kw, block = x86_conv_grad_weight_block(g);
    if (x86_conv_direct(g))
        return x86_direct_offsets_floats(g) + block * (x86_direct_padded_floats(g) + x86_direct_wide_floats(g));
    return x86_grad_round16(block * R * g->group * P + GRAD_SLACK);
}
static inline int64_t x86_conv_grad_weight_work_floats(const x86_convgrad_geom *g) {
    const int64_t R = g->g.C * g->g.kh * g->g.kw;
    return x86_conv_grad_weight_cols_floats(g) + x86_grad_round16(g->O * R + g->O);
}
/* per thread: one group's cols [R][P]; direct: the offsets, the padded dx planes and the wide dy */
static inline int64_t x86_conv_grad_input_work_floats(const x86_convgrad_geom *g) {
    const int64_t P = g->g.OH * g->g.OW, R = g->g.C * g->g.kh * g->g.kw;
    if (x86_conv_direct(g))
        return x86_direct_offsets_floats(g) + x86_direct_padded_floats(g) + x86_direct_wide_floats(g);
    return x86_grad_round16(R * P);
}
/* per thread: the im2col of one image; direct: the offsets, the padded input and one image's wide output */
static inline int64_t x86_conv_forward_work_floats(const x86_convgrad_geom *g) {
    const int64_t P = g->g.OH * g->g.OW, R = g->g.C * g->g.kh * g->g.kw;
    if (x86_conv_direct(g))
        return x86_direct_offsets_floats(g) + x86_direct_padded_floats(g) + x86_direct_wide_floats(g);
    return x86_grad_round16(R * g->group * P + GRAD_SLACK);
}

/* NULL unless the ISA is compiled in and this CPU runs it */
const x86_grad_kernels *x86_grad_kernels_for(const char *isa);

#ifdef __cplusplus
}
#endif
#endif
