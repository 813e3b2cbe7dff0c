/* The prefill path of MatMulNBits (nbits.h, NBITS_QGEMM): many rows of A quantized to int8 per block
 * and multiplied by the 4- or 8-bit weights in integer dot products, as llama.cpp's q8_0 products do.
 *
 * The register tile is integer/qgemm.h's design turned to Y^T: 6 columns of B broadcast a word (4 bytes
 * along K, unsigned, as stored) at a time against 32 rows of A (two vectors of signed words), VPDPBUSD.
 * qgemm's tile sums all of K in int32; here each block of K has its own scales on both sides, so the
 * tile leaves its int32 sums at each block's end, scales them (weight scale * row scale) into float
 * accumulators and takes the zero point off as zero * scale_w * scale_a * sum(q_a) per block. AVX2
 * runs the same tile 8 rows at a time with VPMADDUBSW (4-bit weights).
 * A is packed once per run, [32-row panel][K/4 words][32 rows][4 bytes]; a worker unpacks its 6
 * columns of 4-bit B to bytes (8-bit B is read where it lies) and runs them against every panel. */
#include <math.h>
#include <string.h>

#include "nbits.h"

int64_t x86_nbits_qgemm_panels(const x86_nbits_state *s) { return (s->M + NBITS_QG_ROWS - 1) / NBITS_QG_ROWS; }

/* per worker: 6 unpacked columns, their zero-point terms, a tile of outputs */
int64_t x86_nbits_qgemm_worker_bytes(const x86_nbits_state *s) {
    const int64_t cols = NBITS_QG_COLS;
    return cols * s->nb * s->block + 4 * cols * s->nb + 4 * cols * NBITS_QG_ROWS + 64;
}

/* A's rows as int8 blocks (scale amax / 127), packed into the tile's panels: s->aq the words, s->ascale
 * and s->asum [panel][block][32] each row's scale and scale * sum of its block; rows past M stay zero */
X86_CLONES void x86_nbits_qgemm_quantize(const x86_nbits_state *s, const float *a) {
    const int64_t K = s->K, K4 = (int64_t)s->nb * s->block / 4, P = x86_nbits_qgemm_panels(s);
    memset(s->aq, 0, (size_t)(P * K4 * NBITS_QG_ROWS * 4));
    memset(s->ascale, 0, (size_t)(P * s->nb * NBITS_QG_ROWS) * sizeof(float));
    memset(s->asum, 0, (size_t)(P * s->nb * NBITS_QG_ROWS) * sizeof(float));
    int8_t q[s->block];
    for (int64_t m = 0; m < s->M; m++) {
        const int64_t p = m / NBITS_QG_ROWS, r = m % NBITS_QG_ROWS;
        int32_t *words = (int32_t *)s->aq + p * K4 * NBITS_QG_ROWS + r;
        for (int b = 0; b < s->nb; b++) {
            int32_t total;
            const float d = x86_nbits_quantize_block(s, a + m * K, b, q, &total);
            int32_t *bw = words + (int64_t)b * s->block / 4 * NBITS_QG_ROWS;
            for (int w = 0; w < s->block / 4; w++) memcpy(bw + (int64_t)w * NBITS_QG_ROWS, q + 4 * w, 4);
            s->ascale[(p * s->nb + b) * NBITS_QG_ROWS + r] = d;
            s->asum[(p * s->nb + b) * NBITS_QG_ROWS + r] = d * (float)total;
        }
    }
}

