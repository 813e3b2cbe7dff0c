/* The fp16 path (compiled -march=armv8.2-a+fp16; run only where the CPU
 * reports asimdhp): operands are packed to half precision, the 8x24 register
 * tile multiplies-accumulates 8 halves per instruction (vfmaq_laneq_f16), so
 * one k-step of a tile twice the fp32 tile's width costs the same number of
 * instructions. Partial sums are carried in fp16 for KC = 256 steps at most,
 * then added into the fp32 output; results are stored as fp32. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"

#define ELEM __fp16
#define MR 8
#define NR 24
#define LANES 8
#define NV 3
#define KC 256

static inline void store4(__fp16 *d, float32x4_t v) { vst1_f16(d, vcvt_f16_f32(v)); }

#include "fgemm_body.h"

#define FMA_ROWS16(v)                                                  \
    do {                                                               \
        acc[0][v] = vfmaq_laneq_f16(acc[0][v], bv[v], av, 0);          \
        acc[1][v] = vfmaq_laneq_f16(acc[1][v], bv[v], av, 1);          \
        acc[2][v] = vfmaq_laneq_f16(acc[2][v], bv[v], av, 2);          \
        acc[3][v] = vfmaq_laneq_f16(acc[3][v], bv[v], av, 3);          \
        acc[4][v] = vfmaq_laneq_f16(acc[4][v], bv[v], av, 4);          \
        acc[5][v] = vfmaq_laneq_f16(acc[5][v], bv[v], av, 5);          \
        acc[6][v] = vfmaq_laneq_f16(acc[6][v], bv[v], av, 6);          \
        acc[7][v] = vfmaq_laneq_f16(acc[7][v], bv[v], av, 7);          \
    } while (0)

static inline __attribute__((always_inline)) void tile_nv(const tile_args *t, const int nv) {
    float16x8_t acc[MR][NV];
    for (int r = 0; r < MR; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = vdupq_n_f16(0);
    const __fp16 *a = t->a, *b = t->b;
    for (int64_t k = 0; k < t->kc; ++k) {
        if ((k & 3) == 0) { /* 4 k-steps = 1 line of A, 3 of B: fetch those 16 steps ahead */
            __builtin_prefetch(a + 16 * MR);
            __builtin_prefetch(b + 16 * NR);
            __builtin_prefetch(b + 16 * NR + 32);
            __builtin_prefetch(b + 16 * NR + 64);
        }
        const float16x8_t av = vld1q_f16(a);
        float16x8_t bv[NV];
        for (int v = 0; v < nv; ++v) bv[v] = vld1q_f16(b + 8 * v);
        FMA_ROWS16(0);
        if (nv > 1) FMA_ROWS16(1);
        if (nv > 2) FMA_ROWS16(2);
        a += MR;
        b += NR;
    }
    if (t->mr == MR && t->nc == 8 * nv) {
        for (int r = 0; r < MR; ++r)
            for (int v = 0; v < nv; ++v) {
                put4(t, r, 8 * v, vcvt_f32_f16(vget_low_f16(acc[r][v])));
                put4(t, r, 8 * v + 4, vcvt_high_f32_f16(acc[r][v]));
            }
    } else {
        float tmp[MR * NR];
        for (int r = 0; r < MR; ++r)
            for (int v = 0; v < nv; ++v) {
                vst1q_f32(tmp + r * NR + 8 * v, vcvt_f32_f16(vget_low_f16(acc[r][v])));
                vst1q_f32(tmp + r * NR + 8 * v + 4, vcvt_high_f32_f16(acc[r][v]));
            }
        put_partial(t, tmp);
    }
}

static void tile_full(const tile_args *t) { tile_nv(t, 3); }
static void tile_part(const tile_args *t, int nv) {
    if (nv == 1) tile_nv(t, 1);
    else tile_nv(t, 2);
}

/* -- depthwise: 8 outputs per instruction over a zero-padded fp16 plane ------------- */

