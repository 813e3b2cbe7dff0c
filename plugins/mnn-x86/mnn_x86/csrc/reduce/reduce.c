/* Reductions over any axes (reduce.h has the layout). Floats accumulate in double, integers in
 * int64 with wrapping (as numpy's and C's); each dtype is a table of five small loops, and one
 * driver walks the layout, cuts it for the pool and, with few outputs, cuts the reduction itself. */
#include "reduce.h"

#include "vmath.h"

#define LANES 16    /* partial accumulators of a run: two AVX-512 vectors of doubles (RUN_LOOP folds 16) */
#define TILE 256    /* inner outputs accumulated at a time (on the stack) */
#define GRAIN 16384 /* input elements: less is not worth a thread */

typedef struct {
    void (*init)(int kind, void *acc, int64_t n);
    void (*rows)(int kind, const void *x, void *acc, int64_t n, const double *shift); /* acc[i] op= x[i] */
    /* acc[r] op= all of the run at x + r * stride, for r < rows (shift: one per row, step apart) */
    void (*run)(int kind, const void *x, int64_t len, int64_t rows, int64_t stride, void *acc, const double *shift,
                int64_t step);
    void (*combine)(int kind, void *acc, const void *part, int64_t n);
    void (*store)(int fin, const void *acc, void *y, int64_t n, double count, const double *shift);
} reduce_type;

/* the update of one accumulator a by one element v */
#define U_SUM(a, v) a += v
#define U_ABS(a, v) a += fabs(v)
#define U_SQ(a, v) a += (v) * (v)
#define U_PROD(a, v) a *= v
#define U_MAX(a, v) a = (((v) > a) | ((v) != (v))) ? (v) : a /* a NaN wins, as numpy's */
#define U_MIN(a, v) a = (((v) < a) | ((v) != (v))) ? (v) : a
#define U_EXP(a, v) a += x86_exp((v) - shift)
#define U_EXPI(a, v) a += x86_exp((v) - shift[i])
#define U_POW(a, v) a += pow(fabs(v), shift) /* shift: the power */
#define U_POWI(a, v) a += pow(fabs(v), *shift)
#define U_ISUM(a, v) a = (int64_t)((uint64_t)a + (uint64_t)(v))
#define U_IPROD(a, v) a = (int64_t)((uint64_t)a * (uint64_t)(v))
#define U_IMAX(a, v) a = (v) > a ? (v) : a
#define U_IMIN(a, v) a = (v) < a ? (v) : a

#define ROWS_LOOP(A, U) \
    for (int64_t i = 0; i < n; i++) { \
        const A v = (A)x[i]; \
        U(a[i], v); \
    } \
    break

/* a run in LANES partial accumulators (the body vectorizes across them) and the tail in one more,
 * folded pairwise by C (the op that joins two accumulators) into *acc */
#define RUN_LOOP(A, U, C) \
    { \
        A t = start; \
        for (int64_t j = 0; j < body; j += LANES) \
            for (int k = 0; k < LANES; k++) { \
                const A v = (A)x[j + k]; \
                U(p[k], v); \
            } \
        for (int64_t j = body; j < len; j++) { \
            const A v = (A)x[j]; \
            U(t, v); \
        } \
        for (int k = 0; k < 8; k++) C(p[k], p[k + 8]); \
        for (int k = 0; k < 4; k++) C(p[k], p[k + 4]); \
        C(p[0], p[2]), C(p[1], p[3]), C(p[0], p[1]); \
        C(t, p[0]); \
        C(*acc, t); \
        return; \
    }

#define COMBINE_LOOP(U) \
    for (int64_t i = 0; i < n; i++) U(a[i], p[i]); \
    break

/* A maximum or minimum of a run, exact in the input's type: GCC vectorizes neither the select of LANES
 * partial results nor a reduction of them without -ffast-math, but it does vectorize a rows loop; so
 * a long run is taken as rows of ROW_CHUNK elements (minmax: the rows loop of the type) into as many
 * partial results, folded pairwise at the end, and a short one element by element. */
