/* 3-D convolution (conv3d.c) on a float path's packed GEMM: per image, group and chunk of output
 * columns (OD*OH*OW), the volume's im2col rows are gathered, packed as B and met by the packed
 * weights, bias and activation in the GEMM's epilogue. Elements are the path's io_bytes wide (fp32,
 * or fp16 on fp16-domain tensors with the fp16h path). */
#ifndef MNN_ARM_CONV3D_H
#define MNN_ARM_CONV3D_H

#include "ops.h"

typedef struct arm_conv3d_state {
    arm_op op;
    const arm_fkernels *k;
    int64_t N, O, group, og;
    int64_t C, D, H, W, OD, OH, OW; /* C: one group's input channels */
    int64_t kd, kh, kw, sd, sh, sw, dd, dh, dw, pd, pt, pl;
    const void *w; /* packed A per group: og x C*kd*kh*kw */
    int64_t w_group_bytes;
    const float *bias;
    int32_t bias_input, slices;
    arm_epilogue epi;
    void *work; /* per slice: K x chunk gathered columns, then their packed panels */
    int64_t work_bytes, chunk_cols;
} arm_conv3d_state;
int arm_conv3d_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