static inline float16x8_t load_strided16(const __fp16 *p, int64_t s) {
    if (s == 1) return vld1q_f16(p);
    if (s == 2) return vld2q_f16(p).val[0];
    __fp16 v[8];
    for (int i = 0; i < 8; ++i) v[i] = p[i * s];
    return vld1q_f16(v);
}

static void depthwise_fp16(const float *x, const float *w, const float *bias, float *y, int64_t planes,
                           const arm_conv_geom *g, const arm_epilogue *e, void *work) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t taps = g->kh * g->kw;
    __fp16 *pad = (__fp16 *)work;
    const int clamp = e->act == ARM_ACT_RELU || e->act == ARM_ACT_CLIP;
    const float lo = e->act == ARM_ACT_CLIP ? e->act_alpha : 0.0f;
    const float hi = e->act == ARM_ACT_CLIP ? e->act_beta : INFINITY;
    __fp16 wk[64];
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const float *xp = x + p * g->H * g->W;
        float *yp = y + p * g->OH * g->OW;
        const int small = taps <= 64;
        if (small)
            for (int64_t t = 0; t < taps; ++t) wk[t] = (__fp16)w[c * taps + t];
        for (int64_t ph = 0; ph < PH; ++ph) {
            const int64_t ih = ph - g->pt;
            __fp16 *d = pad + ph * PW;
            int64_t pw = 0;
            if (ih >= 0 && ih < g->H) {
                const float *row = xp + ih * g->W;
                for (; pw < PW && pw < g->pl; ++pw) d[pw] = 0;
                for (; pw + 4 <= PW && pw - g->pl + 4 <= g->W; pw += 4)
                    vst1_f16(d + pw, vcvt_f16_f32(vld1q_f32(row + pw - g->pl)));
                for (; pw < PW; ++pw) {
                    const int64_t iw = pw - g->pl;
                    d[pw] = iw >= 0 && iw < g->W ? (__fp16)row[iw] : (__fp16)0;
                }
            } else {
                for (; pw < PW; ++pw) d[pw] = 0;
            }
        }
        const float b = bias ? bias[c] : 0.0f;
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            float *yo = yp + oh * g->OW;
            int64_t ow = 0;
            if (small) {
                for (; ow + 8 <= g->OW; ow += 8) {
                    float16x8_t acc = vdupq_n_f16((__fp16)0);
                    for (int64_t i = 0; i < g->kh; ++i) {
                        const __fp16 *src = pad + (oh * g->sh + i * g->dh) * PW + ow * g->sw;
                        for (int64_t j = 0; j < g->kw; ++j)
                            acc = vfmaq_n_f16(acc, load_strided16(src + j * g->dw, g->sw), wk[i * g->kw + j]);
                    }
                    float32x4_t r0 = vaddq_f32(vcvt_f32_f16(vget_low_f16(acc)), vdupq_n_f32(b));
                    float32x4_t r1 = vaddq_f32(vcvt_high_f32_f16(acc), vdupq_n_f32(b));
                    if (clamp) {
                        r0 = vminq_f32(vmaxq_f32(r0, vdupq_n_f32(lo)), vdupq_n_f32(hi));
                        r1 = vminq_f32(vmaxq_f32(r1, vdupq_n_f32(lo)), vdupq_n_f32(hi));
                    }
                    vst1q_f32(yo + ow, r0);
                    vst1q_f32(yo + ow + 4, r1);
                }
            }
            for (; ow < g->OW; ++ow) {
                float acc = b;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j)
                        acc += (float)pad[(oh * g->sh + i * g->dh) * PW + ow * g->sw + j * g->dw] *
                               (float)(__fp16)w[c * taps + i * g->kw + j];
                if (clamp) acc = acc < lo ? lo : (acc > hi ? hi : acc);
                yo[ow] = acc;
            }
        }
    }
    if (!clamp && e->act != ARM_ACT_NONE) arm_activation(e, y, y, planes * g->OH * g->OW);
}

const arm_fkernels arm_fkernels_fp16 = {"fp16", MR, NR, 2, pack_a_impl, pack_b_impl, im2col_b_impl,
                                        gemm_driver, depthwise_fp16};
