/* The ops along one axis of [outer][axis][inner] (reduce.h): ArgMax/ArgMin and Hardmax, CumSum and
 * CumProd, TopK, LpNormalization and LRN. Where inner > 1 the loops run across TILE inner elements at a time (vectorized);
 * each is written once per dtype by a macro. */
#include <math.h>
#include <string.h>

#include "reduce.h"

#define TILE 256
#define GRAIN 16384 /* input elements: less is not worth a thread */

typedef struct {
    x86_axis_state *s;
    const char *x;
    char *y;
    int64_t *idx; /* TopK's indices */
    int64_t tiles;
} axis_job;

static int64_t tile_at(const axis_job *j, int64_t u, int64_t *o, int64_t *i0) {
    const int64_t inner = j->s->inner;
    *o = u / j->tiles;
    *i0 = u % j->tiles * TILE;
    return inner - *i0 < TILE ? inner - *i0 : TILE;
}

static void run_tiles(axis_job *j, x86_range_fn fn) {
    const x86_axis_state *s = j->s;
    j->tiles = (s->inner + TILE - 1) / TILE;
    const int64_t per = s->axis * (s->inner < TILE ? s->inner : TILE);
    x86_pool->ranges(s->op.threads, s->outer * j->tiles, GRAIN / (per > 0 ? per : 1) + 1, fn, j);
}

/* the tiles of `fn` over the input, once its dtype is one the kernel was built for (floats: float32/64
 * only; else int32/64 too) */
static int run_checked(void *state, const mnn_tensor *ins, mnn_tensor *outs, int floats, x86_range_fn fn) {
    axis_job j = {(x86_axis_state *)state, (const char *)ins[0].data, (char *)outs[0].data, NULL, 0};
    const int32_t t = j.s->dtype = ins[0].dtype;
    if (!(t == MNN_FLOAT32 || t == MNN_FLOAT64 || (!floats && (t == MNN_INT32 || t == MNN_INT64)))) {
        j.s->op.error = "a dtype this kernel was not built for";
        return 1;
    }
    run_tiles(&j, fn);
    return 0;
}

/* -- ArgMax / ArgMin / Hardmax ------------------------------------------------------------------- */

/* idx[i]: the position along the axis of the best of x[a * inner + i], best[i] its value; a NaN is
 * the best (numpy's) */
#define ARG_TILE(T, S) \
    static X86_CLONES void arg_tile_##S(const T *x, int64_t axis, int64_t inner, int64_t n, int mode, int last, \
                                        int64_t *restrict idx, T *restrict best) { \
        for (int64_t i = 0; i < n; i++) best[i] = x[i], idx[i] = 0; \
        for (int64_t a = 1; a < axis; a++) { \
            const T *row = x + a * inner; \
            for (int64_t i = 0; i < n; i++) { \
                const T v = row[i], b = best[i]; \
                const int better = mode ? (last ? v <= b : v < b) : (last ? v >= b : v > b); \
                const int take = better || (v != v && (last || b == b)); \
                best[i] = take ? v : b; \
                idx[i] = take ? a : idx[i]; \
            } \
        } \
    }

/* A contiguous row (inner == 1) as ROW_LANES lanes of len / ROW_LANES positions each (arg_tile
 * vectorizes across them); of the lanes' winners, those of the best value (or NaNs), the first (last)
 * position; then the tail, element by element. */
