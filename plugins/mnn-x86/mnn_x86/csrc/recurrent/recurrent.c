/* RNN, GRU and LSTM runs (recurrent.h). A batch row's steps depend on each other and on nothing of
 * the other rows, so each (direction, row) is one task of the pool: a bidirectional layer runs its
 * two directions side by side, and no step waits on a barrier. */
#include <string.h>

#include "recurrent.h"

typedef struct {
    const x86_rnn_state *s;
    const mnn_tensor *ins;
    mnn_tensor *outs;
    int32_t n_out;
} rnn_job;

/* x += a + b over n */
X86_CLONES static void add2(float *x, const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += a[i] + b[i];
}

/* the steps below take a = h·R^T, computed for all rows of a group at once (x86_rnn_gemm) */
static void rnn_step(const x86_rnn_state *s, const x86_rnn_act *act, const float *x, const float *bias,
                     float *h, float *a) {
    const int64_t H = s->hidden;
    add2(a, x, bias, H);
    if (s->clip > 0.0f) x86_rnn_clip(a, H, s->clip);
    x86_rnn_activate(&act[0], a, H);
    memcpy(h, a, (size_t)H * sizeof(float));
}

/* the reset gate applied before (linear_before_reset) or after h·Rh^T, in a the h gate's input */
X86_CLONES static void gru_reset_after(float *ah, const float *x, const float *bias, const float *r,
                                       const float *rbh, int64_t n) {
    for (int64_t j = 0; j < n; ++j) ah[j] = x[j] + bias[j] + r[j] * (ah[j] + rbh[j]);
}

X86_CLONES static void mul(float *y, const float *a, const float *b, int64_t n) {
    for (int64_t j = 0; j < n; ++j) y[j] = a[j] * b[j];
}

X86_CLONES static void gru_update(float *h, const float *z, const float *ht, int64_t n) {
    for (int64_t j = 0; j < n; ++j) h[j] = (1.0f - z[j]) * ht[j] + z[j] * h[j];
}

/* the h gate's activation (its input in a + 2H) and the new h */
static void gru_finish(const x86_rnn_state *s, const x86_rnn_act *act, float *h, float *a) {
    const int64_t H = s->hidden;
    if (s->clip > 0.0f) x86_rnn_clip(a + 2 * H, H, s->clip);
    x86_rnn_activate(&act[1], a + 2 * H, H);
    gru_update(h, a, a + 2 * H, H);
}

/* a GRU's z and r; with linear_before_reset the whole step, else r*h in tmp for the h gate's GEMV */
static void gru_gates(const x86_rnn_state *s, const x86_rnn_act *act, const float *x, const float *bias,
                      const float *rbh, float *h, float *tmp, float *a) {
    const int64_t H = s->hidden;
    add2(a, x, bias, 2 * H);
    if (s->clip > 0.0f) x86_rnn_clip(a, 2 * H, s->clip);
    x86_rnn_activate(&act[0], a, 2 * H);
    if (!s->lbr) {
        mul(tmp, a + H, h, H);
        return;
    }
    gru_reset_after(a + 2 * H, x + 2 * H, bias + 2 * H, a + H, rbh, H);
    gru_finish(s, act, h, a);
}

/* x += p * c (a peephole) */
X86_CLONES static void peephole(float *x, const float *p, const float *c, int64_t n) {
    for (int64_t j = 0; j < n; ++j) x[j] += p[j] * c[j];
}

X86_CLONES static void lstm_cell(float *c, const float *i, const float *f, const float *g, int coupled, int64_t n) {
    if (coupled) { /* input_forget: the forget gate is 1 - i */
        for (int64_t j = 0; j < n; ++j) c[j] = (1.0f - i[j]) * c[j] + i[j] * g[j];
    } else {
        for (int64_t j = 0; j < n; ++j) c[j] = f[j] * c[j] + i[j] * g[j];
    }
}

static void lstm_step(const x86_rnn_state *s, const x86_rnn_act *act, const float *x, const float *bias,
                      const float *p, float *h, float *c, float *tmp, float *a) {
    const int64_t H = s->hidden, GH = 4 * H;
    float *i = a, *o = a + H, *f = a + 2 * H, *g = a + 3 * H; /* ONNX's gate order */
    add2(a, x, bias, GH);
    if (p) {
        peephole(i, p, c, H);
        peephole(f, p + 2 * H, c, H);
    }
    if (s->clip > 0.0f) {
        x86_rnn_clip(i, H, s->clip);
        x86_rnn_clip(f, 2 * H, s->clip); /* f and g */
    }
    x86_rnn_activate(&act[0], i, H);
    if (!s->input_forget) x86_rnn_activate(&act[0], f, H);
    x86_rnn_activate(&act[1], g, H);
    lstm_cell(c, i, f, g, s->input_forget, H);
    if (p) peephole(o, p + H, c, H);
    if (s->clip > 0.0f) x86_rnn_clip(o, H, s->clip);
    x86_rnn_activate(&act[0], o, H);
    memcpy(tmp, c, (size_t)H * sizeof(float));
    x86_rnn_activate(&act[2], tmp, H);
    mul(h, o, tmp, H);
}

