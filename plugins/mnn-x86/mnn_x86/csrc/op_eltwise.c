/* Element-wise runs: binary ops, activations, per-channel affine, softmax. */
#include <math.h>

#include "ops.h"

static int check_f32(x86_op *op, const mnn_tensor *t, int32_t n) {
    for (int32_t i = 0; i < n; ++i) {
        if (t[i].dtype != MNN_FLOAT32) {
            op->error = "x86 element-wise kernels take float32 tensors";
            return 1;
        }
    }
    return 0;
}

int x86_binary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_binary_state *s = (x86_binary_state *)state;
    (void)n_out;
    if (check_f32(&s->op, ins, n_in)) return 1;
    if (ins[0].layout != outs[0].layout || ins[1].layout != outs[0].layout) {
        s->op.error = "x86 binary ops take their inputs and output in one layout";
        return 1;
    }
    s->op.k->binary(s->binop, (const float *)ins[0].data, (const float *)ins[1].data, (float *)outs[0].data, s->ndim, s->dims,
                    s->sa, s->sb, s->op.threads);
    return 0;
}

int x86_unary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_unary_state *s = (x86_unary_state *)state;
    (void)n_out;
    if (check_f32(&s->op, ins, n_in)) return 1;
    if (ins[0].layout != outs[0].layout) {
        s->op.error = "x86 activations take their input and output in one layout";
        return 1;
    }
    s->op.k->activation(&s->epi, (const float *)ins[0].data, (float *)outs[0].data, x86_tensor_floats(&outs[0]),
                        s->op.threads);
    return 0;
}

int x86_affine_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_affine_state *s = (x86_affine_state *)state;
    (void)n_out;
    if (check_f32(&s->op, ins, n_in)) return 1;
    if (s->runtime_params) { /* scale, B, mean, var -> scale and shift */
        const float *g = (const float *)ins[1].data, *b = (const float *)ins[2].data;
        const float *m = (const float *)ins[3].data, *v = (const float *)ins[4].data;
        for (int64_t c = 0; c < s->C; ++c) {
            s->scale[c] = g[c] / sqrtf(v[c] + s->eps);
            s->shift[c] = b[c] - m[c] * s->scale[c];
        }
    }
    s->op.k->channel_affine((const float *)ins[0].data, s->scale, s->shift, (float *)outs[0].data, s->outer, s->C,
                            s->inner, s->op.threads);
    return 0;
}

int x86_norm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_norm_state *s = (x86_norm_state *)state;
    (void)n_out;
    if (check_f32(&s->op, ins, n_in)) return 1;
    const float *scale = s->scale_input >= 0 ? (const float *)ins[s->scale_input].data : s->scale;
    const float *shift = s->shift_input >= 0 ? (const float *)ins[s->shift_input].data : s->shift;
    s->op.k->normalize_rows((const float *)ins[0].data, (float *)outs[0].data, s->rows, s->n, s->eps, scale, shift,
                            s->per_row, s->op.threads);
    return 0;
}

int x86_reduce_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_reduce_state *s = (x86_reduce_state *)state;
    (void)n_out;
    if (check_f32(&s->op, ins, n_in)) return 1;
    s->op.k->reduce_rows((const float *)ins[0].data, (float *)outs[0].data, s->rows, s->n, s->kind, s->op.threads);
    return 0;
}

int x86_softmax_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_softmax_state *s = (x86_softmax_state *)state;
    (void)n_out;
    if (check_f32(&s->op, ins, n_in)) return 1;
    s->op.k->softmax((const float *)ins[0].data, (float *)outs[0].data, s->outer, s->axis, s->inner, s->log,
                     s->op.threads);
    return 0;
}

int x86_pool_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_pool_state *s = (x86_pool_state *)state;
    (void)n_out;
    if (check_f32(&s->op, ins, n_in)) return 1;
    s->op.k->pool((const float *)ins[0].data, (float *)outs[0].data, s->planes, &s->g, s->work, s->op.threads);
    return 0;
}
