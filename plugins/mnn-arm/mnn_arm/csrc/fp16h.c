/* The fp16 path on activations kept in half precision between ops ("fp16h";
 * compiled -march=armv8.2-a+fp16, run only where the CPU reports asimdhp).
 * Under precision="low" every float tensor of the plan lives in fp16 in
 * mnn-arm's own memory domain, so the kernels here read their inputs and
 * write their outputs as halves: the GEMM's B panels and the depthwise padded
 * planes are plain copies, results are stored without widening. The register
 * tiles and the depthwise structure are fp16.c's (fp16_body.h); only the
 * loads and stores of activations differ. Conversion happens only where the
 * graph enters or leaves the fp16 domain (the arena's copies). */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"
#include "parallel.h"

#define ELEM __fp16
#define MR 8
#define NR 24
#define LANES 8
#define NV 3
#define KC 512
#define XHALF 1
#define XV 8
#define COPY_X(d, s) vst1q_f16(d, vld1q_f16(s))
#define COPY_X2(d, s) vst1q_f16(d, vld2q_f16(s).val[0]) /* every other element */

/* one-row GEMMs as a matrix-vector product (fp16_body.h) */
static void gemv_row_h(int64_t N, int64_t K, const __fp16 *ap, const __fp16 *bp, void *c);
#define GEMV_ROW gemv_row_h

/* Sigmoid on 8 halves: e^-x = 2^n * 2^f (t = -x log2 e, n = round(t), |f| <= 1/2), 2^f by a cubic, 2^n
 * added to the exponent bits; t clamped to [-13, 15] keeps that exponent normal (the result is 1 in fp16
 * below -13, and 3.1e-5 for every x below -10.4, where the true value is smaller). Its error is fp16's
 * rounding (about 1e-3 relative): what fp16 activations store anyway, for a third of the fp32 lanes' work. */
static inline float16x8_t sigmoid8h(float16x8_t x) {
    float16x8_t t = vmulq_f16(x, vdupq_n_f16((__fp16)-1.4426950f));
    t = vminq_f16(vmaxq_f16(t, vdupq_n_f16((__fp16)-13.0f)), vdupq_n_f16((__fp16)15.0f));
    const float16x8_t n = vrndnq_f16(t), f = vsubq_f16(t, n);
    float16x8_t p = vfmaq_f16(vdupq_n_f16((__fp16)0.2402265f), f, vdupq_n_f16((__fp16)0.0555041f));
    p = vfmaq_f16(vdupq_n_f16((__fp16)0.6931472f), f, p);
    p = vfmaq_f16(vdupq_n_f16((__fp16)1.0f), f, p);
    const int16x8_t scaled = vaddq_s16(vreinterpretq_s16_f16(p), vshlq_n_s16(vcvtq_s16_f16(n), 10));
    const float16x8_t one = vdupq_n_f16((__fp16)1.0f);
    return vdivq_f16(one, vaddq_f16(one, vreinterpretq_f16_s16(scaled)));
}

/* hard sigmoid (alpha v + beta) and hard swish (v / 6 + 1/2, times v), clamped to [0, 1], on 8 halves */
static inline float16x8_t hard8h(float16x8_t v, int swish, float16x8_t a, float16x8_t b) {
    const float16x8_t h = vminq_f16(vmaxq_f16(vfmaq_f16(b, v, a), vdupq_n_f16((__fp16)0.0f)), vdupq_n_f16((__fp16)1.0f));
    return swish ? vmulq_f16(v, h) : h;
}

/* GELU (x Phi(x), the erf form) on 8 halves as x sigmoid(g(x)), g(x) = x (c1 + c3 x^2 + c5 x^4): the tanh
 * form's shape (c1 = 2 sqrt(2 / pi), c3 = 0.0713, c5 = 0) refitted with c5 for the least largest error
 * against the erf form, 2.5e-5 (the tanh form's: 4.7e-4), below fp16's rounding of any |y| >= 0.05.
 * x is clamped to [-8, 8] inside g (where the quartic still grows), and y = 0 below -8 (|x Phi(x)| <
 * 1e-14 there; sigmoid8h's clamp would leave up to 3e-5 |x|). */