static int64_t seq_len(const x86_rnn_state *s, const mnn_tensor *ins, int64_t b) {
    if (s->in_lens < 0) return s->seq;
    const mnn_tensor *t = &ins[s->in_lens];
    const int64_t n = t->dtype == MNN_INT64 ? ((const int64_t *)t->data)[b] : ((const int32_t *)t->data)[b];
    return n < 0 ? 0 : (n > s->seq ? s->seq : n);
}

/* element offset of (direction d, row b) in an initial or final state, by layout */
static int64_t state_at(const x86_rnn_state *s, int64_t d, int64_t b) {
    return (s->layout ? b * s->dirs + d : d * s->batch + b) * s->hidden;
}

static void load_state(const x86_rnn_state *s, const mnn_tensor *ins, int32_t in, int64_t at, float *v) {
    if (in >= 0) memcpy(v, (const float *)ins[in].data + at, (size_t)s->hidden * sizeof(float));
    else memset(v, 0, (size_t)s->hidden * sizeof(float));
}

/* the step's place in X and Y of a row of length len at step t (t < len) */
static int64_t step_at(int reverse, int64_t len, int64_t t) {
    return reverse ? len - 1 - t : t;
}

static float *y_at(const rnn_job *j, int64_t d, int64_t b, int64_t tt) {
    const x86_rnn_state *s = j->s;
    if (j->n_out == 0) return NULL;
    const int64_t at = s->layout ? (b * s->seq + tt) * s->dirs + d : (tt * s->dirs + d) * s->batch + b;
    return (float *)j->outs[0].data + at * s->hidden;
}

/* the gates of one row at step t, after a = h·R^T; 1 when a GRU without linear_before_reset waits on
 * its second GEMV */
static int row_step(const rnn_job *j, int64_t d, int64_t b, const float *x, float *h) {
    const x86_rnn_state *s = j->s;
    const int64_t H = s->hidden;
    float *c = h + H, *tmp = h + 2 * H, *a = h + 3 * H;
    const float *bias = s->bias + d * s->gates * H;
    const x86_rnn_act *act = s->act[d];
    (void)b;
    if (s->cell == X86_LSTM) lstm_step(s, act, x, bias, s->peep ? s->peep + d * 3 * H : NULL, h, c, tmp, a);
    else if (s->cell == X86_GRU) gru_gates(s, act, x, bias, s->rbh ? s->rbh + d * H : NULL, h, tmp, a);
    else rnn_step(s, act, x, bias, h, a);
    return s->cell == X86_GRU && !s->lbr;
}

/* all steps of direction d for batch rows b0 .. b1-1, side by side: each step's h·R^T is one
 * x86_rnn_gemm over the rows, so R^T streams from cache once a step for four rows */
static void run_group(const rnn_job *j, int64_t d, int64_t b0, int64_t b1) {
    const x86_rnn_state *s = j->s;
    const int64_t H = s->hidden, GH = s->gates * H, T = s->seq, B = s->batch, ld = s->work_row, m = b1 - b0;
    float *w = s->work + (d * B + b0) * ld; /* row r: h, c, tmp, a at w + r * ld */
    const float *rt = s->rt ? s->rt + d * H * GH : NULL; /* none when quantized */
    const int reverse = s->reverse || d == 1, split = s->cell == X86_GRU && !s->lbr;
    for (int64_t b = b0; b < b1; ++b) {
        load_state(s, j->ins, s->in_h0, state_at(s, d, b), w + (b - b0) * ld);
        load_state(s, j->ins, s->in_c0, state_at(s, d, b), w + (b - b0) * ld + H);
    }
    for (int64_t t = 0; t < T; ++t) {
        if (s->quant) x86_rnn_qgemm(s, d, w, ld, m, w + 3 * H, ld);
        else x86_rnn_gemm(w, ld, m, rt, H, H, split ? 2 : s->gates, w + 3 * H, ld);
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t len = seq_len(s, j->ins, b), tt = t < len ? step_at(reverse, len, t) : t;
            float *h = w + (b - b0) * ld, *y = y_at(j, d, b, tt);
            if (t >= len) { /* past the row's length: Y is 0, the state stays */
                if (y) memset(y, 0, (size_t)H * sizeof(float));
                continue;
            }
            const float *x = s->xw + (s->layout ? b * T + tt : tt * B + b) * s->dirs * GH + d * GH;
            if (!row_step(j, d, b, x, h) && y) memcpy(y, h, (size_t)H * sizeof(float));
        }
        if (!split) continue;
        x86_rnn_gemm(w + 2 * H, ld, m, rt + 2 * H * H, H, H, 1, w + 5 * H, ld); /* (r*h)·Rh^T */
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t len = seq_len(s, j->ins, b);
            if (t >= len) continue;
            const int64_t tt = step_at(reverse, len, t);
            const float *x = s->xw + (s->layout ? b * T + tt : tt * B + b) * s->dirs * GH + d * GH;
            float *h = w + (b - b0) * ld, *a = h + 3 * H, *y = y_at(j, d, b, tt);
            add2(a + 2 * H, x + 2 * H, s->bias + d * GH + 2 * H, H);
            gru_finish(s, s->act[d], h, a);
            if (y) memcpy(y, h, (size_t)H * sizeof(float));
        }
    }
    for (int64_t b = b0; b < b1; ++b) {
        float *h = w + (b - b0) * ld;
        if (j->n_out > 1) memcpy((float *)j->outs[1].data + state_at(s, d, b), h, (size_t)H * sizeof(float));
        if (j->n_out > 2) memcpy((float *)j->outs[2].data + state_at(s, d, b), h + H, (size_t)H * sizeof(float));
    }
}

