/* The gate activations and the GEMV of the recurrent steps. Sigmoid and tanh, on every gate of every
 * step, are a rational function (vectorized; within 4e-7 of tanh); the rarer ones that need exp or
 * log call libm. */
#include <math.h>
#include <string.h>

#include "recurrent.h"

/* tanh as p(x)/q(x) on [-7.9, 7.9] (Eigen's float tanh), where it is 1 to float precision beyond */
static inline float tanh_rational(float x) {
    const float c = 7.90531110763549805f;
    x = x < -c ? -c : (x > c ? c : x);
    const float x2 = x * x;
    float p = -2.76076847742355e-16f;
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 - 8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = 1.19825839466702e-06f;
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    return x * p / q;
}

X86_CLONES static void act_tanh(float *x, int64_t n, float a, float b) {
    for (int64_t i = 0; i < n; ++i) x[i] = a * tanh_rational(b * x[i]);
}

X86_CLONES static void act_sigmoid(float *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = 0.5f + 0.5f * tanh_rational(0.5f * x[i]);
}

X86_CLONES static void act_affine(float *x, int64_t n, float a, float b, float lo, float hi) {
    for (int64_t i = 0; i < n; ++i) {
        const float v = a * x[i] + b;
        x[i] = v < lo ? lo : (v > hi ? hi : v);
    }
}

X86_CLONES static void act_leaky(float *x, int64_t n, float a) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : a * x[i];
}

static void act_libm(int32_t fn, float *x, int64_t n, float a) {
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        if (fn == X86_RA_THRESHOLDED_RELU) x[i] = v > a ? v : 0.0f;
        else if (fn == X86_RA_ELU) x[i] = v >= 0.0f ? v : a * expm1f(v);
        else if (fn == X86_RA_SOFTSIGN) x[i] = v / (1.0f + fabsf(v));
        else x[i] = v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v)); /* softplus, no overflow */
    }
}

void x86_rnn_activate(const x86_rnn_act *a, float *x, int64_t n) {
    switch (a->fn) {
    case X86_RA_SIGMOID: act_sigmoid(x, n); break;
    case X86_RA_TANH: act_tanh(x, n, 1.0f, 1.0f); break;
    case X86_RA_SCALED_TANH: act_tanh(x, n, a->alpha, a->beta); break;
    case X86_RA_RELU: act_affine(x, n, 1.0f, 0.0f, 0.0f, INFINITY); break;
    case X86_RA_AFFINE: act_affine(x, n, a->alpha, a->beta, -INFINITY, INFINITY); break;
    case X86_RA_HARD_SIGMOID: act_affine(x, n, a->alpha, a->beta, 0.0f, 1.0f); break;
    case X86_RA_LEAKY_RELU: act_leaky(x, n, a->alpha); break;
    default: act_libm(a->fn, x, n, a->alpha); break;
    }
}

X86_CLONES void x86_rnn_clip(float *x, int64_t n, float clip) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] < -clip ? -clip : (x[i] > clip ? clip : x[i]);
}

#define GEMV_COLS 64 /* columns a pass keeps in registers: 4 AVX-512 or 8 AVX2 accumulators */

/* y[0:w] for one block of w <= GEMV_COLS columns; a constant w unrolls into registers */
static inline void gemv_block(const float *h, const float *rt, int64_t k, int64_t ld, int64_t w, float *y) {
    float acc[GEMV_COLS] = {0};
    for (int64_t q = 0; q < k; ++q) {
        const float hq = h[q];
        const float *r = rt + q * ld;
        for (int64_t j = 0; j < w; ++j) acc[j] += hq * r[j];
    }
    memcpy(y, acc, (size_t)w * sizeof(float));
}

X86_CLONES void x86_rnn_gemv(const float *h, const float *rt, int64_t k, int64_t ld, int64_t n, float *y) {
    int64_t j = 0;
    for (; j + GEMV_COLS <= n; j += GEMV_COLS) gemv_block(h, rt + j, k, ld, GEMV_COLS, y + j);
    if (j < n) gemv_block(h, rt + j, k, ld, n - j, y + j);
}