#define ROW_CHUNK 256
#define RUN_BY_ROWS(A, T, U, minmax) \
    { \
        if (len < ROW_CHUNK) { \
            for (int64_t j = 0; j < len; j++) { \
                const A v = (A)x[j]; \
                U(*acc, v); \
            } \
            return; \
        } \
        T q[ROW_CHUNK]; \
        for (int k = 0; k < ROW_CHUNK; k++) q[k] = x[k]; \
        for (int64_t j = ROW_CHUNK; j < len; j += ROW_CHUNK) \
            minmax(kind, x + j, q, len - j < ROW_CHUNK ? len - j : ROW_CHUNK); \
        for (int w = ROW_CHUNK / 2; w > 0; w /= 2) \
            for (int k = 0; k < w; k++) U(q[k], q[k + w]); \
        const A m = (A)q[0]; \
        U(*acc, m); \
        return; \
    }

/* q[i] = max (min) of q[i] and x[i], in the input's type */
#define MINMAX_ROWS(T, S, UMAX, UMIN) \
    static X86_CLONES void minmax_rows_##S(int kind, const T *restrict x, T *restrict q, int64_t n) { \
        if (kind == X86_R_MAX) \
            for (int64_t i = 0; i < n; i++) { \
                const T v = x[i]; \
                UMAX(q[i], v); \
            } \
        else \
            for (int64_t i = 0; i < n; i++) { \
                const T v = x[i]; \
                UMIN(q[i], v); \
            } \
    }

static void init_float(int kind, void *av, int64_t n) {
    double *a = (double *)av;
    const double v = kind == X86_R_PROD ? 1.0 : kind == X86_R_MAX ? -INFINITY : kind == X86_R_MIN ? INFINITY : 0.0;
    for (int64_t i = 0; i < n; i++) a[i] = v;
}

static inline void combine_float(int kind, void *av, const void *pv, int64_t n) {
    double *a = (double *)av;
    const double *p = (const double *)pv;
    switch (kind) {
    case X86_R_PROD: COMBINE_LOOP(U_PROD);
    case X86_R_MAX: COMBINE_LOOP(U_MAX);
    case X86_R_MIN: COMBINE_LOOP(U_MIN);
    default: COMBINE_LOOP(U_SUM);
    }
}

#define FLOAT_TYPE(T, S) \
    MINMAX_ROWS(T, S, U_MAX, U_MIN) \
    static X86_CLONES void rows_##S(int kind, const void *xv, void *av, int64_t n, const double *shift) { \
        const T *restrict x = (const T *)xv; \
        double *restrict a = (double *)av; \
        switch (kind) { \
        case X86_R_SUM: ROWS_LOOP(double, U_SUM); \
        case X86_R_ABS: ROWS_LOOP(double, U_ABS); \
        case X86_R_SQ: ROWS_LOOP(double, U_SQ); \
        case X86_R_PROD: ROWS_LOOP(double, U_PROD); \
        case X86_R_MAX: ROWS_LOOP(double, U_MAX); \
        case X86_R_MIN: ROWS_LOOP(double, U_MIN); \
        case X86_R_EXP: ROWS_LOOP(double, U_EXPI); \
        case X86_R_POW: ROWS_LOOP(double, U_POWI); \
        } \
    } \
    static inline __attribute__((always_inline)) void run1_##S(int kind, const T *x, int64_t len, double *acc, \
                                                               double shift) { \
        double p[LANES]; \
        const int64_t body = len / LANES * LANES; \
        const double start = kind == X86_R_MAX || kind == X86_R_MIN ? *acc : kind == X86_R_PROD ? 1.0 : 0.0; \
        for (int k = 0; k < LANES; k++) p[k] = start; \
        switch (kind) { \
        case X86_R_SUM: RUN_LOOP(double, U_SUM, U_SUM); \
        case X86_R_ABS: RUN_LOOP(double, U_ABS, U_SUM); \
        case X86_R_SQ: RUN_LOOP(double, U_SQ, U_SUM); \
        case X86_R_PROD: RUN_LOOP(double, U_PROD, U_PROD); \
        case X86_R_MAX: RUN_BY_ROWS(double, T, U_MAX, minmax_rows_##S); \
        case X86_R_MIN: RUN_BY_ROWS(double, T, U_MIN, minmax_rows_##S); \
        case X86_R_EXP: RUN_LOOP(double, U_EXP, U_SUM); \
        case X86_R_POW: RUN_LOOP(double, U_POW, U_SUM); \
        } \
    } \
    static X86_CLONES void run_##S(int kind, const void *xv, int64_t len, int64_t rows, int64_t stride, void *av, \
                                   const double *shift, int64_t step) { \
        for (int64_t r = 0; r < rows; r++) \
            run1_##S(kind, (const T *)xv + r * stride, len, (double *)av + r, shift ? shift[r * step] : 0.0); \
    } \
    static void store_##S(int fin, const void *av, void *yv, int64_t n, double count, const double *shift) { \
        const double *a = (const double *)av; \
        T *y = (T *)yv; \
        for (int64_t i = 0; i < n; i++) { \
            double v = a[i]; \
            switch (fin) { \
            case X86_F_MEAN: v = v / count; break; \
            case X86_F_SQRT: v = sqrt(v); break; \
            case X86_F_LOG: v = log(v); break; \
            case X86_F_LSE: v = log(v) + shift[i]; break; \
            case X86_F_ROOT: v = pow(v, 1.0 / *shift); break; \
            default: break; \
            } \
            y[i] = (T)v; \
        } \
    } \
    static const reduce_type type_##S = {init_float, rows_##S, run_##S, combine_float, store_##S};