/* column n of 4-bit B as bytes in K's order */
X86_CLONES static void unpack_column(const x86_nbits_state *s, const uint8_t *w, uint8_t *out) {
    const int64_t bytes = (int64_t)s->nb * s->blob;
    for (int64_t i = 0; i < bytes; i++) out[2 * i] = w[i] & 0x0F, out[2 * i + 1] = w[i] >> 4;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* 6 columns (cols[i]: bytes in K's order, sw[i] / zs[i]: per block) times one panel of 32 rows: out
 * [6][32] floats */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma"))) static void tile_vnni(
    const x86_nbits_state *s, const uint8_t *const *cols, const float *const *sw, const float *zs,
    const int32_t *apanel, const float *ascale, const float *asum, float *out) {
    const int64_t kb = s->block / 4;
    __m512 f[NBITS_QG_COLS][2];
#pragma GCC unroll 6
    for (int i = 0; i < NBITS_QG_COLS; i++) f[i][0] = f[i][1] = _mm512_setzero_ps();
    for (int b = 0; b < s->nb; b++) {
        __m512i acc[NBITS_QG_COLS][2];
#pragma GCC unroll 6
        for (int i = 0; i < NBITS_QG_COLS; i++) acc[i][0] = acc[i][1] = _mm512_setzero_si512();
        const int32_t *ap = apanel + (int64_t)b * kb * NBITS_QG_ROWS;
        for (int64_t k = 0; k < kb; k++) {
            const __m512i r0 = _mm512_loadu_si512(ap + k * NBITS_QG_ROWS);
            const __m512i r1 = _mm512_loadu_si512(ap + k * NBITS_QG_ROWS + 16);
            const int64_t at = 4 * ((int64_t)b * kb + k);
#pragma GCC unroll 6
            for (int i = 0; i < NBITS_QG_COLS; i++) {
                int32_t word;
                memcpy(&word, cols[i] + at, 4);
                const __m512i w = _mm512_set1_epi32(word);
                acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], w, r0);
                acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], w, r1);
            }
        }
        const float *sc = ascale + (int64_t)b * NBITS_QG_ROWS, *sm = asum + (int64_t)b * NBITS_QG_ROWS;
        const __m512 s0 = _mm512_loadu_ps(sc), s1 = _mm512_loadu_ps(sc + 16);
        const __m512 q0 = _mm512_loadu_ps(sm), q1 = _mm512_loadu_ps(sm + 16);
#pragma GCC unroll 6
        for (int i = 0; i < NBITS_QG_COLS; i++) {
            const __m512 d = _mm512_set1_ps(sw[i][b]), z = _mm512_set1_ps(zs[i * s->nb + b]);
            f[i][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[i][0]), _mm512_mul_ps(d, s0), f[i][0]);
            f[i][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[i][1]), _mm512_mul_ps(d, s1), f[i][1]);
            f[i][0] = _mm512_fnmadd_ps(z, q0, f[i][0]);
            f[i][1] = _mm512_fnmadd_ps(z, q1, f[i][1]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < NBITS_QG_COLS; i++) {
        _mm512_storeu_ps(out + i * NBITS_QG_ROWS, f[i][0]);
        _mm512_storeu_ps(out + i * NBITS_QG_ROWS + 16, f[i][1]);
    }
}

/* the same on AVX2 for 4-bit weights, 8 rows at a time (16 registers): VPMADDUBSW's int16 pair sums
 * cannot saturate (15 * 128 * 2). 8-bit weights would need qgemm.c's split of their top bit, which
 * measured slower here than the float GEMM on dequantized panels (_llm.pyx keeps them there). */
__attribute__((target("avx2,fma"))) static void tile_avx2(const x86_nbits_state *s, const uint8_t *const *cols,
                                                          const float *const *sw, const float *zs,
                                                          const int32_t *apanel, const float *ascale,
                                                          const float *asum, float *out) {
    const int64_t kb = s->block / 4;
    const __m256i ones = _mm256_set1_epi16(1);
    for (int g = 0; g < NBITS_QG_ROWS; g += 8) {
        __m256 f[NBITS_QG_COLS];
#pragma GCC unroll 6
        for (int i = 0; i < NBITS_QG_COLS; i++) f[i] = _mm256_setzero_ps();
        for (int b = 0; b < s->nb; b++) {
            __m256i acc[NBITS_QG_COLS];
#pragma GCC unroll 6
            for (int i = 0; i < NBITS_QG_COLS; i++) acc[i] = _mm256_setzero_si256();
            const int32_t *ap = apanel + (int64_t)b * kb * NBITS_QG_ROWS + g;
            for (int64_t k = 0; k < kb; k++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(ap + k * NBITS_QG_ROWS));
                const int64_t at = 4 * ((int64_t)b * kb + k);
#pragma GCC unroll 6
                for (int i = 0; i < NBITS_QG_COLS; i++) {
                    int32_t word;
                    memcpy(&word, cols[i] + at, 4);
                    const __m256i p = _mm256_maddubs_epi16(_mm256_set1_epi32(word), v);
                    acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(p, ones));
                }
            }
            const __m256 sc = _mm256_loadu_ps(ascale + (int64_t)b * NBITS_QG_ROWS + g);
            const __m256 sm = _mm256_loadu_ps(asum + (int64_t)b * NBITS_QG_ROWS + g);
#pragma GCC unroll 6
            for (int i = 0; i < NBITS_QG_COLS; i++) {
                const __m256 d = _mm256_mul_ps(_mm256_set1_ps(sw[i][b]), sc);
                f[i] = _mm256_fnmadd_ps(_mm256_set1_ps(zs[i * s->nb + b]), sm,
                                        _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[i]), d, f[i]));
            }
        }
