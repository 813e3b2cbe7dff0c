/* Conv over 3 spatial axes: im2col, then the inner GEMM with bias and activation (spatial.h) */
#include "spatial.h"

#define IM2COL_GRAIN 32768 /* floats written: fewer are not worth a thread */

typedef struct {
    const x86_conv3d_state *s;
    const float *x; /* the group's first input channel of this image */
} im2col_job;

X86_CLONES static void copy_strided(float *restrict dst, const float *restrict src, int64_t n, int64_t stride) {
    if (stride == 1) {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
    }
}

/* col row r = (channel c, tap): the input pixel each output pixel reads through that tap, 0 in the padding */
static void im2col_row(const x86_window3 *g, const float *x, int64_t tap, float *row) {
    const int64_t kw = tap % g->k[2], kh = tap / g->k[2] % g->k[1], kd = tap / (g->k[2] * g->k[1]);
    const int64_t OS = g->out[0] * g->out[1] * g->out[2];
    int64_t d0, d1, h0, h1, w0, w1;
    x86_tap_range(g->out[0], g->in[0], g->s[0], g->d[0], g->p[0], kd, &d0, &d1);
    x86_tap_range(g->out[1], g->in[1], g->s[1], g->d[1], g->p[1], kh, &h0, &h1);
    x86_tap_range(g->out[2], g->in[2], g->s[2], g->d[2], g->p[2], kw, &w0, &w1);
    for (int64_t i = 0; i < OS; ++i) row[i] = 0.0f;
    const int64_t iw0 = w0 * g->s[2] + kw * g->d[2] - g->p[2];
    for (int64_t od = d0; od < d1; ++od) {
        const int64_t id = od * g->s[0] + kd * g->d[0] - g->p[0];
        for (int64_t oh = h0; oh < h1; ++oh) {
            const int64_t ih = oh * g->s[1] + kh * g->d[1] - g->p[1];
            copy_strided(row + (od * g->out[1] + oh) * g->out[2] + w0, x + (id * g->in[1] + ih) * g->in[2] + iw0,
                         w1 - w0, g->s[2]);
        }
    }
}

static void im2col_rows(void *ctx, int64_t lo, int64_t hi, int worker) {
    const im2col_job *j = (const im2col_job *)ctx;
    const x86_window3 *g = &j->s->g;
    const int64_t K = g->k[0] * g->k[1] * g->k[2], S = g->in[0] * g->in[1] * g->in[2];
    const int64_t OS = g->out[0] * g->out[1] * g->out[2];
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) im2col_row(g, j->x + r / K * S, r % K, j->s->col + r * OS);
}

int x86_conv3d_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_conv3d_state *s = (x86_conv3d_state *)state;
    const x86_window3 *g = &s->g;
    (void)n_out;
    if (ins[0].dtype != MNN_FLOAT32) {
        s->op.error = "x86 Conv (3-D) takes float32 tensors";
        return 1;
    }
    const float *x = (const float *)ins[0].data;
    const float *w = s->weight ? s->weight : (const float *)ins[1].data;
    const float *bias = s->bias;
    if (!bias && s->bias_input >= 0 && s->bias_input < n_in) bias = (const float *)ins[s->bias_input].data;
    float *y = (float *)outs[0].data;
    const int64_t K = g->k[0] * g->k[1] * g->k[2], S = g->in[0] * g->in[1] * g->in[2];
    const int64_t OS = g->out[0] * g->out[1] * g->out[2];
    const int64_t Cg = s->C / s->group, Og = s->O / s->group;
    for (int64_t n = 0; n < ins[0].shape[0]; ++n) {
        for (int64_t gi = 0; gi < s->group; ++gi) {
            im2col_job j = {s, x + (n * s->C + gi * Cg) * S};
            x86_pool->ranges(s->op.threads, Cg * K, IM2COL_GRAIN / OS + 1, im2col_rows, &j);
            if (x86_inner_gemm_call(&s->op, &s->gemm, w + gi * Og * Cg * K, s->col, bias ? bias + gi * Og : NULL,
                                    y + (n * s->O + gi * Og) * OS))
                return 1;
        }
    }
    return 0;
}