static inline float16x8_t gelu8h(float16x8_t x) {
    const float16x8_t lim = vdupq_n_f16((__fp16)8.0f);
    const float16x8_t xc = vminq_f16(vmaxq_f16(x, vnegq_f16(lim)), lim), x2 = vmulq_f16(xc, xc);
    const float16x8_t h = vfmaq_f16(vdupq_n_f16((__fp16)7.40112920e-2f), x2, vdupq_n_f16((__fp16)-7.03033577e-4f));
    const float16x8_t g = vmulq_f16(xc, vfmaq_f16(vdupq_n_f16((__fp16)1.59501577f), x2, h));
    const float16x8_t y = vmulq_f16(x, sigmoid8h(g));
    return vreinterpretq_f16_u16(vbicq_u16(vreinterpretq_u16_f16(y), vcltq_f16(x, vnegq_f16(lim))));
}

/* tanh x = 2 sigmoid(2x) - 1 on 8 halves (fp16 rounding, about 1e-3 absolute) */
static inline float16x8_t tanh8h(float16x8_t x) {
    const float16x8_t s = sigmoid8h(vaddq_f16(x, x));
    return vsubq_f16(vaddq_f16(s, s), vdupq_n_f16((__fp16)1.0f));
}

/* A GEMM's or a kernel's rows on halves, where the epilogue left is a row bias and sigmoid, SiLU, GELU, tanh,
 * leaky relu, hard sigmoid or hard swish (a fused SiLU: EfficientNet's, YOLOv8's; MobileNetV3's hard swish;
 * the standalone activations of the fp16 domain: ConvNeXt's GELU): done here 8 halves a vector instead of
 * widened to fp32. Returns 0 (nothing done) for any other epilogue. */
static inline __attribute__((always_inline)) float16x8_t act8h(int act, float16x8_t v, float16x8_t ha,
                                                                float16x8_t hb) {
    switch (act) {
    case MNN_ACT_HARD_SIGMOID: return hard8h(v, 0, ha, hb);
    case MNN_ACT_HARD_SWISH: return hard8h(v, 1, ha, hb);
    case MNN_ACT_GELU: return gelu8h(v);
    case MNN_ACT_TANH: return tanh8h(v);
    case MNN_ACT_LEAKY_RELU: return vbslq_f16(vcgezq_f16(v), v, vmulq_f16(v, ha)); /* the fp32 rule's order */
    case MNN_ACT_SILU: return vmulq_f16(v, sigmoid8h(v));
    default: return sigmoid8h(v);
    }
}

/* rows of N halves plus a row bias, the activation inlined (act a constant of each call below) */
static inline __attribute__((always_inline)) void act_rows8h(int act, __fp16 *c, int64_t ldc, int64_t M, int64_t N,
                                                             const arm_epilogue *e, float16x8_t ha, float16x8_t hb) {
    for (int64_t m = 0; m < M; ++m) {
        __fp16 *p = c + m * ldc;
        const float16x8_t b = vdupq_n_f16((__fp16)(e->bias ? e->beta * e->bias[m * e->bias_rs] : 0.0f));
        int64_t j = 0;
        for (; j + 8 <= N; j += 8) vst1q_f16(p + j, act8h(act, vaddq_f16(vld1q_f16(p + j), b), ha, hb));
        if (j < N) {
            __fp16 tail[8] = {0};
            memcpy(tail, p + j, (size_t)(N - j) * 2);
            vst1q_f16(tail, act8h(act, vaddq_f16(vld1q_f16(tail), b), ha, hb));
            memcpy(p + j, tail, (size_t)(N - j) * 2);
        }
    }
}

static int half_act_rows(__fp16 *c, int64_t ldc, int64_t M, int64_t N, const arm_epilogue *e) {
    if (e->alpha != 1.0f || (e->bias && e->bias_cs != 0)) return 0;
    const int swish = e->act == MNN_ACT_HARD_SWISH;
    const float16x8_t ha = vdupq_n_f16((__fp16)(swish ? 1.0f / 6.0f : e->act_alpha));
    const float16x8_t hb = vdupq_n_f16((__fp16)(swish ? 0.5f : e->act_beta));
    switch (e->act) {
    case MNN_ACT_SIGMOID: act_rows8h(MNN_ACT_SIGMOID, c, ldc, M, N, e, ha, hb); return 1;
    case MNN_ACT_SILU: act_rows8h(MNN_ACT_SILU, c, ldc, M, N, e, ha, hb); return 1;
    case MNN_ACT_GELU: act_rows8h(MNN_ACT_GELU, c, ldc, M, N, e, ha, hb); return 1;
    case MNN_ACT_TANH: act_rows8h(MNN_ACT_TANH, c, ldc, M, N, e, ha, hb); return 1;
    case MNN_ACT_LEAKY_RELU: act_rows8h(MNN_ACT_LEAKY_RELU, c, ldc, M, N, e, ha, hb); return 1;
    case MNN_ACT_HARD_SIGMOID: act_rows8h(MNN_ACT_HARD_SIGMOID, c, ldc, M, N, e, ha, hb); return 1;
    case MNN_ACT_HARD_SWISH: act_rows8h(MNN_ACT_HARD_SWISH, c, ldc, M, N, e, ha, hb); return 1;
    default: return 0;
    }
}
#define HALF_ACT_ROWS half_act_rows

