/* Normalization and softmax on activations kept in half precision (the fp16h path; compiled
 * -march=armv8.2-a+fp16, run only where the CPU reports asimdhp): rows read and written as halves,
 * statistics and sums widened to fp32 where precision needs them (fp16h_ops.h states the bounds). */
#include <arm_neon.h>
#include <math.h>

#include "arm.h"
#include "fp16h_ops.h"
#include "parallel.h"

/* -- normalization on halves ---------------------------------------------------------------------- */

/* sum of p[i] (centred: of (p[i] - mu)^2) over n halves, widened: 4-lane fp32 sums of at most NORM_BLOCK_H
 * elements, each block's added up in double (eltwise.c's norm_sum on halves) */
#define NORM_BLOCK_H 512
static double norm_sum_h(const __fp16 *p, int64_t n, float mu, int centred) {
    const float32x4_t vm = vdupq_n_f32(mu);
    double total = 0.0;
    for (int64_t b = 0; b < n; b += NORM_BLOCK_H) {
        const int64_t e = b + NORM_BLOCK_H < n ? b + NORM_BLOCK_H : n;
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
        int64_t i = b;
        if (centred) {
            for (; i + 8 <= e; i += 8) {
                const float16x8_t v = vld1q_f16(p + i);
                const float32x4_t d0 = vsubq_f32(vcvt_f32_f16(vget_low_f16(v)), vm);
                const float32x4_t d1 = vsubq_f32(vcvt_high_f32_f16(v), vm);
                s0 = vfmaq_f32(s0, d0, d0), s1 = vfmaq_f32(s1, d1, d1);
            }
        } else {
            for (; i + 8 <= e; i += 8) {
                const float16x8_t v = vld1q_f16(p + i);
                s0 = vaddq_f32(s0, vcvt_f32_f16(vget_low_f16(v))), s1 = vaddq_f32(s1, vcvt_high_f32_f16(v));
            }
        }
        double part = (double)vaddvq_f32(vaddq_f32(s0, s1));
        for (; i < e; ++i) {
            const double d = centred ? (double)((float)p[i] - mu) : (double)p[i];
            part += centred ? d * d : d;
        }
        total += part;
    }
    return total;
}

/* (x - mu) inv on 8 halves, in fp32 (x - mu would lose mu's low bits in fp16 where |mu| >> the spread),
 * rounded to fp16 once */
static inline float16x8_t centred8h(float16x8_t v, float32x4_t vi, float32x4_t vmi) {
    return vcvt_high_f16_f32(vcvt_f16_f32(vfmaq_f32(vmi, vcvt_f32_f16(vget_low_f16(v)), vi)),
                             vfmaq_f32(vmi, vcvt_high_f32_f16(v), vi));
}

/* Two passes for the statistics, as the fp32 kernel (mean, then the centred squares: no cancellation), both
 * in fp32 over the widened halves; then (x - mu) inv in fp32, rounded once, times scale plus shift in fp16
 * (one fused rounding). Error: the fp32 statistics' (n 2^-24 relative, negligible) plus two fp16
 * roundings, |y - exact| <= 2^-11 (|scale (x - mu) inv| (1 + 2^-11) + |y|), about 1e-3 relative. */
void arm_normalize_rows_h(const void *xv, void *yv, int64_t rows, int64_t n, float eps, const void *scale_v,
                          const void *shift_v, int64_t per_row) {
    const __fp16 *x = (const __fp16 *)xv, *scale = (const __fp16 *)scale_v, *shift = (const __fp16 *)shift_v;
    __fp16 *y = (__fp16 *)yv;
    for (int64_t r = 0; r < rows; ++r) {
        const __fp16 *p = x + r * n;
        __fp16 *q = y + r * n;
        const float mu = n ? (float)(norm_sum_h(p, n, 0.0f, 0) / (double)n) : 0.0f;
        const float inv = (float)(1.0 / sqrt((n ? norm_sum_h(p, n, mu, 1) / (double)n : 0.0) + eps));
        int64_t i = 0;
        if (per_row || (!scale && !shift)) { /* one scale and shift for the row: folded into the fp32 step */
            const int64_t c = per_row ? r % per_row : 0;
            const float a = inv * (per_row && scale ? (float)scale[c] : 1.0f), b = per_row && shift ? (float)shift[c] : 0.0f;
            const float32x4_t va = vdupq_n_f32(a), vb = vdupq_n_f32(b - mu * a);
            for (; i + 8 <= n; i += 8) vst1q_f16(q + i, centred8h(vld1q_f16(p + i), va, vb));
            for (; i < n; ++i) q[i] = (__fp16)(((float)p[i] - mu) * a + b);
            continue;
        }
        /* a scale and shift per element (LayerNorm's) */
        const float32x4_t vi = vdupq_n_f32(inv), vmi = vdupq_n_f32(-mu * inv);
        const float16x8_t one = vdupq_n_f16((__fp16)1.0f), zero = vdupq_n_f16((__fp16)0.0f);
        for (; i + 8 <= n; i += 8) {
            const float16x8_t v = centred8h(vld1q_f16(p + i), vi, vmi);
            vst1q_f16(q + i, vfmaq_f16(shift ? vld1q_f16(shift + i) : zero, v, scale ? vld1q_f16(scale + i) : one));
        }
        for (; i < n; ++i) {
            const float v = ((float)p[i] - mu) * inv;
            q[i] = (__fp16)((float)(__fp16)v * (scale ? (float)scale[i] : 1.0f) + (shift ? (float)shift[i] : 0.0f));
        }
    }
}

