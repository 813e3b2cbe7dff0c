#include <math.h>

#include "mathops.h"

/* NAME: y = EXPR of a and b along a row; the four stride cases are separate loops so that each
 * vectorizes (a broadcast side is read once) */
#define ROW(NAME, TA, TB, TY, EXPR)                                                                      \
    X86_CLONES static void NAME(const void *pa, int64_t sa, const void *pb, int64_t sb, void *py, int64_t n, \
                                const x86_math_params *P) {                                              \
        const TA *A = (const TA *)pa;                                                                    \
        const TB *B = (const TB *)pb;                                                                    \
        TY *Y = (TY *)py;                                                                                \
        (void)P;                                                                                         \
        if (sa && sb) {                                                                                  \
            for (int64_t i = 0; i < n; ++i) {                                                            \
                const TA a = A[i];                                                                       \
                const TB b __attribute__((unused)) = B[i];                                                                       \
                Y[i] = (TY)(EXPR);                                                                       \
            }                                                                                            \
        } else if (sa) {                                                                                 \
            const TB b __attribute__((unused)) = B[0];                                                                           \
            for (int64_t i = 0; i < n; ++i) {                                                            \
                const TA a = A[i];                                                                       \
                Y[i] = (TY)(EXPR);                                                                       \
            }                                                                                            \
        } else if (sb) {                                                                                 \
            const TA a = A[0];                                                                           \
            for (int64_t i = 0; i < n; ++i) {                                                            \
                const TB b __attribute__((unused)) = B[i];                                                                       \
                Y[i] = (TY)(EXPR);                                                                       \
            }                                                                                            \
        } else {                                                                                         \
            const TA a = A[0];                                                                           \
            const TB b __attribute__((unused)) = B[0];                                                                           \
            const TY v = (TY)(EXPR);                                                                     \
            for (int64_t i = 0; i < n; ++i) Y[i] = v;                                                    \
        }                                                                                                \
    }

/* integer division and remainder as the reference: truncated quotient, the divisor's sign for Mod
 * (fmod=0), the dividend's for fmod=1; 0 where the divisor is 0 and x / -1 wrapping (both trap in C) */
#define INT_DIVISION(S, T, U)                                                                        \
    static inline T div_##S(T a, T b) { return b == 0 ? 0 : ((T)-1 < 0 && b == (T)-1 ? (T)(0 - (U)a) : a / b); } \
    static inline T fmod_##S(T a, T b) { return b == 0 || ((T)-1 < 0 && b == (T)-1) ? 0 : a % b; }   \
    static inline T mod_##S(T a, T b) {                                                              \
        const T r = fmod_##S(a, b);                                                                  \
        return r != 0 && ((r < 0) != (b < 0)) ? (T)(r + b) : r;                                      \
    }

/* a shift by the width or more (or by a negative amount, as unsigned) gives 0, or -1 right of a
 * negative value, as numpy's shifts */
#define SHIFTS(S, T, U)                                                                                     \
    static inline T shl_##S(T a, T b) { return (U)b < sizeof(T) * 8 ? (T)((U)a << (U)b) : 0; }           \
    static inline T shr_##S(T a, T b) { return (U)b < sizeof(T) * 8 ? (T)(a >> (U)b) : (a < 0 ? (T)-1 : 0); }

/* a^b of integers by squaring, wrapping as numpy; a negative b as C's 1 / a^-b */
#define INT_POW(S, T, U)                                                         \
    static inline T ipow_##S(T a, T b) {                                         \
        if (b < 0) return a == 1 ? 1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : 1) : 0); \
        U r = 1, x = (U)a;                                                       \
        for (U e = (U)b; e; e >>= 1, x *= x)                                     \
            if (e & 1) r *= x;                                                   \
        return (T)r;                                                             \
    }

/* the float remainder of numpy's mod: the divisor's sign, 0 signed as the divisor */
static inline float pymod_f32(float a, float b) {
    float m = fmodf(a, b);
    if (b == 0.0f) return m;
    return m != 0.0f ? ((b < 0) != (m < 0) ? m + b : m) : copysignf(0.0f, b);
}
static inline double pymod_f64(double a, double b) {
    double m = fmod(a, b);
    if (b == 0.0) return m;
    return m != 0.0 ? ((b < 0) != (m < 0) ? m + b : m) : copysign(0.0, b);
}

