/* float32 <-> float16 for host copies of float16 tensors (precision="low"): the
 * conversion runs while the bytes go into (or come out of) the staging buffer or
 * the mapping, so an input costs one pass. numpy's own cast takes ~20 ns an element
 * (45 ms for a batch of 16 224x224 images), more than the GPU takes for the model.
 * x86-64 CPUs with F16C convert 8 at a time; the portable path rounds to nearest
 * even like them, keeps NaN a NaN and overflows to infinity. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mvk_internal.h"

static uint16_t half_from_float(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a >= 0x47800000u) /* |f| >= 65536, infinity or NaN */
        return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (a < 0x38800000u) { /* below 2^-14: a subnormal half; adding 0.5 lets the FPU round it */
        float t;
        memcpy(&t, &a, 4);
        t += 0.5f;
        uint32_t r;
        memcpy(&r, &t, 4);
        return (uint16_t)(sign | (r - 0x3f000000u));
    }
    /* rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even;
     * a carry out of the mantissa bumps the exponent, up to infinity for [65520, 65536) */
    a += 0xc8000fffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | (a >> 13));
}

static float float_from_half(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0) {
        float f = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        memcpy(&x, &f, 4);
        x |= sign;
    } else if (e == 31) {
        x = sign | 0x7f800000u | (m << 13);
    } else {
        x = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx,f16c"))) static void narrow_f16c(const float *src, uint16_t *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) dst[i] = half_from_float(src[i]);
}

__attribute__((target("avx,f16c"))) static void widen_f16c(const uint16_t *src, float *dst, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; ++i) dst[i] = float_from_half(src[i]);
}

/* MNN_VULKAN_NO_F16C=1 takes the portable path (for its tests) */
static int has_f16c(void) {
    static int known = -1;
    if (known < 0) {
        const char *off = getenv("MNN_VULKAN_NO_F16C");
        __builtin_cpu_init();
        known = !(off && off[0] == '1') && __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
    }
    return known;
}
#endif

void mvk_narrow(const float *src, uint16_t *dst, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (has_f16c()) {
        narrow_f16c(src, dst, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; ++i) dst[i] = half_from_float(src[i]);
}

void mvk_widen(const uint16_t *src, float *dst, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (has_f16c()) {
        widen_f16c(src, dst, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; ++i) dst[i] = float_from_half(src[i]);
}
