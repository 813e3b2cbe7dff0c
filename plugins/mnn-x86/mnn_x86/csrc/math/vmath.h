/* float32 transcendental functions without libm calls or branches, so that a loop over them
 * vectorizes in each X86_CLONES clone: range reduction, a minimax polynomial (most from Cephes),
 * the special values (inf, nan, out-of-domain) chosen by selects at the end. Accurate to a few ulp
 * (checked against float64 libm by tests/test_math.py through the ops). */
#ifndef MNN_X86_MATH_VMATH_H
#define MNN_X86_MATH_VMATH_H

#include <math.h>
#include <stdint.h>

#define VM_INLINE static inline __attribute__((always_inline))
#define VM_PI_2 1.57079632679489661923f
#define VM_PI_4 0.78539816339744830962f
#define VM_LN2 0.69314718055994530942f

VM_INLINE int32_t vm_bits(float x) {
    union { float f; int32_t i; } u = {x};
    return u.i;
}

VM_INLINE float vm_float(int32_t i) {
    union { int32_t i; float f; } u = {i};
    return u.f;
}

/* the nearest integer as a float, ties to even (|x| < 2^22): the magic-number trick, no rintf call */
VM_INLINE float vm_round(float x) {
    const float magic = 12582912.0f; /* 1.5 * 2^23 */
    return (x + magic) - magic;
}

/* e^x = 2^n e^r, |r| <= ln2/2; 2^n applied as two halves so that n = -150 (denormal results) and
 * n = 128 (just below overflow) stay in the exponent field */
VM_INLINE float vm_exp(float x) {
    /* selects, not fminf/fmaxf: those do not vectorize without -ffast-math; a nan goes through */
    const float lo = x < -104.0f ? -104.0f : x;
    const float xc = lo > 88.7228317f ? 88.7228317f : lo;
    const float n = vm_round(xc * 1.44269504088896341f);
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t ni = (int32_t)n, h = ni / 2;
    float y = p * vm_float((h + 127) << 23) * vm_float((ni - h + 127) << 23);
    y = x > 88.7228317f ? INFINITY : y;
    y = x < -104.0f ? 0.0f : y;
    return x != x ? x : y;
}

/* e^x - 1, exact near 0 where exp(x) - 1 would cancel: a Taylor polynomial for |x| < 0.35 */
VM_INLINE float vm_expm1(float x) {
    const float t = ((((((1.0f / 5040 * x + 1.0f / 720) * x + 1.0f / 120) * x + 1.0f / 24) * x + 1.0f / 6) * x
                      + 0.5f) * x * x) + x;
    const float e = vm_exp(x) - 1.0f;
    return fabsf(x) < 0.35f ? t : e;
}

/* log x = e ln2 + log m, m in [sqrt(1/2), sqrt 2); denormal inputs scaled by 2^23 first */
VM_INLINE float vm_log(float x) {
    const int sub = x < 1.17549435e-38f;
    const int32_t bits = vm_bits(sub ? x * 8388608.0f : x);
    int32_t e = ((bits >> 23) & 0xff) - 126;
    float m = vm_float((bits & 0x007fffff) | 0x3f000000); /* [0.5, 1) */
    e = sub ? e - 23 : e;
    const int low = m < 0.707106781186547524f;
    e = low ? e - 1 : e;
    m = low ? m + m - 1.0f : m - 1.0f;
    const float z = m * m;
    float p = 7.0376836292e-2f;
    p = p * m - 1.1514610310e-1f;
    p = p * m + 1.1676998740e-1f;
    p = p * m - 1.2420140846e-1f;
    p = p * m + 1.4249322787e-1f;
    p = p * m - 1.6668057665e-1f;
    p = p * m + 2.0000714765e-1f;
    p = p * m - 2.4999993993e-1f;
    p = p * m + 3.3333331174e-1f;
    const float fe = (float)e;
    float y = p * m * z - 2.12194440e-4f * fe - 0.5f * z;
    y = (m + y) + 0.693359375f * fe;
    y = x == 0.0f ? -INFINITY : y;
    y = x < 0.0f ? NAN : y;
    y = x == INFINITY ? x : y;
    return x != x ? x : y;
}

