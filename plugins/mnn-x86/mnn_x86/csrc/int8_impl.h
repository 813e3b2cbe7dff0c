/* int8 kernels, instantiated once per ISA translation unit (included from
 * isa_body.h, which defines FN/ISA). The vector path needs AVX2 (also taken
 * in the AVX-512 unit, whose flags imply AVX2); the scalar unit gets plain C.
 * Both compute exactly what int8.h writes down. */
#include <math.h>
#include <string.h>

#include "int8.h"

#if defined(__AVX2__)
#include <immintrin.h>
#define INT8_NB 16
#else
#define INT8_NB 1
#endif

/* where B's (k, n) lives: column panels of INT8_NB, each K2 pairs deep and contiguous, so the
 * GEMM streams one panel (K2 * NB * 4 bytes) while it sweeps all weight rows */
#define QB_AT(k, n, K2) (((((n) / INT8_NB) * (K2) + ((k) >> 1)) * INT8_NB + (n) % INT8_NB) * 2 + ((k) & 1))

static void FN(q_im2col)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, int16_t *bp, int64_t np) {
    const int64_t K2 = (g->C * g->kh * g->kw + 1) / 2;
    (void)np;
    for (int64_t c = 0; c < g->C; ++c)
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) {
                const int64_t k = (c * g->kh + i) * g->kw + j;
                const uint8_t *xc = x + c * g->H * g->W;
                for (int64_t oh = 0; oh < g->OH; ++oh) {
                    const int64_t ih = oh * g->sh - g->pt + i * g->dh;
                    const int64_t n0 = oh * g->OW;
                    if (ih < 0 || ih >= g->H) {
                        for (int64_t ow = 0; ow < g->OW; ++ow) bp[QB_AT(k, n0 + ow, K2)] = 0;
                        continue;
                    }
                    for (int64_t ow = 0; ow < g->OW; ++ow) {
                        const int64_t iw = ow * g->sw - g->pl + j * g->dw;
                        bp[QB_AT(k, n0 + ow, K2)] = (iw < 0 || iw >= g->W) ? 0 : (int16_t)(xc[ih * g->W + iw] - zx);
                    }
                }
            }
}

static void FN(q_pack_rows)(const uint8_t *x, int32_t zx, int64_t N, int64_t K, int16_t *bp, int64_t np) {
    const int64_t K2 = (K + 1) / 2;
    (void)np;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) bp[QB_AT(k, n, K2)] = (int16_t)(x[n * K + k] - zx);
}

/* float(acc) * mult, rounded half to even, zero point added, clamped: the requantization rule */
static inline int32_t FN(q_requant1)(int32_t acc, float mult, int32_t zy, int32_t qmin, int32_t qmax) {
    float f = (float)acc * mult;
    f = f > 1.0e9f ? 1.0e9f : f < -1.0e9f ? -1.0e9f : f; /* any value past qmax, with room for zy */
    int64_t q = (int64_t)nearbyintf(f) + zy;
    return (int32_t)(q < qmin ? qmin : q > qmax ? qmax : q);
}

