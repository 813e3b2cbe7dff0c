#include <math.h>

#include "mathops.h"
#include "vmath.h"

/* NAME: y = EXPR of x over n elements; fa..fc / da..dc and ia, ib are the op's attributes */
#define MAP(NAME, TX, TY, EXPR)                                                                  \
    X86_CLONES static void NAME(const void *px, void *py, int64_t n, const x86_math_params *P) { \
        const TX *X = (const TX *)px;                                                            \
        TY *Y = (TY *)py;                                                                        \
        const float fa = (float)P->a, fb = (float)P->b, fc = (float)P->c;                        \
        const double da = P->a, db = P->b, dc = P->c;                                            \
        const int64_t ia = P->ia, ib = P->ib;                                                    \
        (void)fa, (void)fb, (void)fc, (void)da, (void)db, (void)dc, (void)ia, (void)ib;          \
        for (int64_t i = 0; i < n; ++i) {                                                        \
            const TX x = X[i];                                                                   \
            Y[i] = (TY)(EXPR);                                                                   \
        }                                                                                        \
    }

/* -- float32: polynomials (vmath.h) and instructions ------------------------------------------------ */
MAP(erf_f32, float, float, vm_erf(x))
MAP(sqrt_f32, float, float, sqrtf(x))
MAP(reciprocal_f32, float, float, 1.0f / x)
MAP(exp_f32, float, float, vm_exp(x))
MAP(log_f32, float, float, vm_log(x))
MAP(abs_f32, float, float, fabsf(x))
MAP(neg_f32, float, float, -x)
MAP(floor_f32, float, float, floorf(x))
MAP(ceil_f32, float, float, ceilf(x))
MAP(round_f32, float, float, rintf(x)) /* the default rounding mode: halves to even */
MAP(sign_f32, float, float, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x * 0.0f)) /* nan stays nan */
MAP(asin_f32, float, float, vm_asin(x))
MAP(acos_f32, float, float, vm_acos(x))
MAP(atan_f32, float, float, vm_atan(x))
MAP(sinh_f32, float, float, vm_sinh(x))
MAP(cosh_f32, float, float, vm_cosh(x))
MAP(asinh_f32, float, float, vm_asinh(x))
MAP(acosh_f32, float, float, vm_acosh(x))
MAP(atanh_f32, float, float, vm_atanh(x))
MAP(softplus_f32, float, float, vm_softplus(x))
MAP(softsign_f32, float, float, x / (1.0f + fabsf(x)))
MAP(elu_f32, float, float, x < 0.0f ? fa * vm_expm1(x) : x)
MAP(selu_f32, float, float, x <= 0.0f ? fb * (fa * vm_expm1(x)) : fb * x) /* a: alpha, b: gamma */
MAP(celu_f32, float, float, x > 0.0f ? x : fa * vm_expm1(x / fa)) /* nan stays nan */
MAP(mish_f32, float, float, vm_mish(x))
/* the threshold and bias as double, as the reference compares and subtracts them */
MAP(thresholded_relu_f32, float, float, (double)x > da ? x : 0.0f)
MAP(shrink_f32, float, float, x < -db ? (double)x + da : (x > db ? (double)x - da : 0.0)) /* a: bias, b: lambd */
MAP(isnan_f32, float, uint8_t, x != x)
MAP(isinf_f32, float, uint8_t, (ib && x == INFINITY) | (ia && x == -INFINITY)) /* ia: negative, ib: positive */
MAP(clip_f32, float, float, (x < fa ? fa : x) > fb ? fb : (x < fa ? fa : x))

/* Cephes' reduction holds to |x| = 8192: a block with a larger or non-finite input runs on libm */
#define TRIG_BLOCK 256
#define TRIG(NAME, VEXPR, LIBM)                                                                  \
    X86_CLONES static void NAME(const void *px, void *py, int64_t n, const x86_math_params *P) { \
        const float *X = (const float *)px;                                                      \
        float *Y = (float *)py;                                                                  \
        (void)P;                                                                                 \
        for (int64_t i0 = 0; i0 < n; i0 += TRIG_BLOCK) {                                         \
            const int64_t m = n - i0 < TRIG_BLOCK ? n - i0 : TRIG_BLOCK;                         \
            const float *x = X + i0;                                                             \
            float *y = Y + i0;                                                                   \
            int far = 0;                                                                         \
            for (int64_t i = 0; i < m; ++i) far |= !(fabsf(x[i]) <= 8192.0f);                    \
            if (far) {                                                                           \
                for (int64_t i = 0; i < m; ++i) y[i] = LIBM(x[i]);                               \
            } else {                                                                             \
                for (int64_t i = 0; i < m; ++i) y[i] = VEXPR;                                    \
            }                                                                                    \
        }                                                                                        \
    }