typedef struct norm_h_job {
    const arm_norm_state *s;
    const __fp16 *x, *scale, *shift;
    __fp16 *y;
} norm_h_job;

static void norm_h_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const norm_h_job *j = (const norm_h_job *)ctx;
    const arm_norm_state *s = j->s;
    if (!s->per_row) {
        arm_normalize_rows_h(j->x + b * s->n, j->y + b * s->n, end - b, s->n, s->eps, j->scale, j->shift, 0);
        return;
    }
    for (int64_t r = b; r < end; ++r) { /* row r's scale and shift are those of channel r % per_row */
        const int64_t c = r % s->per_row;
        arm_normalize_rows_h(j->x + r * s->n, j->y + r * s->n, 1, s->n, s->eps, j->scale ? j->scale + c : NULL,
                             j->shift ? j->shift + c : NULL, 1);
    }
}

int arm_norm_h_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    const arm_norm_state *s = (const arm_norm_state *)state;
    (void)n_out;
    const void *scale = s->scale_input >= 0 && s->scale_input < n_in ? arm_data(&ins[s->scale_input]) : s->scale;
    const void *shift = s->shift_input >= 0 && s->shift_input < n_in ? arm_data(&ins[s->shift_input]) : s->shift;
    norm_h_job j = {s, (const __fp16 *)arm_data(&ins[0]), (const __fp16 *)scale, (const __fp16 *)shift,
                    (__fp16 *)arm_data(&outs[0])};
    /* whole rows a part, from 16K elements a part on (ops.c's rule for the row-wise ops) */
    const int64_t most = s->rows * s->n / 16384;
    const int t = arm_threads(s);
    arm_parallel(most < 2 ? 1 : (most < t ? (int)most : t), s->rows, 1, norm_h_part, &j);
    return 0;
}

/* -- softmax on halves ------------------------------------------------------------------------------ */

/* e^t for t <= 0 on 8 halves: 2^u (u = t log2 e, clamped to [-24, 0]) as 2^n 2^f, 2^f by a cubic (fp16h.c's sigmoid8h's),
 * 2^(n + 12) put in the exponent bits (normal for every n) and the 2^-12 left to one multiplication, which
 * rounds into fp16's subnormals as they come: below 2^-14 the values keep their absolute precision (2^-25),
 * so a long row of small terms still sums right */
static inline float16x8_t expneg8h(float16x8_t t) {
    float16x8_t u = vmulq_f16(t, vdupq_n_f16((__fp16)1.4426950f));
    u = vminq_f16(vmaxq_f16(u, vdupq_n_f16((__fp16)-24.0f)), vdupq_n_f16((__fp16)0.0f));
    const float16x8_t n = vrndnq_f16(u), f = vsubq_f16(u, n);
    float16x8_t p = vfmaq_f16(vdupq_n_f16((__fp16)0.2402265f), f, vdupq_n_f16((__fp16)0.0555041f));
    p = vfmaq_f16(vdupq_n_f16((__fp16)0.6931472f), f, p);
    p = vfmaq_f16(vdupq_n_f16((__fp16)1.0f), f, p);
    const int16x8_t e = vshlq_n_s16(vaddq_s16(vcvtq_s16_f16(n), vdupq_n_s16(12)), 10);
    return vmulq_f16(vreinterpretq_f16_s16(vaddq_s16(vreinterpretq_s16_f16(p), e)), vdupq_n_f16((__fp16)(1.0f / 4096.0f)));
}

static inline float32x4_t widen_sum8(float32x4_t s, float16x8_t v) {
    return vaddq_f32(s, vaddq_f32(vcvt_f32_f16(vget_low_f16(v)), vcvt_high_f32_f16(v)));
}

/* one softmax row of n contiguous halves: max, e^(x - max) stored and summed in fp32, then scaled (or, log:
 * x - max - log sum) */