/* log(1 + u) for u >= 0 without losing u's low bits: log(w) * u / (w - 1), w = 1 + u (Goldberg) */
VM_INLINE float vm_log1p_pos(float u) {
    const float w = 1.0f + u;
    const float d = w - 1.0f;
    const float y = vm_log(w) * (u / (d == 0.0f ? 1.0f : d));
    return d == 0.0f ? u : (w == INFINITY ? w : y);
}

/* erf: its Maclaurin series (to x^25) below 1, 1 - erfc beyond with erfc from Numerical Recipes'
 * Chebyshev fit (relative error 1.2e-7): a few 1e-8 absolute there, ~2e-7 near 1 */
VM_INLINE float vm_erf(float x) {
    static const float series[13] = {8.3507027951e-11f, -1.0892221037e-09f, 1.3122532964e-08f, -1.4503852223e-07f,
                                     1.4589169001e-06f, -1.3227513228e-05f, 1.0683760684e-04f, -7.5757575758e-04f,
                                     4.6296296296e-03f, -2.3809523810e-02f, 1.0e-01f, -3.3333333333e-01f, 1.0f};
    const float a = fabsf(x), z = x * x;
    float s = series[0];
    for (int k = 1; k < 13; ++k) s = s * z + series[k];
    const float small = 1.12837916709551257f * a * s;
    const float t = 1.0f / (1.0f + 0.5f * a);
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    const float erfc = t * vm_exp(p - z);
    const float y = a < 1.0f ? small : 1.0f - erfc;
    return x != x ? x : copysignf(y, x);
}

/* sin (cosine = 0) or cos (cosine = 1) by Cephes' reduction to octants: exact enough for |x| <= 8192;
 * the caller recomputes larger and non-finite inputs with libm (vm_fix_large) */
VM_INLINE float vm_sincos(float x, int cosine) {
    const float ax = fabsf(x);
    int32_t j = (int32_t)(ax * 1.27323954473516f);
    j = (j + 1) & ~1;
    const float fj = (float)j;
    const float r = ((ax - fj * 0.78515625f) - fj * 2.4187564849853515625e-4f) - fj * 3.77489497744594108e-8f;
    const float z = r * r;
    const float s = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
    const float c = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z
                    - 0.5f * z + 1.0f;
    const int32_t oct = j & 7;
    const int32_t q = oct & 3;                       /* octant within the half turn */
    const int use_c = (q == 1) | (q == 2);
    float y = cosine ? (use_c ? s : c) : (use_c ? c : s);
    int32_t neg = cosine ? ((oct > 3) ^ (q > 1)) : ((oct > 3) ^ (x < 0.0f));
    return neg ? -y : y;
}

/* asin of |s| <= 0.5 */
VM_INLINE float vm_asin_small(float s) {
    const float z = s * s;
    return ((((4.2163199048e-2f * z + 2.4181311049e-2f) * z + 4.5470025998e-2f) * z + 7.4953002686e-2f) * z
            + 1.6666752422e-1f) * z * s + s;
}

VM_INLINE float vm_asin(float x) {
    const float a = fabsf(x);
    const float s = sqrtf(0.5f * (1.0f - a));
    const float y = a > 0.5f ? VM_PI_2 - 2.0f * vm_asin_small(s) : vm_asin_small(a);
    return copysignf(y, x);
}

VM_INLINE float vm_acos(float x) {
    const float s = sqrtf(0.5f * (1.0f - fabsf(x)));
    const float far = 2.0f * vm_asin_small(s);
    const float y = x < -0.5f ? 3.14159265358979323846f - far : (x > 0.5f ? far : VM_PI_2 - vm_asin_small(x));
    return fabsf(x) > 1.0f ? NAN : y;
}

