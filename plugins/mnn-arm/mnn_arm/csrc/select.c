/* ArgMax / ArgMin, TopK and CumSum / CumProd along one axis (select.h), armv8-a. Rows are independent:
 * each op splits its outer x inner rows over the session's threads (parallel.h). */
#include <arm_neon.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "select.h"

static inline double key_at(int32_t dtype, const void *x, int64_t i) {
    switch (dtype) {
    case ARM_SEL_I32: return (double)((const int32_t *)x)[i];
    case ARM_SEL_I64: return (double)((const int64_t *)x)[i];
    default: return (double)((const float *)x)[i];
    }
}

static inline int64_t elem_bytes(int32_t dtype) { return dtype == ARM_SEL_I64 ? 8 : 4; }

/* -- ArgMax / ArgMin ---------------------------------------------------------------------------- */

/* one row: n values at stride `inner`; integers compare exactly (no float64 rounding of int64) */
static int64_t arg_row(const arm_arg_state *s, const char *x) {
    const int64_t n = s->n, st = s->inner;
    int64_t best = 0;
    if (s->dtype == ARM_SEL_F32) {
        const float *p = (const float *)x;
        float b = p[0];
        if (b != b && !s->last_index) return 0;
        for (int64_t a = 1; a < n; ++a) {
            const float v = p[a * st];
            if (v != v) { /* NaN: the first one wins (the last, with last_index) */
                best = a;
                if (!s->last_index) return a;
                b = v;
                continue;
            }
            if (b != b) continue;
            const int better = s->is_max ? (s->last_index ? v >= b : v > b) : (s->last_index ? v <= b : v < b);
            if (better) b = v, best = a;
        }
        return best;
    }
    if (s->dtype == ARM_SEL_I32) {
        const int32_t *p = (const int32_t *)x;
        int32_t b = p[0];
        for (int64_t a = 1; a < n; ++a) {
            const int32_t v = p[a * st];
            const int better = s->is_max ? (s->last_index ? v >= b : v > b) : (s->last_index ? v <= b : v < b);
            if (better) b = v, best = a;
        }
        return best;
    }
    const int64_t *p = (const int64_t *)x;
    int64_t b = p[0];
    for (int64_t a = 1; a < n; ++a) {
        const int64_t v = p[a * st];
        const int better = s->is_max ? (s->last_index ? v >= b : v > b) : (s->last_index ? v <= b : v < b);
        if (better) b = v, best = a;
    }
    return best;
}

typedef struct sel_job {
    const void *s;
    const char *x;
    char *y, *y2;
} sel_job;

static void arg_rows(void *ctx, int64_t b, int64_t e, int tid) {
    (void)tid;
    const sel_job *j = (const sel_job *)ctx;
    const arm_arg_state *s = (const arm_arg_state *)j->s;
    const int64_t eb = elem_bytes(s->dtype);
    for (int64_t r = b; r < e; ++r) { /* r = o * inner + i */
        const int64_t o = r / s->inner, i = r % s->inner;
        ((int64_t *)j->y)[r] = arg_row(s, j->x + (o * s->n * s->inner + i) * eb);
    }
}

static int rows_parts(const void *state, int64_t rows, int64_t per_row) {
    const double most = (double)rows * (double)per_row / 16384.0;
    const int t = arm_threads(state);
    return most < 2.0 ? 1 : (most < t ? (int)most : t);
}

int arm_arg_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    arm_arg_state *s = (arm_arg_state *)state;
    if (s->n == 0) return 0; /* empty axis: the reference rejects it at infer; nothing to write here */
    sel_job j = {s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0]), NULL};
    const int64_t rows = s->outer * s->inner;
    arm_parallel(rows_parts(s, rows, s->n), rows, 1, arg_rows, &j);
    return 0;
}

/* -- TopK ----------------------------------------------------------------------------------------- */