#include "fgemm_body.h"
#include "fp16_body.h"
#include "fp16_dw_body.h"

const arm_fkernels arm_fkernels_fp16h = {"fp16h", MR, NR, 2, 2, pack_a_impl, pack_b_impl, im2col_b_impl,
                                         gemm_driver, depthwise_impl};

/* -- element-wise on halves ------------------------------------------------------------ */

static inline float16x8_t binop8(int op, float16x8_t a, float16x8_t b) {
    switch (op) {
    case ARM_ADD: return vaddq_f16(a, b);
    case ARM_SUB: return vsubq_f16(a, b);
    case ARM_MUL: return vmulq_f16(a, b);
    case ARM_DIV: return vdivq_f16(a, b);
    case ARM_MAX: return vmaxq_f16(a, b);
    default: return vminq_f16(a, b);
    }
}

/* n results; sa / sb: 1 (contiguous) or 0 (one value broadcast). Inlined per op (binary_run_h below)
 * so the op is not switched on per vector, 16 halves an iteration as eltwise.c's fp32 runs */
static inline __attribute__((always_inline)) void binary_run_op_h(int op, const __fp16 *a, int64_t sa,
                                                                  const __fp16 *b, int64_t sb, __fp16 *y,
                                                                  int64_t n) {
    int64_t i = 0;
    if ((sa == 1 || sa == 0) && (sb == 1 || sb == 0)) {
        const float16x8_t a1 = vld1q_dup_f16(a), b1 = vld1q_dup_f16(b);
        if (sa && sb) {
            for (; i + 16 <= n; i += 16) {
                vst1q_f16(y + i, binop8(op, vld1q_f16(a + i), vld1q_f16(b + i)));
                vst1q_f16(y + i + 8, binop8(op, vld1q_f16(a + i + 8), vld1q_f16(b + i + 8)));
            }
        } else if (sa) {
            for (; i + 16 <= n; i += 16) {
                vst1q_f16(y + i, binop8(op, vld1q_f16(a + i), b1));
                vst1q_f16(y + i + 8, binop8(op, vld1q_f16(a + i + 8), b1));
            }
        } else if (sb) {
            for (; i + 16 <= n; i += 16) {
                vst1q_f16(y + i, binop8(op, a1, vld1q_f16(b + i)));
                vst1q_f16(y + i + 8, binop8(op, a1, vld1q_f16(b + i + 8)));
            }
        }
        for (; i + 8 <= n; i += 8)
            vst1q_f16(y + i, binop8(op, sa ? vld1q_f16(a + i) : a1, sb ? vld1q_f16(b + i) : b1));
    }
    for (; i < n; ++i) {
        const float16x8_t r = binop8(op, vdupq_n_f16(a[i * sa]), vdupq_n_f16(b[i * sb]));
        y[i] = vgetq_lane_f16(r, 0);
    }
}

static void binary_run_h(int op, const __fp16 *a, int64_t sa, const __fp16 *b, int64_t sb, __fp16 *y, int64_t n) {
    switch (op) {
    case ARM_ADD: binary_run_op_h(ARM_ADD, a, sa, b, sb, y, n); break;
    case ARM_SUB: binary_run_op_h(ARM_SUB, a, sa, b, sb, y, n); break;
    case ARM_MUL: binary_run_op_h(ARM_MUL, a, sa, b, sb, y, n); break;
    case ARM_DIV: binary_run_op_h(ARM_DIV, a, sa, b, sb, y, n); break;
    case ARM_MAX: binary_run_op_h(ARM_MAX, a, sa, b, sb, y, n); break;
    default: binary_run_op_h(ARM_MIN, a, sa, b, sb, y, n); break;
    }
}