#if defined(__AVX2__)
static void FN(q_gemm_requant)(int64_t M, int64_t N, int64_t K2, int64_t np, const int32_t *a, const int16_t *bp,
                               const int32_t *bias, const float *mult, int32_t zy, int32_t qmin, int32_t qmax,
                               uint8_t *y, int64_t ys_m, int64_t ys_n) {
    const __m256 lim = _mm256_set1_ps(1.0e9f), nlim = _mm256_set1_ps(-1.0e9f);
    (void)np;
    for (int64_t n0 = 0; n0 < N; n0 += 16) { /* one B panel stays in L1/L2 while every row block uses it */
        for (int64_t m0 = 0; m0 < M; m0 += 4) {
            const int32_t *a0 = a + m0 * K2, *a1 = a0 + K2, *a2 = a1 + K2, *a3 = a2 + K2; /* rows padded to 4 */
            __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00;
            __m256i c20 = c00, c21 = c00, c30 = c00, c31 = c00;
            const int16_t *b = bp + (n0 / 16) * K2 * 32;
            for (int64_t k2 = 0; k2 < K2; ++k2, b += 32) {
                const __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
                const __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 16));
                __m256i w = _mm256_set1_epi32(a0[k2]);
                c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(w, b0));
                c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(w, b1));
                w = _mm256_set1_epi32(a1[k2]);
                c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(w, b0));
                c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(w, b1));
                w = _mm256_set1_epi32(a2[k2]);
                c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(w, b0));
                c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(w, b1));
                w = _mm256_set1_epi32(a3[k2]);
                c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(w, b0));
                c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(w, b1));
            }
            const __m256i acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
            const int64_t nn = N - n0 < 16 ? N - n0 : 16;
            for (int r = 0; r < 4 && m0 + r < M; ++r) {
                const int64_t m = m0 + r;
                int32_t out[16];
                for (int h = 0; h < 2; ++h) {
                    __m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(acc[r][h], _mm256_set1_epi32(bias[m])));
                    f = _mm256_mul_ps(f, _mm256_set1_ps(mult[m]));
                    f = _mm256_max_ps(_mm256_min_ps(f, lim), nlim);
                    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(zy));
                    q = _mm256_max_epi32(_mm256_min_epi32(q, _mm256_set1_epi32(qmax)), _mm256_set1_epi32(qmin));
                    _mm256_storeu_si256((__m256i *)(out + 8 * h), q);
                }
                uint8_t *ym = y + m * ys_m + n0 * ys_n;
                if (ys_n == 1) {
                    for (int64_t j = 0; j < nn; ++j) ym[j] = (uint8_t)out[j];
                } else {
                    for (int64_t j = 0; j < nn; ++j) ym[j * ys_n] = (uint8_t)out[j];
                }
            }
        }
    }
}
#else
static void FN(q_gemm_requant)(int64_t M, int64_t N, int64_t K2, int64_t np, const int32_t *a, const int16_t *bp,
                               const int32_t *bias, const float *mult, int32_t zy, int32_t qmin, int32_t qmax,
                               uint8_t *y, int64_t ys_m, int64_t ys_n) {
    (void)np;
    for (int64_t m = 0; m < M; ++m) {
        const int32_t *am = a + m * K2;
        for (int64_t n = 0; n < N; ++n) {
            int32_t acc = bias[m];
            for (int64_t k2 = 0; k2 < K2; ++k2) {
                const int16_t w0 = (int16_t)(am[k2] & 0xffff), w1 = (int16_t)((uint32_t)am[k2] >> 16);
                const int16_t *b = bp + QB_AT(2 * k2, n, K2);
                acc += (int32_t)w0 * b[0] + (int32_t)w1 * b[1];
            }
            y[m * ys_m + n * ys_n] = (uint8_t)FN(q_requant1)(acc, mult[m], zy, qmin, qmax);
        }
    }
}
#endif

/* -- requantization of a row of int32 sums (depthwise): the rule of q_requant1, 8 lanes at a time -- */
static void FN(q_requant_row)(const int32_t *acc, int64_t n, int32_t bias, float mult, int32_t zy, int32_t qmin,
                              int32_t qmax, uint8_t *y) {
    int64_t i = 0;
#if defined(__AVX2__)
    const __m256 lim = _mm256_set1_ps(1.0e9f), nlim = _mm256_set1_ps(-1.0e9f), mv = _mm256_set1_ps(mult);
    const __m256i bv = _mm256_set1_epi32(bias), zv = _mm256_set1_epi32(zy);
    const __m256i lo = _mm256_set1_epi32(qmin), hi = _mm256_set1_epi32(qmax);
    for (; i < n; i += 8) {
        __m256 f = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + i)), bv));
        f = _mm256_max_ps(_mm256_min_ps(_mm256_mul_ps(f, mv), lim), nlim);
        __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(f), zv);
        q = _mm256_max_epi32(_mm256_min_epi32(q, hi), lo);
        const __m128i p16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        if (i + 8 <= n) {
            _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(p16, p16));
        } else { /* the tail: acc is readable up to a whole vector (work's slack), store what is asked */
            uint8_t t[16];
            _mm_storeu_si128((__m128i *)t, _mm_packus_epi16(p16, p16));
            memcpy(y + i, t, (size_t)(n - i));
        }
    }