#pragma GCC unroll 6
        for (int i = 0; i < NBITS_QG_COLS; i++) _mm256_storeu_ps(out + i * NBITS_QG_ROWS + g, f[i]);
    }
}
#else
static void tile_vnni(const x86_nbits_state *s, const uint8_t *const *cols, const float *const *sw, const float *zs,
                      const int32_t *apanel, const float *ascale, const float *asum, float *out) {
    (void)s, (void)cols, (void)sw, (void)zs, (void)apanel, (void)ascale, (void)asum, (void)out;
}
#define tile_avx2 tile_vnni
#endif

/* groups [lo, hi) of 6 columns of B, each against every panel of A */
void x86_nbits_qgemm_columns(void *ctx, int64_t lo, int64_t hi, int worker) {
    const nbits_job *j = (const nbits_job *)ctx;
    const x86_nbits_state *s = j->s;
    const int64_t kp = (int64_t)s->nb * s->block, K4 = kp / 4, column = (int64_t)s->nb * s->blob;
    uint8_t *buf = (uint8_t *)s->panel + worker * x86_nbits_qgemm_worker_bytes(s);
    float *zs = (float *)(buf + NBITS_QG_COLS * kp), *out = zs + NBITS_QG_COLS * s->nb;
    const int vnni = x86_nbits_int8_path(s->level) == NBITS_VNNI;
    for (int64_t g = lo; g < hi; g++) {
        const int64_t n0 = g * NBITS_QG_COLS, nc = s->N - n0 < NBITS_QG_COLS ? s->N - n0 : NBITS_QG_COLS;
        const uint8_t *cols[NBITS_QG_COLS];
        const float *sw[NBITS_QG_COLS];
        for (int i = 0; i < NBITS_QG_COLS; i++) {
            const int64_t n = n0 + (i < nc ? i : 0); /* past N: a real column, its outputs dropped */
            const uint8_t *wn = j->w + n * column, *zn = j->zp ? j->zp + n * s->zbytes : NULL;
            sw[i] = j->scales + n * s->nb;
            for (int b = 0; b < s->nb; b++) zs[i * s->nb + b] = sw[i][b] * (float)x86_nbits_zero(zn, s->bits, b);
            if (s->bits == 8) {
                cols[i] = wn;
            } else {
                unpack_column(s, wn, buf + i * kp);
                cols[i] = buf + i * kp;
            }
        }
        for (int64_t p = 0; p < x86_nbits_qgemm_panels(s); p++) {
            const int64_t m0 = p * NBITS_QG_ROWS, mc = s->M - m0 < NBITS_QG_ROWS ? s->M - m0 : NBITS_QG_ROWS;
            const int64_t at = p * s->nb * NBITS_QG_ROWS;
            (vnni ? tile_vnni : tile_avx2)(s, cols, sw, zs, (const int32_t *)s->aq + p * K4 * NBITS_QG_ROWS,
                                           s->ascale + at, s->asum + at, out);
            for (int64_t i = 0; i < nc; i++) {
                const float bias = j->bias ? j->bias[n0 + i] : 0.0f;
                for (int64_t r = 0; r < mc; r++) j->y[(m0 + r) * s->N + n0 + i] = out[i * NBITS_QG_ROWS + r] + bias;
            }
        }
    }
}
