/* Recurrent layers on x86 (mnn_x86/_recurrent.pyx, ops_recurrent.py): RNN, GRU and LSTM with ONNX
 * semantics (mnn_core/ops/rnn.py). The input projection X·W^T of every step and direction is one
 * packed GEMM (an _x86 MatMul execution) at the start of a run; the steps then run per (direction,
 * batch row) as h·R^T (a GEMV over R^T) and the gate math, each row on one thread of the pool. */
#ifndef MNN_X86_RECURRENT_H
#define MNN_X86_RECURRENT_H

#include "family.h"
#include "integer/qgemm.h"

enum { X86_RNN = 0, X86_GRU = 1, X86_LSTM = 2 };

/* the gate activations, in the order of mnn_core.ops.rnn.ACTIVATIONS */
enum {
    X86_RA_SIGMOID, X86_RA_TANH, X86_RA_RELU, X86_RA_AFFINE, X86_RA_LEAKY_RELU, X86_RA_THRESHOLDED_RELU,
    X86_RA_SCALED_TANH, X86_RA_HARD_SIGMOID, X86_RA_ELU, X86_RA_SOFTSIGN, X86_RA_SOFTPLUS
};

typedef struct {
    int32_t fn; /* X86_RA_* */
    float alpha, beta;
} x86_rnn_act;

/* act.c: x[0:n] = a(x), in place; and the helpers of the gate math */
void x86_rnn_activate(const x86_rnn_act *a, float *x, int64_t n);
void x86_rnn_clip(float *x, int64_t n, float clip);
/* R^T packed in panels: per gate, its H columns in panels of RNN_PANEL (the last one narrower), each
 * panel [K][w] contiguous at (g * H + c) * K. A step streams R^T in order (the plain [K][G*H] rows are
 * 4 KB apart at H = 256: each GEMV block touched a new page per row, which the prefetchers don't follow).
 * 64 columns: 4 AVX-512 or 8 AVX2 accumulators. */
#define RNN_PANEL 64
/* rt = R^T packed, from R [gates*hidden][k] (one direction) */
void x86_rnn_pack_rt(const float *r, int64_t gates, int64_t hidden, int64_t k, float *rt);
/* y[:, 0:gates*hidden] = h · R^T for m rows of h (h_ld floats apart) into m rows of y (y_ld apart); rt
 * points at the first gate's panels */
void x86_rnn_gemm(const float *h, int64_t h_ld, int64_t m, const float *rt, int64_t k, int64_t hidden,
                  int64_t gates, float *y, int64_t y_ld);

/* an execution of another module (the projection's MatMul), called from the run */
typedef struct {
    mnn_run_fn run;
    void *state;
} x86_inner;

typedef struct {
    x86_op op;
    int32_t cell, gates, dirs, reverse, layout, lbr, input_forget;
    int64_t seq, batch, input, hidden;
    float clip;
    x86_rnn_act act[2][3];
    /* positions among the present inputs, -1 where absent; in_w .. in_p only for weights that
     * arrive at run (not constants), whose copies below are then refreshed at every run */
    int32_t in_w, in_r, in_b, in_p, in_lens, in_h0, in_c0;
    x86_inner proj; /* xw = X · W^T: [seq*batch rows in X's order][dirs*G*H] */
    float *xw;
    float *rt;      /* [dirs][G*H*H]: R^T packed (x86_rnn_pack_rt) */
    float *bias;    /* [dirs][G*H]: Wb + Rb (a GRU with linear_before_reset: Wb alone in the h gate) */
    float *rbh;     /* [dirs][H]: that GRU's h-gate Rb, which the reset gate scales */
    float *peep;    /* [dirs][3H] (i, o, f), or NULL */
    float *work;    /* per (direction, batch row): h, c, tmp [H] each, then the gates [G*H] */
    int64_t work_row;
    /* DynamicQuantizeLSTM (quant.c): X (all steps, one block) and each step's h (a direction's rows,
     * one block) quantized to uint8 as ONNX Runtime does, exact u8 x s8 products with the constant W and R
     * (integer/qgemm.h: L the quantized rows as words, R the weights in panels of X86_QG_NR columns) */
    int32_t quant;
    x86_qgemm gw, gr;             /* K4 over the input and the hidden size */
    const uint8_t *wp, *rp;       /* [dirs][panels][K4][NR][4]: W and R as int8 (uint8 ones shifted by 128) */
    const int32_t *wsum, *rsum;   /* [dirs][panels * NR]: their column sums */
    const int32_t *wz, *rz;       /* [dirs][panels * NR]: their zero points, shifted with them */
    const float *wscale, *rscale; /* [dirs][G*H] */
    int32_t *xq, *xu;             /* [seq*batch rounded to X86_QG_MR][gw.K4] words of X quantized; row sums - K * z */
    int32_t *hq, *hu;             /* [dirs][batch rounded to X86_QG_MR][gr.K4] words of h the same; [dirs][that] */
} x86_rnn_state;
int x86_rnn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* quant.c: xw = quantized X times W (every step and direction), and y = quantized h times R for the m
 * rows of direction d (h_ld and y_ld floats apart) */
int x86_rnn_qproject(x86_rnn_state *s, const mnn_tensor *ins);
void x86_rnn_qgemm(const x86_rnn_state *s, int64_t d, const float *h, int64_t h_ld, int64_t m, float *y,
                   int64_t y_ld);

#endif