#endif
    for (; i < n; ++i) y[i] = (uint8_t)FN(q_requant1)(acc[i] + bias, mult, zy, qmin, qmax);
}

/* Depthwise QLinearConv of one channel. The padded plane minus zx (padding 0) goes to int16 scratch split
 * into sw column phases, so that every tap of an output row reads contiguous int16:
 *   P[r][q] = phase[q % sw][r][q / sw],  P[r][ow * sw + t] = phase[t % sw][r][ow + t / sw]
 * work: sw * PH * PWs int16, then OW int32 (x86_int8_dw_work_bytes). Exact int32 sums, then the rule. */
static void FN(q_depthwise)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, const int8_t *w, int32_t bias,
                            float mult, int32_t zy, int32_t qmin, int32_t qmax, uint8_t *y, int16_t *work) {
    const int64_t sw = g->sw, PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * sw + (g->kw - 1) * g->dw + 1, PWs = (PW + sw - 1) / sw;
    const int64_t phase = PH * PWs;
    int16_t *P = work;
    int32_t *acc = (int32_t *)(work + (sw * phase + 15) / 16 * 16);
    for (int64_t r = 0; r < PH; ++r) {
        const int64_t ih = r - g->pt;
        if (ih < 0 || ih >= g->H) {
            for (int64_t t = 0; t < sw; ++t) memset(P + t * phase + r * PWs, 0, (size_t)PWs * sizeof(int16_t));
            continue;
        }
        const uint8_t *xr = x + ih * g->W;
        for (int64_t t = 0; t < sw; ++t) { /* columns c with 0 <= c * sw + t - pl < W, then the padding */
            int16_t *pr = P + t * phase + r * PWs;
            const int64_t off = t - g->pl;
            int64_t lo = 0, hi = PWs;
            while (lo < PWs && lo * sw + off < 0) ++lo;
            while (hi > lo && (hi - 1) * sw + off >= g->W) --hi;
            for (int64_t c = 0; c < lo; ++c) pr[c] = 0;
            const uint8_t *xs = xr + off;
            if (sw == 1) {
                int64_t c = lo;
#if defined(__AVX2__)
                /* 8 at a time while the 8 bytes lie in the plane; what lands past hi is padding, rewritten
                 * below (or the next row's start, filled after this one; past the last row: work's slack) */
                const __m128i zv = _mm_set1_epi16((int16_t)zx);
                const int64_t readable = (g->H - ih) * g->W - off;
                for (; c < hi && c + 8 <= readable; c += 8) {
                    const __m128i v = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(xs + c)));
                    _mm_storeu_si128((__m128i *)(pr + c), _mm_sub_epi16(v, zv));
                }
#endif
                for (; c < hi; ++c) pr[c] = (int16_t)(xs[c] - zx);
            } else if (sw == 2) {
                int64_t c = lo;
#if defined(__AVX2__)
                /* 16 bytes from xs + 2c hold 8 even columns in their low bytes: mask, subtract zx */
                const __m128i lowb = _mm_set1_epi16(0xff), zv = _mm_set1_epi16((int16_t)zx);
                for (; c + 8 <= hi && 2 * c + 16 + off <= g->W; c += 8) {
                    const __m128i v = _mm_and_si128(_mm_loadu_si128((const __m128i *)(xs + 2 * c)), lowb);
                    _mm_storeu_si128((__m128i *)(pr + c), _mm_sub_epi16(v, zv));
                }
#endif
                for (; c < hi; ++c) pr[c] = (int16_t)(xs[2 * c] - zx);
            } else {
                for (int64_t c = lo; c < hi; ++c) pr[c] = (int16_t)(xs[c * sw] - zx);
            }
            for (int64_t c = hi; c < PWs; ++c) pr[c] = 0;
        }
    }
