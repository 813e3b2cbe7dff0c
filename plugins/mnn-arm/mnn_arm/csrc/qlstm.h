/* ONNX Runtime's dynamically quantized LSTM (com.microsoft DynamicQuantizeLSTM) on mnn-arm (qlstm.c), as
 * mnn_core/ops/rnn_quant.py computes it: X (all steps, one block) and each step's h (one block per
 * direction) quantized to uint8 over their range widened to hold 0, exact integer products with the
 * constant int8/uint8 W and R on the int8 path's GEMM (packed once at prepare), one float32 scale per
 * output column, then the LSTM gates (i, o, f, c; sigmoid, tanh, tanh) in float64 as the reference's. */
#ifndef MNN_ARM_QLSTM_H
#define MNN_ARM_QLSTM_H

#include "ops.h"

typedef struct arm_qlstm_weights {
    const int8_t *packed; /* B [K][4H] packed for the int8 GEMM (uint8 weights shifted by -128) */
    const int32_t *colsum;
    int32_t db;           /* the true weight is packed + db: minus its zero point (plus 128 for uint8) */
    const float *scale;   /* [4H] */
} arm_qlstm_weights;

typedef struct arm_qlstm_state {
    arm_op op;
    const arm_qkernels *k;
    int32_t row_product;    /* a block of one row not by the GEMM's tile: 1 by smull (plain int8), 2 by sdot */
    int32_t dirs, reverse, input_forget;
    int64_t seq, batch, input, hidden;
    float clip;             /* > 0: gate pre-activations clipped to [-clip, clip] */
    int32_t in_h0, in_c0;   /* positions among the present inputs, -1: absent */
    arm_qlstm_weights w[2], r[2];
    const float *bias[2];   /* [4H]: Wb + Rb in float32 */
    const float *peep[2];   /* [3H] (i, o, f), or NULL */
    int8_t *q;              /* [seq * batch][max(input, hidden)]: a block quantized, minus 128 */
    int8_t *ap;             /* that block packed as the GEMM's A */
    int32_t *rowsum;        /* [seq * batch] */
    int32_t *acc;           /* [seq * batch][4H] */
    float *xw;              /* [seq * batch][4H]: X W of one direction, scaled */
    float *gates;           /* [batch][4H] */
    float *h;               /* [batch][H] */
    double *c;              /* [batch][H]: the cell, carried in float64 as the reference carries it */
} arm_qlstm_state;

int arm_qlstm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
/* qlstm_dot.c: c[0:N] = one row a (K4 int8, anything past K meets B's zero padding) times B packed for the int8
 * GEMM, by sdot */
void arm_qlstm_row_dot(const int8_t *a, const int8_t *bp, int64_t N, int64_t K4, int32_t *c);

#endif
