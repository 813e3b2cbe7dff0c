/* ConvTranspose: GEMM into columns, then col2im (spatial.h) */
#include <math.h>

#include "spatial.h"

#define DECONV_GRAIN 32768 /* floats a range touches: fewer are not worth a thread */

typedef struct {
    const x86_deconv_state *s;
    const float *bias;
    float *y; /* this image's output */
} deconv_job;

X86_CLONES static void add_row(float *restrict dst, const float *restrict src, int64_t n, int64_t stride) {
    if (stride == 1) {
        for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
    } else {
        for (int64_t i = 0; i < n; ++i) dst[i * stride] += src[i];
    }
}

/* the fused activation (elementwise.apply_activation); a NaN clip bound is no bound, as fmaxf/fminf
 * ignore it. Rare after a ConvTranspose, so libm's transcendentals do. */
X86_CLONES static void activate(float *y, int64_t n, int act, float a, float b) {
    switch (act) {
    case MNN_ACT_RELU: for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.0f ? y[i] : 0.0f; break;
    case MNN_ACT_CLIP: for (int64_t i = 0; i < n; ++i) y[i] = fminf(fmaxf(y[i], a), b); break;
    case MNN_ACT_LEAKY_RELU: for (int64_t i = 0; i < n; ++i) y[i] = y[i] >= 0.0f ? y[i] : y[i] * a; break;
    case MNN_ACT_SIGMOID: for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + expf(-y[i])); break;
    case MNN_ACT_SILU: for (int64_t i = 0; i < n; ++i) y[i] = y[i] / (1.0f + expf(-y[i])); break;
    case MNN_ACT_GELU: for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * y[i] * (1.0f + erff(y[i] * (float)M_SQRT1_2)); break;
    case MNN_ACT_TANH: for (int64_t i = 0; i < n; ++i) y[i] = tanhf(y[i]); break;
    case MNN_ACT_HARD_SIGMOID: for (int64_t i = 0; i < n; ++i) y[i] = fminf(fmaxf(y[i] * a + b, 0.0f), 1.0f); break;
    case MNN_ACT_HARD_SWISH:
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] * fminf(fmaxf(y[i] / 6.0f + 0.5f, 0.0f), 1.0f);
        break;
    default: break;
    }
}

/* output channel oc: its bias, plus each tap's col row (rows oc*K .. oc*K+K-1: col is (group, Mg*K, S),
 * so channel g*Mg+m starts at row oc*K) added at the places its input pixels land */
static void deconv_channel(const x86_deconv_state *s, const float *col, float *y, float bias) {
    const x86_window3 *g = &s->g;
    const int64_t S = g->in[0] * g->in[1] * g->in[2], OS = g->out[0] * g->out[1] * g->out[2];
    for (int64_t i = 0; i < OS; ++i) y[i] = bias;
    const float *row = col;
    for (int64_t kd = 0; kd < g->k[0]; ++kd) {
        int64_t d0, d1;
        x86_tap_range(g->in[0], g->out[0], g->s[0], g->d[0], g->p[0], kd, &d0, &d1);
        for (int64_t kh = 0; kh < g->k[1]; ++kh) {
            int64_t h0, h1;
            x86_tap_range(g->in[1], g->out[1], g->s[1], g->d[1], g->p[1], kh, &h0, &h1);
            for (int64_t kw = 0; kw < g->k[2]; ++kw, row += S) {
                int64_t w0, w1;
                x86_tap_range(g->in[2], g->out[2], g->s[2], g->d[2], g->p[2], kw, &w0, &w1);
                const int64_t ow0 = w0 * g->s[2] + kw * g->d[2] - g->p[2];
                for (int64_t id = d0; id < d1; ++id) {
                    const int64_t od = id * g->s[0] + kd * g->d[0] - g->p[0];
                    for (int64_t ih = h0; ih < h1; ++ih) {
                        const int64_t oh = ih * g->s[1] + kh * g->d[1] - g->p[1];
                        add_row(y + (od * g->out[1] + oh) * g->out[2] + ow0, row + (id * g->in[1] + ih) * g->in[2] + w0,
                                w1 - w0, g->s[2]);
                    }
                }
            }
        }
    }
    activate(y, OS, s->act, s->act_alpha, s->act_beta);
}

static void deconv_channels(void *ctx, int64_t lo, int64_t hi, int worker) {
    const deconv_job *j = (const deconv_job *)ctx;
    const x86_window3 *g = &j->s->g;
    const int64_t K = g->k[0] * g->k[1] * g->k[2], S = g->in[0] * g->in[1] * g->in[2];
    const int64_t OS = g->out[0] * g->out[1] * g->out[2];
    (void)worker;
    for (int64_t oc = lo; oc < hi; ++oc)
        deconv_channel(j->s, j->s->col + oc * K * S, j->y + oc * OS, j->bias ? j->bias[oc] : 0.0f);
}

int x86_deconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_deconv_state *s = (x86_deconv_state *)state;
    const x86_window3 *g = &s->g;
    (void)n_out;
    if (ins[0].dtype != MNN_FLOAT32) {
        s->op.error = "x86 ConvTranspose takes float32 tensors";
        return 1;
    }
    const float *x = (const float *)ins[0].data;
    const float *w = s->weight ? s->weight : (const float *)ins[1].data;
    const float *bias = s->bias;
    if (!bias && s->bias_input >= 0 && s->bias_input < n_in) bias = (const float *)ins[s->bias_input].data;
    const int64_t K = g->k[0] * g->k[1] * g->k[2], S = g->in[0] * g->in[1] * g->in[2];
    const int64_t OS = g->out[0] * g->out[1] * g->out[2];
    const int64_t Cg = s->C / s->group, Mg = s->M / s->group;
    const int64_t grain = DECONV_GRAIN / (K * S + OS) + 1;
    for (int64_t n = 0; n < ins[0].shape[0]; ++n) {
        for (int64_t gi = 0; gi < s->group; ++gi) {
            if (x86_inner_gemm_call(&s->op, &s->gemm, w + gi * Cg * Mg * K, x + (n * s->C + gi * Cg) * S, NULL,
                                    s->col + gi * Mg * K * S))
                return 1;
        }
        deconv_job j = {s, bias, (float *)outs[0].data + n * s->M * OS};
        x86_pool->ranges(s->op.threads, s->M, grain, deconv_channels, &j);
    }
    return 0;
}
