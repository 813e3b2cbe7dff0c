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
    f = f > 2147483520.0f ? 2147483520.0f : f < -2147483520.0f ? -2147483520.0f : f; /* any value past qmax */
    int64_t q = (int64_t)nearbyintf(f) + zy;
    return (int32_t)(q < qmin ? qmin : q > qmax ? qmax : q);
}

#if defined(__AVX2__)
static void FN(q_gemm_requant)(int64_t M, int64_t N, int64_t K2, int64_t np, const int32_t *a, const int16_t *bp,
                               const int32_t *bias, const float *mult, int32_t zy, int32_t qmin, int32_t qmax,
                               uint8_t *y, int64_t ys_m, int64_t ys_n) {
    const __m256 lim = _mm256_set1_ps(2147483520.0f), nlim = _mm256_set1_ps(-2147483520.0f);
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

const x86_int8_kernels FN(x86_int8_kernels) = {
    STR(ISA), INT8_NB, FN(q_im2col), FN(q_pack_rows), FN(q_gemm_requant),
};

#undef QB_AT
#undef INT8_NB
