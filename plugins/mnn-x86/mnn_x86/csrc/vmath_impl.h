/* Vector math on `vf` (exp, sigmoid, tanh, gelu) and the fused activations.
 * Included by each isa_*.c after its vec_*.h: every ISA level, scalar included,
 * computes the same formulas, so results agree across levels to rounding. */
#ifndef MNN_X86_VMATH_IMPL_H
#define MNN_X86_VMATH_IMPL_H

/* Max, min and clamps that keep a NaN, as the reference does (numpy's maximum, minimum, max and
 * clip): the max/min instructions (and the scalar a > b ? a : b) return their second operand when
 * either is NaN. With a constant bound, x goes second; with two data operands, a NaN first one is
 * selected back. */
static inline vf vf_relu(vf x) { return vf_max(vf_zero(), x); }
static inline vf vf_clamp(vf x, vf lo, vf hi) { return vf_min(hi, vf_max(lo, x)); }
static inline vf vf_max_nan(vf a, vf b) { return vf_select(vf_isnan(a), a, vf_max(a, b)); }
static inline vf vf_min_nan(vf a, vf b) { return vf_select(vf_isnan(a), a, vf_min(a, b)); }

/* e^r * 2^n for the reduced argument r (|r| <= ln 2 / 2): the Cephes expf polynomial (~1 ulp) */
static inline vf vf_exp_reduced(vf r, vf n) {
    vf p = vf_set1(1.9875691500e-4f);
    p = vf_fma(p, r, vf_set1(1.3981999507e-3f));
    p = vf_fma(p, r, vf_set1(8.3334519073e-3f));
    p = vf_fma(p, r, vf_set1(4.1665795894e-2f));
    p = vf_fma(p, r, vf_set1(1.6666665459e-1f));
    p = vf_fma(p, r, vf_set1(5.0000001201e-1f));
    p = vf_fma(p, vf_mul(r, r), vf_add(r, vf_set1(1.0f)));
    return vf_mul(p, vf_pow2n(n));
}

/* exp: Cody-Waite range reduction and the Cephes expf polynomial (~1 ulp). */
static inline vf vf_exp(vf x) {
    x = vf_clamp(x, vf_set1(-87.33654f), vf_set1(88.0f));
    vf n = vf_round(vf_mul(x, vf_set1(1.44269504088896341f)));
    vf r = vf_fnma(n, vf_set1(0.693359375f), x);
    r = vf_fnma(n, vf_set1(-2.12194440e-4f), r);
    return vf_exp_reduced(r, n);
}

/* exp(a + b) for a <= 0 exact and a small b (|b| < 2), without rounding a + b: b joins the argument
 * after the range reduction of a, where it is small, so a large a loses none of b's digits. One exp
 * where e^a * e^b took two. Results below 2^-126 come out as some value of that size or less. */
static inline vf vf_exp_sum(vf a, vf b) {
    a = vf_max(a, vf_set1(-88.0f));
    vf n = vf_round(vf_mul(vf_max(vf_add(a, b), vf_set1(-87.33654f)), vf_set1(1.44269504088896341f)));
    vf r = vf_fnma(n, vf_set1(0.693359375f), a); /* exact: n * 0.693359375 has 16 bits, close to a */
    r = vf_add(vf_fnma(n, vf_set1(-2.12194440e-4f), r), b);
    return vf_exp_reduced(r, n);
}

static inline vf vf_sigmoid(vf x) { return vf_div(vf_set1(1.0f), vf_add(vf_set1(1.0f), vf_exp(vf_sub(vf_zero(), x)))); }

