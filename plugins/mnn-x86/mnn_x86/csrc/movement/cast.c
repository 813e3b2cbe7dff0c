/* Cast between the numeric dtypes with numpy's astype semantics: floats to ints truncate toward zero,
 * ints narrow by wrapping, anything nonzero (NaN too) is True. float16 goes through GCC's _Float16,
 * which rounds to nearest even as numpy does; bfloat16 converts to and from float32 only. One loop per
 * (from, to) pair, cut into ranges. */
#include <stdbool.h>

#include "movement.h"

#define CAST_GRAIN 32768 /* elements */

typedef void (*cast_fn)(const void *x, void *y, int64_t lo, int64_t hi);

typedef uint8_t bool_t; /* a bool tensor holds 0 or 1 per byte */

#define CAST_PAIR(F, TF, T, TT)                                                      \
    X86_CLONES static void cast_##F##_##T(const void *x, void *y, int64_t lo, int64_t hi) { \
        const TF *restrict xx = (const TF *)x;                                        \
        TT *restrict yy = (TT *)y;                                                    \
        for (int64_t i = lo; i < hi; ++i) yy[i] = (TT)xx[i];                          \
    }
#define CAST_TO_BOOL(F, TF)                                                          \
    X86_CLONES static void cast_##F##_b(const void *x, void *y, int64_t lo, int64_t hi) { \
        const TF *restrict xx = (const TF *)x;                                        \
        uint8_t *restrict yy = (uint8_t *)y;                                          \
        for (int64_t i = lo; i < hi; ++i) yy[i] = xx[i] != 0;                         \
    }

/* every source dtype to one target */
#define CAST_FROM_ALL(T, TT)                                                                            \
    CAST_PAIR(f32, float, T, TT) CAST_PAIR(f16, _Float16, T, TT) CAST_PAIR(i64, int64_t, T, TT)         \
    CAST_PAIR(i32, int32_t, T, TT) CAST_PAIR(i8, int8_t, T, TT) CAST_PAIR(u8, uint8_t, T, TT)           \
    CAST_PAIR(b, bool_t, T, TT) CAST_PAIR(f64, double, T, TT) CAST_PAIR(i16, int16_t, T, TT)            \
    CAST_PAIR(u16, uint16_t, T, TT) CAST_PAIR(u32, uint32_t, T, TT) CAST_PAIR(u64, uint64_t, T, TT)

CAST_FROM_ALL(f32, float)
CAST_FROM_ALL(f16, _Float16)
CAST_FROM_ALL(i64, int64_t)
CAST_FROM_ALL(i32, int32_t)
CAST_FROM_ALL(i8, int8_t)
CAST_FROM_ALL(u8, uint8_t)
CAST_FROM_ALL(f64, double)
CAST_FROM_ALL(i16, int16_t)
CAST_FROM_ALL(u16, uint16_t)
CAST_FROM_ALL(u32, uint32_t)
CAST_FROM_ALL(u64, uint64_t)
CAST_TO_BOOL(f32, float)
CAST_TO_BOOL(f16, _Float16)
CAST_TO_BOOL(i64, int64_t)
CAST_TO_BOOL(i32, int32_t)
CAST_TO_BOOL(i8, int8_t)
CAST_TO_BOOL(u8, uint8_t)
CAST_TO_BOOL(f64, double)
CAST_TO_BOOL(i16, int16_t)
CAST_TO_BOOL(u16, uint16_t)
CAST_TO_BOOL(u32, uint32_t)
CAST_TO_BOOL(u64, uint64_t)
static void cast_b_b(const void *x, void *y, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) ((uint8_t *)y)[i] = ((const uint8_t *)x)[i] != 0;
}

/* a row of the table: one source dtype to each target, in mnn_dtype order (abi.h, codes 0 .. 11) */
#define CAST_ROW(F)                                                                                        \
    { cast_##F##_f32, cast_##F##_f16, cast_##F##_i64, cast_##F##_i32, cast_##F##_i8, cast_##F##_u8,        \
      cast_##F##_b, cast_##F##_f64, cast_##F##_i16, cast_##F##_u16, cast_##F##_u32, cast_##F##_u64 }
#define N_CAST 12
static const cast_fn CAST_TABLE[N_CAST][N_CAST] = {
    CAST_ROW(f32), CAST_ROW(f16), CAST_ROW(i64), CAST_ROW(i32), CAST_ROW(i8), CAST_ROW(u8),
    CAST_ROW(b), CAST_ROW(f64), CAST_ROW(i16), CAST_ROW(u16), CAST_ROW(u32), CAST_ROW(u64),
};

/* bfloat16 is float32's top half: widening shifts, narrowing rounds to nearest even and keeps NaNs quiet */
X86_CLONES static void cast_bf16_f32(const void *x, void *y, int64_t lo, int64_t hi) {
    const uint16_t *restrict xx = (const uint16_t *)x;
    uint32_t *restrict yy = (uint32_t *)y;
    for (int64_t i = lo; i < hi; ++i) yy[i] = (uint32_t)xx[i] << 16;
}

X86_CLONES static void cast_f32_bf16(const void *x, void *y, int64_t lo, int64_t hi) {
    const uint32_t *restrict xx = (const uint32_t *)x;
    uint16_t *restrict yy = (uint16_t *)y;
    for (int64_t i = lo; i < hi; ++i) {
        const uint32_t b = xx[i];
        const int nan = (b & 0x7fffffffu) > 0x7f800000u;
        const uint16_t rounded = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
        yy[i] = nan ? (uint16_t)((b >> 16) | 0x40u) : rounded;
    }
}

/* the function for a pair of dtype codes, or NULL */
static cast_fn cast_for(int32_t from, int32_t to) {
    if (from >= 0 && from < N_CAST && to >= 0 && to < N_CAST) return CAST_TABLE[from][to];
    if (from == MNN_BFLOAT16 && to == MNN_FLOAT32) return cast_bf16_f32;
    if (from == MNN_FLOAT32 && to == MNN_BFLOAT16) return cast_f32_bf16;
    return NULL;
}

typedef struct {
    cast_fn fn;
    const void *x;
    void *y;
} cast_job;

static void cast_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const cast_job *j = (const cast_job *)ctx;
    (void)worker;
    j->fn(j->x, j->y, lo, hi);
}

int x86_cast_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_cast_state *s = (x86_cast_state *)state;
    (void)n_in;
    (void)n_out;
    const cast_fn fn = cast_for(s->from, s->to);
    if (fn == NULL) {
        s->op.error = "x86 Cast: a pair of dtypes it does not convert (ops_movement.py should have declined it)";
        return 1;
    }
    const int64_t n = mnn_tensor_numel(&outs[0]);
    if (n == 0) return 0;
    cast_job j = {fn, ins[0].data, outs[0].data};
    x86_pool->ranges(s->op.threads, n, CAST_GRAIN, cast_range, &j);
    return 0;
}
