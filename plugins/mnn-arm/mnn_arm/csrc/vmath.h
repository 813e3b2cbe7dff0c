/* 4-lane fp32 transcendental functions for the kernels' activation passes (armv8-a NEON), inlined where
 * used. exp: Cephes' expf (within 2 ulp over the clamped range); sigmoid and tanh from it with one division;
 * erf: Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7 before rounding); 2^t for t <= 0
 * (softmax's exponentials) by a degree-5 polynomial, within 4 ulp. */
#ifndef MNN_ARM_VMATH_H
#define MNN_ARM_VMATH_H

#include <arm_neon.h>

static inline __attribute__((always_inline)) float32x4_t v_exp(float32x4_t x) {
    x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-87.3f)), vdupq_n_f32(88.3f));
    const float32x4_t fx = vrndmq_f32(vfmaq_f32(vdupq_n_f32(0.5f), x, vdupq_n_f32(1.44269504088896341f)));
    x = vfmsq_f32(x, fx, vdupq_n_f32(0.693359375f));
    x = vfmsq_f32(x, fx, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t y = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), vdupq_n_f32(1.9875691500e-4f), x);
    y = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), y, x);
    y = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), y, x);
    y = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), y, x);
    y = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), y, x);
    y = vaddq_f32(vfmaq_f32(x, y, vmulq_f32(x, x)), vdupq_n_f32(1.0f));
    const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(fx), vdupq_n_s32(127)), 23);
    return vmulq_f32(y, vreinterpretq_f32_s32(e));
}

/* 2^t for t <= 0 (or NaN): t = n + f, n = round(t), |f| <= 1/2; 2^f by a polynomial fitted for the least
 * relative error on [-1/2, 1/2] (2.1e-7 in float32 Horner); n added to its exponent bits. t is held at
 * -126 or above, so the sum stays a float (2^-126 where the true value underflows: a softmax's masked
 * scores come out 1e-38 of their row, not 0). 13 instructions. */
static inline __attribute__((always_inline)) float32x4_t v_exp2_nonpos(float32x4_t t) {
    t = vmaxq_f32(t, vdupq_n_f32(-126.0f));
    const float32x4_t n = vrndnq_f32(t), f = vsubq_f32(t, n);
    float32x4_t p = vfmaq_f32(vdupq_n_f32(9.675540961325169e-3f), vdupq_n_f32(1.327647129073739e-3f), f);
    p = vfmaq_f32(vdupq_n_f32(5.550713092088699e-2f), p, f);
    p = vfmaq_f32(vdupq_n_f32(2.4022120237350464e-1f), p, f);
    p = vfmaq_f32(vdupq_n_f32(6.931469440460205e-1f), p, f);
    p = vfmaq_f32(vdupq_n_f32(1.0000001192092896f), p, f);
    const int32x4_t e = vshlq_n_s32(vcvtq_s32_f32(n), 23);
    return vreinterpretq_f32_s32(vaddq_s32(vreinterpretq_s32_f32(p), e));
}

static inline __attribute__((always_inline)) float32x4_t v_sigmoid(float32x4_t x) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    return vdivq_f32(one, vaddq_f32(one, v_exp(vnegq_f32(x))));
}

/* 1 - 2 / (1 + e^2x): saturates to +-1 where e^2x overflows or vanishes */
static inline __attribute__((always_inline)) float32x4_t v_tanh(float32x4_t x) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    return vsubq_f32(one, vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(one, v_exp(vaddq_f32(x, x)))));
}

/* x Phi(x) = x (1 + erf(x / sqrt 2)) / 2; for x < 0, 1 + erf is erfc(|x| / sqrt 2), with no cancellation.
 * erfc(a) = t (a1 + t (a2 + ... a5)) e^-a^2, t = 1 / (1 + p a) (the halving taken into a1..a5), and
 * e^-a^2 = e^(-x^2 / 2) as 2^(x^2 (-log2 e / 2)) by v_exp2_nonpos: 29 instructions a vector. */
static inline __attribute__((always_inline)) float32x4_t v_gelu(float32x4_t x) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    const float32x4_t a = vmulq_f32(vabsq_f32(x), vdupq_n_f32(0.70710678118654752f));
    const float32x4_t t = vdivq_f32(one, vfmaq_f32(one, a, vdupq_n_f32(0.3275911f)));
    float32x4_t p = vfmaq_f32(vdupq_n_f32(-0.7265760135f), t, vdupq_n_f32(0.5307027145f));
    p = vfmaq_f32(vdupq_n_f32(0.7107068705f), p, t);
    p = vfmaq_f32(vdupq_n_f32(-0.142248368f), p, t);
    p = vfmaq_f32(vdupq_n_f32(0.127414796f), p, t);
    const float32x4_t e = v_exp2_nonpos(vmulq_f32(vmulq_f32(x, x), vdupq_n_f32(-0.72134752044448170f)));
    const float32x4_t q = vmulq_f32(vmulq_f32(p, t), e); /* erfc(|x| / sqrt 2) / 2 */
    return vmulq_f32(x, vbslq_f32(vcltzq_f32(x), q, vsubq_f32(one, q)));
}

/* erf: for |x| < 1/2, x P(x^2) (P fitted for the least relative error, 1.7e-7 in float32), where 1 - erfc would
 * lose the small values' digits; beyond, sign(x) (1 - erfc(|x|)) by Abramowitz and Stegun 7.1.26 (absolute error
 * under 1.5e-7) with e^-x^2 by v_exp2_nonpos. NaN stays NaN, +-inf gives +-1. */
static inline __attribute__((always_inline)) float32x4_t v_erf(float32x4_t x) {
    const float32x4_t a = vabsq_f32(x), one = vdupq_n_f32(1.0f);
    const float32x4_t t = vdivq_f32(one, vfmaq_f32(one, a, vdupq_n_f32(0.3275911f)));
    float32x4_t p = vfmaq_f32(vdupq_n_f32(-1.453152027f), t, vdupq_n_f32(1.061405429f));
    p = vfmaq_f32(vdupq_n_f32(1.421413741f), p, t);
    p = vfmaq_f32(vdupq_n_f32(-0.284496736f), p, t);
    p = vfmaq_f32(vdupq_n_f32(0.254829592f), p, t);
    const float32x4_t e = v_exp2_nonpos(vmulq_f32(vmulq_f32(a, a), vdupq_n_f32(-1.44269504088896341f)));
    const float32x4_t big = vfmsq_f32(one, vmulq_f32(p, t), e);
    const float32x4_t u = vmulq_f32(x, x);
    float32x4_t s = vfmaq_f32(vdupq_n_f32(-0.02675718627870083f), vdupq_n_f32(0.004717990290373564f), u);
    s = vfmaq_f32(vdupq_n_f32(0.11282823234796524f), s, u);
    s = vfmaq_f32(vdupq_n_f32(-0.37612608075141907f), s, u);
    s = vfmaq_f32(vdupq_n_f32(1.1283791065216064f), s, u);
    const float32x4_t large = vbslq_f32(vdupq_n_u32(0x80000000u), x, big); /* big with x's sign */
    return vbslq_f32(vcltq_f32(a, vdupq_n_f32(0.5f)), vmulq_f32(x, s), large);
}

#endif
