/* The one-row u8 x s8 tile (qgemv.h). On AVX-512 VNNI the row's 64 columns sit in 4 zmm, and alternate
 * words go to a second set of 4 so that two vpdpbusd chains hide each other's latency; elsewhere plain C
 * that GCC vectorizes per ISA clone. */
#include "integer/qgemv.h"

#include "family.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QGV_SIMD 1
#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))

/* DP(acc, broadcast L word, R vector) puts the uint8 side first */
#define QGV_VNNI_ROW(NAME, DP)                                                                              \
    TARGET_VNNI static void NAME(const int32_t *l, int64_t K4, const int64_t *roff, const uint8_t *r,       \
                                 int32_t *out) {                                                            \
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0; \
        int64_t k = 0;                                                                                      \
        for (; k + 1 < K4; k += 2) {                                                                        \
            const uint8_t *p = r + roff[k], *q = r + roff[k + 1];                                           \
            const __m512i w = _mm512_set1_epi32(l[k]), v = _mm512_set1_epi32(l[k + 1]);                     \
            a0 = DP(a0, w, _mm512_loadu_si512(p));                                                          \
            a1 = DP(a1, w, _mm512_loadu_si512(p + 64));                                                     \
            a2 = DP(a2, w, _mm512_loadu_si512(p + 128));                                                    \
            a3 = DP(a3, w, _mm512_loadu_si512(p + 192));                                                    \
            b0 = DP(b0, v, _mm512_loadu_si512(q));                                                          \
            b1 = DP(b1, v, _mm512_loadu_si512(q + 64));                                                     \
            b2 = DP(b2, v, _mm512_loadu_si512(q + 128));                                                    \
            b3 = DP(b3, v, _mm512_loadu_si512(q + 192));                                                    \
        }                                                                                                   \
        if (k < K4) {                                                                                       \
            const uint8_t *p = r + roff[k];                                                                 \
            const __m512i w = _mm512_set1_epi32(l[k]);                                                      \
            a0 = DP(a0, w, _mm512_loadu_si512(p));                                                          \
            a1 = DP(a1, w, _mm512_loadu_si512(p + 64));                                                     \
            a2 = DP(a2, w, _mm512_loadu_si512(p + 128));                                                    \
            a3 = DP(a3, w, _mm512_loadu_si512(p + 192));                                                    \
        }                                                                                                   \
        _mm512_storeu_si512(out, _mm512_add_epi32(a0, b0));                                                 \
        _mm512_storeu_si512(out + 16, _mm512_add_epi32(a1, b1));                                            \
        _mm512_storeu_si512(out + 32, _mm512_add_epi32(a2, b2));                                            \
        _mm512_storeu_si512(out + 48, _mm512_add_epi32(a3, b3));                                            \
    }
#define DP_LU(acc, w, v) _mm512_dpbusd_epi32(acc, w, v)
#define DP_RU(acc, w, v) _mm512_dpbusd_epi32(acc, v, w)
QGV_VNNI_ROW(row_vnni_lu, DP_LU)
QGV_VNNI_ROW(row_vnni_ru, DP_RU)
#undef DP_LU
#undef DP_RU
#undef QGV_VNNI_ROW
#endif

/* the plain row: words of L against the tile's columns, in int32 lanes */
X86_CLONES static void row_plain(int lu, const int32_t *l, int64_t K4, const int64_t *roff, const uint8_t *r,
                                 int32_t *out) {
    for (int n = 0; n < X86_QG_NR; ++n) out[n] = 0;
    for (int64_t k = 0; k < K4; ++k) {
        const uint8_t *lb = (const uint8_t *)(l + k), *rb = r + roff[k];
        if (lu) {
            const int32_t l0 = lb[0], l1 = lb[1], l2 = lb[2], l3 = lb[3];
            for (int n = 0; n < X86_QG_NR; ++n)
                out[n] += l0 * (int8_t)rb[4 * n] + l1 * (int8_t)rb[4 * n + 1] + l2 * (int8_t)rb[4 * n + 2] +
                          l3 * (int8_t)rb[4 * n + 3];
        } else {
            const int32_t l0 = (int8_t)lb[0], l1 = (int8_t)lb[1], l2 = (int8_t)lb[2], l3 = (int8_t)lb[3];
            for (int n = 0; n < X86_QG_NR; ++n)
                out[n] += l0 * rb[4 * n] + l1 * rb[4 * n + 1] + l2 * rb[4 * n + 2] + l3 * rb[4 * n + 3];
        }
    }
}

void x86_qgemv_tile(const x86_qgemm *g, const int32_t *l, int32_t u, int32_t zl, const uint8_t *r, const int32_t *zr,
                    const int32_t *rsum, int64_t nr, int32_t *c) {
    int32_t acc[X86_QG_NR] __attribute__((aligned(64)));
#ifdef QGV_SIMD
    if (g->path == X86_QG_VNNI)
        (g->l_unsigned ? row_vnni_lu : row_vnni_ru)(l, g->K4, g->roff, r, acc);
    else
#endif
        row_plain(g->l_unsigned, l, g->K4, g->roff, r, acc);
    /* c = acc - zr * u - zl * rsum, in wrapping (unsigned) arithmetic, as the tile's epilogue */
    const uint32_t uu = (uint32_t)u, zz = (uint32_t)zl;
    if (rsum && zz)
        for (int64_t n = 0; n < nr; ++n) c[n] = (int32_t)((uint32_t)acc[n] - (uint32_t)zr[n] * uu - zz * (uint32_t)rsum[n]);
    else
        for (int64_t n = 0; n < nr; ++n) c[n] = (int32_t)((uint32_t)acc[n] - (uint32_t)zr[n] * uu);
}
