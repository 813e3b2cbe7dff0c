/* The fp16 path's kernels, included by fp16.c (fp32 activations: converted
 * while packing, results widened) and fp16h.c (XHALF: fp16 activations read
 * and written as they are). Both are compiled -march=armv8.2-a+fp16. */

/* 8 (4) activations as halves */
static inline float16x8_t load8h(const xelem *p) {
#if XHALF
    return vld1q_f16(p);
#else
    return vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(p)), vld1q_f32(p + 4));
#endif
}
static inline float16x4_t load4h(const xelem *p) {
#if XHALF
    return vld1_f16(p);
#else
    return vcvt_f16_f32(vld1q_f32(p));
#endif
}
static inline void store8(xelem *p, float16x8_t v) {
#if XHALF
    vst1q_f16(p, v);
#else
    vst1q_f32(p, vcvt_f32_f16(vget_low_f16(v)));
    vst1q_f32(p + 4, vcvt_high_f32_f16(v));
#endif
}
/* the first n (1..7) of 8 results (lane stores: a loop would become a call to memcpy) */
static inline void store_part8(xelem *d, float16x8_t v, int64_t n) {
#if XHALF
    vst1q_lane_f16(d, v, 0);
    if (n > 1) vst1q_lane_f16(d + 1, v, 1);
    if (n > 2) vst1q_lane_f16(d + 2, v, 2);
    if (n > 3) vst1q_lane_f16(d + 3, v, 3);
    if (n > 4) vst1q_lane_f16(d + 4, v, 4);
    if (n > 5) vst1q_lane_f16(d + 5, v, 5);
    if (n > 6) vst1q_lane_f16(d + 6, v, 6);
#else
    const float32x4_t v0 = vcvt_f32_f16(vget_low_f16(v)), v1 = vcvt_high_f32_f16(v);
    float32x4_t w = v0;
    if (n >= 4) {
        vst1q_f32(d, v0);
        d += 4, n -= 4, w = v1;
    }
    if (n > 0) vst1q_lane_f32(d, w, 0);
    if (n > 1) vst1q_lane_f32(d + 1, w, 1);
    if (n > 2) vst1q_lane_f32(d + 2, w, 2);
#endif
}
/* an activation the kernels do not fuse, on results already stored */
static void activation_x(const arm_epilogue *e, xelem *y, int64_t n) {
#if XHALF
    float tmp[256];
    for (int64_t i = 0; i < n; i += 256) {
        const int64_t m = n - i < 256 ? n - i : 256;
        for (int64_t j = 0; j < m; ++j) tmp[j] = (float)y[i + j];
        arm_activation(e, tmp, tmp, m);
        for (int64_t j = 0; j < m; ++j) y[i + j] = (xelem)tmp[j];
    }
#else
    arm_activation(e, y, y, n);
#endif
}

/* The 8 x (8*nvc) tile with named accumulators (see fp32.c for why). */
/* fmla by element on halves takes its element register from v0-v15 only; GCC 12
 * then falls back to a dup per lane, so the instruction is spelled out with the
 * "x" (v0-v15) constraint. */