/* tanh: Cephes tanhf polynomial below |x| 0.625, 1 - 2/(e^2|x| + 1) above. */
static inline vf vf_tanh(vf x) {
    vf ax = vf_abs(x);
    vf e = vf_exp(vf_min(vf_set1(88.0f), vf_add(ax, ax)));
    vf big = vf_sub(vf_set1(1.0f), vf_div(vf_set1(2.0f), vf_add(e, vf_set1(1.0f))));
    vf z = vf_mul(x, x);
    vf p = vf_set1(-5.70498872745e-3f);
    p = vf_fma(p, z, vf_set1(2.06390887954e-2f));
    p = vf_fma(p, z, vf_set1(-5.37397155531e-2f));
    p = vf_fma(p, z, vf_set1(1.33314422036e-1f));
    p = vf_fma(p, z, vf_set1(-3.33332819422e-1f));
    vf small = vf_fma(vf_mul(p, z), x, x);
    return vf_select(vf_lt(ax, vf_set1(0.625f)), small, vf_copysign(big, x));
}

/* gelu(x) = x/2 * erfc(-x/sqrt 2). erfc(z), z >= 0, by the Chebyshev fit of
 * Numerical Recipes (erfcc, relative error < 1.2e-7 for every z >= 0); for
 * x >= 0 erfc(-z) = 2 - erfc(z). Relative error below 1e-6 over the whole
 * range, also where x/2 * (1 + erf) would cancel (tests/test_accuracy.py). */
static inline vf vf_gelu(vf x) {
    vf z = vf_mul(vf_abs(x), vf_set1(0.70710678118654752f));
    vf t = vf_div(vf_set1(1.0f), vf_fma(vf_set1(0.5f), z, vf_set1(1.0f)));
    vf p = vf_set1(0.17087277f);
    p = vf_fma(p, t, vf_set1(-0.82215223f));
    p = vf_fma(p, t, vf_set1(1.48851587f));
    p = vf_fma(p, t, vf_set1(-1.13520398f));
    p = vf_fma(p, t, vf_set1(0.27886807f));
    p = vf_fma(p, t, vf_set1(-0.18628806f));
    p = vf_fma(p, t, vf_set1(0.09678418f));
    p = vf_fma(p, t, vf_set1(0.37409196f));
    p = vf_fma(p, t, vf_set1(1.00002368f));
    p = vf_fma(p, t, vf_set1(-1.26551223f));
    /* z^2 = x^2 / 2 exactly as z2 + lo (z itself is rounded: squaring it would put
     * its error into a large exponent), then exp(-z2 + (p - lo)) with the sum kept apart (vf_exp_sum) */
    vf x2 = vf_mul(x, x);
    vf lo = vf_mul(vf_set1(0.5f), vf_sqr_err(x, x2));
    vf z2 = vf_mul(vf_set1(0.5f), x2);
    vf erfc = vf_mul(t, vf_exp_sum(vf_sub(vf_zero(), z2), vf_sub(p, lo)));
    vf phi2 = vf_select(vf_ge(x, vf_zero()), vf_sub(vf_set1(2.0f), erfc), erfc); /* 2 * Phi(x) */
    return vf_mul(vf_mul(vf_set1(0.5f), x), phi2);
}

/* One activation on one vector; `act` is constant wherever this is inlined in a
 * loop specialised per activation, so the switch folds away. */
static inline __attribute__((always_inline)) vf vf_activate(vf x, int act, float a, float b) {
    switch (act) {
    case MNN_ACT_RELU: return vf_relu(x);
    case MNN_ACT_CLIP: return vf_clamp(x, vf_set1(a), vf_set1(b));
    case MNN_ACT_LEAKY_RELU: return vf_select(vf_ge(x, vf_zero()), x, vf_mul(x, vf_set1(a)));
    case MNN_ACT_SIGMOID: return vf_sigmoid(x);
    case MNN_ACT_SILU: return vf_mul(x, vf_sigmoid(x));
    case MNN_ACT_GELU: return vf_gelu(x);
    case MNN_ACT_TANH: return vf_tanh(x);
    case MNN_ACT_HARD_SIGMOID: return vf_clamp(vf_fma(x, vf_set1(a), vf_set1(b)), vf_zero(), vf_set1(1.0f));
    case MNN_ACT_HARD_SWISH:
        return vf_mul(x, vf_clamp(vf_fma(x, vf_set1(1.0f / 6.0f), vf_set1(0.5f)), vf_zero(), vf_set1(1.0f)));
    default: return x;
    }
}

#endif