FLOAT_TYPE(float, f32)
FLOAT_TYPE(double, f64)

static inline void combine_int(int kind, void *av, const void *pv, int64_t n) {
    int64_t *a = (int64_t *)av;
    const int64_t *p = (const int64_t *)pv;
    switch (kind) {
    case X86_R_PROD: COMBINE_LOOP(U_IPROD);
    case X86_R_MAX: COMBINE_LOOP(U_IMAX);
    case X86_R_MIN: COMBINE_LOOP(U_IMIN);
    default: COMBINE_LOOP(U_ISUM);
    }
}

#define INT_TYPE(T, S, LO, HI) \
    MINMAX_ROWS(T, S, U_IMAX, U_IMIN) \
    static void init_##S(int kind, void *av, int64_t n) { \
        int64_t *a = (int64_t *)av; \
        const int64_t v = kind == X86_R_PROD ? 1 : kind == X86_R_MAX ? (LO) : kind == X86_R_MIN ? (HI) : 0; \
        for (int64_t i = 0; i < n; i++) a[i] = v; \
    } \
    static X86_CLONES void rows_##S(int kind, const void *xv, void *av, int64_t n, const double *shift) { \
        const T *x = (const T *)xv; \
        int64_t *a = (int64_t *)av; \
        (void)shift; \
        switch (kind) { \
        case X86_R_PROD: ROWS_LOOP(int64_t, U_IPROD); \
        case X86_R_MAX: ROWS_LOOP(int64_t, U_IMAX); \
        case X86_R_MIN: ROWS_LOOP(int64_t, U_IMIN); \
        default: ROWS_LOOP(int64_t, U_ISUM); \
        } \
    } \
    static inline __attribute__((always_inline)) void run1_##S(int kind, const T *x, int64_t len, int64_t *acc, \
                                                               double shift) { \
        int64_t p[LANES]; \
        const int64_t body = len / LANES * LANES; \
        const int64_t start = kind == X86_R_MAX || kind == X86_R_MIN ? *acc : kind == X86_R_PROD ? 1 : 0; \
        (void)shift; \
        for (int k = 0; k < LANES; k++) p[k] = start; \
        switch (kind) { \
        case X86_R_PROD: RUN_LOOP(int64_t, U_IPROD, U_IPROD); \
        case X86_R_MAX: RUN_BY_ROWS(int64_t, T, U_IMAX, minmax_rows_##S); \
        case X86_R_MIN: RUN_BY_ROWS(int64_t, T, U_IMIN, minmax_rows_##S); \
        default: RUN_LOOP(int64_t, U_ISUM, U_ISUM); \
        } \
    } \
    static X86_CLONES void run_##S(int kind, const void *xv, int64_t len, int64_t rows, int64_t stride, void *av, \
                                   const double *shift, int64_t step) { \
        for (int64_t r = 0; r < rows; r++) \
            run1_##S(kind, (const T *)xv + r * stride, len, (int64_t *)av + r, shift ? shift[r * step] : 0.0); \
    } \
    static void store_##S(int fin, const void *av, void *yv, int64_t n, double count, const double *shift) { \
        const int64_t *a = (const int64_t *)av; \
        T *y = (T *)yv; \
        (void)fin, (void)count, (void)shift; \
        for (int64_t i = 0; i < n; i++) y[i] = (T)a[i]; \
    } \
    static const reduce_type type_##S = {init_##S, rows_##S, run_##S, combine_int, store_##S};