TRIG(sin_f32, vm_sincos(x[i], 0), sinf)
TRIG(cos_f32, vm_sincos(x[i], 1), cosf)
TRIG(tan_f32, vm_sincos(x[i], 0) / vm_sincos(x[i], 1), tanf)

/* -- float64: libm, one element at a time ---------------------------------------------------------- */
static inline double softplus_f64(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

MAP(erf_f64, double, double, erf(x))
MAP(sqrt_f64, double, double, sqrt(x))
MAP(reciprocal_f64, double, double, 1.0 / x)
MAP(exp_f64, double, double, exp(x))
MAP(log_f64, double, double, log(x))
MAP(abs_f64, double, double, fabs(x))
MAP(neg_f64, double, double, -x)
MAP(floor_f64, double, double, floor(x))
MAP(ceil_f64, double, double, ceil(x))
MAP(round_f64, double, double, rint(x))
MAP(sign_f64, double, double, x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x * 0.0))
MAP(sin_f64, double, double, sin(x))
MAP(cos_f64, double, double, cos(x))
MAP(tan_f64, double, double, tan(x))
MAP(asin_f64, double, double, asin(x))
MAP(acos_f64, double, double, acos(x))
MAP(atan_f64, double, double, atan(x))
MAP(sinh_f64, double, double, sinh(x))
MAP(cosh_f64, double, double, cosh(x))
MAP(asinh_f64, double, double, asinh(x))
MAP(acosh_f64, double, double, acosh(x))
MAP(atanh_f64, double, double, atanh(x))
MAP(softplus_f64m, double, double, softplus_f64(x))
MAP(softsign_f64, double, double, x / (1.0 + fabs(x)))
MAP(elu_f64, double, double, x < 0.0 ? da * expm1(x) : x)
MAP(selu_f64, double, double, x <= 0.0 ? db * (da * expm1(x)) : db * x)
MAP(celu_f64, double, double, x > 0.0 ? x : da * expm1(x / da))
MAP(mish_f64, double, double, x * tanh(softplus_f64(x)))
MAP(thresholded_relu_f64, double, double, x > da ? x : 0.0)
MAP(shrink_f64, double, double, x < -db ? x + da : (x > db ? x - da : 0.0))
MAP(isnan_f64, double, uint8_t, x != x)
MAP(isinf_f64, double, uint8_t, (ib && x == INFINITY) | (ia && x == -INFINITY))
MAP(clip_f64, double, double, (x < da ? da : x) > db ? db : (x < da ? da : x))

static const x86_math_map_fn F32[XM_N_UNARY] = {
    [XM_ERF] = erf_f32, [XM_SQRT] = sqrt_f32, [XM_RECIPROCAL] = reciprocal_f32, [XM_EXP] = exp_f32,
    [XM_LOG] = log_f32, [XM_ABS] = abs_f32, [XM_NEG] = neg_f32, [XM_FLOOR] = floor_f32, [XM_CEIL] = ceil_f32,
    [XM_ROUND] = round_f32, [XM_SIGN] = sign_f32, [XM_SIN] = sin_f32, [XM_COS] = cos_f32, [XM_TAN] = tan_f32,
    [XM_ASIN] = asin_f32, [XM_ACOS] = acos_f32, [XM_ATAN] = atan_f32, [XM_SINH] = sinh_f32, [XM_COSH] = cosh_f32,
    [XM_ASINH] = asinh_f32, [XM_ACOSH] = acosh_f32, [XM_ATANH] = atanh_f32, [XM_SOFTPLUS] = softplus_f32,
    [XM_SOFTSIGN] = softsign_f32, [XM_ELU] = elu_f32, [XM_SELU] = selu_f32, [XM_CELU] = celu_f32,
    [XM_MISH] = mish_f32, [XM_THRESHOLDED_RELU] = thresholded_relu_f32, [XM_SHRINK] = shrink_f32,
    [XM_ISNAN] = isnan_f32, [XM_ISINF] = isinf_f32, [XM_CLIP] = clip_f32,
};