#define ROW_LANES 128
#define ARG_ROW(T, S) \
    static int beats_##S(const T *x, int64_t a, int64_t b, int mode, int last) { \
        const T va = x[a], vb = x[b]; \
        if (va != va || vb != vb) return va != va && (vb == vb || (last ? a > b : a < b)); \
        if (va == vb) return last ? a > b : a < b; \
        return mode ? va < vb : va > vb; \
    } \
    static X86_CLONES int64_t arg_lanes_##S(const T *best, const int64_t *idx, int mode, int last) { \
        T bv = best[0]; \
        int nan = 0; \
        for (int i = 0; i < ROW_LANES; i++) { \
            const T v = best[i]; \
            nan |= v != v; \
            bv = (mode ? v < bv : v > bv) ? v : bv; \
        } \
        int64_t pos = last ? -1 : INT64_MAX; \
        for (int i = 0; i < ROW_LANES; i++) { \
            const T v = best[i]; \
            const int64_t p = idx[i] * ROW_LANES + i; \
            const int match = nan ? v != v : v == bv; \
            pos = match && (last ? p > pos : p < pos) ? p : pos; \
        } \
        return pos; \
    } \
    static int64_t arg_row_##S(const T *x, int64_t len, int mode, int last) { \
        const int64_t rows = len / ROW_LANES; \
        int64_t idx[ROW_LANES]; \
        T best[ROW_LANES]; \
        arg_tile_##S(x, rows, ROW_LANES, ROW_LANES, mode, last, idx, best); \
        int64_t pos = arg_lanes_##S(best, idx, mode, last); \
        for (int64_t p = rows * ROW_LANES; p < len; p++) \
            if (beats_##S(x, p, pos, mode, last)) pos = p; \
        return pos; \
    } \
    static void arg_##S(const x86_axis_state *s, const T *x, int64_t n, int64_t *idx) { \
        T best[TILE]; \
        if (s->inner == 1 && s->axis >= 4 * ROW_LANES) \
            idx[0] = arg_row_##S(x, s->axis, s->mode, s->last); \
        else \
            arg_tile_##S(x, s->axis, s->inner, n, s->mode, s->last, idx, best); \
    }

ARG_TILE(float, f32)
ARG_TILE(double, f64)
ARG_TILE(int32_t, i32)
ARG_TILE(int64_t, i64)
ARG_ROW(float, f32)
ARG_ROW(double, f64)
ARG_ROW(int32_t, i32)
ARG_ROW(int64_t, i64)

static int arg_tile(const x86_axis_state *s, const char *x, int64_t n, int64_t *idx) {
    switch (s->dtype) {
    case MNN_FLOAT32: arg_f32(s, (const float *)x, n, idx); return 0;
    case MNN_FLOAT64: arg_f64(s, (const double *)x, n, idx); return 0;
    case MNN_INT32: arg_i32(s, (const int32_t *)x, n, idx); return 0;
    case MNN_INT64: arg_i64(s, (const int64_t *)x, n, idx); return 0;
    default: return 1;
    }
}

static const char *tile_x(const axis_job *j, int64_t o, int64_t i0) {
    const x86_axis_state *s = j->s;
    return j->x + (size_t)(o * s->axis * s->inner + i0) * mnn_dtype_size(s->dtype);
}

static void arg_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const axis_job *j = (const axis_job *)ctx;
    (void)worker;
    for (int64_t u = lo; u < hi; u++) {
        int64_t o, i0;
        const int64_t n = tile_at(j, u, &o, &i0);
        arg_tile(j->s, tile_x(j, o, i0), n, (int64_t *)j->y + o * j->s->inner + i0);
    }
}

/* 1 at each lane's index along the axis, 0 elsewhere; a contiguous row (inner == 1) at a time there */
#define ONE_HOT(T) \
    if (s->inner == 1) { \
        T *row = (T *)j->y + o * s->axis; \
        for (int64_t a = 0; a < s->axis; a++) row[a] = (T)0; \
        row[idx[0]] = (T)1; \
    } else { \
        for (int64_t a = 0; a < s->axis; a++) { \
            T *row = (T *)j->y + (o * s->axis + a) * s->inner + i0; \
            for (int64_t i = 0; i < n; i++) row[i] = (T)(idx[i] == a); \
        } \
    }

static void hardmax_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const axis_job *j = (const axis_job *)ctx;
    const x86_axis_state *s = j->s;
    int64_t idx[TILE];
    (void)worker;
    for (int64_t u = lo; u < hi; u++) {
        int64_t o, i0;
        const int64_t n = tile_at(j, u, &o, &i0);
        arg_tile(s, tile_x(j, o, i0), n, idx);
        if (s->dtype == MNN_FLOAT64) {
            ONE_HOT(double)
        } else {
            ONE_HOT(float)
        }
    }
}

int x86_arg_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    return run_checked(state, ins, outs, 0, arg_range);
}

int x86_hardmax_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    return run_checked(state, ins, outs, 0, hardmax_range);
}

/* -- CumSum / CumProd ---------------------------------------------------------------------------- */

/* Sums and products in the input's type, element after element along the axis (the reference's
 * order, so floats round alike); integers wrap. */
