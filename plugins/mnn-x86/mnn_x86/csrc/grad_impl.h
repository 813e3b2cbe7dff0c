/* Training kernels: convolution and max-pool backward, ReluGrad, SumToShape,
 * softmax cross-entropy (loss and gradient) and the fused optimizer updates.
 * Generic over `vf`; included by isa_body.h after gemm_impl.h, whose packed
 * GEMM the input gradient of a convolution uses. Fills this ISA's
 * x86_grad_kernels table (x86_grad.h).
 *
 * Stride-1 convolutions (LeNet's, most 3x3/5x5 ones) take the direct path
 * (x86_grad.h x86_direct_geom; "the direct path" below): no im2col, no col2im.
 * The forward is W @ taps(padded x), each tap a contiguous run of the padded
 * input at wide output positions; dw is dot products of wide dy rows with those
 * runs; dx accumulates W_t^T @ wide dy per tap t into padded dx planes. Other
 * strides take the im2col path described next.
 *
 * Convolution backward, per image (the threads take whole images, so no two
 * threads ever write the same dx; dw is summed in a fixed number of parts, each
 * over a fixed run of images, then the parts in order, so it is the same at any
 * thread count):
 *   dw: cols = im2col(x) as rows of the OH*OW output positions; then every
 *       dw[o][r] is a dot product of two contiguous rows, dy[o] . cols[r],
 *       computed GW_TO x GW_TR at a time along the positions (no transposes).
 *   dx: cols = W^T @ dy (K = output channels), then col2im adds each tap's
 *       row back onto dx.
 * The forward convolution of a training step (weights change every step, so
 * nothing is worth packing) is y = W @ cols per image. Both products go through
 * rowgemm: a register-tile GEMM that reads B straight from row-major rows
 * (cols or dy, already contiguous along the output positions) and broadcasts
 * A from any strided matrix, so neither operand is ever repacked. */
#ifndef MNN_X86_GRAD_IMPL_H
#define MNN_X86_GRAD_IMPL_H

#include <stdlib.h>

#include "x86_grad.h"

#if VLEN >= 16 /* AVX-512: 32 registers, 20 accumulators + 4 + 1 loads; LeNet's O = 16 and R = 150 tile exactly */
#define GW_TO 4 /* dy rows per dot tile */
#define GW_TR 5 /* im2col rows per dot tile */
#else
#define GW_TO 3 /* dy rows per dot tile */
#define GW_TR 4 /* im2col rows per dot tile: 12 accumulators + 4 loads in 16 registers */
#endif
#define GRAD_PARALLEL_MIN 65536
/* element-wise and 2x2-pooling passes run a few float per ns on one core: below this many elements
 * (about 50 us of work) a parallel loop does not pay for itself where it counts, on a machine whose
 * cores are shared */
#define GRAD_PARALLEL_MIN_STREAM (1 << 20)
/* the weight gradient's partial sums: at most this many, whatever the thread count (determinism) */
#define GRAD_DW_PARTS 8
#define GRAD_DW_PARTS_FLOATS (1 << 22) /* and at most this many floats for them all */

/* The loops run on the inference pool (op_threadpool.c, x86_parallel), each as a context struct and a
 * task: items are claimed one at a time and the caller waits only for items a worker took. An OpenMP
 * region ends in a barrier that waits for every thread of its team, scheduled or not: with one busy
 * process per core, a LeNet epoch took 2.6x longer at 2 threads than at 1 (benchmarks/RESULTS.md). */

#include "grad_gemm_impl.h"
#include "grad_conv_impl.h"
#include "grad_ops_impl.h"

/* -- optimizer updates ---------------------------------------------------------------------------- */

static void FN(sgd_momentum_range)(const float *p, const float *g, const float *buf, float *p_out, float *buf_out,
                                   int64_t n, const x86_optim_params *o) {
    const vf lr = vf_set1(o->lr), mu = vf_set1(o->momentum), keep = vf_set1(1.0f - o->dampening);
    const vf wd = vf_set1(o->weight_decay);
    const int first = o->step == 1.0f, nesterov = o->nesterov; /* PyTorch starts the buffer at d */
    for (int64_t i = 0; i < n; i += VLEN) {
        const int m = n - i < VLEN ? (int)(n - i) : VLEN;
        const vf pv = vf_load_n(p + i, m);
        const vf d = vf_fma(wd, pv, vf_load_n(g + i, m));
        const vf nb = first ? d : vf_fma(mu, vf_load_n(buf + i, m), vf_mul(keep, d));
        const vf step = nesterov ? vf_fma(mu, nb, d) : nb;
        vf_store_n(p_out + i, vf_fnma(lr, step, pv), m);
        vf_store_n(buf_out + i, nb, m);
    }
}

