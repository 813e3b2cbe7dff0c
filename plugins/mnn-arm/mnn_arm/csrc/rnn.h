/* Recurrent layers of mnn-arm (rnn.c): RNN, GRU and LSTM with ONNX semantics and the default
 * activations (sigmoid, tanh, tanh). The input projection X W^T of every time step is one packed
 * GEMM up front; each step's h R^T is a NEON matrix-vector product per batch entry over R packed
 * at prepare (arm_rnn_pack), with the biases folded into its starting values; the gates and their
 * activations are one vector pass per step. */
#ifndef MNN_ARM_RNN_H
#define MNN_ARM_RNN_H

#include "ops.h"

enum arm_rnn_cell { ARM_CELL_RNN, ARM_CELL_GRU, ARM_CELL_LSTM };

#define ARM_RNN_NC 16 /* columns of a packed R panel: four 4-lane accumulators */
#define ARM_RNN_KS 8  /* the matrix-vector loop's k-step: h rows and R panels padded to it */

typedef struct arm_rnn_state {
    arm_op op;
    const arm_fkernels *k;
    int32_t cell, dirs, reverse, layout, lbr, input_forget;
    int64_t seq, batch, input, hidden, gates;
    float clip;                    /* > 0: gate pre-activations clipped to [-clip, clip] */
    int32_t in_lens, in_h0, in_c0; /* positions among the present inputs, -1: absent */
    int64_t hpad;                  /* hidden rounded up to ARM_RNN_KS: the row stride of h and hr */
    int64_t rn;                    /* columns of h R^T: gates * hidden (GRU without lbr: its z and r, 2H) */
    const void *wT[2];             /* W^T packed for the fp32 path's GEMM, per direction */
    const float *rp[2], *rhp[2];   /* R (rn rows) and GRU's Rh (without lbr), packed by arm_rnn_pack */
    const float *hb[2];            /* h R^T starts from these rn values: Wb + Rb (GRU with lbr: Rb alone for h) */
    const float *hhb[2];           /* GRU without lbr: Wbh + Rbh, where (r * h) Rh^T starts */
    const float *xb[2];            /* GRU with lbr: Wbh, added outside r */
    const float *p[2];             /* LSTM peepholes [3*hidden] (or NULL) */
    float *xg, *hg, *hh, *h, *c, *hr;
    void *apack;
    int64_t *lens;
} arm_rnn_state;

/* floats of W [N][K] packed for the matrix-vector product: panels of ARM_RNN_NC columns, K padded */
int64_t arm_rnn_packed_elems(int64_t N, int64_t K);
void arm_rnn_pack(const float *w, int64_t N, int64_t K, float *packed);
int arm_rnn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