#define CUM_TILE(T, U, S) \
    static X86_CLONES void cum_tile_##S(const T *x, T *y, int64_t axis, int64_t inner, int64_t n, int prod, \
                                        int exclusive, int reverse) { \
        T acc[TILE]; \
        for (int64_t i = 0; i < n; i++) acc[i] = (T)prod; \
        for (int64_t step = 0; step < axis; step++) { \
            const int64_t a = reverse ? axis - 1 - step : step; \
            const T *xr = x + a * inner; \
            T *yr = y + a * inner; \
            if (exclusive) \
                for (int64_t i = 0; i < n; i++) yr[i] = acc[i]; \
            if (prod) \
                for (int64_t i = 0; i < n; i++) acc[i] = (T)((U)acc[i] * (U)xr[i]); \
            else \
                for (int64_t i = 0; i < n; i++) acc[i] = (T)((U)acc[i] + (U)xr[i]); \
            if (!exclusive) \
                for (int64_t i = 0; i < n; i++) yr[i] = acc[i]; \
        } \
    } \
    static void cum_row_##S(const T *x, T *y, int64_t len, int prod, int exclusive, int reverse) { \
        const int64_t step = reverse ? -1 : 1, from = reverse ? len - 1 : 0; \
        T acc = (T)prod; \
        for (int64_t k = 0, a = from; k < len; k++, a += step) { \
            const T before = acc; \
            acc = prod ? (T)((U)acc * (U)x[a]) : (T)((U)acc + (U)x[a]); \
            y[a] = exclusive ? before : acc; \
        } \
    }

CUM_TILE(float, float, f32)
CUM_TILE(double, double, f64)
CUM_TILE(int32_t, uint32_t, i32)
CUM_TILE(int64_t, uint64_t, i64)

static void cumulative_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const axis_job *j = (const axis_job *)ctx;
    const x86_axis_state *s = j->s;
    (void)worker;
    for (int64_t u = lo; u < hi; u++) {
        int64_t o, i0;
        const int64_t n = tile_at(j, u, &o, &i0);
        const char *x = tile_x(j, o, i0);
        char *y = j->y + (x - j->x);
        if (s->inner == 1) { /* one row along the axis: no tile of lanes */
            switch (s->dtype) {
            case MNN_FLOAT32: cum_row_f32((const float *)x, (float *)y, s->axis, s->mode, s->last, s->reverse); break;
            case MNN_FLOAT64: cum_row_f64((const double *)x, (double *)y, s->axis, s->mode, s->last, s->reverse); break;
            case MNN_INT32: cum_row_i32((const int32_t *)x, (int32_t *)y, s->axis, s->mode, s->last, s->reverse); break;
            default: cum_row_i64((const int64_t *)x, (int64_t *)y, s->axis, s->mode, s->last, s->reverse); break;
            }
            continue;
        }
        switch (s->dtype) {
        case MNN_FLOAT32:
            cum_tile_f32((const float *)x, (float *)y, s->axis, s->inner, n, s->mode, s->last, s->reverse);
            break;
        case MNN_FLOAT64:
            cum_tile_f64((const double *)x, (double *)y, s->axis, s->inner, n, s->mode, s->last, s->reverse);
            break;
        case MNN_INT32:
            cum_tile_i32((const int32_t *)x, (int32_t *)y, s->axis, s->inner, n, s->mode, s->last, s->reverse);
            break;
        default:
            cum_tile_i64((const int64_t *)x, (int64_t *)y, s->axis, s->inner, n, s->mode, s->last, s->reverse);
            break;
        }
    }
}

int x86_cumulative_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    return run_checked(state, ins, outs, 0, cumulative_range);
}

/* -- TopK ---------------------------------------------------------------------------------------- */

/* The k best of a row by a heap whose root is the worst kept, then sorted best first. "Better":
 * larger (smaller) as float64, and of equal values the lower index, as the reference's stable sort. */
typedef struct {
    const char *x;
    int32_t dtype, largest;
    int64_t stride;
} topk_row;

static inline double row_value(const topk_row *r, int64_t a) {
    const int64_t at = a * r->stride;
    switch (r->dtype) {
    case MNN_FLOAT32: return ((const float *)r->x)[at];
    case MNN_FLOAT64: return ((const double *)r->x)[at];
    case MNN_INT32: return ((const int32_t *)r->x)[at];
    case MNN_INT64: return (double)((const int64_t *)r->x)[at];
    case MNN_UINT64: return (double)((const uint64_t *)r->x)[at];
    case MNN_UINT32: return ((const uint32_t *)r->x)[at];
    case MNN_INT16: return ((const int16_t *)r->x)[at];
    case MNN_UINT16: return ((const uint16_t *)r->x)[at];
    case MNN_INT8: return ((const int8_t *)r->x)[at];
    default: return ((const uint8_t *)r->x)[at];
    }
}

