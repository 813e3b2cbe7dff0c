/* The fp16 path's depthwise convolution, included after fp16_body.h by fp16.c (fp32 activations) and
 * fp16h.c (XHALF: fp16 activations), whose loads, stores and activations it uses. */

/* -- depthwise: 8 outputs per instruction over a zero-padded fp16 plane ------------- */

static inline float16x8_t load_strided16(const __fp16 *p, int64_t s) {
    if (s == 1) return vld1q_f16(p);
    if (s == 2) return vld2q_f16(p).val[0];
    __fp16 v[8];
    for (int i = 0; i < 8; ++i) v[i] = p[i * s];
    return vld1q_f16(v);
}

/* 3x3 and 5x5, no dilation, stride across 1 or 2: the same kernels as fp32.c's, 8 halves per vector.
 * Taps 0-7 (8-15, 16-23) in one register each and the last tap in another (fmla by element); bias,
 * clamp and the accumulation in fp16, widened to fp32 for the store. */
/* no memset/memcpy calls for the zero stores (they would run outside the counted code) */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void pad_plane_k_f16(const xelem *x, const arm_conv_geom *g, __fp16 *pad, int64_t PH, int64_t R, int fresh) {
    const int64_t W = g->W, pl = g->pl, need = (g->OW - 1) * g->sw + g->kw;
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

/* FMA16 with the lane as a value (constant once inlined) */
static inline __attribute__((always_inline)) float16x8_t fma_lane_f16(float16x8_t acc, float16x8_t b,
                                                                       float16x8_t a, const int lane) {
    if (lane == 0) FMA16(acc, b, a, 0);
    else if (lane == 1) FMA16(acc, b, a, 1);
    else if (lane == 2) FMA16(acc, b, a, 2);
    else if (lane == 3) FMA16(acc, b, a, 3);
    else if (lane == 4) FMA16(acc, b, a, 4);
    else if (lane == 5) FMA16(acc, b, a, 5);
    else if (lane == 6) FMA16(acc, b, a, 6);
    else FMA16(acc, b, a, 7);
    return acc;
}

/* tap t of the window (row-major): lane t % 8 of register t / 8 */
#define DW16_TAP(v, t) acc = fma_lane_f16(acc, v, (t) < 8 ? w0 : (t) < 16 ? w1 : (t) < 24 ? w2 : w3, (t) & 7)
/* window row i (taps K*i ...) for the 8 outputs from ow, as fp32.c's DW_ROW */
#define DW16_ROW(r, K, i)                                                             \
    do {                                                                              \
        const __fp16 *q_ = (r) + s * ow;                                              \
        if (s == 1) {                                                                 \
            DW16_TAP(vld1q_f16(q_), K * i);                                           \
            DW16_TAP(vld1q_f16(q_ + 1), K * i + 1);                                   \
            DW16_TAP(vld1q_f16(q_ + 2), K * i + 2);                                   \
            if (K == 5) {                                                             \
                DW16_TAP(vld1q_f16(q_ + 3), K * i + 3);                               \
                DW16_TAP(vld1q_f16(q_ + 4), K * i + 4);                               \
            }                                                                         \
        } else {                                                                      \
            const float16x8x2_t a_ = vld2q_f16(q_), b_ = vld2q_f16(q_ + 2);           \
            DW16_TAP(a_.val[0], K * i);                                               \
            DW16_TAP(a_.val[1], K * i + 1);                                           \
            DW16_TAP(b_.val[0], K * i + 2);                                           \
            if (K == 5) {                                                             \
                DW16_TAP(b_.val[1], K * i + 3);                                       \
                DW16_TAP(vld2q_f16(q_ + 4).val[0], K * i + 4);                        \
            }                                                                         \
        }                                                                             \
    } while (0)

static inline __attribute__((always_inline)) void dwk_rows_f16(const __fp16 *pad, int64_t R, xelem *yp,
                                                               const arm_conv_geom *g, const int K,
                                                               const float16x8_t w0, const float16x8_t w1,
                                                               const float16x8_t w2, const float16x8_t w3,
                                                               float16x8_t vb, const int clamp, float16x8_t lo,
                                                               float16x8_t hi, const int s, const int64_t room) {
    const int64_t OH = g->OH, OW = g->OW, down = g->sh * R;
    for (int64_t oh = 0; oh < OH; ++oh) {
        const __fp16 *r0 = pad + oh * down;
        xelem *yo = yp + oh * OW;
        for (int64_t ow = 0; ow < OW; ow += 8) {
            float16x8_t acc = vb;
            if (K == 3) {
                DW16_ROW(r0, 3, 0);
                DW16_ROW(r0 + R, 3, 1);
                DW16_ROW(r0 + 2 * R, 3, 2);
            } else {
                DW16_ROW(r0, 5, 0);
                DW16_ROW(r0 + R, 5, 1);
                DW16_ROW(r0 + 2 * R, 5, 2);
                DW16_ROW(r0 + 3 * R, 5, 3);
                DW16_ROW(r0 + 4 * R, 5, 4);
            }
            if (clamp) acc = vminq_f16(vmaxq_f16(acc, lo), hi);
            /* as in fp32.c: whole vectors spill into the next rows where that stays inside y */
            if (ow + 8 <= OW || oh * OW + ow + 8 <= room) store8(yo + ow, acc);
            else store_part8(yo + ow, acc, OW - ow);
        }
    }
}

static inline float16x8_t load8w(const float *w) { return vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(w)), vld1q_f32(w + 4)); }

