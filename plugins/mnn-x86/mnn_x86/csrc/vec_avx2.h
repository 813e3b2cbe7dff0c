/* Vector primitives, AVX2 + FMA edition: 8 floats in a ymm register.
 * This file is included only by isa_avx2.c, compiled with -mavx2 -mfma. */
#ifndef MNN_X86_VEC_AVX2_H
#define MNN_X86_VEC_AVX2_H
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ISA avx2
#define VLEN 8
#ifndef GEMM_MR /* overridable to try other tiles */
#define GEMM_MR 6
#endif
#define GEMM_NV 2 /* 6x16 tile: 12 accumulators + 2 B vectors + 1 broadcast of 16 ymm */

typedef __m256 vf;
typedef __m256 vmask;

static const int32_t vf_tail_mask_[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
/* lanes [0, n) set, n clamped to [0, 8] */
static inline __m256i vf_mask_n_(int n) {
    n = n < 0 ? 0 : n > 8 ? 8 : n;
    return _mm256_loadu_si256((const __m256i *)(vf_tail_mask_ + 8 - n));
}

static inline vf vf_set1(float x) { return _mm256_set1_ps(x); }
static inline vf vf_zero(void) { return _mm256_setzero_ps(); }
static inline vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
/* a store around the caches (p aligned to the vector); _mm_sfence() before others read it */
static inline void vf_stream(float *p, vf v) { _mm256_stream_ps(p, v); }
static inline void vf_stream_fence(void) { _mm_sfence(); }
static inline vf vf_load_n(const float *p, int n) { return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, vf_mask_n_(n)); }
static inline void vf_store_n(float *p, vf v, int n) {
    if (n >= 8) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, vf_mask_n_(n), v);
}
static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vf_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vf_fnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vf_abs(vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline vf vf_round(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
/* x*x - x2 exactly (x2 = x*x rounded), by one fused multiply-add */
static inline vf vf_sqr_err(vf x, vf x2) { return vf_fma(x, x, vf_sub(vf_zero(), x2)); }
static inline vf vf_copysign(vf mag, vf sign) {
    const vf s = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sign));
}
/* 2^n for integral n in [-126, 127] */
static inline vf vf_pow2n(vf n) {
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
static inline vmask vf_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vmask vf_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline vmask vf_isnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline vf vf_select(vmask m, vf t, vf f) { return _mm256_blendv_ps(f, t, m); }
static inline float vf_hsum(vf v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float vf_hmax(vf v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
/* p[0], p[s], ..., p[7s]; reads up to p[8s - 1] for s == 2 */
static inline vf vf_load_stride(const float *p, int64_t s) {
    if (s == 1) return _mm256_loadu_ps(p);
    if (s == 2) {
        __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
        __m256 even = _mm256_shuffle_ps(a, b, 0x88); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8));
    }
    __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)s));
    return _mm256_i32gather_ps(p, idx, 4);
}

/* p[0], p[2], ..., p[2k] for the first `avail` floats (k = (avail - 1) / 2), nothing read past them */
static inline vf vf_load_even_n(const float *p, int avail) {
    __m256 a = vf_load_n(p, avail), b = vf_load_n(p + 8, avail - 8);
    __m256 even = _mm256_shuffle_ps(a, b, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8));
}

/* r[0..7] := its transpose: lane j of r[i] moves to lane i of r[j] (channels-last depthwise) */
static inline void vf_transpose(vf r[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) { /* u[i + k]: columns k and k+4 of rows i..i+3 */
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int k = 0; k < 4; ++k) {
        r[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        r[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
}

#endif