/* a total order: better key first (NaN last), equal keys by index */
static int before_largest(const void *pa, const void *pb) {
    const arm_topk_pair *a = (const arm_topk_pair *)pa, *b = (const arm_topk_pair *)pb;
    const int na = a->key != a->key, nb = b->key != b->key;
    if (na != nb) return na ? 1 : -1;
    if (!na && a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

static int before_smallest(const void *pa, const void *pb) {
    const arm_topk_pair *a = (const arm_topk_pair *)pa, *b = (const arm_topk_pair *)pb;
    const int na = a->key != a->key, nb = b->key != b->key;
    if (na != nb) return na ? 1 : -1;
    if (!na && a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

static void topk_rows(void *ctx, int64_t b, int64_t e, int tid) {
    const sel_job *j = (const sel_job *)ctx;
    const arm_topk_state *s = (const arm_topk_state *)j->s;
    const int64_t eb = elem_bytes(s->dtype), n = s->n, k = s->k, in = s->inner;
    arm_topk_pair *pairs = s->work + tid * n;
    int (*cmp)(const void *, const void *) = s->largest ? before_largest : before_smallest;
    for (int64_t r = b; r < e; ++r) {
        const int64_t o = r / in, i = r % in;
        const char *x = j->x + (o * n * in + i) * eb;
        for (int64_t a = 0; a < n; ++a) pairs[a].key = key_at(s->dtype, x, a * in), pairs[a].index = a;
        qsort(pairs, (size_t)n, sizeof *pairs, cmp); /* a total order: the same result as a stable sort */
        char *yv = j->y + (o * k * in + i) * eb;
        int64_t *yi = (int64_t *)j->y2 + o * k * in + i;
        for (int64_t t = 0; t < k; ++t) {
            memcpy(yv + t * in * eb, x + pairs[t].index * in * eb, (size_t)eb);
            yi[t * in] = pairs[t].index;
        }
    }
}

int arm_topk_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in;
    arm_topk_state *s = (arm_topk_state *)state;
    if (n_out < 2) {
        s->op.error = "arm TopK: expected two outputs (values, indices)";
        return 1;
    }
    if (s->k == 0 || s->n == 0) return 0;
    sel_job j = {s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0]), (char *)arm_data(&outs[1])};
    const int64_t rows = s->outer * s->inner;
    int parts = rows_parts(s, rows, s->n * 8);
    if (parts > s->slices) parts = s->slices > 0 ? s->slices : 1;
    arm_parallel(parts, rows, 1, topk_rows, &j);
    return 0;
}

/* -- CumSum / CumProd ----------------------------------------------------------------------------- */

#define CUM_LOOP(T, VT, LD, ST, DUP, OP, VOP)                                                                  \
    do {                                                                                                       \
        const T *xp = (const T *)x;                                                                            \
        T *yp = (T *)y;                                                                                        \
        const T ident = s->prod ? (T)1 : (T)0;                                                                 \
        int64_t i = 0;                                                                                         \
        for (; i + 4 <= w; i += 4) { /* four inner columns at once: the same sequence per column */           \
            VT acc = DUP(ident);                                                                               \
            for (int64_t t = 0; t < n; ++t) {                                                                  \
                const int64_t a = s->reverse ? n - 1 - t : t;                                                  \
                const VT v = LD(xp + a * in + i);                                                              \
                if (s->exclusive) {                                                                            \
                    ST(yp + a * in + i, acc);                                                                  \
                    acc = VOP(acc, v);                                                                         \
                } else {                                                                                       \
                    acc = VOP(acc, v);                                                                         \
                    ST(yp + a * in + i, acc);                                                                  \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        for (; i < w; ++i) {                                                                                   \
            T acc = ident;                                                                                     \
            for (int64_t t = 0; t < n; ++t) {                                                                  \
                const int64_t a = s->reverse ? n - 1 - t : t;                                                  \
                const T v = xp[a * in + i];                                                                    \
                if (s->exclusive) {                                                                            \
                    yp[a * in + i] = acc;                                                                      \
                    acc = OP(acc, v);                                                                          \
                } else {                                                                                       \
                    acc = OP(acc, v);                                                                          \
                    yp[a * in + i] = acc;                                                                      \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))

/* columns [i0, i0 + w) of block o: x and y point at element (o, 0, i0) */
static void cum_block(const arm_cum_state *s, const char *x, char *y, int64_t w) {
    const int64_t n = s->n, in = s->inner;
    if (s->dtype == ARM_SEL_F32) {
        if (s->prod) CUM_LOOP(float, float32x4_t, vld1q_f32, vst1q_f32, vdupq_n_f32, MUL, vmulq_f32);
        else CUM_LOOP(float, float32x4_t, vld1q_f32, vst1q_f32, vdupq_n_f32, ADD, vaddq_f32);
    } else if (s->dtype == ARM_SEL_I32) { /* wrapping like numpy's int32 (two's complement via uint32) */
        if (s->prod) {
            CUM_LOOP(uint32_t, uint32x4_t, vld1q_u32, vst1q_u32, vdupq_n_u32, MUL, vmulq_u32);
        } else {
            CUM_LOOP(uint32_t, uint32x4_t, vld1q_u32, vst1q_u32, vdupq_n_u32, ADD, vaddq_u32);
        }
    } else {
        const int64_t w4 = w; /* int64: scalar columns (two lanes a vector are not worth a second loop) */
        const uint64_t *xp = (const uint64_t *)x;
        uint64_t *yp = (uint64_t *)y;
        for (int64_t i = 0; i < w4; ++i) {
            uint64_t acc = s->prod ? 1 : 0;
            for (int64_t t = 0; t < n; ++t) {
                const int64_t a = s->reverse ? n - 1 - t : t;
                const uint64_t v = xp[a * in + i];
                if (s->exclusive) yp[a * in + i] = acc;
                acc = s->prod ? acc * v : acc + v;
                if (!s->exclusive) yp[a * in + i] = acc;
            }
        }
    }
}

/* columns are split in runs of 4 within each outer block: part r covers chunks [b, e) of
 * (outer x ceil(inner / 4)) */
static void cum_parts(void *ctx, int64_t b, int64_t e, int tid) {
    (void)tid;
    const sel_job *j = (const sel_job *)ctx;
    const arm_cum_state *s = (const arm_cum_state *)j->s;
    const int64_t eb = elem_bytes(s->dtype), per = (s->inner + 3) / 4;
    for (int64_t c = b; c < e;) {
        const int64_t o = c / per, c0 = c % per, c1 = (e - c < per - c0 ? e - c : per - c0) + c0;
        const int64_t i0 = c0 * 4, i1 = c1 * 4 < s->inner ? c1 * 4 : s->inner;
        const int64_t off = (o * s->n * s->inner + i0) * eb;
        cum_block(s, j->x + off, j->y + off, i1 - i0);
        c += c1 - c0;
    }
}

int arm_cum_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    arm_cum_state *s = (arm_cum_state *)state;
    sel_job j = {s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0]), NULL};
    const int64_t chunks = s->outer * ((s->inner + 3) / 4);
    arm_parallel(rows_parts(s, chunks, s->n * 4), chunks, 1, cum_parts, &j);
    return 0;
}