static inline int better(const topk_row *r, int64_t a, int64_t b) {
    const double va = row_value(r, a), vb = row_value(r, b);
    if (va != vb) return r->largest ? va > vb : va < vb;
    return a < b;
}

/* restores the heap (worst at the root) below position i of h[0..n) */
static void sift_down(const topk_row *r, int64_t *h, int64_t n, int64_t i) {
    for (;;) {
        int64_t w = i;
        const int64_t l = 2 * i + 1, rt = l + 1;
        if (l < n && better(r, h[w], h[l])) w = l;
        if (rt < n && better(r, h[w], h[rt])) w = rt;
        if (w == i) return;
        const int64_t t = h[i];
        h[i] = h[w], h[w] = t;
        i = w;
    }
}

static void topk_select(const topk_row *r, int64_t axis, int64_t k, int64_t *h) {
    for (int64_t a = 0; a < k; a++) h[a] = a;
    for (int64_t i = k / 2 - 1; i >= 0; i--) sift_down(r, h, k, i);
    double worst = k ? row_value(r, h[0]) : 0.0;
    for (int64_t a = k; a < axis; a++) { /* a later position never wins a tie: only a better value enters */
        const double v = row_value(r, a);
        if (!(r->largest ? v > worst : v < worst)) continue;
        h[0] = a;
        sift_down(r, h, k, 0);
        worst = row_value(r, h[0]);
    }
    for (int64_t n = k - 1; n > 0; n--) { /* heap sort: the worst to the end, one at a time */
        const int64_t t = h[0];
        h[0] = h[n], h[n] = t;
        sift_down(r, h, n, 0);
    }
}

static void topk_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const axis_job *j = (const axis_job *)ctx;
    const x86_axis_state *s = j->s;
    const size_t esz = mnn_dtype_size(s->dtype);
    int64_t *h = s->work + worker * s->axis;
    for (int64_t row = lo; row < hi; row++) {
        const int64_t o = row / s->inner, i = row % s->inner;
        const topk_row r = {j->x + (size_t)(o * s->axis * s->inner + i) * esz, s->dtype, s->mode, s->inner};
        topk_select(&r, s->axis, s->k, h);
        for (int64_t a = 0; a < s->k; a++) {
            const int64_t at = (o * s->k + a) * s->inner + i;
            memcpy(j->y + (size_t)at * esz, r.x + (size_t)(h[a] * s->inner) * esz, esz);
            j->idx[at] = h[a];
        }
    }
}

int x86_topk_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    axis_job j = {(x86_axis_state *)state, (const char *)ins[0].data, (char *)outs[0].data, NULL, 0};
    (void)n_in, (void)n_out;
    j.s->dtype = ins[0].dtype; /* any integer or float32/64 (row_value) */
    j.idx = (int64_t *)outs[1].data;
    if (j.s->k == 0) return 0;
    const int64_t per = j.s->axis > 0 ? j.s->axis : 1;
    x86_pool->ranges(j.s->op.threads, j.s->outer * j.s->inner, GRAIN / per + 1, topk_range, &j);
    return 0;
}

/* -- LpNormalization and LRN -------------------------------------------------------------------- */

/* x over its L1 or L2 norm along the axis (0 where the norm is 0), the norm in double. A tile of
 * inner elements at a time, or (inner == 1) one contiguous row in LANES partial sums. */
