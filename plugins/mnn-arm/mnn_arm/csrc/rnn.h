/* Recurrent layers of mnn-arm (rnn.c): RNN, GRU and LSTM with ONNX semantics and the default
 * activations (sigmoid, tanh, tanh). The input projection X W^T of every time step is one packed
 * GEMM up front; each step's h R^T is another (batch rows); the gate arithmetic is per element. */
#ifndef MNN_ARM_RNN_H
#define MNN_ARM_RNN_H

#include "ops.h"

enum arm_rnn_cell { ARM_CELL_RNN, ARM_CELL_GRU, ARM_CELL_LSTM };

typedef struct arm_rnn_state {
    arm_op op;
    const arm_fkernels *k;
    int32_t cell, dirs, reverse, layout, lbr, input_forget;
    int64_t seq, batch, input, hidden, gates;
    float clip;                   /* > 0: gate pre-activations clipped to [-clip, clip] */
    int32_t in_lens, in_h0, in_c0; /* positions among the present inputs, -1: absent */
    const void *wT[2], *rT[2], *rhT[2]; /* packed B operands per direction (rhT: GRU's Rh, without lbr) */
    const float *wb[2], *rb[2], *p[2];  /* biases [gates*hidden] and LSTM peepholes [3*hidden] (or NULL) */
    float *xg, *hg, *hr, *hh, *h, *c;
    void *apack;
    int64_t *lens;
} arm_rnn_state;
int arm_rnn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
