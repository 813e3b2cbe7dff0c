/* Vector primitives, AVX-512 (F/BW/VL/DQ) + FMA edition: 16 floats in a zmm register.
 * This file is included only by isa_avx512.c, compiled with -mavx512f -mavx512bw
 * -mavx512vl -mavx512dq -mfma. */
#ifndef MNN_X86_VEC_AVX512_H
#define MNN_X86_VEC_AVX512_H
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ISA avx512
#define VLEN 16
/* The fp32 GEMM's register tile: 6x32, 12 accumulators. A 14x32 tile (28 accumulators, 30 of the 32
 * registers) runs its FMA loop as fast on a long K, but every tile also zeroes, finishes (bias,
 * activation) and stores its accumulators, and with 12 of them Zen 4 gets through that per-tile work
 * faster: measured against 14x32 (8x32, 10x32, 12x32, 6x48, 8x48 and 4x64-6x64 were slower, 4x48 as
 * fast on some shapes but 0.89x on the 1000-output classifier), 1x1 convolutions took
 * 0.75-0.97x the time (16->64 on 55x55, K = 16: 0.75x; 512->1000 on 13x13: 0.97x) and whole models'
 * convolutions 0.85-0.99x (benchmarks/RESULTS.md, "6x32 tile"). Both overridable to try others.
 * Intel's cores, with two 512-bit FMA units, gain from the taller tile instead: isa_avx512_t14.c
 * compiles these kernels again with 14 rows, and dispatch.c hands that table out there. */
#ifndef GEMM_MR
#define GEMM_MR 6
#endif
#ifndef GEMM_PF_NEAR /* the GEMM prefetches B where it streams from memory (gemm_impl.h) */
#define GEMM_PF_NEAR 16
#endif
#ifndef GEMM_NV
#define GEMM_NV 2
#endif

typedef __m512 vf;
typedef __mmask16 vmask;

static inline __mmask16 vf_mask_n_(int n) {
    n = n < 0 ? 0 : n > 16 ? 16 : n;
    return (__mmask16)((1u << n) - 1u);
}
static inline vf vf_set1(float x) { return _mm512_set1_ps(x); }
static inline vf vf_zero(void) { return _mm512_setzero_ps(); }
static inline vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
/* a store around the caches (p aligned to the vector); _mm_sfence() before others read it */
static inline void vf_stream(float *p, vf v) { _mm512_stream_ps(p, v); }
static inline void vf_stream_fence(void) { _mm_sfence(); }
static inline vf vf_load_n(const float *p, int n) { return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(vf_mask_n_(n), p); }
static inline void vf_store_n(float *p, vf v, int n) {
    if (n >= 16) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, vf_mask_n_(n), v);
}
static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vf_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vf_fnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vf_abs(vf a) { return _mm512_abs_ps(a); }
static inline vf vf_round(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
/* x*x - x2 exactly (x2 = x*x rounded), by one fused multiply-add */
static inline vf vf_sqr_err(vf x, vf x2) { return vf_fma(x, x, vf_sub(vf_zero(), x2)); }
static inline vf vf_copysign(vf mag, vf sign) {
    const __m512i s = _mm512_set1_epi32((int)0x80000000u);
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(s, _mm512_castps_si512(mag)),
                                               _mm512_and_si512(s, _mm512_castps_si512(sign))));
}
static inline vf vf_pow2n(vf n) {
    __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}
static inline vmask vf_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline vmask vf_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
static inline vmask vf_isnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
static inline vf vf_select(vmask m, vf t, vf f) { return _mm512_mask_blend_ps(m, f, t); }
static inline float vf_hsum(vf v) { return _mm512_reduce_add_ps(v); }
static inline float vf_hmax(vf v) { return _mm512_reduce_max_ps(v); }
static inline vf vf_load_stride(const float *p, int64_t s) {
    if (s == 1) return _mm512_loadu_ps(p);
    if (s == 2) {
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
    }
    __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                     _mm512_set1_epi32((int)s));
    return _mm512_i32gather_ps(idx, p, 4);
}

/* p[0], p[2], ..., p[2k] for the first `avail` floats (k = (avail - 1) / 2), nothing read past them */
static inline vf vf_load_even_n(const float *p, int avail) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(vf_mask_n_(avail), p), even,
                                  _mm512_maskz_loadu_ps(vf_mask_n_(avail - 16), p + 16));
}

/* r[0..15] := its transpose: lane j of r[i] moves to lane i of r[j] (channels-last depthwise) */
static inline void vf_transpose(vf r[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) { /* pairs of rows interleaved within 128-bit lanes */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { /* u[i + k]: columns k, k+4, k+8, k+12 of rows i..i+3, one per lane */
        const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 2]);
        const __m512d c = _mm512_castps_pd(t[i + 1]), d = _mm512_castps_pd(t[i + 3]);
        u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
        u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    for (int k = 0; k < 4; ++k) { /* gather the 128-bit lanes of column k (and k+4, k+8, k+12) */
        const __m512 e0 = _mm512_shuffle_f32x4(u[k], u[k + 4], 0x88);
        const __m512 e1 = _mm512_shuffle_f32x4(u[k + 8], u[k + 12], 0x88);
        const __m512 o0 = _mm512_shuffle_f32x4(u[k], u[k + 4], 0xDD);
        const __m512 o1 = _mm512_shuffle_f32x4(u[k + 8], u[k + 12], 0xDD);
        r[k] = _mm512_shuffle_f32x4(e0, e1, 0x88);
        r[k + 8] = _mm512_shuffle_f32x4(e0, e1, 0xDD);
        r[k + 4] = _mm512_shuffle_f32x4(o0, o1, 0x88);
        r[k + 12] = _mm512_shuffle_f32x4(o0, o1, 0xDD);
    }
}

#endif
