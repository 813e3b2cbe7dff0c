/* Run functions of ops whose fp16-domain kernels live in fp16h.c (compiled for asimdhp; reached only when
 * the session's activations are fp16). They take the fp32 op's state (ops.h), read as noted. */
#ifndef MNN_ARM_FP16H_OPS_H
#define MNN_ARM_FP16H_OPS_H

#include "ops.h"

/* LayerNormalization / InstanceNormalization on fp16 rows: arm_norm_state as for arm_norm_run, but its
 * scale and shift (constant or inputs) hold halves */
int arm_norm_h_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* arm_normalize_rows on halves: statistics in fp32 (double across 512-element blocks), the normalized
 * value in fp32, scale and shift applied in fp16 */
void arm_normalize_rows_h(const void *x, void *y, int64_t rows, int64_t n, float eps, const void *scale,
                          const void *shift, int64_t per_row);

/* Softmax / LogSoftmax on fp16 (arm_softmax_state's outer, axis, inner, log): e^(x - max) on 8 halves (a cubic
 * for 2^f, exact powers of two down to fp16's subnormals), the sums in fp32 */
int arm_softmax_h_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
