/* Element-wise math of mnn-arm beyond the fused activations (armv8-a): unary float ops (NEON where
 * one instruction does it: sqrt, neg, abs, reciprocal, floor, ceil; erf by vmath.h's v_erf; libm for the
 * other transcendental ones), Not and IsNaN, broadcasting Pow / comparisons / logic, and Cast between
 * numeric dtypes. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "move.h"
#include "parallel.h"
#include "vmath.h"

static float softplus(float v) { return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v)); }

static void unary_f32(int kind, const float *x, float *y, int64_t n, float alpha, float gamma) {
    int64_t i = 0;
    switch (kind) {
    case ARM_MATH_SQRT: for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vsqrtq_f32(vld1q_f32(x + i))); break;
    case ARM_MATH_NEG: for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vnegq_f32(vld1q_f32(x + i))); break;
    case ARM_MATH_ABS: for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vabsq_f32(vld1q_f32(x + i))); break;
    case ARM_MATH_RECIPROCAL:
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vdivq_f32(vdupq_n_f32(1.0f), vld1q_f32(x + i)));
        break;
    case ARM_MATH_FLOOR: for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vrndmq_f32(vld1q_f32(x + i))); break;
    case ARM_MATH_CEIL: for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vrndpq_f32(vld1q_f32(x + i))); break;
    case ARM_MATH_ROUND: for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vrndnq_f32(vld1q_f32(x + i))); break;
    case ARM_MATH_ERF: for (; i + 4 <= n; i += 4) vst1q_f32(y + i, v_erf(vld1q_f32(x + i))); break;
    default: break;
    }
    for (; i < n; ++i) {
        const float v = x[i];
        float r;
        switch (kind) {
        case ARM_MATH_EXP: r = expf(v); break;
        case ARM_MATH_LOG: r = logf(v); break;
        case ARM_MATH_SQRT: r = sqrtf(v); break;
        case ARM_MATH_NEG: r = -v; break;
        case ARM_MATH_ABS: r = fabsf(v); break;
        case ARM_MATH_RECIPROCAL: r = 1.0f / v; break;
        case ARM_MATH_ERF: r = erff(v); break;
        case ARM_MATH_FLOOR: r = floorf(v); break;
        case ARM_MATH_CEIL: r = ceilf(v); break;
        case ARM_MATH_ROUND: r = nearbyintf(v); break; /* halves to even (the default rounding mode) */
        case ARM_MATH_SIN: r = sinf(v); break;
        case ARM_MATH_COS: r = cosf(v); break;
        case ARM_MATH_SOFTPLUS: r = softplus(v); break;
        case ARM_MATH_ELU: r = v >= 0.0f ? v : alpha * expm1f(v); break;
        case ARM_MATH_SELU: r = gamma * (v > 0.0f ? v : alpha * expm1f(v)); break;
        case ARM_MATH_MISH: r = v * tanhf(softplus(v)); break;
        default: r = v;
        }
        y[i] = r;
    }
}

typedef struct math_job {
    const arm_math_state *s;
    const float *x;
    float *y;
} math_job;

static void math_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const math_job *j = (const math_job *)ctx;
    unary_f32(j->s->kind, j->x + b, j->y + b, end - b, j->s->alpha, j->s->gamma);
}

int arm_math_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_math_state *s = (const arm_math_state *)state;
    const int64_t n = mnn_tensor_numel(&ins[0]);
    const void *x = arm_data(&ins[0]);
    void *y = arm_data(&outs[0]);
    if (s->kind == ARM_MATH_NOT) {
        const uint8_t *p = (const uint8_t *)x;
        uint8_t *q = (uint8_t *)y;
        for (int64_t i = 0; i < n; ++i) q[i] = !p[i];
    } else if (s->kind == ARM_MATH_ISNAN) {
        const float *p = (const float *)x;
        uint8_t *q = (uint8_t *)y;
        for (int64_t i = 0; i < n; ++i) q[i] = p[i] != p[i];
    } else {
        /* runs of 256 (a multiple of the vector width: each element meets the code it meets on one thread) */
        math_job j = {s, (const float *)x, (float *)y};
        const int64_t most = n / (8 * 1024);
        arm_parallel(most < 2 ? 1 : (most < arm_threads(s) ? (int)most : arm_threads(s)), n, 256, math_part, &j);
    }
    return 0;
}

