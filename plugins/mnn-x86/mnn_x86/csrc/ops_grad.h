/* mnn-x86 op layer for training: the states and run functions of the backward
 * ops and the optimizer updates (op_grad.c). Same contract as ops.h: the
 * Python side (mnn_x86/ops_grad.py through _x86_grad.pxi) fills a state at
 * prepare; the run function only reads it and never allocates. Every state
 * starts with an x86_op, so x86_op_error serves them too. */
#ifndef MNN_X86_OPS_GRAD_H
#define MNN_X86_OPS_GRAD_H

#include "ops.h"
#include "x86_grad.h"

/* ConvGradWeight (which 0: dy, x -> dw [, db]), ConvGradInput (which 1: dy, w -> dx) and the
 * forward Conv of a training step (which 2: x, w [, b] -> y, weights arriving at each run) */
enum x86_convgrad_which { X86_CONV_GRAD_WEIGHT = 0, X86_CONV_GRAD_INPUT = 1, X86_CONV_FORWARD = 2 };
typedef struct x86_convgrad_state {
    x86_op op;
    const x86_grad_kernels *gk;
    int32_t which;
    int32_t relu; /* forward: fused ReLU */
    x86_convgrad_geom g;
    float *work; /* per thread scratch (x86_grad.h sizes) */
} x86_convgrad_state;
int x86_convgrad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* MaxPoolGrad: (dy, x) -> dx over N*C planes; forward 1: MaxPool x -> y (2x2 windows at stride 2 only) */
typedef struct x86_poolgrad_state {
    x86_op op;
    const x86_grad_kernels *gk;
    int32_t forward;
    int64_t planes;
    x86_pool_geom g;
} x86_poolgrad_state;
int x86_poolgrad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* ReluGrad: (dy, y) -> dy * (y > 0) */
typedef struct x86_relugrad_state {
    x86_op op;
    const x86_grad_kernels *gk;
} x86_relugrad_state;
int x86_relugrad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* SumToShape over collapsed dims: ystrides[d] is 0 for a summed axis */
typedef struct x86_sumto_state {
    x86_op op;
    const x86_grad_kernels *gk;
    int32_t ndim;
    int64_t ysize;
    int64_t dims[MNN_MAX_DIMS], ystrides[MNN_MAX_DIMS];
} x86_sumto_state;
int x86_sumto_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* SoftmaxCrossEntropy (grad 0: logits, target -> loss) and its Grad (grad 1: dloss, logits, target -> dlogits) */
typedef struct x86_ce_state {
    x86_op op;
    const x86_grad_kernels *gk;
    int32_t grad;
    x86_ce_geom g;
} x86_ce_state;
int x86_ce_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* SGDUpdate (kind 0), SGDMomentumUpdate (kind 1), AdamUpdate (kind 2); lr and step are 0-d inputs */
enum x86_optim_kind { X86_OPT_SGD = 0, X86_OPT_MOMENTUM = 1, X86_OPT_ADAM = 2 };
typedef struct x86_optim_state {
    x86_op op;
    const x86_grad_kernels *gk;
    int32_t kind;
    x86_optim_params p; /* lr and step filled at each run */
} x86_optim_state;
int x86_optim_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Gemm of a training step (runtime B, alpha = beta = 1, C absent or a bias over N, act none or relu):
 * (a, b [, bias]) -> c */
typedef struct x86_gemmrt_state {
    x86_op op;
    const x86_grad_kernels *gk;
    int64_t M, N, K, ars, acs;
    int32_t transB, relu;
} x86_gemmrt_state;
int x86_gemmrt_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
