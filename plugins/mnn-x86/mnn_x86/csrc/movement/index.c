/* The index ops: Gather, GatherElements, GatherND, the scatters, OneHot, ReverseSequence, Trilu and
 * EyeLike. Indices are checked in one pass before anything is written, so a bad one fails the run
 * with its value in the message and nothing is read out of bounds. Scatters apply their updates in
 * order on one thread: with repeated indices the last write (or every reduction) must land as numpy's. */
#include <stdio.h>
#include <string.h>

#include "movement.h"

#define ROW_GRAIN 65536 /* bytes */

static int64_t grain_of(int64_t row_bytes) {
    return row_bytes >= ROW_GRAIN ? 1 : ROW_GRAIN / (row_bytes > 0 ? row_bytes : 1);
}

/* element i of an index tensor of any integer (or float, OneHot's) dtype */
static inline int64_t index_at(const mnn_tensor *t, int64_t i) {
    switch (t->dtype) {
    case MNN_INT64: return ((const int64_t *)t->data)[i];
    case MNN_INT32: return ((const int32_t *)t->data)[i];
    case MNN_INT16: return ((const int16_t *)t->data)[i];
    case MNN_INT8: return ((const int8_t *)t->data)[i];
    case MNN_UINT8: return ((const uint8_t *)t->data)[i];
    case MNN_UINT16: return ((const uint16_t *)t->data)[i];
    case MNN_UINT32: return ((const uint32_t *)t->data)[i];
    case MNN_UINT64: return (int64_t)((const uint64_t *)t->data)[i];
    case MNN_FLOAT32: return (int64_t)((const float *)t->data)[i];
    case MNN_FLOAT64: return (int64_t)((const double *)t->data)[i];
    default: return 0;
    }
}

static int bad_index(x86_index_state *s, const char *op, int64_t v, int64_t dim, int64_t at) {
    snprintf(s->msg, MV_MSG, "x86 %s: index %lld (element %lld of the indices) is outside [%lld, %lld]", op,
             (long long)v, (long long)at, (long long)-dim, (long long)(dim - 1));
    s->op.error = s->msg;
    return 1;
}

/* every index in [-dim, dim - 1], or the run fails naming the first one that is not */
static int check_indices(x86_index_state *s, const char *op, const mnn_tensor *t, int64_t dim) {
    const int64_t n = mnn_tensor_numel(t);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t v = index_at(t, i);
        if (v < -dim || v >= dim) return bad_index(s, op, v, dim, i);
    }
    return 0;
}

static inline int64_t wrap(int64_t v, int64_t dim) {
    return v < 0 ? v + dim : v;
}

/* -- Gather ------------------------------------------------------------------------------------- */

typedef struct {
    const x86_index_state *s;
    const mnn_tensor *idx;
    const char *x;
    char *y;
    int64_t n; /* indices */
} index_job;

static void gather_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const index_job *j = (const index_job *)ctx;
    const x86_index_state *s = j->s;
    const size_t row = (size_t)(s->inner * s->elsize);
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t o = r / j->n, k = wrap(index_at(j->idx, r % j->n), s->dim);
        memcpy(j->y + r * row, j->x + (o * s->dim + k) * row, row);
    }
}

int x86_gather_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    if (check_indices(s, "Gather", &ins[1], s->dim)) return 1;
    index_job j = {s, &ins[1], (const char *)ins[0].data, (char *)outs[0].data, mnn_tensor_numel(&ins[1])};
    const int64_t rows = s->outer * j.n;
    if (rows * s->inner == 0) return 0;
    x86_pool->ranges(s->op.threads, rows, grain_of(s->inner * s->elsize), gather_range, &j);
    return 0;
}

/* -- GatherElements / ScatterElements ------------------------------------------------------------ */

