/* Resize of any rank and mode as separable passes over tables of taps (spatial.h) */
#include <string.h>

#include "spatial.h"

#define RESIZE_ND_GRAIN 8192 /* output elements: fewer are not worth a thread */

typedef struct {
    const x86_resize_pass *p;
    const float *x;
    float *y;
    float fill;
} pass_job;

/* the resized axis is the last (inner == 1): each output element gathers its taps from one row */
X86_CLONES static void gather_row(float *restrict y, const float *restrict x, const int32_t *idx, const float *w,
                                  int64_t out, int32_t taps) {
    if (taps == 2) {
        for (int64_t j = 0; j < out; ++j) y[j] = w[2 * j] * x[idx[2 * j]] + w[2 * j + 1] * x[idx[2 * j + 1]];
        return;
    }
    if (taps == 4) {
        for (int64_t j = 0; j < out; ++j) {
            const int32_t *i = idx + 4 * j;
            const float *c = w + 4 * j;
            y[j] = (c[0] * x[i[0]] + c[1] * x[i[1]]) + (c[2] * x[i[2]] + c[3] * x[i[3]]);
        }
        return;
    }
    for (int64_t j = 0; j < out; ++j) {
        float acc = 0.0f;
        for (int32_t k = 0; k < taps; ++k) acc += w[j * taps + k] * x[idx[j * taps + k]];
        y[j] = acc;
    }
}

/* the resized axis has `inner` elements after it: an output row is a weighted sum of whole input rows */
X86_CLONES static void scale_row(float *restrict y, const float *restrict x, float w, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = w * x[i];
}

X86_CLONES static void add_row(float *restrict y, const float *restrict x, float w, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += w * x[i];
}

static void fill_row(float *y, float v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = v;
}

/* items [lo, hi): whole outer slices (inner == 1) */
static void last_axis(void *ctx, int64_t lo, int64_t hi, int worker) {
    const pass_job *j = (const pass_job *)ctx;
    const x86_resize_pass *p = j->p;
    (void)worker;
    for (int64_t o = lo; o < hi; ++o) {
        float *y = j->y + o * p->out;
        gather_row(y, j->x + o * p->in, p->idx, p->w, p->out, p->taps);
        if (p->outside)
            for (int64_t k = 0; k < p->out; ++k) y[k] = p->outside[k] ? j->fill : y[k];
    }
}

/* items [lo, hi): output rows (o, j) of `inner` elements */
static void inner_axis(void *ctx, int64_t lo, int64_t hi, int worker) {
    const pass_job *j = (const pass_job *)ctx;
    const x86_resize_pass *p = j->p;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t o = r / p->out, k0 = (r % p->out) * p->taps;
        float *y = j->y + r * p->inner;
        const float *x = j->x + o * p->in * p->inner;
        if (p->outside && p->outside[r % p->out]) {
            fill_row(y, j->fill, p->inner);
            continue;
        }
        scale_row(y, x + p->idx[k0] * p->inner, p->w[k0], p->inner);
        for (int32_t k = 1; k < p->taps; ++k) add_row(y, x + p->idx[k0 + k] * p->inner, p->w[k0 + k], p->inner);
    }
}

int x86_resize_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_resize_nd_state *s = (x86_resize_nd_state *)state;
    (void)n_in;
    (void)n_out;
    if (ins[0].dtype != MNN_FLOAT32) {
        s->op.error = "x86 Resize (cubic, antialias, roi or N-D) takes float32 tensors";
        return 1;
    }
    const float *x = (const float *)ins[0].data;
    for (int32_t i = 0; i < s->n_pass; ++i) {
        const x86_resize_pass *p = &s->pass[i];
        float *y = i == s->n_pass - 1 ? (float *)outs[0].data : s->work[i % 2];
        pass_job j = {p, x, y, s->extrapolation};
        if (p->inner == 1)
            x86_pool->ranges(s->op.threads, p->outer, RESIZE_ND_GRAIN / (p->out + 1) + 1, last_axis, &j);
        else
            x86_pool->ranges(s->op.threads, p->outer * p->out, RESIZE_ND_GRAIN / (p->inner + 1) + 1, inner_axis, &j);
        x = y;
    }
    return 0;
}