INT_TYPE(int32_t, i32, INT32_MIN, INT32_MAX)
INT_TYPE(int64_t, i64, INT64_MIN, INT64_MAX)
INT_TYPE(uint8_t, b8, 0, 1) /* bool: ReduceMax is any, ReduceMin all */

static const reduce_type *type_of(int32_t dtype) {
    switch (dtype) {
    case MNN_FLOAT32: return &type_f32;
    case MNN_FLOAT64: return &type_f64;
    case MNN_INT32: return &type_i32;
    case MNN_INT64: return &type_i64;
    case MNN_BOOL: return &type_b8;
    default: return NULL;
    }
}

/* One pass over the input: each output's accumulator, stored with `fin` into y, or (to_shift) its
 * value, 0 where not finite, into s->shift (ReduceLogSumExp's maxima). */
typedef struct {
    const x86_reduction_state *s;
    const reduce_type *t;
    const char *x;
    char *y;
    size_t esz;
    int kind, fin, to_shift;
    const double *shift; /* per output (step 1: the maxima of a log-sum-exp), or one value (step 0: a power) */
    int64_t step, units, tiles;
} reduce_job;

/* an odometer over kept or reduced axes (n of dim, strides str): the element offset of position r,
 * then of r + 1, ... without a division per step */
typedef struct {
    int64_t idx[X86_REDUCE_DIMS], off;
} odometer;

static void odo_seek(odometer *d, int n, const int64_t *dim, const int64_t *str, int64_t r) {
    d->off = 0;
    for (int k = n - 1; k >= 0; k--) {
        d->idx[k] = r ? r % dim[k] : 0;
        d->off += d->idx[k] * str[k];
        r = r ? r / dim[k] : 0;
    }
}

static inline void odo_next(odometer *d, int n, const int64_t *dim, const int64_t *str) {
    for (int k = n - 1; k >= 0; k--) {
        d->off += str[k];
        if (++d->idx[k] < dim[k]) return;
        d->off -= str[k] * dim[k];
        d->idx[k] = 0;
    }
}

/* n outputs from `at` (their inputs from element `base`) accumulated over reduced positions [r0, r1)
 * and the slice [c0, c1) of each run */
static void accumulate(const reduce_job *j, int64_t base, int64_t at, int64_t n, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1, void *acc) {
    const x86_reduction_state *s = j->s;
    odometer d;
    j->t->init(j->kind, acc, n);
    if (r0 >= r1) return; /* a reduced axis of size 0: the outputs are the initial values */
    odo_seek(&d, s->nr, s->rdim, s->rstr, r0);
    for (int64_t r = r0; r < r1; r++, odo_next(&d, s->nr, s->rdim, s->rstr)) {
        const char *p = j->x + (size_t)(base + c0 + d.off) * j->esz;
        if (s->inner > 1)
            j->t->rows(j->kind, p, acc, n, j->shift ? j->shift + at * j->step : NULL);
        else
            j->t->run(j->kind, p, c1 - c0, 1, 0, acc, j->shift ? j->shift + at * j->step : NULL, 0);
    }
}

static void unit_store(const reduce_job *j, int64_t at, int64_t n, const void *acc) {
    if (j->to_shift) {
        const double *a = (const double *)acc;
        for (int64_t i = 0; i < n; i++) j->s->shift[at + i] = isfinite(a[i]) ? a[i] : 0.0;
    } else {
        j->t->store(j->fin, acc, j->y + (size_t)at * j->esz, n, j->s->count, j->shift ? j->shift + at * j->step : NULL);
    }
}