/* the data offset of element e of the indices (its multi-index with the axis replaced by its value) */
static inline int64_t element_offset(const x86_index_state *s, const mnn_tensor *idx, int64_t e) {
    int64_t off = 0, rest = e;
    for (int32_t d = s->ndim - 1; d >= 0; --d) {
        const int64_t i = rest % s->dims[d];
        rest /= s->dims[d];
        off += (d == s->axis ? wrap(index_at(idx, e), s->ddims[d]) : i) * s->dstride[d];
    }
    return off;
}

static void gather_elements_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const index_job *j = (const index_job *)ctx;
    const int32_t size = j->s->elsize;
    (void)worker;
    for (int64_t e = lo; e < hi; ++e) memcpy(j->y + e * size, j->x + element_offset(j->s, j->idx, e) * size, size);
}

int x86_gather_elements_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    if (check_indices(s, "GatherElements", &ins[1], s->ddims[s->axis])) return 1;
    index_job j = {s, &ins[1], (const char *)ins[0].data, (char *)outs[0].data, mnn_tensor_numel(&ins[1])};
    if (j.n == 0) return 0;
    x86_pool->ranges(s->op.threads, j.n, grain_of(s->elsize * 8), gather_elements_range, &j);
    return 0;
}

/* dst[i] = reduce(dst[i], src[i]) for i < n: 1 add, 2 mul, 3 max, 4 min (NaN wins max and min, as numpy) */
#define REDUCE_LOOP(T)                                                                      \
    {                                                                                       \
        T *d = (T *)dst;                                                                    \
        const T *u = (const T *)src;                                                        \
        for (int64_t i = 0; i < n; ++i) {                                                   \
            switch (red) {                                                                  \
            case 1: d[i] = (T)(d[i] + u[i]); break;                                         \
            case 2: d[i] = (T)(d[i] * u[i]); break;                                         \
            case 3: d[i] = (u[i] > d[i] || u[i] != u[i]) ? u[i] : d[i]; break;              \
            default: d[i] = (u[i] < d[i] || u[i] != u[i]) ? u[i] : d[i]; break;             \
            }                                                                               \
        }                                                                                   \
        return;                                                                             \
    }

static void reduce_into(void *dst, const void *src, int64_t n, int32_t dtype, int32_t red) {
    switch (dtype) {
    case MNN_FLOAT32: REDUCE_LOOP(float)
    case MNN_FLOAT64: REDUCE_LOOP(double)
    case MNN_FLOAT16: REDUCE_LOOP(_Float16)
    case MNN_INT64: REDUCE_LOOP(int64_t)
    case MNN_INT32: REDUCE_LOOP(int32_t)
    case MNN_INT16: REDUCE_LOOP(int16_t)
    case MNN_INT8: REDUCE_LOOP(int8_t)
    case MNN_UINT64: REDUCE_LOOP(uint64_t)
    case MNN_UINT32: REDUCE_LOOP(uint32_t)
    case MNN_UINT16: REDUCE_LOOP(uint16_t)
    case MNN_UINT8: REDUCE_LOOP(uint8_t)
    case MNN_BOOL: { /* add and max are or, mul and min are and (numpy's bool arithmetic) */
        uint8_t *d = (uint8_t *)dst;
        const uint8_t *u = (const uint8_t *)src;
        for (int64_t i = 0; i < n; ++i) d[i] = (red == 1 || red == 3) ? (d[i] || u[i]) : (d[i] && u[i]);
        return;
    }
    default: return;
    }
}

/* out = data, then each update written (or reduced) at its place */
static void scatter_apply(const x86_index_state *s, char *y, int64_t off, const char *u, int64_t n, int32_t dtype) {
    if (s->reduction == 0) memcpy(y + off * s->elsize, u, (size_t)(n * s->elsize));
    else reduce_into(y + off * s->elsize, u, n, dtype, s->reduction);
}

static void copy_data(const x86_index_state *s, const mnn_tensor *x, mnn_tensor *y) {
    if (x->data != y->data) memcpy(y->data, x->data, (size_t)(mnn_tensor_numel(y) * s->elsize));
}