#if defined(__AVX2__)
    const int64_t taps = g->kh * g->kw;
    if (taps <= 49) { /* 8 outputs in a register through all taps, then requantized (slack past the plane: work) */
        __m256i wv[49];
        const int16_t *tap_at[49];
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) {
                const int64_t t = j * g->dw;
                wv[i * g->kw + j] = _mm256_set1_epi32(w[i * g->kw + j]);
                tap_at[i * g->kw + j] = P + (t % sw) * phase + i * g->dh * PWs + t / sw;
            }
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            const int64_t row = oh * g->sh * PWs;
            for (int64_t ow = 0; ow < g->OW; ow += 8) {
                __m256i a = _mm256_setzero_si256();
                for (int64_t k = 0; k < taps; ++k) {
                    const __m256i v = _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(tap_at[k] + row + ow)));
                    a = _mm256_add_epi32(a, _mm256_mullo_epi32(v, wv[k]));
                }
                _mm256_storeu_si256((__m256i *)(acc + ow), a);
            }
            FN(q_requant_row)(acc, g->OW, bias, mult, zy, qmin, qmax, y + oh * g->OW);
        }
        return;
    }
#endif
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        for (int64_t ow = 0; ow < g->OW; ++ow) acc[ow] = 0;
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) {
                const int64_t t = j * g->dw;
                const int16_t *src = P + (t % sw) * phase + (oh * g->sh + i * g->dh) * PWs + t / sw;
                const int32_t wv = w[i * g->kw + j];
                for (int64_t ow = 0; ow < g->OW; ++ow) acc[ow] += wv * (int32_t)src[ow];
            }
        FN(q_requant_row)(acc, g->OW, bias, mult, zy, qmin, qmax, y + oh * g->OW);
    }
}

/* QuantizeLinear (float32 -> uint8): sat(rint(float32(x / scale)) + zp); one IEEE division, halves to even */
static void FN(q_quantize)(const float *x, int64_t n, float scale, int32_t zp, uint8_t *y) {
    int64_t i = 0;
#if defined(__AVX2__)
    const __m256 sv = _mm256_set1_ps(scale), lim = _mm256_set1_ps(1.0e9f), nlim = _mm256_set1_ps(-1.0e9f);
    const __m256i zv = _mm256_set1_epi32(zp), lo = _mm256_setzero_si256(), hi = _mm256_set1_epi32(255);
    for (; i + 8 <= n; i += 8) {
        __m256 f = _mm256_div_ps(_mm256_loadu_ps(x + i), sv);
        f = _mm256_max_ps(_mm256_min_ps(f, lim), nlim);
        __m256i q = _mm256_max_epi32(_mm256_min_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(f), zv), hi), lo);
        const __m128i p16 = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(p16, p16));
    }
#endif
    for (; i < n; ++i) {
        float f = x[i] / scale;
        f = f > 1.0e9f ? 1.0e9f : f < -1.0e9f ? -1.0e9f : f;
        const int64_t q = (int64_t)nearbyintf(f) + zp;
        y[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
}

/* DequantizeLinear (uint8 -> float32): (x - zp) * scale, one float32 product (exact as the float64 rule) */
static void FN(q_dequantize)(const uint8_t *x, int64_t n, float scale, int32_t zp, float *y) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)((int32_t)x[i] - zp) * scale;
}

/* QLinearAdd (docs/QUANT.md rule 5): two float32 products, one float32 sum, rint halves to even (the default
 * MXCSR rounding of cvtps_epi32 and nearbyintf), add zc, saturate. fp-contract is off here: an FMA would
 * round the product and the sum once, not twice, and differ from the reference near a tie. */
__attribute__((optimize("fp-contract=off"))) static void FN(q_add)(const uint8_t *a, const uint8_t *b, int64_t n,
                                                                   float ma, float mb, int32_t za, int32_t zb,
                                                                   int32_t zc, uint8_t *y) {
    int64_t i = 0;
#if defined(__AVX512F__)
    {
        const __m512 mav = _mm512_set1_ps(ma), mbv = _mm512_set1_ps(mb);
        const __m512i zav = _mm512_set1_epi32(za), zbv = _mm512_set1_epi32(zb), zcv = _mm512_set1_epi32(zc);
        const __m512i lo = _mm512_setzero_si512(), hi = _mm512_set1_epi32(255);
        for (; i + 16 <= n; i += 16) {
            const __m512i av = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(a + i))), zav);
            const __m512i bv = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(b + i))), zbv);
            const __m512 pa = _mm512_mul_ps(_mm512_cvtepi32_ps(av), mav);
            const __m512 pb = _mm512_mul_ps(_mm512_cvtepi32_ps(bv), mbv);
            __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_add_ps(pa, pb)), zcv);
            q = _mm512_max_epi32(_mm512_min_epi32(q, hi), lo);
            _mm_storeu_si128((__m128i *)(y + i), _mm512_cvtepi32_epi8(q));
        }
    }
