/* Resize of mnn-arm (armv8-a, fp32): separable passes over the resized axes with the sampling tables
 * the core computes (mnn_core.ops.resize.axis_taps); each output row of a pass is a weighted sum of
 * `taps` input rows, four inner elements at a time with NEON fused multiply-adds. */
#include <arm_neon.h>
#include <string.h>

#include "move.h"

static void resize_pass(const arm_resize_pass *p, const float *x, float *y) {
    const int64_t inner = p->inner, taps = p->taps;
    for (int64_t o = 0; o < p->outer; ++o) {
        const float *xo = x + o * p->in * inner;
        float *yo = y + o * p->out * inner;
        for (int64_t j = 0; j < p->out; ++j) {
            float *q = yo + j * inner;
            const int64_t *ix = p->idx + j * taps;
            const float *w = p->w + j * taps;
            if (p->outside && p->outside[j]) {
                for (int64_t i = 0; i < inner; ++i) q[i] = p->extrap;
                continue;
            }
            if (p->nearest) {
                memcpy(q, xo + ix[0] * inner, (size_t)inner * sizeof(float));
                continue;
            }
            int64_t i = 0;
            for (; i + 4 <= inner; i += 4) {
                float32x4_t acc = vmulq_n_f32(vld1q_f32(xo + ix[0] * inner + i), w[0]);
                for (int64_t k = 1; k < taps; ++k) acc = vfmaq_n_f32(acc, vld1q_f32(xo + ix[k] * inner + i), w[k]);
                vst1q_f32(q + i, acc);
            }
            for (; i < inner; ++i) {
                float acc = 0.0f;
                for (int64_t k = 0; k < taps; ++k) acc += w[k] * xo[ix[k] * inner + i];
                q[i] = acc;
            }
        }
    }
}

/* A nearest pass on fp16 (the fp16 domain): whole rows copied where inner > 1; where inner is 1 (the last
 * axis) a gather of halves, in place of a call to memcpy per element */
static void resize_pass_nearest_h(const arm_resize_pass *p, const uint16_t *x, uint16_t *y) {
    const int64_t inner = p->inner, taps = p->taps;
    const __fp16 fill = (__fp16)p->extrap;
    uint16_t fill_bits;
    memcpy(&fill_bits, &fill, 2);
    for (int64_t o = 0; o < p->outer; ++o) {
        const uint16_t *xo = x + o * p->in * inner;
        uint16_t *yo = y + o * p->out * inner;
        if (inner == 1 && !p->outside) {
            for (int64_t j = 0; j < p->out; ++j) yo[j] = xo[p->idx[j * taps]];
            continue;
        }
        for (int64_t j = 0; j < p->out; ++j) {
            uint16_t *q = yo + j * inner;
            if (p->outside && p->outside[j]) {
                for (int64_t i = 0; i < inner; ++i) q[i] = fill_bits;
                continue;
            }
            memcpy(q, xo + p->idx[j * taps] * inner, (size_t)inner * 2);
        }
    }
}

int arm_resize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_resize_state *s = (const arm_resize_state *)state;
    const float *x = (const float *)arm_data(&ins[0]);
    float *y = (float *)arm_data(&outs[0]);
    if (s->npass == 0) {
        memcpy(y, x, (size_t)mnn_tensor_numel(&ins[0]) * (s->half ? 2 : sizeof(float)));
        return 0;
    }
    if (s->half) {
        const uint16_t *hx = (const uint16_t *)x;
        for (int32_t k = 0; k < s->npass; ++k) {
            uint16_t *dst = k == s->npass - 1 ? (uint16_t *)y : (uint16_t *)s->work[k & 1];
            resize_pass_nearest_h(&s->pass[k], hx, dst);
            hx = dst;
        }
        return 0;
    }
    for (int32_t k = 0; k < s->npass; ++k) {
        float *dst = k == s->npass - 1 ? y : s->work[k & 1];
        resize_pass(&s->pass[k], x, dst);
        x = dst;
    }
    return 0;
}
