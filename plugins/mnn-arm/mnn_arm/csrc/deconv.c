/* ConvTranspose of mnn-arm (fp32 path's packed GEMM + col2im, armv8-a): the GEMM computes every
 * kernel tap's contribution plane at once; col2im adds the planes into the output, four columns at a
 * time where the stride is 1. */
#include <arm_neon.h>
#include <string.h>

#include "move.h"

static inline int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* y [OH][OW] += the tap (i, j) plane of cols ([H][W]) */
static void col2im_tap(const arm_deconv_state *s, const float *plane, float *y, int64_t i, int64_t j) {
    const int64_t W = s->W, OW = s->OW;
    /* w with 0 <= w*sw - pl + j*dw < OW */
    const int64_t c0 = s->pl - j * s->dw;
    int64_t w_lo = c0 > 0 ? ceil_div(c0, s->sw) : 0;
    int64_t w_hi = (OW - 1 + c0) >= 0 ? (OW - 1 + c0) / s->sw + 1 : 0;
    if (w_hi > W) w_hi = W;
    if (w_lo >= w_hi) return;
    for (int64_t h = 0; h < s->H; ++h) {
        const int64_t oh = h * s->sh - s->pt + i * s->dh;
        if (oh < 0 || oh >= s->OH) continue;
        const float *src = plane + h * W + w_lo;
        float *dst = y + oh * OW + (w_lo * s->sw - c0); /* the output column of input column w_lo */
        const int64_t n = w_hi - w_lo;
        if (s->sw == 1) {
            int64_t w = 0;
            for (; w + 4 <= n; w += 4) vst1q_f32(dst + w, vaddq_f32(vld1q_f32(dst + w), vld1q_f32(src + w)));
            for (; w < n; ++w) dst[w] += src[w];
        } else {
            for (int64_t w = 0; w < n; ++w) dst[w * s->sw] += src[w];
        }
    }
}

int arm_deconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_deconv_state *s = (const arm_deconv_state *)state;
    const float *x = (const float *)arm_data(&ins[0]);
    float *y = (float *)arm_data(&outs[0]);
    const int64_t hw = s->H * s->W, ohw = s->OH * s->OW, taps = s->kh * s->kw;
    arm_epilogue plain;
    memset(&plain, 0, sizeof(plain));
    plain.alpha = plain.beta = 1.0f;
    plain.act = MNN_ACT_NONE;
    for (int64_t n = 0; n < s->N; ++n) {
        for (int64_t g = 0; g < s->group; ++g) {
            const float *xg = x + (n * s->C + g * s->cg) * hw;
            float *yg = y + (n * s->O + g * s->og) * ohw;
            for (int64_t o = 0; o < s->og; ++o) {
                const float b = s->bias ? s->bias[g * s->og + o] : 0.0f;
                for (int64_t p = 0; p < ohw; ++p) yg[o * ohw + p] = b;
            }
            if (hw == 0 || s->cg == 0) continue;
            s->k->pack_b(xg, hw, 1, s->cg, hw, s->bwork);
            arm_gemm_par(s->k, arm_threads(s), s->og * taps, hw, s->cg, (const char *)s->w + g * s->w_group_bytes, s->bwork, s->cols, hw,
                       &plain);
            for (int64_t o = 0; o < s->og; ++o)
                for (int64_t i = 0; i < s->kh; ++i)
                    for (int64_t j = 0; j < s->kw; ++j)
                        col2im_tap(s, s->cols + ((o * s->kh + i) * s->kw + j) * hw, yg + o * ohw, i, j);
        }
    }
    if (s->act.act != MNN_ACT_NONE) arm_activation(&s->act, y, y, s->N * s->O * ohw);
    return 0;
}
