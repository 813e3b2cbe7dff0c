/* Resize of NCHW planes from tables (spatial.h) */
#include <string.h>

#include "spatial.h"

#define RESIZE_GRAIN 16384 /* output elements: fewer are not worth a thread */

typedef struct {
    const x86_resize_state *s;
    const char *x;
    char *y;
    size_t esize;
} resize_job;

/* nearest: one output row picked from `src`; the copies by element size vectorize as gathers */
X86_CLONES static void pick4(uint32_t *restrict y, const uint32_t *restrict x, const int64_t *col, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[col[i]];
}

X86_CLONES static void pick_any(char *restrict y, const char *restrict x, const int64_t *col, int64_t n, size_t esize) {
    switch (esize) {
    case 1: for (int64_t i = 0; i < n; ++i) y[i] = x[col[i]]; break;
    case 2: for (int64_t i = 0; i < n; ++i) ((uint16_t *)y)[i] = ((const uint16_t *)x)[col[i]]; break;
    case 8: for (int64_t i = 0; i < n; ++i) ((uint64_t *)y)[i] = ((const uint64_t *)x)[col[i]]; break;
    default: pick4((uint32_t *)y, (const uint32_t *)x, col, n); break;
    }
}

/* nearest upsampling by a whole factor along W: each element written f times, without the table */
X86_CLONES static void repeat4(uint32_t *restrict y, const uint32_t *restrict x, int64_t n, int32_t f) {
    if (f == 2) {
        for (int64_t i = 0; i < n; ++i) y[2 * i] = y[2 * i + 1] = x[i];
    } else {
        for (int64_t i = 0; i < n; ++i)
            for (int32_t k = 0; k < f; ++k) y[i * f + k] = x[i];
    }
}

/* linear: one input row interpolated along W */
X86_CLONES static void blend_cols(float *restrict y, const float *restrict x, const int64_t *lo, const int64_t *hi,
                                  const float *w, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[lo[i]] + (x[hi[i]] - x[lo[i]]) * w[i];
}

X86_CLONES static void blend_rows(float *restrict y, const float *a, const float *b, float w, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + (b[i] - a[i]) * w;
}

/* output rows [lo, hi) over all planes (row r: plane r / OH); an output row reading the same input
 * row as the one before it (upsampling) is a copy of it */
static void nearest_rows(void *ctx, int64_t lo, int64_t hi, int worker) {
    const resize_job *j = (const resize_job *)ctx;
    const x86_resize_state *s = j->s;
    const size_t row_bytes = (size_t)s->OW * j->esize;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t plane = r / s->OH, oh = r % s->OH;
        char *y = j->y + r * row_bytes;
        if (r > lo && oh > 0 && s->row_lo[oh] == s->row_lo[oh - 1]) {
            memcpy(y, y - row_bytes, row_bytes);
            continue;
        }
        const char *x = j->x + ((plane * s->H + s->row_lo[oh]) * s->W) * (int64_t)j->esize;
        if (s->repeat && j->esize == 4)
            repeat4((uint32_t *)y, (const uint32_t *)x, s->W, s->repeat);
        else
            pick_any(y, x, s->col_lo, s->OW, j->esize);
    }
}

/* the worker's two rows hold the W-interpolated input rows last used (keys: plane * H + row); a miss
 * replaces the row not holding `pin` (the other row of the output row being made), else the lower one */
static const float *cached_row(const resize_job *j, float *buf, int64_t *keys, int64_t key, int64_t pin) {
    const x86_resize_state *s = j->s;
    if (keys[0] == key) return buf;
    if (keys[1] == key) return buf + s->OW;
    const int slot = keys[0] == pin ? 1 : keys[1] == pin ? 0 : keys[0] > keys[1];
    float *row = buf + slot * s->OW;
    blend_cols(row, (const float *)j->x + key * s->W, s->col_lo, s->col_hi, s->col_w, s->OW);
    keys[slot] = key;
    return row;
}

static void linear_rows(void *ctx, int64_t lo, int64_t hi, int worker) {
    const resize_job *j = (const resize_job *)ctx;
    const x86_resize_state *s = j->s;
    float *buf = s->work + (int64_t)worker * 2 * s->OW;
    int64_t keys[2] = {-1, -2};
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t plane = r / s->OH, oh = r % s->OH;
        const int64_t ka = plane * s->H + s->row_lo[oh], kb = plane * s->H + s->row_hi[oh];
        const float *a = cached_row(j, buf, keys, ka, -3);
        const float *b = cached_row(j, buf, keys, kb, ka);
        blend_rows((float *)j->y + r * s->OW, a, b, s->row_w[oh], s->OW);
    }
}

int x86_resize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_resize_state *s = (x86_resize_state *)state;
    (void)n_in;
    (void)n_out;
    if (s->linear && ins[0].dtype != MNN_FLOAT32) {
        s->op.error = "x86 Resize (linear) takes float32 tensors";
        return 1;
    }
    resize_job j = {s, (const char *)ins[0].data, (char *)outs[0].data, mnn_dtype_size(ins[0].dtype)};
    x86_pool->ranges(s->op.threads, s->planes * s->OH, RESIZE_GRAIN / (s->OW + 1) + 1,
                     s->linear ? linear_rows : nearest_rows, &j);
    return 0;
}