static void depthwise_k_f16(const xelem *x, const float *w, const float *bias, xelem *y, int64_t planes,
                            const arm_conv_geom *g, int clamp, float lo, float hi, __fp16 *pad) {
    const int K = arm_dwk(g), taps = K * K;
    const int64_t PH = (g->OH - 1) * g->sh + K, R = arm_dw_row(g);
    const float16x8_t vlo = vdupq_n_f16((__fp16)lo);
    /* an fp16 ceiling: +inf (no clip) stays inf, a finite clip bound rounds to the nearest half */
    const float16x8_t vhi = vdupq_n_f16((__fp16)hi);
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const float *wk = w + c * taps;
        const float16x8_t w0 = load8w(wk), last = vdupq_n_f16((__fp16)wk[taps - 1]);
        const float16x8_t w1 = K == 3 ? last : load8w(wk + 8), w2 = K == 3 ? last : load8w(wk + 16);
        const float16x8_t w3 = last;
        const float16x8_t vb = vdupq_n_f16((__fp16)(bias ? bias[c] : 0.0f));
        pad_plane_k_f16(x + p * g->H * g->W, g, pad, PH, R, p == 0);
        xelem *yp = y + p * g->OH * g->OW;
        const int64_t room = (planes - p) * g->OH * g->OW; /* elements from yp to the end of y */
#define DW16_CASE(K_, s_)                                                                          \
    if (clamp) dwk_rows_f16(pad, R, yp, g, K_, w0, w1, w2, w3, vb, 1, vlo, vhi, s_, room);         \
    else dwk_rows_f16(pad, R, yp, g, K_, w0, w1, w2, w3, vb, 0, vlo, vhi, s_, room);
        if (K == 3 && g->sw == 1) { DW16_CASE(3, 1) }
        else if (K == 3) { DW16_CASE(3, 2) }
        else if (g->sw == 1) { DW16_CASE(5, 1) }
        else { DW16_CASE(5, 2) }
#undef DW16_CASE
    }
}

/* 7x7, stride 1, no dilation (ConvNeXt's depthwise layers): the 49 weights in 7 registers (fmla by element),
 * two output rows a pass so each input row's 7 shifted vectors are loaded once for both (8 rows of loads
 * for 14 rows of taps), 8 outputs a vector; bias first and clamp on the registers as the 3x3 / 5x5 kernels. */
static inline int dw7_f16(const arm_conv_geom *g) {
    return g->kh == 7 && g->kw == 7 && g->dh == 1 && g->dw == 1 && g->sh == 1 && g->sw == 1;
}