int x86_scatter_elements_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    if (check_indices(s, "ScatterElements", &ins[1], s->ddims[s->axis])) return 1;
    copy_data(s, &ins[0], &outs[0]);
    const int64_t n = mnn_tensor_numel(&ins[1]);
    const char *u = (const char *)ins[2].data;
    for (int64_t e = 0; e < n; ++e)
        scatter_apply(s, (char *)outs[0].data, element_offset(s, &ins[1], e), u + e * s->elsize, 1, outs[0].dtype);
    return 0;
}

/* -- GatherND / ScatterND ------------------------------------------------------------------------ */

/* the data offset of tuple t (of per_batch in its batch), or -1 with the message set */
static int64_t tuple_offset(x86_index_state *s, const char *op, const mnn_tensor *idx, int64_t t, int32_t first) {
    const int64_t batch = t / s->per_batch;
    int64_t off = batch * s->batch_stride;
    for (int64_t q = 0; q < s->k; ++q) {
        const int64_t dim = s->ddims[first + q], v = index_at(idx, t * s->k + q);
        if (v < -dim || v >= dim) {
            bad_index(s, op, v, dim, t * s->k + q);
            return -1;
        }
        off += wrap(v, dim) * s->dstride[first + q];
    }
    return off;
}

static void gather_nd_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const index_job *j = (const index_job *)ctx;
    x86_index_state *s = (x86_index_state *)j->s;
    const size_t row = (size_t)(s->inner * s->elsize);
    (void)worker;
    for (int64_t t = lo; t < hi; ++t)
        memcpy(j->y + t * row, j->x + tuple_offset(s, "GatherND", j->idx, t, s->axis) * s->elsize, row);
}

int x86_gather_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t tuples = s->batch * s->per_batch;
    for (int64_t t = 0; t < tuples; ++t)
        if (tuple_offset(s, "GatherND", &ins[1], t, s->axis) < 0) return 1;
    if (tuples * s->inner == 0) return 0;
    index_job j = {s, &ins[1], (const char *)ins[0].data, (char *)outs[0].data, tuples};
    x86_pool->ranges(s->op.threads, tuples, grain_of(s->inner * s->elsize), gather_nd_range, &j);
    return 0;
}

int x86_scatter_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t tuples = s->per_batch;
    for (int64_t t = 0; t < tuples; ++t)
        if (tuple_offset(s, "ScatterND", &ins[1], t, 0) < 0) return 1;
    copy_data(s, &ins[0], &outs[0]);
    const char *u = (const char *)ins[2].data;
    for (int64_t t = 0; t < tuples; ++t)
        scatter_apply(s, (char *)outs[0].data, tuple_offset(s, "ScatterND", &ins[1], t, 0),
                      u + t * s->inner * s->elsize, s->inner, outs[0].dtype);
    return 0;
}

/* -- OneHot --------------------------------------------------------------------------------------- */

/* n copies of the size-byte value at v: typed stores for the usual sizes, which vectorize (a memcpy of
 * 4 bytes per element, a call each, took magika's 3072 x 257 one-hot 7 ms of a 20 ms run) */
static void fill_values(char *y, const char *v, int64_t n, int32_t size) {
    if (size == 4) {
        uint32_t x, *o = (uint32_t *)y;
        memcpy(&x, v, 4);
        for (int64_t e = 0; e < n; ++e) o[e] = x;
    } else if (size == 8) {
        uint64_t x, *o = (uint64_t *)y;
        memcpy(&x, v, 8);
        for (int64_t e = 0; e < n; ++e) o[e] = x;
    } else if (size == 1) {
        memset(y, v[0], (size_t)n);
    } else {
        for (int64_t e = 0; e < n; ++e) memcpy(y + e * size, v, (size_t)size);
    }
}

/* out[o, d, i] = on where index[o, i] (negative: from the end) is d, off elsewhere; outside [-D, D)
 * nothing is on */