static const x86_math_map_fn F64[XM_N_UNARY] = {
    [XM_ERF] = erf_f64, [XM_SQRT] = sqrt_f64, [XM_RECIPROCAL] = reciprocal_f64, [XM_EXP] = exp_f64,
    [XM_LOG] = log_f64, [XM_ABS] = abs_f64, [XM_NEG] = neg_f64, [XM_FLOOR] = floor_f64, [XM_CEIL] = ceil_f64,
    [XM_ROUND] = round_f64, [XM_SIGN] = sign_f64, [XM_SIN] = sin_f64, [XM_COS] = cos_f64, [XM_TAN] = tan_f64,
    [XM_ASIN] = asin_f64, [XM_ACOS] = acos_f64, [XM_ATAN] = atan_f64, [XM_SINH] = sinh_f64, [XM_COSH] = cosh_f64,
    [XM_ASINH] = asinh_f64, [XM_ACOSH] = acosh_f64, [XM_ATANH] = atanh_f64, [XM_SOFTPLUS] = softplus_f64m,
    [XM_SOFTSIGN] = softsign_f64, [XM_ELU] = elu_f64, [XM_SELU] = selu_f64, [XM_CELU] = celu_f64,
    [XM_MISH] = mish_f64, [XM_THRESHOLDED_RELU] = thresholded_relu_f64, [XM_SHRINK] = shrink_f64,
    [XM_ISNAN] = isnan_f64, [XM_ISINF] = isinf_f64, [XM_CLIP] = clip_f64,
};

/* -- integers: Abs, Neg, Sign, BitwiseNot, Clip (bounds already within the dtype); bool: Not ------- */
#define INT_MAPS(S, T, U)                                                            \
    MAP(abs_##S, T, T, x < 0 ? (T)(0 - (U)x) : x)                                    \
    MAP(neg_##S, T, T, (T)(0 - (U)x))                                                \
    MAP(sign_##S, T, T, (x > 0) - (x < 0))                                           \
    MAP(bitwise_not_##S, T, T, (T)~(U)x)                                             \
    MAP(clip_##S, T, T, (x < (T)ia ? (T)ia : x) > (T)ib ? (T)ib : (x < (T)ia ? (T)ia : x)) \
    static const x86_math_map_fn S##_MAPS[XM_N_UNARY] = {                            \
        [XM_ABS] = abs_##S, [XM_NEG] = neg_##S, [XM_SIGN] = sign_##S,                \
        [XM_BITWISE_NOT] = bitwise_not_##S, [XM_CLIP] = clip_##S};

INT_MAPS(i8, int8_t, uint8_t)
INT_MAPS(i16, int16_t, uint16_t)
INT_MAPS(i32, int32_t, uint32_t)
INT_MAPS(i64, int64_t, uint64_t)
INT_MAPS(u8, uint8_t, uint8_t)
INT_MAPS(u16, uint16_t, uint16_t)
INT_MAPS(u32, uint32_t, uint32_t)
INT_MAPS(u64, uint64_t, uint64_t)
MAP(not_bool, uint8_t, uint8_t, !x)

x86_math_map_fn x86_math_unary_kernel(int kind, int dtype) {
    if (kind < 0 || kind >= XM_N_UNARY) return NULL;
    switch (dtype) {
    case MNN_FLOAT32: return F32[kind];
    case MNN_FLOAT64: return F64[kind];
    case MNN_INT8: return i8_MAPS[kind];
    case MNN_INT16: return i16_MAPS[kind];
    case MNN_INT32: return i32_MAPS[kind];
    case MNN_INT64: return i64_MAPS[kind];
    case MNN_UINT8: return u8_MAPS[kind];
    case MNN_UINT16: return u16_MAPS[kind];
    case MNN_UINT32: return u32_MAPS[kind];
    case MNN_UINT64: return u64_MAPS[kind];
    case MNN_BOOL: return kind == XM_NOT ? not_bool : NULL;
    default: return NULL;
    }
}

typedef struct {
    const x86_math_unary_state *s;
    const char *x;
    char *y;
} map_job;

static void map_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const map_job *j = (const map_job *)ctx;
    (void)worker;
    j->s->map(j->x + lo * j->s->size_x, j->y + lo * j->s->size_y, hi - lo, &j->s->p);
}

int x86_math_unary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_math_unary_state *s = (x86_math_unary_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t n = mnn_tensor_numel(&outs[0]);
    if (n == 0) return 0;
    map_job j = {s, (const char *)ins[0].data, (char *)outs[0].data};
    x86_pool->ranges(s->op.threads, n, X86_MATH_GRAIN, map_range, &j);
    return 0;
}