/* tap t (row-major) of the window into acc: lane t % 8 of register t / 8 */
#define DW7_TAP(acc, v, t) acc = fma_lane_f16(acc, v, (t) < 8 ? w0 : (t) < 16 ? w1 : (t) < 24 ? w2 : (t) < 32 ? w3 : (t) < 40 ? w4 : (t) < 48 ? w5 : w6, (t) & 7)
/* input row r of a pass (pad row oh + r): window row r of the first output row, row r - 1 of the second */
#define DW7_IN(r, two)                                                                   \
    do {                                                                                 \
        const __fp16 *q_ = r0 + (r) * R + ow;                                            \
        for (int j_ = 0; j_ < 7; ++j_) {                                                 \
            const float16x8_t v_ = vld1q_f16(q_ + j_);                                   \
            if ((r) < 7) DW7_TAP(a0, v_, 7 * (r) + j_);                                  \
            if ((two) && (r) >= 1) DW7_TAP(a1, v_, 7 * ((r) - 1) + j_);                  \
        }                                                                                \
    } while (0)

static inline __attribute__((always_inline)) void dw7_pass_f16(const __fp16 *r0, int64_t R, xelem *y0, xelem *y1,
                                                               int64_t OW, const float16x8_t *w, float16x8_t vb,
                                                               const int clamp, float16x8_t lo, float16x8_t hi,
                                                               const int two) {
    const float16x8_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6];
    for (int64_t ow = 0; ow < OW; ow += 8) {
        float16x8_t a0 = vb, a1 = vb;
        DW7_IN(0, two);
        DW7_IN(1, two);
        DW7_IN(2, two);
        DW7_IN(3, two);
        DW7_IN(4, two);
        DW7_IN(5, two);
        DW7_IN(6, two);
        if (two) DW7_IN(7, two);
        if (clamp) a0 = vminq_f16(vmaxq_f16(a0, lo), hi), a1 = vminq_f16(vmaxq_f16(a1, lo), hi);
        if (ow + 8 <= OW) { /* a partial last vector is stored lane by lane: the next row is already written */
            store8(y0 + ow, a0);
            if (two) store8(y1 + ow, a1);
        } else {
            store_part8(y0 + ow, a0, OW - ow);
            if (two) store_part8(y1 + ow, a1, OW - ow);
        }
    }
}

static void depthwise_7_f16(const xelem *x, const float *w, const float *bias, xelem *y, int64_t planes,
                            const arm_conv_geom *g, int clamp, float lo, float hi, __fp16 *pad) {
    const int64_t PH = g->OH + 6, R = arm_dw_row(g), OH = g->OH, OW = g->OW;
    const float16x8_t vlo = vdupq_n_f16((__fp16)lo), vhi = vdupq_n_f16((__fp16)hi);
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        float16x8_t wv[7];
        float wk[56] = {0};
        for (int t = 0; t < 49; ++t) wk[t] = w[c * 49 + t];
        for (int i = 0; i < 7; ++i) wv[i] = load8w(wk + 8 * i);
        const float16x8_t vb = vdupq_n_f16((__fp16)(bias ? bias[c] : 0.0f));
        pad_plane_k_f16(x + p * g->H * g->W, g, pad, PH, R, p == 0);
        xelem *yp = y + p * OH * OW;
        int64_t oh = 0;
        for (; oh + 2 <= OH; oh += 2) {
            if (clamp) dw7_pass_f16(pad + oh * R, R, yp + oh * OW, yp + (oh + 1) * OW, OW, wv, vb, 1, vlo, vhi, 1);
            else dw7_pass_f16(pad + oh * R, R, yp + oh * OW, yp + (oh + 1) * OW, OW, wv, vb, 0, vlo, vhi, 1);
        }
        if (oh < OH) dw7_pass_f16(pad + oh * R, R, yp + oh * OW, yp + oh * OW, OW, wv, vb, clamp, vlo, vhi, 0);
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
    if (arm_dwk(g) || dw7_f16(g)) {
        if (arm_dwk(g)) depthwise_k_f16(x, w, bias, y, planes, g, clamp, lo, hi, pad);
        else depthwise_7_f16(x, w, bias, y, planes, g, clamp, lo, hi, pad);
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

