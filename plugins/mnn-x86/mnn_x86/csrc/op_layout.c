/* Layout runs: Concat and Transpose. Any dtype: they move bytes. */
#include <string.h>

#include "ops.h"

static size_t dtype_size(int32_t dtype) {
    switch (dtype) {
    case MNN_FLOAT32: case MNN_INT32: return 4;
    case MNN_FLOAT16: return 2;
    case MNN_INT64: return 8;
    default: return 1;
    }
}

int x86_concat_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_concat_state *s = (x86_concat_state *)state;
    (void)n_out;
    const size_t es = dtype_size(outs[0].dtype);
    char *y = (char *)outs[0].data;
    for (int64_t o = 0; o < s->outer; ++o) {
        for (int32_t i = 0; i < s->n && i < n_in; ++i) {
            const size_t nb = (size_t)s->block[i] * es;
            if (nb) memcpy(y, (const char *)ins[i].data + o * nb, nb);
            y += nb;
        }
    }
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
        memcpy(y, ins[0].data, dtype_size(outs[0].dtype));
        return 0;
    }
    transpose_rec((const char *)ins[0].data, &y, s, 0, dtype_size(outs[0].dtype));
    return 0;
}
