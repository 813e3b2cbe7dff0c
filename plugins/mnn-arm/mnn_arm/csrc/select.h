/* Selection and scans along one axis (select.c): ArgMax / ArgMin, TopK, CumSum / CumProd. The input is
 * x [outer][n][inner] (the axis merged with its neighbours at prepare, ops_select.py); elements are
 * float32, int32 or int64 (dtype codes below). */
#ifndef MNN_ARM_SELECT_H
#define MNN_ARM_SELECT_H

#include "ops.h"

enum arm_sel_dtype { ARM_SEL_F32 = 0, ARM_SEL_I32 = 1, ARM_SEL_I64 = 2 };

/* ArgMax (is_max) / ArgMin: y int64 [outer][inner]; ties go to the first index (the last with
 * last_index); a NaN wins over every number (numpy's rule), the first NaN (the last with last_index) */
typedef struct arm_arg_state {
    arm_op op;
    int32_t dtype, is_max, last_index;
    int64_t outer, n, inner;
} arm_arg_state;
int arm_arg_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* TopK: values [outer][k][inner] (x's dtype) and int64 indices, in order (largest or smallest first);
 * equal values in index order, NaN after every number (the reference's stable argsort on float64
 * keys). work: n (key, index) pairs per thread slice */
typedef struct arm_topk_pair {
    double key;
    int64_t index;
} arm_topk_pair;
typedef struct arm_topk_state {
    arm_op op;
    int32_t dtype, largest, slices;
    int64_t outer, n, inner, k;
    arm_topk_pair *work;
} arm_topk_state;
int arm_topk_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* CumSum / CumProd in x's dtype, sequentially along the axis (the reference's np.cumsum order, so
 * float32 sums are bit-exact); exclusive shifts by one (0 or 1 first), reverse runs from the end */
typedef struct arm_cum_state {
    arm_op op;
    int32_t dtype, prod, exclusive, reverse;
    int64_t outer, n, inner;
} arm_cum_state;
int arm_cum_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