static void onehot_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const index_job *j = (const index_job *)ctx;
    const x86_index_state *s = j->s;
    const int32_t size = s->elsize;
    const int64_t depth = s->dim, inner = s->inner;
    (void)worker;
    for (int64_t o = lo; o < hi; ++o) {
        char *y = j->y + o * depth * inner * size;
        fill_values(y, j->x, depth * inner, size);
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t v = wrap(index_at(j->idx, o * inner + i), depth);
            if (v >= 0 && v < depth) memcpy(y + (v * inner + i) * size, j->x + size, size);
        }
    }
}

int x86_onehot_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    if (s->outer * s->dim * s->inner == 0) return 0;
    index_job j = {s, &ins[0], (const char *)ins[1].data, (char *)outs[0].data, 0};
    x86_pool->ranges(s->op.threads, s->outer, grain_of(s->dim * s->inner * s->elsize), onehot_range, &j);
    return 0;
}

/* -- ReverseSequence ------------------------------------------------------------------------------- */

static void reverse_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const index_job *j = (const index_job *)ctx;
    const x86_index_state *s = j->s;
    const int64_t T = s->dim, B = s->outer;
    const size_t row = (size_t)(s->inner * s->elsize);
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t t = s->time_major ? r / B : r % T, b = s->time_major ? r % B : r / T;
        int64_t len = index_at(j->idx, b);
        len = len > T ? T : len;
        const int64_t src = t < len ? len - 1 - t : t;
        memcpy(j->y + r * row, j->x + (s->time_major ? src * B + b : b * T + src) * row, row);
    }
}

int x86_reverse_sequence_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    for (int64_t b = 0; b < s->outer; ++b) {
        const int64_t len = index_at(&ins[1], b);
        if (len < 0) {
            snprintf(s->msg, MV_MSG, "x86 ReverseSequence: sequence_lens[%lld] = %lld is negative", (long long)b,
                     (long long)len);
            s->op.error = s->msg;
            return 1;
        }
    }
    const int64_t rows = s->outer * s->dim;
    if (rows * s->inner == 0) return 0;
    index_job j = {s, &ins[1], (const char *)ins[0].data, (char *)outs[0].data, 0};
    x86_pool->ranges(s->op.threads, rows, grain_of(s->inner * s->elsize), reverse_range, &j);
    return 0;
}

/* -- Trilu / EyeLike ------------------------------------------------------------------------------- */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* row r of the matrices [outer, M = dim, N = inner]: upper keeps columns >= i + k, lower <= i + k */
static void trilu_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const index_job *j = (const index_job *)ctx;
    const x86_index_state *s = j->s;
    const int64_t M = s->dim, N = s->inner, size = s->elsize;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t i = r % M;
        char *y = j->y + r * N * size;
        const char *x = j->x + r * N * size;
        const int64_t cut = s->upper ? clamp(i + s->diag, 0, N) : clamp(i + s->diag + 1, 0, N);
        const int64_t keep_lo = s->upper ? cut : 0, keep_hi = s->upper ? N : cut;
        memset(y, 0, (size_t)(N * size));
        if (keep_hi > keep_lo) memcpy(y + keep_lo * size, x + keep_lo * size, (size_t)((keep_hi - keep_lo) * size));
    }
}

int x86_trilu_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t rows = s->outer * s->dim;
    if (rows * s->inner == 0) return 0;
    index_job j = {s, NULL, (const char *)ins[0].data, (char *)outs[0].data, 0};
    x86_pool->ranges(s->op.threads, rows, grain_of(s->inner * s->elsize), trilu_range, &j);
    return 0;
}

int x86_eyelike_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_index_state *s = (x86_index_state *)state;
    const int64_t M = s->dim, N = s->inner, size = s->elsize;
    char *y = (char *)outs[0].data;
    (void)ins;
    (void)n_in;
    (void)n_out;
    if (M * N == 0) return 0;
    memset(y, 0, (size_t)(M * N * size));
    for (int64_t i = clamp(-s->diag, 0, M); i < M && i + s->diag < N; ++i)
        memcpy(y + (i * N + i + s->diag) * size, s->value, (size_t)size);
    return 0;
}