/* integer arithmetic, wrapping like numpy (done in unsigned, where overflow is defined) */
#define INT_ARITH(T, U)                                                                                        \
    do {                                                                                                       \
        const T p = *(const T *)a, q = *(const T *)b;                                                          \
        T r;                                                                                                   \
        switch (kind) {                                                                                        \
        case ARM_BIN_IADD: r = (T)((U)p + (U)q); break;                                                        \
        case ARM_BIN_ISUB: r = (T)((U)p - (U)q); break;                                                        \
        case ARM_BIN_IMUL: r = (T)((U)p * (U)q); break;                                                        \
        case ARM_BIN_IMAX: r = p > q ? p : q; break;                                                           \
        default: r = p < q ? p : q; break;                                                                     \
        }                                                                                                      \
        *(T *)y = r;                                                                                           \
    } while (0)

/* one element of a broadcasting binary op */
static inline void bin1(int kind, int32_t dtype, const char *a, const char *b, char *y) {
    if (kind >= ARM_BIN_IADD) {
        if (dtype == ARM_DT_I32) INT_ARITH(int32_t, uint32_t);
        else INT_ARITH(int64_t, uint64_t);
        return;
    }
    if (kind == ARM_BIN_POW) {
        *(float *)y = powf(*(const float *)a, *(const float *)b);
        return;
    }
    if (kind == ARM_BIN_AND || kind == ARM_BIN_OR || kind == ARM_BIN_XOR) {
        const int p = *(const uint8_t *)a != 0, q = *(const uint8_t *)b != 0;
        *(uint8_t *)y = (uint8_t)(kind == ARM_BIN_AND ? p & q : kind == ARM_BIN_OR ? p | q : p ^ q);
        return;
    }
    double p, q; /* comparisons: float32, int32 and int64 operands are all exact in double up to 2^53 */
    if (dtype == ARM_DT_F32) p = *(const float *)a, q = *(const float *)b;
    else if (dtype == ARM_DT_I32) p = *(const int32_t *)a, q = *(const int32_t *)b;
    else {
        const int64_t u = *(const int64_t *)a, v = *(const int64_t *)b;
        *(uint8_t *)y = (uint8_t)(kind == ARM_BIN_EQUAL ? u == v : kind == ARM_BIN_LESS ? u < v
                                  : kind == ARM_BIN_GREATER ? u > v : kind == ARM_BIN_LESS_EQ ? u <= v : u >= v);
        return;
    }
    *(uint8_t *)y = (uint8_t)(kind == ARM_BIN_EQUAL ? p == q : kind == ARM_BIN_LESS ? p < q
                              : kind == ARM_BIN_GREATER ? p > q : kind == ARM_BIN_LESS_EQ ? p <= q : p >= q);
}

static void square_row(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        vst1q_f32(y + i, vmulq_f32(v, v));
    }
    for (; i < n; ++i) y[i] = x[i] * x[i];
}

int arm_bin2_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_bin2_state *s = (const arm_bin2_state *)state;
    const char *a = (const char *)arm_data(&ins[0]), *b = (const char *)arm_data(&ins[1]);
    char *y = (char *)arm_data(&outs[0]);
    const int nd = s->ndim, ie = s->in_elem, oe = s->out_elem;
    int64_t outer = 1, idx[MNN_MAX_DIMS] = {0}, oa = 0, ob = 0;
    for (int d = 0; d < nd - 1; ++d) outer *= s->dims[d];
    const int64_t n = s->dims[nd - 1], as = s->sa[nd - 1], bs = s->sb[nd - 1];
    for (int64_t o = 0; o < outer; ++o) {
        if (s->kind == ARM_BIN_POW && as == 1 && bs == 0 && *(const float *)(b + ob * ie) == 2.0f) {
            square_row((const float *)(a + oa * ie), (float *)y, n); /* x^2 (a power spectrum's): no powf */
        } else {
            for (int64_t i = 0; i < n; ++i)
                bin1(s->kind, s->dtype, a + (oa + i * as) * ie, b + (ob + i * bs) * ie, y + i * oe);
        }
        y += n * oe;
        for (int d = nd - 2; d >= 0; --d) {
            oa += s->sa[d]; ob += s->sb[d];
            if (++idx[d] < s->dims[d]) break;
            oa -= s->sa[d] * s->dims[d]; ob -= s->sb[d] * s->dims[d];
            idx[d] = 0;
        }
    }
    return 0;
}