void arm_binary_h(int op, const void *av, const void *bv, void *yv, int ndim, const int64_t *dims,
                  const int64_t *sa, const int64_t *sb) {
    const __fp16 *a = (const __fp16 *)av, *b = (const __fp16 *)bv;
    __fp16 *y = (__fp16 *)yv;
    int64_t outer = 1, idx[8] = {0};
    for (int d = 0; d < ndim - 1; ++d) outer *= dims[d];
    const int64_t n = dims[ndim - 1];
    for (int64_t o = 0; o < outer; ++o) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < ndim - 1; ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
        binary_run_h(op, a + oa, sa[ndim - 1], b + ob, sb[ndim - 1], y + o * n, n);
        for (int d = ndim - 2; d >= 0; --d) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

void arm_reduce_rows_h(const void *xv, void *yv, int64_t rows, int64_t n, int kind) {
    const __fp16 *x = (const __fp16 *)xv;
    __fp16 *y = (__fp16 *)yv;
    for (int64_t r = 0; r < rows; ++r) {
        const __fp16 *p = x + r * n;
        int64_t i = 0;
        if (kind == 0) {
            float m = -INFINITY;
            if (n >= 8) {
                float16x8_t v = vld1q_f16(p);
                for (i = 8; i + 8 <= n; i += 8) v = vmaxq_f16(v, vld1q_f16(p + i));
                m = (float)vmaxvq_f16(v);
            }
            for (; i < n; ++i) m = (float)p[i] > m || p[i] != p[i] ? (float)p[i] : m;
            y[r] = (__fp16)m;
        } else {
            float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
            for (; i + 8 <= n; i += 8) {
                const float16x8_t v = vld1q_f16(p + i);
                s0 = vaddq_f32(s0, vcvt_f32_f16(vget_low_f16(v))), s1 = vaddq_f32(s1, vcvt_high_f32_f16(v));
            }
            float s = vaddvq_f32(vaddq_f32(s0, s1));
            for (; i < n; ++i) s += (float)p[i];
            y[r] = (__fp16)(n ? s / (float)n : NAN);
        }
    }
}

/* relu / clip on 8 halves per instruction; the other activations in fp32, 256 values at a time */
void arm_activation_h(const arm_epilogue *e, const void *xv, void *yv, int64_t n) {
    const __fp16 *x = (const __fp16 *)xv;
    __fp16 *y = (__fp16 *)yv;
    if (e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP) {
        const float16x8_t lo = vdupq_n_f16((__fp16)(e->act == MNN_ACT_CLIP ? e->act_alpha : 0.0f));
        const float16x8_t hi = vdupq_n_f16((__fp16)(e->act == MNN_ACT_CLIP ? e->act_beta : INFINITY));
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) vst1q_f16(y + i, vminq_f16(vmaxq_f16(vld1q_f16(x + i), lo), hi));
        for (; i < n; ++i) {
            const float v = (float)x[i];
            const float l = (float)vgetq_lane_f16(lo, 0), h = (float)vgetq_lane_f16(hi, 0);
            y[i] = (__fp16)(v < l ? l : (v > h ? h : v));
        }
        return;
    }
    if (x != y) memmove(y, x, (size_t)n * 2);
    activation_x(e, y, n);
}

/* -- pooling on halves: arm_pool's structure (eltwise.c) with 8 outputs a vector. Max compares the
 * halves as stored; the average sums in fp32 (two vectors of 4) and scales there, as the fp32 kernel. */

static void pool_pad_plane_h(const __fp16 *xp, const arm_pool_geom *g, __fp16 *pad, int64_t PH, int64_t PW,
                             __fp16 fill) {
    const int64_t w0 = g->pl < PW ? g->pl : PW, w1 = g->pl + g->W < PW ? g->pl + g->W : PW;
    const float16x8_t f8 = vdupq_n_f16(fill);
    for (int64_t ph = 0; ph < PH; ++ph) {
        __fp16 *d = pad + ph * PW;
        const int64_t ih = ph - g->pt;
        if (ih < 0 || ih >= g->H || w1 <= w0) {
            int64_t pw = 0;
            for (; pw + 8 <= PW; pw += 8) vst1q_f16(d + pw, f8);
            for (; pw < PW; ++pw) d[pw] = fill;
            continue;
        }
        for (int64_t pw = 0; pw < w0; ++pw) d[pw] = fill;
        memcpy(d + w0, xp + ih * g->W, (size_t)(w1 - w0) * sizeof(__fp16));
        for (int64_t pw = w1; pw < PW; ++pw) d[pw] = fill;
    }
}