/* the rows every numeric dtype has: arithmetic, comparisons, PRelu */
#define NUMERIC_ROWS(S, T)                                         \
    ROW(max_##S, T, T, T, (a > b || a != a) ? a : b)               \
    ROW(min_##S, T, T, T, (a < b || a != a) ? a : b)               \
    ROW(equal_##S, T, T, uint8_t, a == b)                          \
    ROW(less_##S, T, T, uint8_t, a < b)                            \
    ROW(greater_##S, T, T, uint8_t, a > b)                         \
    ROW(less_equal_##S, T, T, uint8_t, a <= b)                     \
    ROW(greater_equal_##S, T, T, uint8_t, a >= b)                  \
    ROW(prelu_##S, T, T, T, a < 0 ? (T)(a * b) : a)

#define INT_ROWS(S, T, U)                                              \
    INT_DIVISION(S, T, U)                                              \
    SHIFTS(S, T, U)                                                    \
    INT_POW(S, T, U)                                                   \
    NUMERIC_ROWS(S, T)                                                 \
    ROW(add_##S, T, T, T, (U)a + (U)b)                                 \
    ROW(sub_##S, T, T, T, (U)a - (U)b)                                 \
    ROW(mul_##S, T, T, T, (U)a * (U)b)                                 \
    ROW(div_##S##r, T, T, T, div_##S(a, b))                            \
    ROW(mod_##S##r, T, T, T, mod_##S(a, b))                            \
    ROW(fmod_##S##r, T, T, T, fmod_##S(a, b))                          \
    ROW(pow_##S, T, T, T, ipow_##S(a, b))                              \
    ROW(band_##S, T, T, T, a & b)                                      \
    ROW(bor_##S, T, T, T, a | b)                                       \
    ROW(bxor_##S, T, T, T, a ^ b)                                      \
    ROW(shl_##S##r, T, T, T, shl_##S(a, b))                            \
    ROW(shr_##S##r, T, T, T, shr_##S(a, b))                            \
    static const x86_math_row_fn S##_ROWS[XM_N_BINARY] = {             \
        [XM_ADD] = add_##S, [XM_SUB] = sub_##S, [XM_MUL] = mul_##S,    \
        [XM_DIV] = div_##S##r, [XM_MAX] = max_##S, [XM_MIN] = min_##S, \
        [XM_MOD] = mod_##S##r, [XM_FMOD] = fmod_##S##r,                \
        [XM_POW] = pow_##S, [XM_PRELU] = prelu_##S,                    \
        [XM_EQUAL] = equal_##S, [XM_LESS] = less_##S,                  \
        [XM_GREATER] = greater_##S, [XM_LESS_EQUAL] = less_equal_##S,  \
        [XM_GREATER_EQUAL] = greater_equal_##S,                        \
        [XM_BITWISE_AND] = band_##S, [XM_BITWISE_OR] = bor_##S,        \
        [XM_BITWISE_XOR] = bxor_##S, [XM_SHIFT_LEFT] = shl_##S##r,     \
        [XM_SHIFT_RIGHT] = shr_##S##r};

INT_ROWS(i8, int8_t, uint8_t)
INT_ROWS(i16, int16_t, uint16_t)
INT_ROWS(i32, int32_t, uint32_t)
INT_ROWS(i64, int64_t, uint64_t)
INT_ROWS(u8, uint8_t, uint8_t)
INT_ROWS(u16, uint16_t, uint16_t)
INT_ROWS(u32, uint32_t, uint32_t)
INT_ROWS(u64, uint64_t, uint64_t)

/* floats: Add..Min of float32 are _x86's (ops_eltwise.py) */
NUMERIC_ROWS(f32, float)
NUMERIC_ROWS(f64, double)
ROW(add_f64, double, double, double, a + b)
ROW(sub_f64, double, double, double, a - b)
ROW(mul_f64, double, double, double, a * b)
ROW(div_f64, double, double, double, a / b)
ROW(mod_f32, float, float, float, pymod_f32(a, b))
ROW(mod_f64, double, double, double, pymod_f64(a, b))
ROW(fmod_f32, float, float, float, fmodf(a, b))
ROW(fmod_f64, double, double, double, fmod(a, b))
ROW(pow_f32, float, float, float, powf(a, b))
ROW(pow_f64, double, double, double, pow(a, b))

static const x86_math_row_fn f32_ROWS[XM_N_BINARY] = {
    [XM_MAX] = max_f32, [XM_MIN] = min_f32, [XM_MOD] = mod_f32, [XM_FMOD] = fmod_f32, [XM_POW] = pow_f32,
    [XM_PRELU] = prelu_f32, [XM_EQUAL] = equal_f32, [XM_LESS] = less_f32, [XM_GREATER] = greater_f32,
    [XM_LESS_EQUAL] = less_equal_f32, [XM_GREATER_EQUAL] = greater_equal_f32};
static const x86_math_row_fn f64_ROWS[XM_N_BINARY] = {
    [XM_ADD] = add_f64, [XM_SUB] = sub_f64, [XM_MUL] = mul_f64, [XM_DIV] = div_f64, [XM_MAX] = max_f64,
    [XM_MIN] = min_f64, [XM_MOD] = mod_f64, [XM_FMOD] = fmod_f64, [XM_POW] = pow_f64, [XM_PRELU] = prelu_f64,
    [XM_EQUAL] = equal_f64, [XM_LESS] = less_f64, [XM_GREATER] = greater_f64, [XM_LESS_EQUAL] = less_equal_f64,
    [XM_GREATER_EQUAL] = greater_equal_f64};

/* bool: logic and equality (0 or 1 bytes, any nonzero byte read as true) */
ROW(and_bool, uint8_t, uint8_t, uint8_t, (a != 0) & (b != 0))
ROW(or_bool, uint8_t, uint8_t, uint8_t, (a != 0) | (b != 0))
ROW(xor_bool, uint8_t, uint8_t, uint8_t, (a != 0) ^ (b != 0))
ROW(equal_bool, uint8_t, uint8_t, uint8_t, (a != 0) == (b != 0))
static const x86_math_row_fn bool_ROWS[XM_N_BINARY] = {
    [XM_AND] = and_bool, [XM_OR] = or_bool, [XM_XOR] = xor_bool, [XM_EQUAL] = equal_bool};

static const x86_math_row_fn *rows_of(int dtype) {
    switch (dtype) {
    case MNN_FLOAT32: return f32_ROWS;
    case MNN_FLOAT64: return f64_ROWS;
    case MNN_INT8: return i8_ROWS;
    case MNN_INT16: return i16_ROWS;
    case MNN_INT32: return i32_ROWS;
    case MNN_INT64: return i64_ROWS;
    case MNN_UINT8: return u8_ROWS;
    case MNN_UINT16: return u16_ROWS;
    case MNN_UINT32: return u32_ROWS;
    case MNN_UINT64: return u64_ROWS;
    case MNN_BOOL: return bool_ROWS;
    default: return NULL;
    }
}

x86_math_row_fn x86_math_binary_kernel(int kind, int dtype_a, int dtype_b) {
    if (kind < 0 || kind >= XM_N_BINARY) return NULL;
    const x86_math_row_fn *rows = dtype_a == dtype_b ? rows_of(dtype_a) : NULL;
    return rows ? rows[kind] : NULL;
}

/* -- Pow of float32 by one exponent of 2, 3, 0.5 or 1: products and a square root ------------------ */
ROW(square_f32, float, float, float, a * a)
ROW(cube_f32, float, float, float, a * a * a)
ROW(sqrt_f32, float, float, float, sqrtf(a))
ROW(copy_f32, float, float, float, a)

static x86_math_row_fn pow_fast(const x86_math_binary_state *s, const mnn_tensor *exponent) {
    if (!s->pow_f32 || mnn_tensor_numel(exponent) != 1) return s->row;
    const float e = *(const float *)exponent->data;
    return e == 2.0f ? square_f32 : e == 3.0f ? cube_f32 : e == 0.5f ? sqrt_f32 : e == 1.0f ? copy_f32 : s->row;
}

/* -- the walk over the collapsed dims ---------------------------------------------------------------- */
typedef struct {
    const x86_math_binary_state *s;
    x86_math_row_fn row;
    const char *a, *b;
    char *y;
} walk_job;

/* elements [lo, hi) of the output: rows of the innermost dim, the outer index kept as an odometer */
static void walk_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const walk_job *j = (const walk_job *)ctx;
    const x86_math_binary_state *s = j->s;
    const int nd = s->ndim;
    const int64_t inner = s->dims[nd - 1], ia = s->sa[nd - 1], ib = s->sb[nd - 1];
    int64_t idx[8] = {0}, oa = 0, ob = 0, rest = lo / inner, c = lo % inner;
    (void)worker;
    for (int d = nd - 2; d >= 0; --d) {
        idx[d] = rest % s->dims[d];
        rest /= s->dims[d];
        oa += idx[d] * s->sa[d];
        ob += idx[d] * s->sb[d];
    }
    for (int64_t p = lo; p < hi; c = 0) {
        const int64_t n = inner - c < hi - p ? inner - c : hi - p;
        j->row(j->a + (oa + c * ia) * s->size_a, ia, j->b + (ob + c * ib) * s->size_b, ib, j->y + p * s->size_y, n,
               &s->p);
        p += n;
        for (int d = nd - 2; d >= 0; --d) {
            oa += s->sa[d];
            ob += s->sb[d];
            if (++idx[d] < s->dims[d]) break;
            oa -= s->dims[d] * s->sa[d];
            ob -= s->dims[d] * s->sb[d];
            idx[d] = 0;
        }
    }
}

int x86_math_binary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_math_binary_state *s = (x86_math_binary_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t n = mnn_tensor_numel(&outs[0]);
    if (n == 0) return 0;
    walk_job j = {s, pow_fast(s, &ins[1]), (const char *)ins[0].data, (const char *)ins[1].data,
                  (char *)outs[0].data};
    x86_pool->ranges(s->op.threads, n, X86_MATH_GRAIN, walk_range, &j);
    return 0;
}
