/* The u8 x s8 register tiles of the integer products (qgemm.h): AVX-512 VNNI, AVX2 and plain C, compiled
 * for their ISA by target attributes and chosen by x86_qgemm_path from cpuid. Each tile writes its raw
 * sums to a [X86_QG_MR][X86_QG_NR] buffer; one epilogue takes the zero points out. */
#include "integer/qgemm.h"

#include "family.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QG_SIMD 1
#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))
#define TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

int x86_qgemm_path(int level) {
#ifdef QG_SIMD
    __builtin_cpu_init();
    if (level >= 2 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return X86_QG_VNNI;
    if (level >= 1 && __builtin_cpu_supports("avx2")) return X86_QG_AVX2;
#endif
    (void)level;
    return X86_QG_SCALAR;
}

#ifdef QG_SIMD
/* 6 rows x 64 columns in 24 zmm; DP(acc, broadcast L word, R vector) puts the uint8 side first */
#define QG_VNNI_TILE(NAME, DP)                                                                                  \
    TARGET_VNNI static void NAME(const int32_t *l, int64_t K4, const int64_t *roff, const uint8_t *r,           \
                                 int32_t *out) {                                                                \
        __m512i a00 = _mm512_setzero_si512(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00; \
        __m512i a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00;         \
        __m512i a33 = a00, a40 = a00, a41 = a00, a42 = a00, a43 = a00, a50 = a00, a51 = a00, a52 = a00;         \
        __m512i a53 = a00;                                                                                      \
        for (int64_t k = 0; k < K4; ++k) {                                                                      \
            const uint8_t *p = r + roff[k];                                                                     \
            const __m512i r0 = _mm512_loadu_si512(p), r1 = _mm512_loadu_si512(p + 64);                          \
            const __m512i r2 = _mm512_loadu_si512(p + 128), r3 = _mm512_loadu_si512(p + 192);                   \
            QG_ROW(0, DP) QG_ROW(1, DP) QG_ROW(2, DP) QG_ROW(3, DP) QG_ROW(4, DP) QG_ROW(5, DP)                 \
        }                                                                                                       \
        QG_OUT(0) QG_OUT(1) QG_OUT(2) QG_OUT(3) QG_OUT(4) QG_OUT(5)                                             \
    }
#define QG_ROW(i, DP)                                                \
    {                                                              \
        const __m512i w = _mm512_set1_epi32(l[i * K4 + k]);        \
        a##i##0 = DP(a##i##0, w, r0);                                \
        a##i##1 = DP(a##i##1, w, r1);                                \
        a##i##2 = DP(a##i##2, w, r2);                                \
        a##i##3 = DP(a##i##3, w, r3);                                \
    }
#define QG_OUT(i)                                       \
    _mm512_storeu_si512(out + i * 64, a##i##0);         \
    _mm512_storeu_si512(out + i * 64 + 16, a##i##1);    \
    _mm512_storeu_si512(out + i * 64 + 32, a##i##2);    \
    _mm512_storeu_si512(out + i * 64 + 48, a##i##3);
#define DP_LU(acc, w, v) _mm512_dpbusd_epi32(acc, w, v)
#define DP_RU(acc, w, v) _mm512_dpbusd_epi32(acc, v, w)
QG_VNNI_TILE(tile_vnni_lu, DP_LU)
QG_VNNI_TILE(tile_vnni_ru, DP_RU)
#undef QG_ROW
#undef QG_OUT
#undef DP_LU
#undef DP_RU
#undef QG_VNNI_TILE

/* 6 rows x 8 columns a pass. vpmaddubsw adds two u8 * s8 products into an int16 that 255 * -128 * 2 would
 * overflow: the uint8 side goes in twice, its low 7 bits (pair sums within +-32512) and its top bit (weighted
 * 128 by the vpmaddwd after). */
TARGET_AVX2 static void tile_avx2(int lu, const int32_t *l, int64_t K4, const int64_t *roff, const uint8_t *r,
                                  int64_t nr, int32_t *out) {
    const __m256i ones = _mm256_set1_epi16(1), w128 = _mm256_set1_epi16(128);
    const __m256i low7 = _mm256_set1_epi8(0x7f), bit0 = _mm256_set1_epi8(1);
#define QG_ACC(acc, lo, hi, v)                                                                        \
    acc = _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, v), ones), \
                                                 _mm256_madd_epi16(_mm256_maddubs_epi16(hi, v), w128)))
    for (int64_t n = 0; n < nr; n += 8) {
        __m256i acc[X86_QG_MR];
        for (int i = 0; i < X86_QG_MR; ++i) acc[i] = _mm256_setzero_si256();
        for (int64_t k = 0; k < K4; ++k) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(r + roff[k] + 4 * n));
            if (lu) {
#pragma GCC unroll 6
                for (int i = 0; i < X86_QG_MR; ++i) {
                    const uint32_t w = (uint32_t)l[i * K4 + k];
                    const __m256i lo = _mm256_set1_epi32((int)(w & 0x7f7f7f7fu));
                    const __m256i hi = _mm256_set1_epi32((int)((w >> 7) & 0x01010101u));
                    QG_ACC(acc[i], lo, hi, v);
                }
            } else {
                const __m256i lo = _mm256_and_si256(v, low7), hi = _mm256_and_si256(_mm256_srli_epi16(v, 7), bit0);
#pragma GCC unroll 6
                for (int i = 0; i < X86_QG_MR; ++i) {
                    const __m256i w = _mm256_set1_epi32(l[i * K4 + k]);
                    QG_ACC(acc[i], lo, hi, w);
                }
            }
        }
        for (int i = 0; i < X86_QG_MR; ++i) _mm256_storeu_si256((__m256i *)(out + i * 64 + n), acc[i]);
    }
#undef QG_ACC
}
#endif

