#include <string.h>

#include "movement.h"

#define COPY_GRAIN 65536 /* bytes: a range of less is not worth a thread */

typedef struct {
    const char *x;
    char *y;
} copy_job;

static void copy_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const copy_job *j = (const copy_job *)ctx;
    (void)worker;
    memcpy(j->y + lo, j->x + lo, (size_t)(hi - lo));
}

int x86_copy_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_copy_state *s = (x86_copy_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t n = mnn_tensor_numel(&outs[0]) * (int64_t)mnn_dtype_size(outs[0].dtype);
    if (n == 0 || ins[0].data == outs[0].data) return 0;
    copy_job j = {(const char *)ins[0].data, (char *)outs[0].data};
    x86_pool->ranges(s->op.threads, n, COPY_GRAIN, copy_range, &j);
    return 0;
}