/* 8 elements sw apart (sw 1 or 2: every other one of 16) */
static inline float16x8_t load_every_h(const __fp16 *p, int64_t sw) {
    return sw == 1 ? vld1q_f16(p) : vld2q_f16(p).val[0];
}

/* the window's columns j0..: max into m, or widened sums into s0 / s1 */
static inline __attribute__((always_inline)) void pool_take_h(int kind, float16x8_t v, float16x8_t *m,
                                                              float32x4_t *s0, float32x4_t *s1) {
    if (kind == 0) {
        *m = vmaxq_f16(*m, v);
    } else {
        *s0 = vaddq_f32(*s0, vcvt_f32_f16(vget_low_f16(v)));
        *s1 = vaddq_f32(*s1, vcvt_high_f32_f16(v));
    }
}

/* One output row, 8 outputs a vector while every read stays inside the row (width ld); returns where the
 * vectors stopped. Inlined with sw, kind and k3 constant, as pool_row4 in eltwise.c. */
static inline __attribute__((always_inline)) int64_t pool_row8_h(const __fp16 *src, int64_t ld, __fp16 *yrow,
                                                                 const arm_pool_geom *g, int64_t oh, int64_t sw,
                                                                 int kind, int k3) {
    const int64_t span = (g->kw - 1) * g->dw + 8 * sw - 1;
    int64_t ow = 0;
    for (; ow + 8 <= g->OW && ow * sw + span < ld; ow += 8) {
        float16x8_t m = vdupq_n_f16(-INFINITY);
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
        for (int64_t i = 0; i < g->kh; ++i) {
            const __fp16 *row = src + (oh * g->sh + i * g->dh) * ld + ow * sw;
            if (k3) {
                float16x8_t v0, v1, v2;
                if (sw == 2) { /* the first two columns: the even and odd elements of one ld2 */
                    const float16x8x2_t ab = vld2q_f16(row);
                    v0 = ab.val[0], v1 = ab.val[1], v2 = vld2q_f16(row + 2).val[0];
                } else {
                    v0 = vld1q_f16(row), v1 = vld1q_f16(row + 1), v2 = vld1q_f16(row + 2);
                }
                if (kind == 0) {
                    m = vmaxq_f16(vmaxq_f16(m, v0), vmaxq_f16(v1, v2));
                    continue;
                }
                pool_take_h(kind, v0, &m, &s0, &s1);
                pool_take_h(kind, v1, &m, &s0, &s1);
                pool_take_h(kind, v2, &m, &s0, &s1);
                continue;
            }
            for (int64_t j = 0; j < g->kw; ++j) pool_take_h(kind, load_every_h(row + j * g->dw, sw), &m, &s0, &s1);
        }
        if (kind == 1) {
            const float32x4_t r = vdupq_n_f32(g->inv_rows[oh]);
            s0 = vmulq_f32(vmulq_f32(s0, r), vld1q_f32(g->inv_cols + ow));
            s1 = vmulq_f32(vmulq_f32(s1, r), vld1q_f32(g->inv_cols + ow + 4));
            m = vcvt_high_f16_f32(vcvt_f16_f32(s0), s1);
        }
        vst1q_f16(yrow + ow, m);
    }
    return ow;
}

/* then 4 outputs a vector (64-bit halves), where 8 would read past the row: the tail left to the scalar
 * loop is then no longer than the fp32 kernel's (a 55-wide row at stride 2: 3 outputs, not 7) */