static void softmax_row_h(const __fp16 *p, __fp16 *q, int64_t n, int log) {
    float m = -INFINITY;
    int64_t i = 0;
    if (n >= 8) {
        float16x8_t v = vld1q_f16(p);
        for (i = 8; i + 8 <= n; i += 8) v = vmaxq_f16(v, vld1q_f16(p + i));
        m = (float)vmaxvq_f16(v);
    }
    for (; i < n; ++i) m = (float)p[i] > m ? (float)p[i] : m;
    const float16x8_t vm = vdupq_n_f16((__fp16)m);
    float32x4_t vs = vdupq_n_f32(0.0f);
    for (i = 0; i + 8 <= n; i += 8) {
        const float16x8_t e = expneg8h(vsubq_f16(vld1q_f16(p + i), vm));
        if (!log) vst1q_f16(q + i, e);
        vs = widen_sum8(vs, e);
    }
    float s = vaddvq_f32(vs);
    for (; i < n; ++i) {
        const float e = expf((float)p[i] - m);
        if (!log) q[i] = (__fp16)e;
        s += e;
    }
    if (log) {
        const float ls = logf(s);
        for (i = 0; i < n; ++i) q[i] = (__fp16)((float)p[i] - m - ls);
        return;
    }
    const float16x8_t inv = vdupq_n_f16((__fp16)(1.0f / s));
    for (i = 0; i + 8 <= n; i += 8) vst1q_f16(q + i, vmulq_f16(vld1q_f16(q + i), inv));
    for (; i < n; ++i) q[i] = (__fp16)((float)q[i] / s);
}

/* softmax over an axis of stride inner > 1 (a detector's DFL bins): 8 columns a vector, the axis walked */
static void softmax_cols_h(const __fp16 *p, __fp16 *q, int64_t axis, int64_t inner, int log) {
    int64_t i = 0;
    for (; i + 8 <= inner; i += 8) {
        float16x8_t m = vld1q_f16(p + i);
        for (int64_t a = 1; a < axis; ++a) m = vmaxq_f16(m, vld1q_f16(p + a * inner + i));
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
        for (int64_t a = 0; a < axis; ++a) {
            const float16x8_t e = expneg8h(vsubq_f16(vld1q_f16(p + a * inner + i), m));
            if (!log) vst1q_f16(q + a * inner + i, e);
            s0 = vaddq_f32(s0, vcvt_f32_f16(vget_low_f16(e))), s1 = vaddq_f32(s1, vcvt_high_f32_f16(e));
        }
        if (log) {
            float l[8], s[8];
            vst1q_f32(s, s0), vst1q_f32(s + 4, s1);
            for (int k = 0; k < 8; ++k) l[k] = logf(s[k]);
            const float16x8_t ls = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(l)), vld1q_f32(l + 4));
            for (int64_t a = 0; a < axis; ++a)
                vst1q_f16(q + a * inner + i, vsubq_f16(vsubq_f16(vld1q_f16(p + a * inner + i), m), ls));
            continue;
        }
        const float32x4_t one = vdupq_n_f32(1.0f);
        const float16x8_t inv = vcvt_high_f16_f32(vcvt_f16_f32(vdivq_f32(one, s0)), vdivq_f32(one, s1));
        for (int64_t a = 0; a < axis; ++a) vst1q_f16(q + a * inner + i, vmulq_f16(vld1q_f16(q + a * inner + i), inv));
    }
    for (; i < inner; ++i) { /* the columns left: scalar, in fp32 */
        float m = -INFINITY, s = 0.0f;
        for (int64_t a = 0; a < axis; ++a) m = (float)p[a * inner + i] > m ? (float)p[a * inner + i] : m;
        for (int64_t a = 0; a < axis; ++a) s += expf((float)p[a * inner + i] - m);
        const float ls = logf(s);
        for (int64_t a = 0; a < axis; ++a) {
            const float d = (float)p[a * inner + i] - m;
            q[a * inner + i] = (__fp16)(log ? d - ls : expf(d) / s);
        }
    }
}

typedef struct softmax_h_job {
    const arm_softmax_state *s;
    const __fp16 *x;
    __fp16 *y;
} softmax_h_job;

static void softmax_h_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const softmax_h_job *j = (const softmax_h_job *)ctx;
    const arm_softmax_state *s = j->s;
    const int64_t block = s->axis * s->inner;
    for (int64_t o = b; o < end; ++o) {
        if (s->inner == 1) softmax_row_h(j->x + o * block, j->y + o * block, s->axis, s->log);
        else softmax_cols_h(j->x + o * block, j->y + o * block, s->axis, s->inner, s->log);
    }
}

int arm_softmax_h_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    const arm_softmax_state *s = (const arm_softmax_state *)state;
    (void)n_in, (void)n_out;
    softmax_h_job j = {s, (const __fp16 *)arm_data(&ins[0]), (__fp16 *)arm_data(&outs[0])};
    const int64_t most = s->outer * s->axis * s->inner / 16384;
    const int t = arm_threads(s);
    arm_parallel(most < 2 ? 1 : (most < t ? (int)most : t), s->outer, 1, softmax_h_part, &j);
    return 0;
}
