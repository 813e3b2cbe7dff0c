/* The fp32 path: NEON on every aarch64 CPU (compiled -march=armv8-a).
 * Packed GEMM with an 8x12 register tile (24 accumulators, vfmaq_laneq_f32),
 * depthwise convolution over a zero-padded plane, and the fp32 kernels of
 * the other ops (element-wise, pooling, softmax, norms). */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"

#define ELEM float
#define MR 8
#define NR 12
#define LANES 4
#define NV 3

static inline void store4(float *d, float32x4_t v) { vst1q_f32(d, v); }

#include "fgemm_body.h"

/* The 8 x (4*nvc) tile with its 8*nvc accumulators as named variables (an
 * array of vectors makes GCC keep a stack copy it rewrites every k-step). */
#define ROW_ACC(r) float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0;
#define ROW_FMA(r, av, lane)                                      \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane);             \
    if (nvc > 1) c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane); \
    if (nvc > 2) c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, lane);
#define ROW_PUT(r)                                 \
    put4(t, r, 0, c##r##0);                        \
    if (nvc > 1) put4(t, r, 4, c##r##1);           \
    if (nvc > 2) put4(t, r, 8, c##r##2);
/* the common case: first and only K block, bias and clamp applied here */
#define FAST4(r, col, acc)                                        \
    do {                                                          \
        float32x4_t v_ = vaddq_f32(acc, bias##r);                 \
        if (q.clamp) v_ = vminq_f32(vmaxq_f32(v_, lo), hi);       \
        vst1q_f32(t->c + r * t->ldc + col, v_);                   \
    } while (0)
#define ROW_FAST(r)                                               \
    {                                                             \
        const float32x4_t bias##r = vdupq_n_f32(q.bias[r]);       \
        FAST4(r, 0, c##r##0);                                     \
        if (nvc > 1) FAST4(r, 4, c##r##1);                        \
        if (nvc > 2) FAST4(r, 8, c##r##2);                        \
    }
#define ROW_TMP(r)                                 \
    vst1q_f32(tmp + r * NR, c##r##0);              \
    if (nvc > 1) vst1q_f32(tmp + r * NR + 4, c##r##1); \
    if (nvc > 2) vst1q_f32(tmp + r * NR + 8, c##r##2);

#define DEFINE_TILE(NAME, NVC)                                                      \
    static void NAME(const tile_args *t) {                                          \
        const int nvc = NVC;                                                        \
        ROW_ACC(0) ROW_ACC(1) ROW_ACC(2) ROW_ACC(3) ROW_ACC(4) ROW_ACC(5) ROW_ACC(6) ROW_ACC(7) \
        const float *a = t->a, *b = t->b;                                           \
        for (int64_t k = 0; k < t->kc; ++k) {                                       \
            if ((k & 3) == 0) { /* 4 k-steps = 2 lines of A, 3 of B: 16 steps ahead */ \
                __builtin_prefetch(a + 16 * MR);                                    \
                __builtin_prefetch(a + 16 * MR + 16);                               \
                __builtin_prefetch(b + 16 * NR);                                    \
                __builtin_prefetch(b + 16 * NR + 16);                               \
                __builtin_prefetch(b + 16 * NR + 32);                               \
            }                                                                       \
            const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);             \
            const float32x4_t b0 = vld1q_f32(b);                                    \
            const float32x4_t b1 = nvc > 1 ? vld1q_f32(b + 4) : b0;                 \
            const float32x4_t b2 = nvc > 2 ? vld1q_f32(b + 8) : b0;                 \
            ROW_FMA(0, a0, 0) ROW_FMA(1, a0, 1) ROW_FMA(2, a0, 2) ROW_FMA(3, a0, 3) \
            ROW_FMA(4, a1, 0) ROW_FMA(5, a1, 1) ROW_FMA(6, a1, 2) ROW_FMA(7, a1, 3) \
            a += MR;                                                                \
            b += NR;                                                                \
        }                                                                           \
        if (t->mr == MR && t->nc == 4 * nvc && t->epi && !t->accumulate) {          \
            tile_epi q;                                                             \
            tile_epi_init(t, &q);                                                   \
            const float32x4_t lo = vdupq_n_f32(q.lo), hi = vdupq_n_f32(q.hi);       \
            ROW_FAST(0) ROW_FAST(1) ROW_FAST(2) ROW_FAST(3) ROW_FAST(4) ROW_FAST(5) ROW_FAST(6) ROW_FAST(7) \
        } else if (t->mr == MR && t->nc == 4 * nvc) {                               \
            ROW_PUT(0) ROW_PUT(1) ROW_PUT(2) ROW_PUT(3) ROW_PUT(4) ROW_PUT(5) ROW_PUT(6) ROW_PUT(7) \
        } else {                                                                    \
            float tmp[MR * NR];                                                     \
            ROW_TMP(0) ROW_TMP(1) ROW_TMP(2) ROW_TMP(3) ROW_TMP(4) ROW_TMP(5) ROW_TMP(6) ROW_TMP(7) \
            put_partial(t, tmp);                                                    \
        }                                                                           \
    }

DEFINE_TILE(tile_nv3, 3)
DEFINE_TILE(tile_nv2, 2)
DEFINE_TILE(tile_nv1, 1)

static void tile_full(const tile_args *t) { tile_nv3(t); }
static void tile_part(const tile_args *t, int nv) {
    if (nv == 1) tile_nv1(t);
    else tile_nv2(t);
}

/* -- depthwise ---------------------------------------------------------------------- */

static void pad_plane_f32(const float *x, const arm_conv_geom *g, float *pad, int64_t PH, int64_t PW) {
    for (int64_t ph = 0; ph < PH; ++ph) {
        const int64_t ih = ph - g->pt;
        float *d = pad + ph * PW;
        if (ih < 0 || ih >= g->H) {
            memset(d, 0, (size_t)PW * sizeof(float));
            continue;
        }
        for (int64_t pw = 0; pw < PW; ++pw) {
            const int64_t iw = pw - g->pl;
            d[pw] = iw >= 0 && iw < g->W ? x[ih * g->W + iw] : 0.0f;
        }
    }
}

int64_t arm_depthwise_work_bytes(const arm_conv_geom *g) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    return (PH * PW + 64) * (int64_t)sizeof(float); /* slack: a vld2q of the last vector reads past the row */
}

static inline float32x4_t load_strided(const float *p, int64_t s) {
    if (s == 1) return vld1q_f32(p);
    if (s == 2) return vld2q_f32(p).val[0];
    const float v[4] = {p[0], p[s], p[2 * s], p[3 * s]};
    return vld1q_f32(v);
}

static void depthwise_fp32(const float *x, const float *w, const float *bias, float *y, int64_t planes,
                           const arm_conv_geom *g, const arm_epilogue *e, void *work) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t taps = g->kh * g->kw;
    float *pad = (float *)work;
    float lo, hi;
    const int clamp = e->act == ARM_ACT_RELU || e->act == ARM_ACT_CLIP;
    lo = e->act == ARM_ACT_CLIP ? e->act_alpha : 0.0f;
    hi = e->act == ARM_ACT_CLIP ? e->act_beta : INFINITY;
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const float *wk = w + c * taps;
        const float b = bias ? bias[c] : 0.0f;
        float *yp = y + p * g->OH * g->OW;
        pad_plane_f32(x + p * g->H * g->W, g, pad, PH, PW);
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            float *yo = yp + oh * g->OW;
            int64_t ow = 0;
            for (; ow + 4 <= g->OW; ow += 4) {
                float32x4_t acc = vdupq_n_f32(b);
                for (int64_t i = 0; i < g->kh; ++i) {
                    const float *src = pad + (oh * g->sh + i * g->dh) * PW + ow * g->sw;
                    for (int64_t j = 0; j < g->kw; ++j)
                        acc = vfmaq_n_f32(acc, load_strided(src + j * g->dw, g->sw), wk[i * g->kw + j]);
                }
                if (clamp) acc = vminq_f32(vmaxq_f32(acc, vdupq_n_f32(lo)), vdupq_n_f32(hi));
                vst1q_f32(yo + ow, acc);
            }
            for (; ow < g->OW; ++ow) {
                float acc = b;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j)
                        acc += pad[(oh * g->sh + i * g->dh) * PW + ow * g->sw + j * g->dw] * wk[i * g->kw + j];
                if (clamp) acc = acc < lo ? lo : (acc > hi ? hi : acc);
                yo[ow] = acc;
            }
        }
    }
    if (!clamp && e->act != ARM_ACT_NONE) arm_activation(e, y, y, planes * g->OH * g->OW);
}

const arm_fkernels arm_fkernels_fp32 = {"fp32", MR, NR, 4, pack_a_impl, pack_b_impl, im2col_b_impl,
                                        gemm_driver, depthwise_fp32};