#define FMA16(acc, b, a, lane) __asm__("fmla %0.8h, %1.8h, %2.h[" #lane "]" : "+w"(acc) : "w"(b), "x"(a))
#define ROW_ACC(r) float16x8_t c##r##0 = vdupq_n_f16(0), c##r##1 = c##r##0, c##r##2 = c##r##0;
#define ROW_FMA(r)                                                  \
    FMA16(c##r##0, b0, av, r);                                      \
    if (nvc > 1) FMA16(c##r##1, b1, av, r);                         \
    if (nvc > 2) FMA16(c##r##2, b2, av, r);
#define PUT8(r, v, acc)                                             \
    put4(t, r, 8 * v, vcvt_f32_f16(vget_low_f16(acc)));             \
    put4(t, r, 8 * v + 4, vcvt_high_f32_f16(acc));
#define ROW_PUT(r) PUT8(r, 0, c##r##0) if (nvc > 1) { PUT8(r, 1, c##r##1) } if (nvc > 2) { PUT8(r, 2, c##r##2) }
#define TMP8(r, v, acc)                                             \
    vst1q_f32(tmp + r * NR + 8 * v, vcvt_f32_f16(vget_low_f16(acc))); \
    vst1q_f32(tmp + r * NR + 8 * v + 4, vcvt_high_f32_f16(acc));
/* the common case (first and only K block): bias and clamp on 8 halves at a
 * time, then widened to fp32 for the store */
#define FAST8(r, col, acc)                                                      \
    do {                                                                        \
        float16x8_t v_ = vaddq_f16(acc, bias##r);                               \
        if (q.clamp) v_ = vminq_f16(vmaxq_f16(v_, lo), hi);                     \
        store8(t->c + r * t->ldc + col, v_);                                    \
    } while (0)
#define ROW_FAST(r)                                                             \
    {                                                                           \
        const float16x8_t bias##r = vdupq_n_f16((__fp16)q.bias[r]);             \
        FAST8(r, 0, c##r##0);                                                   \
        if (nvc > 1) FAST8(r, 8, c##r##1);                                      \
        if (nvc > 2) FAST8(r, 16, c##r##2);                                     \
    }
#define ROW_TMP(r) TMP8(r, 0, c##r##0) if (nvc > 1) { TMP8(r, 1, c##r##1) } if (nvc > 2) { TMP8(r, 2, c##r##2) }

/* fp16 partial sums are carried into fp32 every SPAN k-steps (their rounding error grows with the
 * run of steps), so the K blocks can be KC = 512 long like fp32's: the same bytes of B in L1 */
#define SPAN 256
#define ADD8(r, v, acc)                                                                          \
    vst1q_f32(tmp + r * NR + 8 * v, vaddq_f32(vld1q_f32(tmp + r * NR + 8 * v), vcvt_f32_f16(vget_low_f16(acc)))); \
    vst1q_f32(tmp + r * NR + 8 * v + 4, vaddq_f32(vld1q_f32(tmp + r * NR + 8 * v + 4), vcvt_high_f32_f16(acc)));
#define ROW_ADD(r) ADD8(r, 0, c##r##0) if (nvc > 1) { ADD8(r, 1, c##r##1) } if (nvc > 2) { ADD8(r, 2, c##r##2) }
#define ROW_ZERO(r) c##r##0 = vdupq_n_f16(0), c##r##1 = c##r##0, c##r##2 = c##r##0;

/* the carried fp32 sums folded back into the last span's fp16 ones: the result is fp16-rounded either way */
#define FOLD8(r, v, acc) \
    acc = vaddq_f16(acc, vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(tmp + r * NR + 8 * v)), vld1q_f32(tmp + r * NR + 8 * v + 4)));
#define ROW_FOLD(r) FOLD8(r, 0, c##r##0) if (nvc > 1) { FOLD8(r, 1, c##r##1) } if (nvc > 2) { FOLD8(r, 2, c##r##2) }

#define DEFINE_TILE(NAME, NVC)                                                      \
    static void NAME(const tile_args *t) {                                          \
        const int nvc = NVC;                                                        \
        ROW_ACC(0) ROW_ACC(1) ROW_ACC(2) ROW_ACC(3) ROW_ACC(4) ROW_ACC(5) ROW_ACC(6) ROW_ACC(7) \
        const __fp16 *a = t->a, *b = t->b;                                          \
        float tmp[MR * NR];                                                         \
        int carried = 0;                                                            \
        int64_t k = 0;                                                              \
        for (;;) {                                                                  \
            const int64_t kend = t->kc - k > SPAN ? k + SPAN : t->kc;               \
            for (; k < kend; ++k) {                                                 \
                if ((k & 3) == 0) { /* 4 k-steps = 1 line of A, 3 of B: 16 steps ahead */ \
                    __builtin_prefetch(a + 16 * MR);                                \
                    __builtin_prefetch(b + 16 * NR);                                \
                    __builtin_prefetch(b + 16 * NR + 32);                           \
                    __builtin_prefetch(b + 16 * NR + 64);                           \
                }                                                                   \
                const float16x8_t av = vld1q_f16(a);                                \
                const float16x8_t b0 = vld1q_f16(b);                                \
                const float16x8_t b1 = nvc > 1 ? vld1q_f16(b + 8) : b0;             \
                const float16x8_t b2 = nvc > 2 ? vld1q_f16(b + 16) : b0;            \
                ROW_FMA(0) ROW_FMA(1) ROW_FMA(2) ROW_FMA(3) ROW_FMA(4) ROW_FMA(5) ROW_FMA(6) ROW_FMA(7) \
                a += MR;                                                            \
                b += NR;                                                            \
            }                                                                       \
            if (k == t->kc) break;                                                  \
            if (carried) {                                                          \
                ROW_ADD(0) ROW_ADD(1) ROW_ADD(2) ROW_ADD(3) ROW_ADD(4) ROW_ADD(5) ROW_ADD(6) ROW_ADD(7) \
            } else {                                                                \
                ROW_TMP(0) ROW_TMP(1) ROW_TMP(2) ROW_TMP(3) ROW_TMP(4) ROW_TMP(5) ROW_TMP(6) ROW_TMP(7) \
            }                                                                       \
            ROW_ZERO(0) ROW_ZERO(1) ROW_ZERO(2) ROW_ZERO(3) ROW_ZERO(4) ROW_ZERO(5) ROW_ZERO(6) ROW_ZERO(7) \
            carried = 1;                                                            \
        }                                                                           \
        if (carried) {                                                              \
            ROW_FOLD(0) ROW_FOLD(1) ROW_FOLD(2) ROW_FOLD(3) ROW_FOLD(4) ROW_FOLD(5) ROW_FOLD(6) ROW_FOLD(7) \
        }                                                                           \
        if (t->mr == MR && t->nc == 8 * nvc && t->epi && !t->accumulate) {   \
            tile_epi q;                                                             \
            tile_epi_init(t, &q);                                                   \
            const float16x8_t lo = vdupq_n_f16((__fp16)q.lo), hi = vdupq_n_f16((__fp16)q.hi); \
            ROW_FAST(0) ROW_FAST(1) ROW_FAST(2) ROW_FAST(3) ROW_FAST(4) ROW_FAST(5) ROW_FAST(6) ROW_FAST(7) \
        } else if (t->mr == MR && t->nc == 8 * nvc) {                               \
            ROW_PUT(0) ROW_PUT(1) ROW_PUT(2) ROW_PUT(3) ROW_PUT(4) ROW_PUT(5) ROW_PUT(6) ROW_PUT(7) \
        } else {                                                                    \
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

/* -- depthwise: 8 outputs per instruction over a zero-padded fp16 plane ------------- */

static inline float16x8_t load_strided16(const __fp16 *p, int64_t s) {
    if (s == 1) return vld1q_f16(p);
    if (s == 2) return vld2q_f16(p).val[0];
    __fp16 v[8];
    for (int i = 0; i < 8; ++i) v[i] = p[i * s];
    return vld1q_f16(v);
}

/* 3x3, stride 1 or 2, no dilation: the same kernel as fp32.c's, 8 halves per
 * vector. Taps 0-7 in one register and tap 8 in another (fmla by element);
 * bias, clamp and the accumulation in fp16, widened to fp32 for the store. */
/* no memset/memcpy calls for the zero stores (they would run outside the counted code) */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void pad_plane3_f16(const xelem *x, const arm_conv_geom *g, __fp16 *pad, int64_t PH, int64_t R, int fresh) {
    const int64_t W = g->W, pl = g->pl, need = (g->OW - 1) * g->sw + 3;
    const float16x8_t z = vdupq_n_f16((__fp16)0);
    /* the zeros are the same for every plane: stored for the first (fresh) only, later planes copy their rows */
    const int64_t ph0 = fresh ? 0 : g->pt, ph1 = fresh || g->pt + g->H > PH ? PH : g->pt + g->H;
    for (int64_t ph = ph0; ph < ph1; ++ph) {
        const int64_t ih = ph - g->pt;
        __fp16 *d = pad + ph * R;
        if (ih < 0 || ih >= g->H) {
            if (fresh)
                for (int64_t pw = 0; pw < need; pw += 8) vst1q_f16(d + pw, z);
            continue;
        }
        /* as in fp32.c, 8 values per store (converted from fp32 unless XHALF) */
        const xelem *row = x + ih * W;
        if (fresh)
            for (int64_t pw = 0; pw < pl; pw += 8) vst1q_f16(d + pw, z);
        if (W >= 8) {
            for (int64_t iw = 0; iw + 8 < W; iw += 8) vst1q_f16(d + pl + iw, load8h(row + iw));
            vst1q_f16(d + pl + W - 8, load8h(row + W - 8));
        } else if (W >= 4) {
            vst1_f16(d + pl, load4h(row));
            vst1_f16(d + pl + W - 4, load4h(row + W - 4));
        } else {
            for (int64_t iw = 0; iw < W; ++iw) d[pl + iw] = (__fp16)row[iw];
        }
        if (fresh)
            for (int64_t pw = pl + W; pw < need; pw += 8) vst1q_f16(d + pw, z);
    }
}

static inline __attribute__((always_inline)) void dw3x3_rows_f16(const __fp16 *pad, int64_t R, xelem *yp,
                                                                 const arm_conv_geom *g, const float16x8_t w0,
                                                                 const float16x8_t w1, float16x8_t vb,
                                                                 const int clamp, float16x8_t lo, float16x8_t hi,
                                                                 const int s, const int64_t room) {
    const int64_t OH = g->OH, OW = g->OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
        const __fp16 *r0 = pad + oh * s * R, *r1 = r0 + R, *r2 = r1 + R;
        xelem *yo = yp + oh * OW;
        for (int64_t ow = 0; ow < OW; ow += 8) {
            float16x8_t acc = vb;
            if (s == 1) {
                FMA16(acc, vld1q_f16(r0 + ow), w0, 0);
                FMA16(acc, vld1q_f16(r0 + ow + 1), w0, 1);
                FMA16(acc, vld1q_f16(r0 + ow + 2), w0, 2);
                FMA16(acc, vld1q_f16(r1 + ow), w0, 3);
                FMA16(acc, vld1q_f16(r1 + ow + 1), w0, 4);
                FMA16(acc, vld1q_f16(r1 + ow + 2), w0, 5);
                FMA16(acc, vld1q_f16(r2 + ow), w0, 6);
                FMA16(acc, vld1q_f16(r2 + ow + 1), w0, 7);
                FMA16(acc, vld1q_f16(r2 + ow + 2), w1, 0);
            } else {
                const float16x8x2_t a = vld2q_f16(r0 + 2 * ow), b = vld2q_f16(r1 + 2 * ow), c = vld2q_f16(r2 + 2 * ow);
                FMA16(acc, a.val[0], w0, 0);
                FMA16(acc, a.val[1], w0, 1);
                FMA16(acc, vld2q_f16(r0 + 2 * ow + 2).val[0], w0, 2);
                FMA16(acc, b.val[0], w0, 3);
                FMA16(acc, b.val[1], w0, 4);
                FMA16(acc, vld2q_f16(r1 + 2 * ow + 2).val[0], w0, 5);
                FMA16(acc, c.val[0], w0, 6);
                FMA16(acc, c.val[1], w0, 7);
                FMA16(acc, vld2q_f16(r2 + 2 * ow + 2).val[0], w1, 0);
            }
            if (clamp) acc = vminq_f16(vmaxq_f16(acc, lo), hi);
            /* as in fp32.c: whole vectors spill into the next rows where that stays inside y */
            if (ow + 8 <= OW || oh * OW + ow + 8 <= room) store8(yo + ow, acc);
            else store_part8(yo + ow, acc, OW - ow);
        }
    }
}

static void depthwise3x3_f16(const xelem *x, const float *w, const float *bias, xelem *y, int64_t planes,
                             const arm_conv_geom *g, int clamp, float lo, float hi, __fp16 *pad) {
    const int64_t PH = (g->OH - 1) * g->sh + 3, R = arm_dw_row(g);
    const float16x8_t vlo = vdupq_n_f16((__fp16)lo);
    /* an fp16 ceiling: +inf (no clip) stays inf, a finite clip bound rounds to the nearest half */
    const float16x8_t vhi = vdupq_n_f16((__fp16)hi);
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const float *wk = w + c * 9;
        const float16x8_t w0 = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(wk)), vld1q_f32(wk + 4));
        const float16x8_t w1 = vdupq_n_f16((__fp16)wk[8]);
        const float16x8_t vb = vdupq_n_f16((__fp16)(bias ? bias[c] : 0.0f));
        pad_plane3_f16(x + p * g->H * g->W, g, pad, PH, R, p == 0);
        xelem *yp = y + p * g->OH * g->OW;
        const int64_t room = (planes - p) * g->OH * g->OW; /* elements from yp to the end of y */
        if (g->sh == 1 && clamp) dw3x3_rows_f16(pad, R, yp, g, w0, w1, vb, 1, vlo, vhi, 1, room);
        else if (g->sh == 1) dw3x3_rows_f16(pad, R, yp, g, w0, w1, vb, 0, vlo, vhi, 1, room);
        else if (clamp) dw3x3_rows_f16(pad, R, yp, g, w0, w1, vb, 1, vlo, vhi, 2, room);
        else dw3x3_rows_f16(pad, R, yp, g, w0, w1, vb, 0, vlo, vhi, 2, room);
    }
}

static void depthwise_impl(const void *xv, const float *w, const float *bias, void *yv, int64_t planes,
                           const arm_conv_geom *g, const arm_epilogue *e, void *work) {
    const xelem *x = (const xelem *)xv;
    xelem *y = (xelem *)yv;
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t taps = g->kh * g->kw;
    __fp16 *pad = (__fp16 *)work;
    const int clamp = e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP;
    const float lo = e->act == MNN_ACT_CLIP ? e->act_alpha : 0.0f;
    const float hi = e->act == MNN_ACT_CLIP ? e->act_beta : INFINITY;
    if (arm_dw3x3(g)) {
        depthwise3x3_f16(x, w, bias, y, planes, g, clamp, lo, hi, pad);
        if (!clamp && e->act != MNN_ACT_NONE) activation_x(e, y, planes * g->OH * g->OW);
        return;
    }
    __fp16 wk[64];
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const xelem *xp = x + p * g->H * g->W;
        xelem *yp = y + p * g->OH * g->OW;
        const int small = taps <= 64;
        if (small)
            for (int64_t t = 0; t < taps; ++t) wk[t] = (__fp16)w[c * taps + t];
        for (int64_t ph = 0; ph < PH; ++ph) {
            const int64_t ih = ph - g->pt;
            __fp16 *d = pad + ph * PW;
            int64_t pw = 0;
            if (ih >= 0 && ih < g->H) {
                const xelem *row = xp + ih * g->W;
                for (; pw < PW && pw < g->pl; ++pw) d[pw] = 0;
                for (; pw + 4 <= PW && pw - g->pl + 4 <= g->W; pw += 4) vst1_f16(d + pw, load4h(row + pw - g->pl));
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
            xelem *yo = yp + oh * g->OW;
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
                    store_c4(yo + ow, r0);
                    store_c4(yo + ow + 4, r1);
                }
            }
            for (; ow < g->OW; ++ow) {
                float acc = b;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j)
                        acc += (float)pad[(oh * g->sh + i * g->dh) * PW + ow * g->sw + j * g->dw] *
                               (float)(__fp16)w[c * taps + i * g->kw + j];
                if (clamp) acc = acc < lo ? lo : (acc > hi ? hi : acc);
                yo[ow] = (xelem)acc;
            }
        }
    }
    if (!clamp && e->act != MNN_ACT_NONE) activation_x(e, y, planes * g->OH * g->OW);
}

