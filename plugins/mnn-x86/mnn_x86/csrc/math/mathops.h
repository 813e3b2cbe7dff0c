/* Element-wise math on x86 (mnn_x86/_math.pyx, ops_math.py): unary functions of float32 (polynomials,
 * vmath.h), float64 (libm) and integers; broadcasting binary ops of every numeric dtype (arithmetic,
 * comparisons, logic, bit operations, Pow, Mod, PRelu). A kernel is one loop over a row of elements
 * per (op, dtype), chosen at prepare; the pool cuts the elements into ranges. */
#ifndef MNN_X86_MATHOPS_H
#define MNN_X86_MATHOPS_H

#include "family.h"

/* below this many elements an op runs on one thread */
#define X86_MATH_GRAIN 16384

/* the attributes of an op: a, b, c (alpha, beta, gamma, Clip's float bounds), ia, ib (Clip's integer
 * bounds, IsInf's detect_positive/negative, Mod's fmod) */
typedef struct {
    double a, b, c;
    int64_t ia, ib;
} x86_math_params;

enum x86_math_unary {
    XM_ERF, XM_SQRT, XM_RECIPROCAL, XM_EXP, XM_LOG, XM_ABS, XM_NEG, XM_FLOOR, XM_CEIL, XM_ROUND, XM_SIGN,
    XM_SIN, XM_COS, XM_TAN, XM_ASIN, XM_ACOS, XM_ATAN, XM_SINH, XM_COSH, XM_ASINH, XM_ACOSH, XM_ATANH,
    XM_SOFTPLUS, XM_SOFTSIGN, XM_ELU, XM_SELU, XM_CELU, XM_MISH, XM_THRESHOLDED_RELU, XM_SHRINK,
    XM_NOT, XM_ISNAN, XM_ISINF, XM_BITWISE_NOT, XM_CLIP, XM_N_UNARY
};

enum x86_math_binary {
    XM_ADD, XM_SUB, XM_MUL, XM_DIV, XM_MAX, XM_MIN, XM_MOD, XM_FMOD, XM_POW, XM_PRELU,
    XM_EQUAL, XM_LESS, XM_GREATER, XM_LESS_EQUAL, XM_GREATER_EQUAL, XM_AND, XM_OR, XM_XOR,
    XM_BITWISE_AND, XM_BITWISE_OR, XM_BITWISE_XOR, XM_SHIFT_LEFT, XM_SHIFT_RIGHT, XM_N_BINARY
};

/* y[i] = f(x[i]) for i < n */
typedef void (*x86_math_map_fn)(const void *x, void *y, int64_t n, const x86_math_params *p);
/* y[i] = a[i*sa] op b[i*sb] for i < n; sa, sb each 0 or 1 */
typedef void (*x86_math_row_fn)(const void *a, int64_t sa, const void *b, int64_t sb, void *y, int64_t n,
                                const x86_math_params *p);

/* the kernel of a unary op on a dtype (an mnn_dtype), or NULL where there is none */
x86_math_map_fn x86_math_unary_kernel(int kind, int dtype);
/* ... of a binary op on inputs of dtypes a and b (NULL unless they are the same, as the schemas ask) */
x86_math_row_fn x86_math_binary_kernel(int kind, int dtype_a, int dtype_b);

typedef struct {
    x86_op op;
    x86_math_map_fn map;
    int32_t size_x, size_y; /* bytes per element */
    x86_math_params p;
} x86_math_unary_state;
int x86_math_unary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* a binary op over ndim (1..8) collapsed dims; sa/sb element strides (0: broadcast), innermost 0 or 1 */
typedef struct {
    x86_op op;
    x86_math_row_fn row;
    int32_t ndim, size_a, size_b, size_y;
    int64_t dims[8], sa[8], sb[8];
    x86_math_params p;
    int32_t pow_f32; /* Pow of float32: a single exponent of 2, 3, 0.5 or 1 takes a fast row at run */
} x86_math_binary_state;
int x86_math_binary_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