static void FN(sgd_momentum_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_stream_loop *s = (const grad_stream_loop *)ctx;
    (void)worker;
    FN(sgd_momentum_range)(s->a + lo, s->b + lo, s->c + lo, s->out0 + lo, s->out1 + lo, hi - lo, s->o);
}

static void FN(sgd_momentum)(const float *p, const float *g, const float *buf, float *p_out, float *buf_out,
                             int64_t n, const x86_optim_params *o, int threads) {
    grad_stream_loop s = {p, g, buf, NULL, p_out, buf_out, NULL, o};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN ? threads : 1, n, GRAD_CHUNK, FN(sgd_momentum_ranges), &s);
}

static void FN(sgd_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_stream_loop *s = (const grad_stream_loop *)ctx;
    const vf lr = vf_set1(s->o->lr), wd = vf_set1(s->o->weight_decay);
    (void)worker;
    for (int64_t i = lo; i < hi; i += VLEN) {
        const int m = hi - i < VLEN ? (int)(hi - i) : VLEN;
        const vf pv = vf_load_n(s->a + i, m);
        vf_store_n(s->out0 + i, vf_fnma(lr, vf_fma(wd, pv, vf_load_n(s->b + i, m)), pv), m);
    }
}

static void FN(sgd)(const float *p, const float *g, float *p_out, int64_t n, const x86_optim_params *o,
                    int threads) {
    grad_stream_loop s = {p, g, NULL, NULL, p_out, NULL, NULL, o};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN ? threads : 1, n, GRAD_CHUNK, FN(sgd_ranges), &s);
}

/* Adam / AdamW: the bias corrections in double, once; the rest per element as the compiler vectorizes it */
typedef struct {
    const float *p, *g, *m, *v;
    float *p_out, *m_out, *v_out;
    float b1, b2, eps, step_size, inv_bc2, shrink, l2;
} grad_adam_loop;

static void FN(adam_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_adam_loop *k = (const grad_adam_loop *)ctx;
    const float *p = k->p, *g = k->g, *m = k->m, *v = k->v; /* in locals: the stores may not alias them */
    float *p_out = k->p_out, *m_out = k->m_out, *v_out = k->v_out;
    const float b1 = k->b1, b2 = k->b2, eps = k->eps, step_size = k->step_size, inv_bc2 = k->inv_bc2;
    const float shrink = k->shrink, l2 = k->l2;
    (void)worker;
    for (int64_t i = lo; i < hi; ++i) {
        const float gi = g[i] + l2 * p[i];
        const float m2 = b1 * m[i] + (1.0f - b1) * gi, v2 = b2 * v[i] + (1.0f - b2) * gi * gi;
        const float denom = sqrtf(v2) * inv_bc2 + eps;
        p_out[i] = p[i] * shrink - step_size * m2 / denom;
        m_out[i] = m2;
        v_out[i] = v2;
    }
}

static void FN(adam)(const float *p, const float *g, const float *m, const float *v, float *p_out, float *m_out,
                     float *v_out, int64_t n, const x86_optim_params *o, int threads) {
    const double t = o->step;
    const float lr = o->lr, wd = o->weight_decay;
    grad_adam_loop k = {p, g, m, v, p_out, m_out, v_out, o->beta1, o->beta2, o->eps,
                        (float)((double)o->lr / (1.0 - pow((double)o->beta1, t))),
                        (float)(1.0 / sqrt(1.0 - pow((double)o->beta2, t))),
                        o->decoupled ? 1.0f - lr * wd : 1.0f, o->decoupled ? 0.0f : wd};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN ? threads : 1, n, GRAD_CHUNK, FN(adam_ranges), &k);
}

const x86_grad_kernels FN(x86_grad_kernels) = {
    STR(ISA),
    FN(conv_forward),
    FN(conv_grad_weight),
    FN(conv_grad_input),
    FN(max_pool_grad),
    FN(max_pool_2x2),
    FN(gemm_rt),
    FN(relu_grad),
    FN(sum_to),
    FN(softmax_ce),
    FN(softmax_ce_grad),
    FN(sgd_momentum),
    FN(sgd),
    FN(adam),
};

#endif
