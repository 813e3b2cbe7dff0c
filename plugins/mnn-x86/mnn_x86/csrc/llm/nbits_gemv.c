/* The decode product of MatMulNBits on AVX-512 VNNI (nbits.h): each row of A, quantized to int8 per
 * block, times B's columns in the order they lie. A block of 64 4-bit weights is one VPDPBUSD, so
 * what sits around it sets the speed: the zero point enters the block's int32 sum as
 * -zero * sum(q_a) in its first lane (no float correction per column), blocks alternate between two
 * float accumulators (no wait on the last block's FMA), four columns share one horizontal sum, and
 * B is prefetched in software. The block size is a compile-time constant in each case below. */
#include "nbits.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))
#define INLINE static inline __attribute__((always_inline))
/* B's bytes are fetched this far ahead of the dot: with this few instructions per cache line the
 * hardware prefetcher alone left the loop waiting on memory (half the bandwidth on 4-bit weights) */
#define PREFETCH 8192

/* 32 bytes of nibbles as 64 values: the low nibbles (even elements) in the lower half, the high ones
 * (odd) in the upper, the order in which nbits.c stores a 4-bit block's activations */
TARGET_VNNI INLINE __m512i nibbles64(const uint8_t *p) {
    const __m512i x = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_and_si512(_mm512_mask_srli_epi16(x, 0xFFFF0000u, x, 4), _mm512_set1_epi8(0x0F));
}

/* 16 bytes of nibbles as 32 values, low nibbles first (blocks of 32) */
TARGET_VNNI INLINE __m256i nibbles32(const uint8_t *p) {
    const __m256i x = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
    return _mm256_and_si256(_mm256_mask_srli_epi16(x, 0xFF00u, x, 4), _mm256_set1_epi8(0x0F));
}

/* s + the block's products of weights wb and activations ab, in int32 lanes */
TARGET_VNNI INLINE __m512i block_dot(int bits, int block, const uint8_t *wb, const int8_t *ab, __m512i s) {
    if (block == 32) {
        const __m256i v = bits == 4 ? nibbles32(wb) : _mm256_loadu_si256((const __m256i *)wb);
        const __m256i p = _mm256_dpbusd_epi32(_mm512_castsi512_si256(s), v, _mm256_loadu_si256((const __m256i *)ab));
        return _mm512_zextsi256_si512(p);
    }
    for (int c = 0; c < block; c += 64) {
        const __m512i v = bits == 4 ? nibbles64(wb + c / 2) : _mm512_loadu_si512(wb + c);
        s = _mm512_dpbusd_epi32(s, v, _mm512_loadu_si512(ab + c));
    }
    return s;
}

/* the sums of four vectors' lanes, in order */
TARGET_VNNI INLINE __m256 halves(__m512 a) {
    return _mm256_add_ps(_mm512_castps512_ps256(a), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
}
TARGET_VNNI INLINE __m128 hsum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    const __m256 h01 = _mm256_hadd_ps(halves(a0), halves(a1)), h23 = _mm256_hadd_ps(halves(a2), halves(a3));
    const __m256 h = _mm256_hadd_ps(h01, h23);
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

typedef struct {
    const uint8_t *w, *zp; /* a column's weights and zero points (NULL: 2^(bits-1)) */
    const float *ws;       /* its blocks' scales */
} nbits_column;

typedef struct {
    const int8_t *q; /* a row of A quantized (nbits.c), its blocks' scales and sums of q */
    const float *scale;
    const int32_t *total;
} nbits_row;

/* acc + block b of column c times row r: the block's int32 sum, less zero * sum(q_a), scaled */
TARGET_VNNI INLINE __m512 add_block(__m512 acc, int bits, int block, int asym, nbits_column c, nbits_row r, int b) {
    const int blob = block * bits / 8;
    const int z = asym ? x86_nbits_zero(c.zp, bits, b) : 1 << (bits - 1);
    const __m512i zero = _mm512_maskz_set1_epi32(1, -z * r.total[b]);
    const __m512i d = block_dot(bits, block, c.w + (int64_t)b * blob, r.q + (int64_t)b * block, zero);
    return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(d), _mm512_set1_ps(r.scale[b])), _mm512_set1_ps(c.ws[b]),
                           acc);
}