static inline __attribute__((always_inline)) int64_t pool_row4_h(const __fp16 *src, int64_t ld, __fp16 *yrow,
                                                                 const arm_pool_geom *g, int64_t oh, int64_t ow,
                                                                 int64_t sw, int kind, int k3) {
    const int64_t span = (g->kw - 1) * g->dw + 4 * sw - 1;
    for (; ow + 4 <= g->OW && ow * sw + span < ld; ow += 4) {
        float16x4_t m = vdup_n_f16(-INFINITY);
        float32x4_t s = vdupq_n_f32(0.0f);
        for (int64_t i = 0; i < g->kh; ++i) {
            const __fp16 *row = src + (oh * g->sh + i * g->dh) * ld + ow * sw;
            for (int64_t j = 0; j < (k3 ? 3 : g->kw); ++j) {
                const __fp16 *p = row + j * (k3 ? 1 : g->dw);
                const float16x4_t v = sw == 1 ? vld1_f16(p) : vld2_f16(p).val[0];
                if (kind == 0) m = vmax_f16(m, v);
                else s = vaddq_f32(s, vcvt_f32_f16(v));
            }
        }
        if (kind == 1) m = vcvt_f16_f32(vmulq_f32(vmulq_n_f32(s, g->inv_rows[oh]), vld1q_f32(g->inv_cols + ow)));
        vst1_f16(yrow + ow, m);
    }
    return ow;
}

void arm_pool_h(const void *xv, void *yv, int64_t planes, const arm_pool_geom *g, void *work) {
    const __fp16 *x = (const __fp16 *)xv;
    __fp16 *y = (__fp16 *)yv, *pad = (__fp16 *)work;
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const __fp16 fill = g->kind == 0 ? (__fp16)-INFINITY : (__fp16)0.0f;
    /* windows inside the plane (ceil_mode's included when they fit): read it as it is, no padded copy */
    const int direct = g->pt == 0 && g->pl == 0 && PH <= g->H && PW <= g->W;
    const int64_t ld = direct ? g->W : PW, sw = g->sw;
    const int max = g->kind == 0, k3 = g->kw == 3 && g->dw == 1;
    for (int64_t p = 0; p < planes; ++p) {
        const __fp16 *xp = x + p * g->H * g->W, *src = xp;
        if (!direct) {
            pool_pad_plane_h(xp, g, pad, PH, PW, fill);
            src = pad;
        }
        __fp16 *yp = y + p * g->OH * g->OW;
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            __fp16 *yrow = yp + oh * g->OW;
            int64_t ow = 0;
            if (sw == 1 && k3) ow = max ? pool_row8_h(src, ld, yrow, g, oh, 1, 0, 1) : pool_row8_h(src, ld, yrow, g, oh, 1, 1, 1);
            if (sw == 2 && k3) ow = max ? pool_row8_h(src, ld, yrow, g, oh, 2, 0, 1) : pool_row8_h(src, ld, yrow, g, oh, 2, 1, 1);
            if (sw == 1 && !k3) ow = max ? pool_row8_h(src, ld, yrow, g, oh, 1, 0, 0) : pool_row8_h(src, ld, yrow, g, oh, 1, 1, 0);
            if (sw == 2 && !k3) ow = max ? pool_row8_h(src, ld, yrow, g, oh, 2, 0, 0) : pool_row8_h(src, ld, yrow, g, oh, 2, 1, 0);
            if (sw == 1 && k3) ow = max ? pool_row4_h(src, ld, yrow, g, oh, ow, 1, 0, 1) : pool_row4_h(src, ld, yrow, g, oh, ow, 1, 1, 1);
            if (sw == 2 && k3) ow = max ? pool_row4_h(src, ld, yrow, g, oh, ow, 2, 0, 1) : pool_row4_h(src, ld, yrow, g, oh, ow, 2, 1, 1);
            if (sw == 1 && !k3) ow = max ? pool_row4_h(src, ld, yrow, g, oh, ow, 1, 0, 0) : pool_row4_h(src, ld, yrow, g, oh, ow, 1, 1, 0);
            if (sw == 2 && !k3) ow = max ? pool_row4_h(src, ld, yrow, g, oh, ow, 2, 0, 0) : pool_row4_h(src, ld, yrow, g, oh, ow, 2, 1, 0);
            for (; ow < g->OW; ++ow) {
                float acc = max ? -INFINITY : 0.0f;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j) {
                        const float v = (float)src[(oh * g->sh + i * g->dh) * ld + ow * sw + j * g->dw];
                        acc = max ? (v > acc || v != v ? v : acc) : acc + v;
                    }
                yrow[ow] = (__fp16)(max ? acc : acc * g->inv_rows[oh] * g->inv_cols[ow]);
            }
        }
    }
}
