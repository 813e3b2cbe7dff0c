/* The gate activations and the GEMV of the recurrent steps. Sigmoid and tanh, on every gate of every
 * step, are polynomials that vectorize (within 2 ulp: a cell's state sums gates, and onnx's own tests
 * allow 1e-7 of absolute error); the rarer ones that need exp or log call libm. */
#include <math.h>
#include <string.h>

#include "recurrent.h"

/* e^x for x in [-88, 88] (Cephes' expf: a degree-6 polynomial on x - n ln2, times 2^n), within 2 ulp */
static inline float exp_poly(float x) {
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    const float n = floorf(x * 1.44269504088896341f + 0.5f);
    const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

/* tanh: an odd polynomial below 0.625 (Cephes' tanhf), 1 - 2/(e^2|x| + 1) above; within 2 ulp. Both
 * sides are computed and one chosen, so the loop has no branch. */
static inline float tanh_poly(float x) {
    const float ax = fabsf(x) > 9.0f ? 9.0f : fabsf(x), z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = p * z * x + x;
    const float large = 1.0f - 2.0f / (exp_poly(2.0f * ax) + 1.0f);
    return ax < 0.625f ? small : (x < 0.0f ? -large : large);
}

X86_CLONES static void act_tanh(float *x, int64_t n, float a, float b) {
    for (int64_t i = 0; i < n; ++i) x[i] = a * tanh_poly(b * x[i]);
}

X86_CLONES static void act_sigmoid(float *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + exp_poly(-x[i]));
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

/* 16 floats at any 4-byte boundary; each clone lowers it to its own registers (the helpers using it
 * are always inlined into a clone: outside one they compile for SSE2) */
typedef float x86_v16 __attribute__((vector_size(64), aligned(4)));

/* y[0:RNN_PANEL]: named vector accumulators, as an array of them GCC spills to the stack; two sets
 * (even and odd q), as each add waits on the last: four chains kept half the FMA units idle */
static inline __attribute__((always_inline)) void gemv_block(const float *h, const float *rt, int64_t k, int64_t ld, float *y) {
    x86_v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
    int64_t q = 0;
    for (; q + 2 <= k; q += 2) {
        const float hq = h[q], hn = h[q + 1];
        const x86_v16 *r = (const x86_v16 *)(rt + q * ld), *n = (const x86_v16 *)(rt + (q + 1) * ld);
        a0 += hq * r[0];
        a1 += hq * r[1];
        a2 += hq * r[2];
        a3 += hq * r[3];
        b0 += hn * n[0];
        b1 += hn * n[1];
        b2 += hn * n[2];
        b3 += hn * n[3];
    }
    if (q < k) {
        const float hq = h[q];
        const x86_v16 *r = (const x86_v16 *)(rt + q * ld);
        a0 += hq * r[0];
        a1 += hq * r[1];
        a2 += hq * r[2];
        a3 += hq * r[3];
    }
    x86_v16 *o = (x86_v16 *)y;
    o[0] = a0 + b0, o[1] = a1 + b1, o[2] = a2 + b2, o[3] = a3 + b3;
}

/* a panel narrower than RNN_PANEL (a gate's last columns) */
static inline __attribute__((always_inline)) void gemv_tail(const float *h, const float *rt, int64_t k, int64_t ld, int64_t w, float *y) {
    float acc[RNN_PANEL] = {0};
    for (int64_t q = 0; q < k; ++q) {
        const float hq = h[q];
        const float *r = rt + q * ld;
        for (int64_t j = 0; j < w; ++j) acc[j] += hq * r[j];
    }
    memcpy(y, acc, (size_t)w * sizeof(float));
}

/* 4 rows x 32 columns: 8 vector accumulators, each load of R^T feeding four rows */
static inline __attribute__((always_inline)) void gemm4_block(const float *h, int64_t h_ld, const float *rt, int64_t k, int64_t ld, float *y,
                               int64_t y_ld) {
    x86_v16 a00 = {0}, a01 = {0}, a10 = {0}, a11 = {0}, a20 = {0}, a21 = {0}, a30 = {0}, a31 = {0};
    for (int64_t q = 0; q < k; ++q) {
        const x86_v16 *r = (const x86_v16 *)(rt + q * ld);
        const x86_v16 r0 = r[0], r1 = r[1];
        const float h0 = h[q], h1 = h[h_ld + q], h2 = h[2 * h_ld + q], h3 = h[3 * h_ld + q];
        a00 += h0 * r0, a01 += h0 * r1, a10 += h1 * r0, a11 += h1 * r1;
        a20 += h2 * r0, a21 += h2 * r1, a30 += h3 * r0, a31 += h3 * r1;
    }
    x86_v16 *o = (x86_v16 *)y;
    o[0] = a00, o[1] = a01;
    o = (x86_v16 *)(y + y_ld), o[0] = a10, o[1] = a11;
    o = (x86_v16 *)(y + 2 * y_ld), o[0] = a20, o[1] = a21;
    o = (x86_v16 *)(y + 3 * y_ld), o[0] = a30, o[1] = a31;
}

/* 8 rows x 32 columns: 16 vector accumulators (AVX-512 has the registers: AVX2 would spill them), each
 * load of R^T feeding eight rows, so a batch of 8 streams R^T once a step instead of twice */
#define ROW8(r) const float h##r = h[r * h_ld + q]; a##r##0 += h##r * r0, a##r##1 += h##r * r1;
#define OUT8(r) o = (x86_v16 *)(y + r * y_ld), o[0] = a##r##0, o[1] = a##r##1;
static inline __attribute__((always_inline)) void gemm8_block(const float *h, int64_t h_ld, const float *rt, int64_t k, int64_t ld, float *y,
                               int64_t y_ld) {
    x86_v16 a00 = {0}, a01 = {0}, a10 = {0}, a11 = {0}, a20 = {0}, a21 = {0}, a30 = {0}, a31 = {0};
    x86_v16 a40 = {0}, a41 = {0}, a50 = {0}, a51 = {0}, a60 = {0}, a61 = {0}, a70 = {0}, a71 = {0};
    for (int64_t q = 0; q < k; ++q) {
        const x86_v16 *r = (const x86_v16 *)(rt + q * ld);
        const x86_v16 r0 = r[0], r1 = r[1];
        ROW8(0) ROW8(1) ROW8(2) ROW8(3) ROW8(4) ROW8(5) ROW8(6) ROW8(7)
    }
    x86_v16 *o;
    OUT8(0) OUT8(1) OUT8(2) OUT8(3) OUT8(4) OUT8(5) OUT8(6) OUT8(7)
}
#undef ROW8
#undef OUT8

/* one panel of R^T (k rows of w <= RNN_PANEL columns, w apart) for m rows of h: eight (wide: AVX-512)
 * or four rows at a time share each load of the panel (32 columns a block), the rest one row each */
static inline __attribute__((always_inline)) void gemm_panel(const float *h, int64_t h_ld, int64_t m, const float *rt, int64_t k, int64_t w, float *y, int64_t y_ld, int wide) {
    int64_t i = 0;
    for (; wide && i + 8 <= m; i += 8) {
        int64_t j = 0;
        for (; j + 32 <= w; j += 32) gemm8_block(h + i * h_ld, h_ld, rt + j, k, w, y + i * y_ld + j, y_ld);
        for (int64_t r = i; j < w && r < i + 8; ++r) gemv_tail(h + r * h_ld, rt + j, k, w, w - j, y + r * y_ld + j);
    }
    for (; i + 4 <= m; i += 4) {
        int64_t j = 0;
        for (; j + 32 <= w; j += 32) gemm4_block(h + i * h_ld, h_ld, rt + j, k, w, y + i * y_ld + j, y_ld);
        for (int64_t r = i; j < w && r < i + 4; ++r) gemv_tail(h + r * h_ld, rt + j, k, w, w - j, y + r * y_ld + j);
    }
    for (; i < m; ++i) {
        if (w == RNN_PANEL) gemv_block(h + i * h_ld, rt, k, w, y + i * y_ld);
        else gemv_tail(h + i * h_ld, rt, k, w, w, y + i * y_ld);
    }
}

X86_CLONES void x86_rnn_gemm(const float *h, int64_t h_ld, int64_t m, const float *rt, int64_t k, int64_t hidden,
                             int64_t gates, float *y, int64_t y_ld) {
    const int wide = m >= 8 && __builtin_cpu_supports("avx512f");
    for (int64_t g = 0; g < gates; ++g)
        for (int64_t c = 0; c < hidden; c += RNN_PANEL) {
            const int64_t w = hidden - c < RNN_PANEL ? hidden - c : RNN_PANEL;
            gemm_panel(h, h_ld, m, rt + (g * hidden + c) * k, k, w, y + g * hidden + c, y_ld, wide);
        }
}

void x86_rnn_pack_rt(const float *r, int64_t gates, int64_t hidden, int64_t k, float *rt) {
    for (int64_t g = 0; g < gates; ++g)
        for (int64_t c = 0; c < hidden; c += RNN_PANEL) {
            const int64_t w = hidden - c < RNN_PANEL ? hidden - c : RNN_PANEL, n = g * hidden + c;
            float *p = rt + n * k;
            for (int64_t q = 0; q < k; ++q)
                for (int64_t j = 0; j < w; ++j) p[q * w + j] = r[(n + j) * k + q];
        }
}