/* Cast: every value through double (exact for the dtypes here up to 2^53), then to the target with C's
 * conversion (truncation toward zero, as numpy's astype; bool: nonzero) */
static inline double load_as_double(int32_t dt, const char *p, int64_t i) {
    switch (dt) {
    case ARM_DT_F32: return ((const float *)p)[i];
    case ARM_DT_F64: return ((const double *)p)[i];
    case ARM_DT_I32: return ((const int32_t *)p)[i];
    case ARM_DT_I64: return (double)((const int64_t *)p)[i];
    case ARM_DT_I8: return ((const int8_t *)p)[i];
    case ARM_DT_U8: case ARM_DT_BOOL: return ((const uint8_t *)p)[i];
    case ARM_DT_I16: return ((const int16_t *)p)[i];
    default: return 0.0;
    }
}

int arm_cast_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_cast_state *s = (const arm_cast_state *)state;
    const char *x = (const char *)arm_data(&ins[0]);
    char *y = (char *)arm_data(&outs[0]);
    const int64_t n = mnn_tensor_numel(&ins[0]);
    int64_t i = 0;
    if (s->from == ARM_DT_I64 && s->to == ARM_DT_I64) {
        memcpy(y, x, (size_t)n * 8);
        return 0;
    }
    if (s->from == ARM_DT_I64) { /* int64 -> other: not through double (exact beyond 2^53) */
        const int64_t *p = (const int64_t *)x;
        for (; i < n; ++i) {
            switch (s->to) {
            case ARM_DT_F32: ((float *)y)[i] = (float)p[i]; break;
            case ARM_DT_F64: ((double *)y)[i] = (double)p[i]; break;
            case ARM_DT_I32: ((int32_t *)y)[i] = (int32_t)p[i]; break;
            case ARM_DT_I16: ((int16_t *)y)[i] = (int16_t)p[i]; break;
            case ARM_DT_I8: ((int8_t *)y)[i] = (int8_t)p[i]; break;
            case ARM_DT_U8: ((uint8_t *)y)[i] = (uint8_t)p[i]; break;
            case ARM_DT_BOOL: ((uint8_t *)y)[i] = p[i] != 0; break;
            }
        }
        return 0;
    }
    if (s->from == ARM_DT_F32 && s->to == ARM_DT_I32) {
        for (; i + 4 <= n; i += 4) vst1q_s32((int32_t *)y + i, vcvtq_s32_f32(vld1q_f32((const float *)x + i)));
    } else if (s->from == ARM_DT_I32 && s->to == ARM_DT_F32) {
        for (; i + 4 <= n; i += 4) vst1q_f32((float *)y + i, vcvtq_f32_s32(vld1q_s32((const int32_t *)x + i)));
    }
    for (; i < n; ++i) {
        const double v = load_as_double(s->from, x, i);
        switch (s->to) {
        case ARM_DT_F32: ((float *)y)[i] = (float)v; break;
        case ARM_DT_F64: ((double *)y)[i] = v; break;
        case ARM_DT_I32: ((int32_t *)y)[i] = (int32_t)v; break;
        case ARM_DT_I64: ((int64_t *)y)[i] = (int64_t)v; break;
        case ARM_DT_I16: ((int16_t *)y)[i] = (int16_t)(int64_t)v; break;
        case ARM_DT_I8: ((int8_t *)y)[i] = (int8_t)(int64_t)v; break;
        case ARM_DT_U8: ((uint8_t *)y)[i] = (uint8_t)(int64_t)v; break;
        case ARM_DT_BOOL: ((uint8_t *)y)[i] = v != 0.0; break;
        }
    }
    return 0;
}

