/* Element-wise ops: binary arithmetic with broadcasting, comparisons, Where,
 * unary math and activations. One work-item per output element. */

inline float binary_op(float a, float b, int op) {
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return pow(a, b);
    case 5: return fmax(a, b);
    case 6: return fmin(a, b);
    case 7: return a < 0.0f ? a * b : a; /* PRelu, b the slope */
    default: return 0.0f;
    }
}

__kernel void binary_same(__global const float *a, int ao, __global const float *b, int bo,
                          __global float *y, int yo, int n, int op) {
    int i = get_global_id(0);
    if (i >= n) return;
    y[yo + i] = binary_op(a[ao + i], b[bo + i], op);
}

__kernel void binary_bcast(__global const float *a, int ao, __global const float *b, int bo,
                           __global float *y, int yo, int n, int op, int ndim, int8 shape, int8 as, int8 bs) {
    int i = get_global_id(0);
    if (i >= n) return;
    int ai, bi;
    strided_offsets2(i, ndim, shape, as, bs, &ai, &bi);
    y[yo + i] = binary_op(a[ao + ai], b[bo + bi], op);
}

/* integer a (op) b with broadcasting, wrapping as C does: 0 add, 1 sub, 2 mul, 3 div (truncating; by
 * zero: 0), 5 max, 6 min (ops_eltwise.INT_OPS) */
#define IBINARY_KERNEL(T, W)                                                                                \
    __kernel void ibinary_bcast_##W(__global const T *a, int ao, __global const T *b, int bo, __global T *y, \
                                    int yo, int n, int op, int ndim, int8 shape, int8 as, int8 bs) {        \
        int i = get_global_id(0);                                                                          \
        if (i >= n) return;                                                                                \
        int ai, bi;                                                                                        \
        strided_offsets2(i, ndim, shape, as, bs, &ai, &bi);                                                \
        T x = a[ao + ai], z = b[bo + bi];                                                                  \
        T r = op == 0 ? x + z : op == 1 ? x - z : op == 2 ? x * z : op == 5 ? max(x, z) : min(x, z);       \
        if (op == 3) r = z == 0 ? 0 : x / z;                                                               \
        y[yo + i] = r;                                                                                     \
    }
IBINARY_KERNEL(int, i32)
IBINARY_KERNEL(long, i64)

/* comparisons of float (_f32), int32 (_i32) and int64 (_i64) operands: op 0 ==, 1 <, 2 >, 3 <=, 4 >= */
#define COMPARE_KERNEL(T, S)                                                                               \
    __kernel void compare_bcast_##S(__global const T *a, int ao, __global const T *b, int bo,              \
                                    __global uchar *y, int yo, int n, int op, int ndim, int8 shape,        \
                                    int8 as, int8 bs) {                                                    \
        int i = get_global_id(0);                                                                          \
        if (i >= n) return;                                                                                \
        int ai, bi;                                                                                        \
        strided_offsets2(i, ndim, shape, as, bs, &ai, &bi);                                                \
        T x = a[ao + ai], z = b[bo + bi];                                                                  \
        y[yo + i] = op == 0 ? x == z : op == 1 ? x < z : op == 2 ? x > z : op == 3 ? x <= z : x >= z;      \
    }
COMPARE_KERNEL(float, f32)
COMPARE_KERNEL(int, i32)
COMPARE_KERNEL(long, i64)

__kernel void where_bcast(__global const uchar *c, int co, __global const float *a, int ao,
                          __global const float *b, int bo, __global float *y, int yo, int n, int ndim,
                          int8 shape, int8 cs, int8 as, int8 bs) {
    int i = get_global_id(0);
    if (i >= n) return;
    int ci, ai, bi, unused;
    strided_offsets2(i, ndim, shape, cs, as, &ci, &ai);
    strided_offsets2(i, ndim, shape, bs, bs, &bi, &unused);
    y[yo + i] = c[co + ci] ? a[ao + ai] : b[bo + bi];
}

inline float unary_math(float x, int op, float a, float b) {
    switch (op) {
    case 20: return exp(x);
    case 21: return log(x);
    case 22: return sqrt(x);
    case 23: return -x;
    case 24: return fabs(x);
    case 25: return 1.0f / x;
    case 26: return erf(x);
    case 27: return floor(x);
    case 28: return ceil(x);
    case 29: return sin(x);
    case 30: return cos(x);
    case 31: return fmax(x, 0.0f) + log1p(exp(-fabs(x)));
    case 33: return tan(x);
    case 34: return asin(x);
    case 35: return acos(x);
    case 36: return atan(x);
    case 37: return sinh(x);
    case 38: return cosh(x);
    case 39: return asinh(x);
    case 40: return acosh(x);
    case 41: return atanh(x);
    case 42: return rint(x); /* halves to even */
    case 43: return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;
    case 44: return x / (1.0f + fabs(x));
    case 45: return x * tanh(fmax(x, 0.0f) + log1p(exp(-fabs(x))));
    case 46: return x < 0.0f ? a * expm1(x) : x;                               /* elu(alpha) */
    case 47: return fmax(x, 0.0f) + fmin(0.0f, a * expm1(fmin(x, 0.0f) / a)); /* celu(alpha) */
    case 48: return b * (x <= 0.0f ? a * expm1(x) : x);                        /* selu(alpha, gamma) */
    case 49: return x > a ? x : 0.0f;                                          /* thresholded relu */
    case 50: return x < -a ? x + b : x > a ? x - b : 0.0f;                     /* shrink(lambd, bias) */
    default: return activate(x, op, a, b);
    }
}

__kernel void unary(__global const float *x, int xo, __global float *y, int yo, int n, int op, float alpha,
                    float beta) {
    int i = get_global_id(0);
    if (i >= n) return;
    y[yo + i] = unary_math(x[xo + i], op, alpha, beta);
}