static void tile_scalar(int lu, const int32_t *l, int64_t K4, const int64_t *roff, const uint8_t *r, int64_t nr,
                        int32_t *out) {
    for (int i = 0; i < X86_QG_MR; ++i)
        for (int64_t n = 0; n < nr; ++n) {
            int32_t s = 0;
            for (int64_t k = 0; k < K4; ++k) {
                const uint8_t *lb = (const uint8_t *)(l + i * K4 + k), *rb = r + roff[k] + 4 * n;
                for (int e = 0; e < 4; ++e)
                    s += lu ? (int32_t)lb[e] * (int8_t)rb[e] : (int32_t)(int8_t)lb[e] * rb[e];
            }
            out[i * 64 + n] = s;
        }
}

/* c = acc - zr * u - zl * rsum, in wrapping (unsigned) arithmetic */
X86_CLONES static void epilogue(const int32_t *acc, const int32_t *u, const int32_t *zl, int64_t mr, const int32_t *zr,
                                const int32_t *rsum, int64_t nr, int32_t *c, int64_t ldc) {
    for (int64_t i = 0; i < mr; ++i) {
        const uint32_t ui = (uint32_t)u[i], zi = (uint32_t)zl[i];
        const int32_t *a = acc + i * 64;
        int32_t *ci = c + i * ldc;
        if (rsum && zi)
            for (int64_t n = 0; n < nr; ++n) ci[n] = (int32_t)((uint32_t)a[n] - (uint32_t)zr[n] * ui - zi * (uint32_t)rsum[n]);
        else
            for (int64_t n = 0; n < nr; ++n) ci[n] = (int32_t)((uint32_t)a[n] - (uint32_t)zr[n] * ui);
    }
}

void x86_qgemm_tile(const x86_qgemm *g, const int32_t *l, const int32_t *u, const int32_t *zl, int64_t mr,
                    const uint8_t *r, const int32_t *zr, const int32_t *rsum, int64_t nr, int32_t *c, int64_t ldc) {
    int32_t acc[X86_QG_MR * X86_QG_NR] __attribute__((aligned(64)));
#ifdef QG_SIMD
    if (g->path == X86_QG_VNNI)
        (g->l_unsigned ? tile_vnni_lu : tile_vnni_ru)(l, g->K4, g->roff, r, acc);
    else if (g->path == X86_QG_AVX2)
        tile_avx2(g->l_unsigned, l, g->K4, g->roff, r, nr, acc);
    else
#endif
        tile_scalar(g->l_unsigned, l, g->K4, g->roff, r, nr, acc);
    epilogue(acc, u, zl, mr, zr, rsum, nr, c, ldc);
}

X86_CLONES void x86_qgemm_rsum(const x86_qgemm *g, const uint8_t *r, int32_t *rsum) {
    for (int n = 0; n < X86_QG_NR; ++n) rsum[n] = 0;
    for (int64_t k = 0; k < g->K4; ++k) {
        const uint8_t *p = r + g->roff[k];
        if (g->l_unsigned) /* R int8 */
            for (int n = 0; n < X86_QG_NR; ++n)
                rsum[n] += (int8_t)p[4 * n] + (int8_t)p[4 * n + 1] + (int8_t)p[4 * n + 2] + (int8_t)p[4 * n + 3];
        else
            for (int n = 0; n < X86_QG_NR; ++n) rsum[n] += p[4 * n] + p[4 * n + 1] + p[4 * n + 2] + p[4 * n + 3];
    }
}