/* one column times one row in float lanes: blocks in pairs on two accumulators, so that a block's
 * float product need not wait for the last one's */
TARGET_VNNI INLINE __m512 column_dot(int nb, int bits, int block, int asym, nbits_column c, nbits_row r) {
    const int blob = block * bits / 8;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int b = 0;
    for (; b + 2 <= nb; b += 2) {
        const char *ahead = (const char *)(c.w + (int64_t)b * blob) + PREFETCH;
        for (int o = 0; o < 2 * blob; o += 64) _mm_prefetch(ahead + o, _MM_HINT_T0);
        _mm_prefetch((const char *)(c.ws + b) + PREFETCH / 8, _MM_HINT_T0);
        acc0 = add_block(acc0, bits, block, asym, c, r, b);
        acc1 = add_block(acc1, bits, block, asym, c, r, b + 1);
    }
    if (b < nb) acc0 = add_block(acc0, bits, block, asym, c, r, b);
    return _mm512_add_ps(acc0, acc1);
}

/* columns [n, n + NC) (NC 4, or 1 for the last ones) times every row of A, a column after another so
 * that B is read in the order it lies */
TARGET_VNNI INLINE void columns(const nbits_job *j, int64_t n, int NC, int bits, int block, int asym) {
    const x86_nbits_state *s = j->s;
    const int nb = s->nb;
    for (int64_t m = 0; m < s->M; m++) {
        const nbits_row r = {s->aq + m * nb * block, s->ascale + m * nb, s->atotal + m * nb};
        __m512 acc[4];
#pragma GCC unroll 4
        for (int c = 0; c < NC; c++) {
            const nbits_column col = {j->w + (n + c) * nb * s->blob, asym ? j->zp + (n + c) * s->zbytes : NULL,
                                      j->scales + (n + c) * nb};
            acc[c] = column_dot(nb, bits, block, asym, col, r);
        }
        float *y = j->y + m * s->N + n;
        if (NC == 4) {
            __m128 sums = hsum4(acc[0], acc[1], acc[2], acc[3]);
            if (j->bias) sums = _mm_add_ps(sums, _mm_loadu_ps(j->bias + n));
            _mm_storeu_ps(y, sums);
        } else {
            for (int c = 0; c < NC; c++) y[c] = _mm512_reduce_add_ps(acc[c]) + (j->bias ? j->bias[n + c] : 0.0f);
        }
    }
}

TARGET_VNNI INLINE void range(const nbits_job *j, int64_t lo, int64_t hi, int bits, int block, int asym) {
    int64_t n = lo;
    for (; n + 4 <= hi; n += 4) columns(j, n, 4, bits, block, asym);
    for (; n < hi; n++) columns(j, n, 1, bits, block, asym);
}

/* blocks are powers of two from 32 on: larger ones than 128 are multiples of 64 in a run-time loop */
#define RANGE_CASES(bits, asym)                                \
    switch (block) {                                           \
    case 32: range(j, lo, hi, bits, 32, asym); return;         \
    case 64: range(j, lo, hi, bits, 64, asym); return;         \
    case 128: range(j, lo, hi, bits, 128, asym); return;       \
    default: range(j, lo, hi, bits, block, asym); return;      \
    }

TARGET_VNNI void x86_nbits_gemv_vnni(const nbits_job *j, int64_t lo, int64_t hi) {
    const int block = j->s->block;
    if (j->s->bits == 4 && !j->zp) RANGE_CASES(4, 0)
    if (j->s->bits == 4) RANGE_CASES(4, 1)
    if (!j->zp) RANGE_CASES(8, 0)
    RANGE_CASES(8, 1)
}

#else /* not x86-64 GCC: nbits.c never picks it */
void x86_nbits_gemv_vnni(const nbits_job *j, int64_t lo, int64_t hi) { (void)j, (void)lo, (void)hi; }
#endif
