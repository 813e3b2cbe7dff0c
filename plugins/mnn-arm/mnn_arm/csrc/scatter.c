/* ScatterElements of mnn-arm: see scatter.h. One pass over the indices in order with a running
 * multi-index (so any shape of indices within data's), one element written or reduced per index. */
#include <string.h>

#include "scatter.h"

#define REDUCE(T, y, u, how)                                                        \
    do {                                                                            \
        T *y_ = (T *)(y);                                                           \
        const T u_ = *(const T *)(u);                                               \
        switch (how) {                                                              \
        case ARM_SCATTER_ADD: *y_ = *y_ + u_; break;                                \
        case ARM_SCATTER_MUL: *y_ = *y_ * u_; break;                                \
        case ARM_SCATTER_MAX: *y_ = *y_ > u_ || *y_ != *y_ ? *y_ : u_; break;       \
        default: *y_ = *y_ < u_ || *y_ != *y_ ? *y_ : u_; break;                    \
        }                                                                           \
    } while (0)

static void reduce(int32_t dtype, int32_t how, char *y, const char *u) {
    switch (dtype) {
    case ARM_SCATTER_F32: REDUCE(float, y, u, how); break;
    case ARM_SCATTER_F64: REDUCE(double, y, u, how); break;
    case ARM_SCATTER_I32: REDUCE(int32_t, y, u, how); break;
    default: REDUCE(int64_t, y, u, how); break;
    }
}

int arm_scatter_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    arm_scatter_state *s = (arm_scatter_state *)state;
    const char *x = (const char *)arm_data(&ins[0]), *u = (const char *)arm_data(&ins[2]);
    const void *idx = arm_data(&ins[1]);
    const int idx64 = ins[1].dtype == MNN_INT64;
    char *y = (char *)arm_data(&outs[0]);
    const int64_t elem = s->elem, n = mnn_tensor_numel(&ins[1]);
    if (y != x) memcpy(y, x, (size_t)(s->data_numel * elem));
    int64_t at[MNN_MAX_DIMS] = {0}, base = 0; /* the running index into indices, and its offset in data off the axis */
    for (int64_t i = 0; i < n; ++i) {
        int64_t j = idx64 ? ((const int64_t *)idx)[i] : ((const int32_t *)idx)[i];
        if (j < -s->axis_size || j >= s->axis_size) {
            s->op.error = "ScatterElements: an index is out of range of data's axis";
            return 1;
        }
        j += j < 0 ? s->axis_size : 0;
        char *dst = y + (base + j * s->data_strides[s->axis]) * elem;
        if (s->reduction == ARM_SCATTER_NONE) memcpy(dst, u + i * elem, (size_t)elem);
        else reduce(s->dtype, s->reduction, dst, u + i * elem);
        for (int d = s->ndim - 1; d >= 0; --d) { /* the next index position, row-major */
            if (d != s->axis) base += s->data_strides[d];
            if (++at[d] < s->idx_dims[d]) break;
            if (d != s->axis) base -= at[d] * s->data_strides[d];
            at[d] = 0;
        }
    }
    return 0;
}
