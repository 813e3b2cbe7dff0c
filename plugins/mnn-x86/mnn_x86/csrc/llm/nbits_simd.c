/* MatMulNBits' column kernels (nbits.h): the AVX2 int8 dot of one column of B (nb blocks, unsigned 4- or
 * 8-bit weights) with one row of A quantized to int8, each block's int32 sum scaled by the weight's and
 * the row's scale and summed in float lanes (one horizontal sum per column), and a column dequantized
 * on AVX-512 or AVX2. Compiled for their ISA by target attributes; nbits.c calls them only where cpuid
 * says they run. */
#include "nbits.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))
#define TARGET_AVX2 __attribute__((target("avx2,fma")))

TARGET_AVX2 static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* 16 bytes of nibbles as 32 bytes: the low nibbles (even elements), then the high ones (odd) */
TARGET_AVX2 static inline __m256i nibbles128(const uint8_t *p) {
    const __m128i x = _mm_loadu_si128((const __m128i *)p);
    const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(x), _mm_srli_epi16(x, 4), 1);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

/* 32 unsigned weights times 32 signed activations as 8 int32 sums. 8-bit weights are made signed
 * (q - 128, nbits.c takes the 128 off the zero point) so that VPMADDUBSW's 16-bit pair sums cannot
 * saturate: |q - 128| * 127 * 2 < 32768 (4-bit ones: 15 * 128 * 2). */
TARGET_AVX2 static inline __m256i dot32(__m256i v, __m256i av, int bits) {
    __m256i p;
    if (bits == 4) {
        p = _mm256_maddubs_epi16(v, av);
    } else {
        const __m256i sv = _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80));
        p = _mm256_maddubs_epi16(_mm256_abs_epi8(sv), _mm256_sign_epi8(av, sv));
    }
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

TARGET_AVX2 float x86_nbits_dot_avx2(int bits, int block, int nb, const uint8_t *w, const int8_t *a, const float *ws,
                                     const float *as) {
    const int blob = block * bits / 8;
    const __m256i low = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const uint8_t *wb = w + (int64_t)b * blob;
        const int8_t *ab = a + (int64_t)b * block;
        __m256i s = _mm256_setzero_si256();
        if (bits == 4 && block == 32) {
            s = dot32(nibbles128(wb), _mm256_loadu_si256((const __m256i *)ab), 4);
        } else if (bits == 4) { /* 64 at a time: 32 bytes of low nibbles, then the high ones */
            for (int c = 0; c < block; c += 64) {
                const __m256i x = _mm256_loadu_si256((const __m256i *)(wb + c / 2));
                s = _mm256_add_epi32(s, dot32(_mm256_and_si256(x, low), _mm256_loadu_si256((const __m256i *)(ab + c)), 4));
                s = _mm256_add_epi32(s, dot32(_mm256_and_si256(_mm256_srli_epi16(x, 4), low),
                                              _mm256_loadu_si256((const __m256i *)(ab + c + 32)), 4));
            }
        } else {
            for (int c = 0; c < block; c += 32)
                s = _mm256_add_epi32(s, dot32(_mm256_loadu_si256((const __m256i *)(wb + c)),
                                              _mm256_loadu_si256((const __m256i *)(ab + c)), 8));
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(ws[b] * as[b]), acc);
    }
    return hsum256(acc);
}

/* 16 bytes of nibbles as the 32 values they hold, in order (element 2i low, 2i + 1 high) */
TARGET_AVX2 static inline void nibbles_in_order(const uint8_t *p, __m128i *first, __m128i *second) {
    const __m128i x = _mm_loadu_si128((const __m128i *)p), low = _mm_set1_epi8(0x0F);
    const __m128i lo = _mm_and_si128(x, low), hi = _mm_and_si128(_mm_srli_epi16(x, 4), low);
    *first = _mm_unpacklo_epi8(lo, hi);
    *second = _mm_unpackhi_epi8(lo, hi);
}

TARGET_VNNI void x86_nbits_dequant_avx512(int bits, int block, int nb, const uint8_t *w, const float *scales,
                                          const uint8_t *zp, float *out) {
    const int blob = block * bits / 8;
    for (int b = 0; b < nb; b++) {
        const __m512 d = _mm512_set1_ps(scales[b]), z = _mm512_set1_ps((float)x86_nbits_zero(zp, bits, b));
        const uint8_t *wb = w + (int64_t)b * blob;
        float *ob = out + (int64_t)b * block;
#define DQ16(bytes, at) \
    _mm512_storeu_ps(at, _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)), z), d))
        for (int i = 0; i < blob; i += 16) {
            if (bits == 8) {
                DQ16(_mm_loadu_si128((const __m128i *)(wb + i)), ob + i);
            } else {
                __m128i e0, e1;
                nibbles_in_order(wb + i, &e0, &e1);
                DQ16(e0, ob + 2 * i);
                DQ16(e1, ob + 2 * i + 16);
            }
        }
#undef DQ16
    }
}

TARGET_AVX2 void x86_nbits_dequant_avx2(int bits, int block, int nb, const uint8_t *w, const float *scales,
                                        const uint8_t *zp, float *out) {
    const int blob = block * bits / 8;
    for (int b = 0; b < nb; b++) {
        const __m256 d = _mm256_set1_ps(scales[b]), z = _mm256_set1_ps((float)x86_nbits_zero(zp, bits, b));
        const uint8_t *wb = w + (int64_t)b * blob;
        float *ob = out + (int64_t)b * block;
#define DQ8(bytes, at) \
    _mm256_storeu_ps(at, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)), z), d))
#define DQ16(bytes, at) DQ8(bytes, at), DQ8(_mm_srli_si128(bytes, 8), (at) + 8)
        for (int i = 0; i < blob; i += 16) {
            if (bits == 8) {
                const __m128i x = _mm_loadu_si128((const __m128i *)(wb + i));
                DQ16(x, ob + i);
            } else {
                __m128i e0, e1;
                nibbles_in_order(wb + i, &e0, &e1);
                DQ16(e0, ob + 2 * i);
                DQ16(e1, ob + 2 * i + 16);
            }
        }
#undef DQ16
#undef DQ8
    }
}

#else /* not x86-64 GCC: nbits.c never picks these */
float x86_nbits_dot_avx2(int bits, int block, int nb, const uint8_t *w, const int8_t *a, const float *ws,
                         const float *as) {
    (void)bits, (void)block, (void)nb, (void)w, (void)a, (void)ws, (void)as;
    return 0.0f;
}
void x86_nbits_dequant_avx512(int bits, int block, int nb, const uint8_t *w, const float *scales, const uint8_t *zp,
                              float *out) {
    (void)bits, (void)block, (void)nb, (void)w, (void)scales, (void)zp, (void)out;
}
void x86_nbits_dequant_avx2(int bits, int block, int nb, const uint8_t *w, const float *scales, const uint8_t *zp,
                            float *out) {
    (void)bits, (void)block, (void)nb, (void)w, (void)scales, (void)zp, (void)out;
}
#endif
