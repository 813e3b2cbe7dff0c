/* ScatterElements (and the deprecated Scatter) of mnn-arm (scatter.c): y = a copy of data, then each
 * element of updates written (or reduced: add, mul, max, min) at its index along the axis, in the order
 * of the indices (the reference's: the last of repeated indices wins, reductions apply one by one).
 * Indices may have fewer elements than data along every dim; negative ones count from the end. */
#ifndef MNN_ARM_SCATTER_H
#define MNN_ARM_SCATTER_H

#include "ops.h"

enum arm_scatter_reduction { ARM_SCATTER_NONE, ARM_SCATTER_ADD, ARM_SCATTER_MUL, ARM_SCATTER_MAX, ARM_SCATTER_MIN };
enum arm_scatter_dtype { ARM_SCATTER_F32, ARM_SCATTER_F64, ARM_SCATTER_I32, ARM_SCATTER_I64, ARM_SCATTER_BYTES };

typedef struct arm_scatter_state {
    arm_op op;
    int32_t ndim, axis, reduction, dtype; /* dtype: ARM_SCATTER_BYTES (any type, reduction none only) */
    int32_t elem;                         /* bytes per element */
    int64_t data_numel;
    int64_t idx_dims[MNN_MAX_DIMS];       /* the indices' (and updates') shape */
    int64_t data_strides[MNN_MAX_DIMS];   /* data's, in elements */
    int64_t axis_size;                    /* data's size along the axis */
} arm_scatter_state;

int arm_scatter_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