int arm_bn_rt_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_bn_rt_state *s = (const arm_bn_rt_state *)state;
    const float *g = (const float *)arm_data(&ins[1]), *b = (const float *)arm_data(&ins[2]);
    const float *m = (const float *)arm_data(&ins[3]), *v = (const float *)arm_data(&ins[4]);
    for (int64_t c = 0; c < s->C; ++c) { /* in double, as the constant case folds them at prepare */
        const double sc = (double)g[c] / sqrt((double)v[c] + (double)s->eps);
        s->scale[c] = (float)sc;
        s->shift[c] = (float)((double)b[c] - (double)m[c] * sc);
    }
    arm_channel_affine((const float *)arm_data(&ins[0]), s->scale, s->shift, (float *)arm_data(&outs[0]), s->outer,
                       s->C, s->inner);
    return 0;
}

/* n elements of e bytes, each a copy of *value: 16 bytes a store where e divides 16 */
static void fill_elems(char *y, int64_t n, int e, const char *value) {
    int64_t i = 0;
    if (16 % e == 0) {
        uint8_t pattern[16];
        for (int b = 0; b < 16; b += e) memcpy(pattern + b, value, (size_t)e);
        const uint8x16_t v = vld1q_u8(pattern);
        const int64_t per = 16 / e;
        for (; i + per <= n; i += per) vst1q_u8((uint8_t *)y + i * e, v);
    }
    for (; i < n; ++i) memcpy(y + i * e, value, (size_t)e);
}

int arm_onehot_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_onehot_state *s = (const arm_onehot_state *)state;
    const char *idx = (const char *)arm_data(&ins[0]), *values = (const char *)arm_data(&ins[1]);
    char *y = (char *)arm_data(&outs[0]);
    const int e = s->elem;
    fill_elems(y, s->outer * s->depth * s->inner, e, values); /* off everywhere, then on where an index says */
    for (int64_t o = 0; o < s->outer; ++o)
        for (int64_t i = 0; i < s->inner; ++i) {
            const int64_t at = o * s->inner + i;
            int64_t v = s->idx_dtype == ARM_DT_I64 ? ((const int64_t *)idx)[at] : (int64_t)load_as_double(s->idx_dtype, idx, at);
            if (v < 0) v += s->depth;
            if (v >= 0 && v < s->depth) memcpy(y + ((o * s->depth + v) * s->inner + i) * e, values + e, (size_t)e);
        }
    return 0;
}

int arm_scaler_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_ml_state *s = (const arm_ml_state *)state;
    const char *x = (const char *)arm_data(&ins[0]);
    float *y = (float *)arm_data(&outs[0]);
    const int64_t n = mnn_tensor_numel(&ins[0]);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t f = i % s->features;
        if (s->dtype == ARM_DT_F64) {
            y[i] = (float)((((const double *)x)[i] - s->offset[f]) * s->scale[f]);
        } else { /* float32 arithmetic on the float32 value, as the reference */
            const float v = s->dtype == ARM_DT_I64 ? (float)((const int64_t *)x)[i] : (float)load_as_double(s->dtype, x, i);
            y[i] = (v - (float)s->offset[f]) * (float)s->scale[f];
        }
    }
    return 0;
}

int arm_normalizer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_ml_state *s = (const arm_ml_state *)state;
    const float *x = (const float *)arm_data(&ins[0]);
    float *y = (float *)arm_data(&outs[0]);
    const int64_t F = s->features, rows = F ? mnn_tensor_numel(&ins[0]) / F : 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float *p = x + r * F;
        float *q = y + r * F;
        float d = s->kind == 0 ? -INFINITY : 0.0f;
        for (int64_t j = 0; j < F; ++j)
            d = s->kind == 0 ? (p[j] > d ? p[j] : d) : d + (s->kind == 1 ? fabsf(p[j]) : p[j] * p[j]);
        for (int64_t j = 0; j < F; ++j) {
            if (s->kind == 2)
                q[j] = d == 0.0f ? p[j] : sqrtf(p[j] * p[j] / d) * (p[j] < 0.0f ? -1.0f : 1.0f);
            else
                q[j] = p[j] / (d == 0.0f ? 1.0f : d);
        }
    }
    return 0;
}
