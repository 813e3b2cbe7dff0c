/* 4-lane fp32 transcendental functions for the kernels' activation passes (armv8-a NEON), inlined where
 * used. exp: Cephes' expf (within 2 ulp over the clamped range); sigmoid and tanh from it with one division;
 * erf: Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7 before rounding). */
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

static inline __attribute__((always_inline)) float32x4_t v_sigmoid(float32x4_t x) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    return vdivq_f32(one, vaddq_f32(one, v_exp(vnegq_f32(x))));
}

/* 1 - 2 / (1 + e^2x): saturates to +-1 where e^2x overflows or vanishes */
static inline __attribute__((always_inline)) float32x4_t v_tanh(float32x4_t x) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    return vsubq_f32(one, vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(one, v_exp(vaddq_f32(x, x)))));
}

/* erfc(|x|) = t (a1 + t (a2 + ... a5)) e^-x^2, t = 1 / (1 + p |x|) */
static inline __attribute__((always_inline)) float32x4_t v_erfc_abs(float32x4_t x) {
    const float32x4_t a = vabsq_f32(x), one = vdupq_n_f32(1.0f);
    const float32x4_t t = vdivq_f32(one, vfmaq_f32(one, a, vdupq_n_f32(0.3275911f)));
    float32x4_t p = vfmaq_f32(vdupq_n_f32(-1.453152027f), t, vdupq_n_f32(1.061405429f));
    p = vfmaq_f32(vdupq_n_f32(1.421413741f), p, t);
    p = vfmaq_f32(vdupq_n_f32(-0.284496736f), p, t);
    p = vfmaq_f32(vdupq_n_f32(0.254829592f), p, t);
    return vmulq_f32(vmulq_f32(p, t), v_exp(vnegq_f32(vmulq_f32(a, a))));
}

/* x Phi(x) = x (1 + erf(x / sqrt 2)) / 2; for x < 0, 1 + erf is erfc(|x| / sqrt 2), with no cancellation */
static inline __attribute__((always_inline)) float32x4_t v_gelu(float32x4_t x) {
    const float32x4_t q = v_erfc_abs(vmulq_f32(x, vdupq_n_f32(0.70710678118654752f)));
    const float32x4_t phi2 = vbslq_f32(vcltzq_f32(x), q, vsubq_f32(vdupq_n_f32(2.0f), q));
    return vmulq_f32(vmulq_f32(x, vdupq_n_f32(0.5f)), phi2);
}

#endif