#define LANES 16
#define LPNORM(T, S) \
    static X86_CLONES void lpnorm_tile_##S(const T *x, T *y, int64_t axis, int64_t inner, int64_t n, int p) { \
        double norm[TILE]; \
        for (int64_t i = 0; i < n; i++) norm[i] = 0.0; \
        for (int64_t a = 0; a < axis; a++) { \
            const T *row = x + a * inner; \
            if (p == 1) \
                for (int64_t i = 0; i < n; i++) norm[i] += fabs((double)row[i]); \
            else \
                for (int64_t i = 0; i < n; i++) norm[i] += (double)row[i] * (double)row[i]; \
        } \
        if (p != 1) \
            for (int64_t i = 0; i < n; i++) norm[i] = sqrt(norm[i]); \
        for (int64_t a = 0; a < axis; a++) \
            for (int64_t i = 0; i < n; i++) \
                y[a * inner + i] = norm[i] == 0.0 ? (T)0 : (T)((double)x[a * inner + i] / norm[i]); \
    } \
    static X86_CLONES void lpnorm_row_##S(const T *x, T *y, int64_t len, int p) { \
        double l[LANES], norm = 0.0; \
        const int64_t body = len / LANES * LANES; \
        for (int k = 0; k < LANES; k++) l[k] = 0.0; \
        for (int64_t j = 0; j < body; j += LANES) \
            for (int k = 0; k < LANES; k++) { \
                const double v = (double)x[j + k]; \
                l[k] += p == 1 ? fabs(v) : v * v; \
            } \
        for (int64_t j = body; j < len; j++) { \
            const double v = (double)x[j]; \
            norm += p == 1 ? fabs(v) : v * v; \
        } \
        for (int k = 0; k < 8; k++) l[k] += l[k + 8]; \
        for (int k = 0; k < 4; k++) l[k] += l[k + 4]; \
        norm += (l[0] + l[2]) + (l[1] + l[3]); \
        if (p != 1) norm = sqrt(norm); \
        for (int64_t j = 0; j < len; j++) y[j] = norm == 0.0 ? (T)0 : (T)((double)x[j] / norm); \
    }

LPNORM(float, f32)
LPNORM(double, f64)

static void lpnorm_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const axis_job *j = (const axis_job *)ctx;
    const x86_axis_state *s = j->s;
    const int f64 = s->dtype == MNN_FLOAT64;
    (void)worker;
    for (int64_t u = lo; u < hi; u++) {
        int64_t o, i0;
        const int64_t n = tile_at(j, u, &o, &i0);
        const char *x = tile_x(j, o, i0);
        char *y = j->y + (x - j->x);
        if (s->inner == 1 && f64)
            lpnorm_row_f64((const double *)x, (double *)y, s->axis, s->mode);
        else if (s->inner == 1)
            lpnorm_row_f32((const float *)x, (float *)y, s->axis, s->mode);
        else if (f64)
            lpnorm_tile_f64((const double *)x, (double *)y, s->axis, s->inner, n, s->mode);
        else
            lpnorm_tile_f32((const float *)x, (float *)y, s->axis, s->inner, n, s->mode);
    }
}

int x86_lpnorm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    return run_checked(state, ins, outs, 1, lpnorm_range);
}

/* x / (bias + alpha / size * (sum of squares of the size channels about it))^beta, the sums in
 * double in the reference's order (the window from its first channel) */
#define LRN_TILE(T, S) \
    static X86_CLONES void lrn_tile_##S(const x86_axis_state *s, const T *x, T *y, int64_t n) { \
        const int64_t C = s->axis, inner = s->inner, size = s->k, lo = (size - 1) / 2, hi = size - 1 - lo; \
        double sq[TILE]; \
        for (int64_t c = 0; c < C; c++) { \
            for (int64_t i = 0; i < n; i++) sq[i] = 0.0; \
            for (int64_t w = c - lo < 0 ? 0 : c - lo; w <= c + hi && w < C; w++) \
                for (int64_t i = 0; i < n; i++) sq[i] += (double)x[w * inner + i] * (double)x[w * inner + i]; \
            if (s->beta == 0.75) /* the usual exponent: base^0.75 by square roots, which vectorize */ \
                for (int64_t i = 0; i < n; i++) { \
                    const double b = s->bias + s->alpha / size * sq[i]; \
                    y[c * inner + i] = (T)((double)x[c * inner + i] / sqrt(b * sqrt(b))); \
                } \
            else \
                for (int64_t i = 0; i < n; i++) { \
                    const double b = s->bias + s->alpha / size * sq[i]; \
                    y[c * inner + i] = (T)((double)x[c * inner + i] / pow(b, s->beta)); \
                } \
        } \
    }

LRN_TILE(float, f32)
LRN_TILE(double, f64)

static void lrn_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const axis_job *j = (const axis_job *)ctx;
    (void)worker;
    for (int64_t u = lo; u < hi; u++) {
        int64_t o, i0;
        const int64_t n = tile_at(j, u, &o, &i0);
        const char *x = tile_x(j, o, i0);
        char *y = j->y + (x - j->x);
        if (j->s->dtype == MNN_FLOAT64)
            lrn_tile_f64(j->s, (const double *)x, (double *)y, n);
        else
            lrn_tile_f32(j->s, (const float *)x, (float *)y, n);
    }
}

int x86_lrn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    return run_checked(state, ins, outs, 1, lrn_range);
}
