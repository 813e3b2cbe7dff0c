/* Strided copies (Slice, Split, Expand, Tile, DepthToSpace, SpaceToDepth), Where and Pad. Each walks
 * the dense output row by row (a row: the innermost dim), carrying the inputs' offsets along, and cuts
 * the rows into ranges for the pool. */
#include <string.h>

#include "movement.h"

#define ROW_GRAIN 65536 /* bytes: fewer per range are not worth a thread */

/* rows of at least ROW_GRAIN bytes per range, whatever the row length */
static int64_t row_grain(int64_t row_bytes) {
    return row_bytes >= ROW_GRAIN ? 1 : ROW_GRAIN / (row_bytes > 0 ? row_bytes : 1);
}

/* The index of row `row` (over dims[0 .. nd-2]) and each operand's offset there */
static void walk_start(int32_t nd, const int64_t *dims, int n_ops, const int64_t *const *strides, int64_t row,
                       int64_t *idx, int64_t *off) {
    for (int k = 0; k < n_ops; ++k) off[k] = 0;
    for (int32_t d = nd - 2; d >= 0; --d) {
        idx[d] = row % dims[d];
        row /= dims[d];
        for (int k = 0; k < n_ops; ++k) off[k] += idx[d] * strides[k][d];
    }
}

/* to the next row: the odometer carries from dim nd-2 outwards */
static void walk_next(int32_t nd, const int64_t *dims, int n_ops, const int64_t *const *strides, int64_t *idx,
                      int64_t *off) {
    for (int32_t d = nd - 2; d >= 0; --d) {
        for (int k = 0; k < n_ops; ++k) off[k] += strides[k][d];
        if (++idx[d] < dims[d]) return;
        for (int k = 0; k < n_ops; ++k) off[k] -= idx[d] * strides[k][d];
        idx[d] = 0;
    }
}

/* n elements of `size` bytes from x (every `step` elements) to dense y */
#define STRIDED_ROW(T)                                                      \
    static void row_##T(char *y, const char *x, int64_t n, int64_t step) { \
        T *restrict yy = (T *)y;                                            \
        const T *restrict xx = (const T *)x;                                \
        for (int64_t i = 0; i < n; ++i) yy[i] = xx[i * step];               \
    }
STRIDED_ROW(uint8_t)
STRIDED_ROW(uint16_t)
STRIDED_ROW(uint32_t)
STRIDED_ROW(uint64_t)

static void strided_row(char *y, const char *x, int64_t n, int64_t step, int32_t size) {
    if (step == 1) {
        memcpy(y, x, (size_t)(n * size));
        return;
    }
    switch (size) {
    case 8: row_uint64_t(y, x, n, step); break;
    case 4: row_uint32_t(y, x, n, step); break;
    case 2: row_uint16_t(y, x, n, step); break;
    default: row_uint8_t(y, x, n, step); break;
    }
}

typedef struct {
    const x86_strided_plan *p;
    const char *x;
    char *y;
    int32_t size;
} strided_job;

static void strided_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const strided_job *j = (const strided_job *)ctx;
    const x86_strided_plan *p = j->p;
    const int64_t *strides[1] = {p->stride};
    const int64_t n = p->dims[p->ndim - 1], step = p->stride[p->ndim - 1];
    int64_t idx[MV_DIMS], off[1];
    (void)worker;
    walk_start(p->ndim, p->dims, 1, strides, lo, idx, off);
    for (int64_t r = lo; r < hi; ++r) {
        strided_row(j->y + r * n * j->size, j->x + (p->base + off[0]) * j->size, n, step, j->size);
        walk_next(p->ndim, p->dims, 1, strides, idx, off);
    }
}

int x86_strided_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_strided_state *s = (x86_strided_state *)state;
    (void)n_in;
    for (int32_t p = 0; p < s->n_plans && p < n_out; ++p) {
        const x86_strided_plan *plan = &s->plan[p];
        int64_t rows = 1;
        for (int32_t d = 0; d + 1 < plan->ndim; ++d) rows *= plan->dims[d];
        const int64_t n = plan->dims[plan->ndim - 1];
        if (rows * n == 0) continue;
        strided_job j = {plan, (const char *)ins[0].data, (char *)outs[p].data, s->elsize};
        x86_pool->ranges(s->op.threads, rows, row_grain(n * s->elsize), strided_range, &j);
    }
    return 0;
}

/* -- Where ---------------------------------------------------------------------------------------- */

#define WHERE_ROW(T)                                                                                 \
    X86_CLONES static void where_##T(char *y, const uint8_t *c, const char *a, const char *b, int64_t n, \
                                     int64_t cs, int64_t as, int64_t bs) {                           \
        T *restrict yy = (T *)y;                                                                     \
        const T *restrict aa = (const T *)a, *restrict bb = (const T *)b;                            \
        for (int64_t i = 0; i < n; ++i) yy[i] = c[i * cs] ? aa[i * as] : bb[i * bs];                 \
    }