#endif
#if defined(__AVX2__)
    {
        const __m256 mav = _mm256_set1_ps(ma), mbv = _mm256_set1_ps(mb);
        const __m256i zav = _mm256_set1_epi32(za), zbv = _mm256_set1_epi32(zb), zcv = _mm256_set1_epi32(zc);
        for (; i + 8 <= n; i += 8) {
            const __m256i av = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(a + i))), zav);
            const __m256i bv = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(b + i))), zbv);
            const __m256 pa = _mm256_mul_ps(_mm256_cvtepi32_ps(av), mav);
            const __m256 pb = _mm256_mul_ps(_mm256_cvtepi32_ps(bv), mbv);
            const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_add_ps(pa, pb)), zcv);
            /* packs saturate: int32 -> int16 (signed), int16 -> uint8 (0..255) */
            const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
            _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(p16, p16));
        }
    }
#endif
    for (; i < n; ++i) {
        const float pa = (float)((int32_t)a[i] - za) * ma;
        const float pb = (float)((int32_t)b[i] - zb) * mb;
        const int32_t q = (int32_t)nearbyintf(pa + pb) + zc;
        y[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
}

/* -- AVX-512 VNNI (int8.h, conv_c4 / depthwise_vnni / fc_vnni): only in the AVX-512 unit, chosen when cpuid
 * has VNNI -- */
#if defined(__AVX512F__)
#define INT8_VNNI 1
#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

#include "int8_vnni_impl.h"
#endif

/* MaxPool of one uint8 plane */
static void FN(q_maxpool)(const x86_pool_geom *g, const uint8_t *x, uint8_t *y) {
    /* padding never wins: every window holds an input pixel and a max of uint8 is >= 0 */
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        uint8_t *yr = y + oh * g->OW;
        memset(yr, 0, (size_t)g->OW);
        for (int64_t i = 0; i < g->kh; ++i) {
            const int64_t ih = oh * g->sh - g->pt + i * g->dh;
            if (ih < 0 || ih >= g->H) continue;
            const uint8_t *xr = x + ih * g->W;
            for (int64_t j = 0; j < g->kw; ++j) {
                const int64_t shift = j * g->dw - g->pl;
                int64_t lo = 0, hi = g->OW;
                while (lo < g->OW && lo * g->sw + shift < 0) ++lo;
                while (hi > lo && (hi - 1) * g->sw + shift >= g->W) --hi;
                const uint8_t *s = xr + shift;
                if (g->sw == 1) {
                    for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = s[ow] > yr[ow] ? s[ow] : yr[ow];
                } else if (g->sw == 2) {
                    for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = s[2 * ow] > yr[ow] ? s[2 * ow] : yr[ow];
                } else {
                    for (int64_t ow = lo; ow < hi; ++ow) {
                        const uint8_t v = s[ow * g->sw];
                        yr[ow] = v > yr[ow] ? v : yr[ow];
                    }
                }
            }
        }
    }
}

const x86_int8_kernels FN(x86_int8_kernels) = {
    STR(ISA), INT8_NB, FN(q_im2col), FN(q_pack_rows), FN(q_gemm_requant), FN(q_depthwise), FN(q_quantize),
    FN(q_dequantize), FN(q_maxpool),
#if defined(INT8_VNNI)
    FN(q_pack_c4), FN(q_conv_c4), FN(q_depthwise_vnni), FN(q_conv_px), FN(q_maxpool_vnni), FN(q_fc_vnni),
#else
    NULL, NULL, NULL, NULL, NULL, NULL,
#endif
    FN(q_add),
#if defined(INT8_VNNI)
    FN(q_px_to_nchw), FN(q_px_pack),
#else
    NULL, NULL,
#endif
};
#undef INT8_VNNI

#undef QB_AT
#undef INT8_NB
