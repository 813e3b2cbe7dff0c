/* Layout runs: Concat and Transpose. Any dtype: they move bytes. */
#include <string.h>

#include "ops.h"

/* Concat runs as ranges of the output's bytes on the thread pool: at batch > 1 its inputs cannot be
 * written in place (the core elides a Concat only where each input is one contiguous run of the output),
 * and a copy of megabytes runs faster on two cores than on one. Each range finds the (outer index, input)
 * it starts in and copies run by run. */
#define CONCAT_UNIT 16384          /* bytes: the ranges' unit */
#define CONCAT_GRAIN_UNITS 8       /* a range of less than 128 KB is not worth a thread */

typedef struct {
    const x86_concat_state *s;
    const mnn_tensor *ins;
    int32_t n;     /* inputs */
    size_t es;     /* bytes per element */
    size_t row;    /* output bytes per outer index */
    size_t total;  /* output bytes */
    char *y;
} concat_job;

static void concat_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const concat_job *j = (const concat_job *)ctx;
    (void)worker;
    size_t pos = (size_t)lo * CONCAT_UNIT, end = (size_t)hi * CONCAT_UNIT;
    if (end > j->total) end = j->total;
    while (pos < end) {
        const size_t o = pos / j->row;
        size_t at = pos % j->row, nb = 0;
        int32_t i = 0;
        for (; i < j->n; ++i) { /* the input whose block holds byte `at` of the row */
            nb = (size_t)j->s->block[i] * j->es;
            if (at < nb) break;
            at -= nb;
        }
        if (i == j->n) return; /* a row longer than the blocks: cannot happen (prepare sums them) */
        const size_t take = nb - at < end - pos ? nb - at : end - pos;
        memcpy(j->y + pos, (const char *)j->ins[i].data + o * nb + at, take);
        pos += take;
    }
}

/* rows of at most CONCAT_SHORT_ROW bytes (attacut's stack of three 1-float columns: 4608 pieces of 4
 * bytes, 19.6 us by the byte walk above): a row at a time, each input's block copied in turn */
#define CONCAT_SHORT_ROW 256
static void concat_rows(void *ctx, int64_t lo, int64_t hi, int worker) {
    const concat_job *j = (const concat_job *)ctx;
    (void)worker;
    for (int64_t o = lo; o < hi; ++o) {
        char *dst = j->y + (size_t)o * j->row;
        for (int32_t i = 0; i < j->n; ++i) {
            const size_t nb = (size_t)j->s->block[i] * j->es;
            const char *src = (const char *)j->ins[i].data + (size_t)o * nb;
            if (nb == 4) memcpy(dst, src, 4); /* a constant size: one move */
            else memcpy(dst, src, nb);
            dst += nb;
        }
    }
}

int x86_concat_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_concat_state *s = (x86_concat_state *)state;
    (void)n_out;
    concat_job j = {s, ins, s->n < n_in ? s->n : n_in, mnn_dtype_size(outs[0].dtype), 0, 0, (char *)outs[0].data};
    for (int32_t i = 0; i < j.n; ++i) j.row += (size_t)s->block[i] * j.es;
    j.total = j.row * (size_t)s->outer;
    if (j.total == 0) return 0;
    if (j.row <= CONCAT_SHORT_ROW) {
        x86_parallel_ranges(s->op.threads, s->outer, 1 + CONCAT_GRAIN_UNITS * CONCAT_UNIT / j.row, concat_rows, &j);
        return 0;
    }
    x86_parallel_ranges(s->op.threads, (int64_t)((j.total + CONCAT_UNIT - 1) / CONCAT_UNIT), CONCAT_GRAIN_UNITS,
                        concat_range, &j);
    return 0;
}

/* copy with output axis d reading the input at stride strides[d] */
static void transpose_rec(const char *x, char **y, const x86_transpose_state *s, int d, size_t es) {
    const int64_t n = s->dims[d], st = s->strides[d] * (int64_t)es;
    if (d == s->ndim - 1) {
        char *out = *y;
        if (es == 4) {
            for (int64_t i = 0; i < n; ++i) ((uint32_t *)out)[i] = *(const uint32_t *)(x + i * st);
        } else {
            for (int64_t i = 0; i < n; ++i) memcpy(out + i * es, x + i * st, es);
        }
        *y = out + n * es;
        return;
    }
    for (int64_t i = 0; i < n; ++i) transpose_rec(x + i * st, y, s, d + 1, es);
}

int x86_transpose_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_transpose_state *s = (x86_transpose_state *)state;
    (void)n_in;
    (void)n_out;
    char *y = (char *)outs[0].data;
    if (mnn_tensor_numel(&outs[0]) == 0) return 0;
    if (s->ndim == 0) {
        memcpy(y, ins[0].data, mnn_dtype_size(outs[0].dtype));
        return 0;
    }
    transpose_rec((const char *)ins[0].data, &y, s, 0, mnn_dtype_size(outs[0].dtype));
    return 0;
}