WHERE_ROW(uint8_t)
WHERE_ROW(uint16_t)
WHERE_ROW(uint32_t)
WHERE_ROW(uint64_t)

typedef struct {
    const x86_where_state *s;
    const uint8_t *c;
    const char *a, *b;
    char *y;
} where_job;

static void where_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const where_job *j = (const where_job *)ctx;
    const x86_where_state *s = j->s;
    const int64_t *strides[3] = {s->stride[0], s->stride[1], s->stride[2]};
    const int32_t last = s->ndim - 1, size = s->elsize;
    const int64_t n = s->dims[last], cs = s->stride[0][last], as = s->stride[1][last], bs = s->stride[2][last];
    int64_t idx[MV_DIMS], off[3];
    (void)worker;
    walk_start(s->ndim, s->dims, 3, strides, lo, idx, off);
    for (int64_t r = lo; r < hi; ++r) {
        char *y = j->y + r * n * size;
        const uint8_t *c = j->c + off[0];
        const char *a = j->a + off[1] * size, *b = j->b + off[2] * size;
        switch (size) {
        case 8: where_uint64_t(y, c, a, b, n, cs, as, bs); break;
        case 4: where_uint32_t(y, c, a, b, n, cs, as, bs); break;
        case 2: where_uint16_t(y, c, a, b, n, cs, as, bs); break;
        default: where_uint8_t(y, c, a, b, n, cs, as, bs); break;
        }
        walk_next(s->ndim, s->dims, 3, strides, idx, off);
    }
}

int x86_where_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_where_state *s = (x86_where_state *)state;
    (void)n_in;
    (void)n_out;
    int64_t rows = 1;
    for (int32_t d = 0; d + 1 < s->ndim; ++d) rows *= s->dims[d];
    const int64_t n = s->dims[s->ndim - 1];
    if (rows * n == 0) return 0;
    where_job j = {s, (const uint8_t *)ins[0].data, (const char *)ins[1].data, (const char *)ins[2].data,
                   (char *)outs[0].data};
    x86_pool->ranges(s->op.threads, rows, row_grain(n * s->elsize), where_range, &j);
    return 0;
}

/* -- Pad ------------------------------------------------------------------------------------------ */

typedef struct {
    const x86_pad_state *s;
    const char *x;
    char *y;
} pad_job;

static void fill(char *y, const unsigned char *value, int64_t n, int32_t size) {
    for (int64_t i = 0; i < n; ++i) memcpy(y + i * size, value, (size_t)size);
}

/* one output row: the constant where the maps say -1, else the mapped input elements */
static void pad_row(const x86_pad_state *s, char *y, const char *x, int64_t row_off) {
    const int32_t size = s->elsize;
    const int64_t n = s->dims[s->ndim - 1];
    const int64_t *map = s->maps[s->ndim - 1];
    if (row_off < 0) {
        fill(y, s->value, n, size);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        if (i == s->lo && s->hi > s->lo) {  /* the interior: one contiguous run */
            memcpy(y + i * size, x + (row_off + map[i]) * size, (size_t)((s->hi - s->lo) * size));
            i = s->hi - 1;
        } else if (map[i] < 0) {
            memcpy(y + i * size, s->value, (size_t)size);
        } else {
            memcpy(y + i * size, x + (row_off + map[i]) * size, (size_t)size);
        }
    }
}

static void pad_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const pad_job *j = (const pad_job *)ctx;
    const x86_pad_state *s = j->s;
    const int64_t n = s->dims[s->ndim - 1];
    int64_t idx[MNN_MAX_DIMS];
    (void)worker;
    int64_t rest = lo;
    for (int32_t d = s->ndim - 2; d >= 0; --d) {
        idx[d] = rest % s->dims[d];
        rest /= s->dims[d];
    }
    for (int64_t r = lo; r < hi; ++r) {
        int64_t off = 0;
        for (int32_t d = 0; d + 1 < s->ndim && off >= 0; ++d) {
            const int64_t m = s->maps[d][idx[d]];
            off = m < 0 ? -1 : off + m;
        }
        pad_row(s, j->y + r * n * s->elsize, j->x, off);
        for (int32_t d = s->ndim - 2; d >= 0; --d) {
            if (++idx[d] < s->dims[d]) break;
            idx[d] = 0;
        }
    }
}

int x86_pad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_pad_state *s = (x86_pad_state *)state;
    (void)n_in;
    (void)n_out;
    int64_t rows = 1;
    for (int32_t d = 0; d + 1 < s->ndim; ++d) rows *= s->dims[d];
    const int64_t n = s->dims[s->ndim - 1];
    if (rows * n == 0) return 0;
    pad_job j = {s, (const char *)ins[0].data, (char *)outs[0].data};
    x86_pool->ranges(s->op.threads, rows, row_grain(n * s->elsize), pad_range, &j);
    return 0;
}