/* a worker's (direction, row) items, as one group per direction */
static void run_rows(void *ctx, int64_t lo, int64_t hi, int worker) {
    const rnn_job *j = (const rnn_job *)ctx;
    const int64_t B = j->s->batch;
    (void)worker;
    while (lo < hi) {
        const int64_t d = lo / B, end = (d + 1) * B < hi ? (d + 1) * B : hi;
        run_group(j, d, lo - d * B, end - d * B);
        lo = end;
    }
}

/* a quantized layer's items are whole directions: each step quantizes all rows of h at once */
static void run_directions(void *ctx, int64_t lo, int64_t hi, int worker) {
    const rnn_job *j = (const rnn_job *)ctx;
    (void)worker;
    for (int64_t d = lo; d < hi; ++d) run_group(j, d, 0, j->s->batch);
}

/* weights that arrive at run (not constants): R^T, the biases and the peepholes, refreshed */
static void load_weights(x86_rnn_state *s, const mnn_tensor *ins) {
    const int64_t H = s->hidden, GH = s->gates * H;
    if (s->in_r >= 0) {
        const float *r = (const float *)ins[s->in_r].data;
        for (int64_t d = 0; d < s->dirs; ++d) x86_rnn_pack_rt(r + d * GH * H, s->gates, H, H, s->rt + d * GH * H);
    }
    if (s->in_b >= 0) {
        const float *bsrc = (const float *)ins[s->in_b].data;
        for (int64_t d = 0; d < s->dirs; ++d) {
            const float *wb = bsrc + d * 2 * GH, *rb = wb + GH;
            for (int64_t n = 0; n < GH; ++n) s->bias[d * GH + n] = wb[n] + rb[n];
            if (s->rbh) {
                memcpy(s->rbh + d * H, rb + 2 * H, (size_t)H * sizeof(float));
                memcpy(s->bias + d * GH + 2 * H, wb + 2 * H, (size_t)H * sizeof(float));
            }
        }
    }
    if (s->in_p >= 0) memcpy(s->peep, ins[s->in_p].data, (size_t)(s->dirs * 3 * H) * sizeof(float));
}

/* xw = X · W^T by the MatMul execution made at prepare (it reads its inputs' data and dtype only) */
static int project(x86_rnn_state *s, const mnn_tensor *ins) {
    mnn_tensor mm_in[2] = {ins[0], ins[s->in_w >= 0 ? s->in_w : 0]}; /* a constant W is packed in it */
    mnn_tensor mm_out = ins[0];
    mm_out.data = s->xw;
    if (s->proj.run(s->proj.state, mm_in, 2, &mm_out, 1) != 0) {
        s->op.error = "x86 recurrent layer: the input projection failed";
        return 1;
    }
    return 0;
}

int x86_rnn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_rnn_state *s = (x86_rnn_state *)state;
    (void)n_in;
    if (ins[0].dtype != MNN_FLOAT32) {
        s->op.error = "x86 RNN/GRU/LSTM take float32 tensors";
        return 1;
    }
    load_weights(s, ins);
    rnn_job j = {s, ins, outs, n_out};
    if (s->quant) {
        if (s->seq * s->batch > 0) x86_rnn_qproject(s, ins);
        x86_pool->ranges(s->op.threads, s->dirs, 1, run_directions, &j);
        return 0;
    }
    if (s->seq * s->batch > 0 && project(s, ins) != 0) return 1;
    /* a thread's rows in one item: a group of rows reads R^T once a step for all of them (in items of
     * a few rows, each streamed it again: a batch of 8 at two threads ran eight groups of two rows) */
    const int64_t rows = s->dirs * s->batch, threads = s->op.threads > 1 ? s->op.threads : 1;
    x86_pool->ranges(s->op.threads, rows, (rows + threads - 1) / threads, run_rows, &j);
    return 0;
}