/* units [lo, hi): with runs (inner == 1) one output each, stored TILE at a time; else a tile of a row */
static void units_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const reduce_job *j = (const reduce_job *)ctx;
    const x86_reduction_state *s = j->s;
    int64_t acc[TILE], o = lo / j->tiles, t = lo % j->tiles;
    odometer kd;
    (void)worker;
    odo_seek(&kd, s->nk, s->kdim, s->kstr, o);
    if (s->inner == 1) {
        for (int64_t c0 = lo; c0 < hi; c0 += TILE) {
            const int64_t c1 = hi - c0 < TILE ? hi : c0 + TILE;
            if (s->nr == 0 && s->nk <= 1) { /* one run per output, evenly apart (a global pool, a last axis) */
                j->t->init(j->kind, acc, c1 - c0);
                j->t->run(j->kind, j->x + (size_t)kd.off * j->esz, s->run, c1 - c0, s->nk ? s->kstr[0] : 0, acc,
                          j->shift ? j->shift + c0 * j->step : NULL, j->step);
                kd.off += (c1 - c0) * (s->nk ? s->kstr[0] : 0);
            } else {
                for (int64_t u = c0; u < c1; u++, odo_next(&kd, s->nk, s->kdim, s->kstr))
                    accumulate(j, kd.off, u, 1, 0, s->n_red, 0, s->run, acc + (u - c0));
            }
            unit_store(j, c0, c1 - c0, acc);
        }
        return;
    }
    for (int64_t u = lo; u < hi; u++) {
        const int64_t i0 = t * TILE, n = s->inner - i0 < TILE ? s->inner - i0 : TILE;
        accumulate(j, kd.off + i0, o * s->inner + i0, n, 0, s->n_red, 0, 1, acc);
        unit_store(j, o * s->inner + i0, n, acc);
        if (++t == j->tiles) t = 0, o++, odo_next(&kd, s->nk, s->kdim, s->kstr);
    }
}

/* item = part * units + unit: the part's share of the reduction (of the reduced positions, or of
 * each run where the runs are few) into its row of partial accumulators */
static void part_item(void *ctx, int64_t item, int worker) {
    const reduce_job *j = (const reduce_job *)ctx;
    const x86_reduction_state *s = j->s;
    const int64_t part = item / j->units, u = item % j->units, o = u / j->tiles, i0 = u % j->tiles * TILE;
    const int64_t n = s->inner - i0 < TILE ? s->inner - i0 : TILE, at = o * s->inner + i0;
    int64_t r0 = 0, r1 = s->n_red, c0 = 0, c1 = s->run, acc[TILE];
    odometer kd;
    (void)worker;
    if (s->inner > 1) {
        r0 = s->n_red * part / s->parts, r1 = s->n_red * (part + 1) / s->parts;
    } else {
        c0 = s->run * part / s->parts, c1 = s->run * (part + 1) / s->parts;
    }
    odo_seek(&kd, s->nk, s->kdim, s->kstr, o);
    accumulate(j, kd.off + i0, at, n, r0, r1, c0, c1, acc);
    memcpy((int64_t *)s->partial + part * s->n_out + at, acc, (size_t)n * sizeof(int64_t));
}

static void reduce_pass(reduce_job *j, int kind, int fin, int to_shift, const double *shift, int64_t step) {
    const x86_reduction_state *s = j->s;
    j->kind = kind, j->fin = fin, j->to_shift = to_shift, j->shift = shift, j->step = step;
    if (s->parts > 1) {
        x86_pool->parallel(s->op.threads, s->parts * j->units, part_item, j);
        for (int64_t p = 1; p < s->parts; p++)
            j->t->combine(kind, s->partial, (const int64_t *)s->partial + p * s->n_out, s->n_out);
        unit_store(j, 0, s->n_out, s->partial);
        return;
    }
    const int64_t per_unit = s->n_red * s->run * (s->inner < TILE ? s->inner : TILE);
    x86_pool->ranges(s->op.threads, j->units, GRAIN / (per_unit > 0 ? per_unit : 1) + 1, units_range, j);
}

int x86_reduction_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_reduction_state *s = (x86_reduction_state *)state;
    (void)n_in, (void)n_out;
    s->dtype = ins[0].dtype;
    reduce_job j = {s, type_of(s->dtype), (const char *)ins[0].data, (char *)outs[0].data,
                    mnn_dtype_size(s->dtype), 0, 0, 0, NULL, 0, 0, (s->inner + TILE - 1) / TILE};
    if (j.t == NULL) {
        s->op.error = "reduce: a dtype this kernel was not built for";
        return 1;
    }
    if (s->n_out == 0) return 0;
    j.units = s->n_out / s->inner * j.tiles;
    if (s->fin == X86_F_LSE) { /* the maxima first, so that no exp overflows */
        reduce_pass(&j, X86_R_MAX, X86_F_NONE, 1, NULL, 0);
        reduce_pass(&j, X86_R_EXP, X86_F_LSE, 0, s->shift, 1);
    } else {
        reduce_pass(&j, s->kind, s->fin, 0, s->kind == X86_R_POW ? &s->power : NULL, 0);
    }
    return 0;
}