VM_INLINE float vm_atan(float x) {
    const float a = fabsf(x);
    const int big = a > 2.414213562373095f, mid = a > 0.4142135623730950f;
    const float xr = big ? -1.0f / a : (mid ? (a - 1.0f) / (a + 1.0f) : a);
    const float y0 = big ? VM_PI_2 : (mid ? VM_PI_4 : 0.0f);
    const float z = xr * xr;
    const float y = (((8.05374449538e-2f * z - 1.38776856032e-1f) * z + 1.99777106478e-1f) * z - 3.33329491539e-1f)
                    * z * xr + xr + y0;
    return copysignf(y, x);
}

/* e^|x| / 2 without overflowing before the result does (|x| up to 89.4) */
VM_INLINE float vm_half_exp(float a) {
    const float e2 = vm_exp(0.5f * a);
    return (0.5f * e2) * e2;
}

VM_INLINE float vm_sinh(float x) {
    const float a = fabsf(x), z = x * x;
    const float small = ((2.03721912945e-4f * z + 8.33028376239e-3f) * z + 1.66667160211e-1f) * z * a + a;
    const float e = vm_exp(a);
    const float y = a <= 1.0f ? small : (a < 80.0f ? 0.5f * (e - 1.0f / e) : vm_half_exp(a));
    return copysignf(y, x);
}

VM_INLINE float vm_cosh(float x) {
    const float a = fabsf(x);
    const float e = vm_exp(a);
    return a < 80.0f ? 0.5f * (e + 1.0f / e) : vm_half_exp(a);
}

VM_INLINE float vm_asinh(float x) {
    const float a = fabsf(x), z = x * x;
    const float small = (((2.0122003309e-2f * z - 4.2699340972e-2f) * z + 7.4847586088e-2f) * z - 1.6666288134e-1f)
                        * z * a + a;
    const float mid = vm_log(a + sqrtf(z + 1.0f));
    const float big = vm_log(a) + VM_LN2; /* a^2 + 1 = a^2 in float past 2^12; past 1e19 it overflows */
    const float y = a < 0.5f ? small : (a < 4096.0f ? mid : big);
    return copysignf(y, x);
}

VM_INLINE float vm_acosh(float x) {
    const float z = x - 1.0f;
    const float near1 = ((((1.7596881071e-3f * z - 7.5272886713e-3f) * z + 2.6454905019e-2f) * z - 1.1784741703e-1f)
                         * z + 1.4142135263e0f) * sqrtf(z);
    const float mid = vm_log(x + sqrtf(z * (x + 1.0f)));
    const float big = vm_log(x) + VM_LN2;
    const float y = z < 0.5f ? near1 : (x < 4096.0f ? mid : big);
    return x < 1.0f ? NAN : y;
}

VM_INLINE float vm_atanh(float x) {
    const float a = fabsf(x), z = x * x;
    const float small = ((((1.81740078349e-1f * z + 8.24370301058e-2f) * z + 1.46691431730e-1f) * z
                          + 1.99782164500e-1f) * z + 3.33337300303e-1f) * z * a + a;
    const float big = 0.5f * vm_log((1.0f + a) / (1.0f - a));
    const float y = a < 0.5f ? small : big;
    return a > 1.0f ? NAN : copysignf(y, x);
}

/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|) */
VM_INLINE float vm_softplus(float x) {
    return (x > 0.0f ? x : 0.0f) + vm_log1p_pos(vm_exp(-fabsf(x)));
}

/* x tanh(softplus x) = x n(n+2) / (n(n+2) + 2), n = e^x: exact for small n, where tanh(log1p n) cancels */
VM_INLINE float vm_mish(float x) {
    const float n = vm_exp(x);
    const float t = n * (n + 2.0f);
    return x > 20.0f ? x : x * (t / (t + 2.0f));
}

#endif
