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

static void rnn_step(const x86_rnn_state *s, const x86_rnn_act *act, const float *x, const float *bias,
                     const float *rt, float *h, float *a) {
    const int64_t H = s->hidden;
    x86_rnn_gemv(h, rt, H, H, H, a);
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

static void gru_step(const x86_rnn_state *s, const x86_rnn_act *act, const float *x, const float *bias,
                     const float *rt, const float *rbh, float *h, float *tmp, float *a) {
    const int64_t H = s->hidden, GH = 3 * H;
    float *z = a, *r = a + H, *ah = a + 2 * H;
    x86_rnn_gemv(h, rt, H, GH, s->lbr ? GH : 2 * H, a);
    add2(a, x, bias, 2 * H);
    if (s->clip > 0.0f) x86_rnn_clip(a, 2 * H, s->clip);
    x86_rnn_activate(&act[0], a, 2 * H);
    if (s->lbr) {
        gru_reset_after(ah, x + 2 * H, bias + 2 * H, r, rbh, H);
    } else {
        mul(tmp, r, h, H);
        x86_rnn_gemv(tmp, rt + 2 * H, H, GH, H, ah);
        add2(ah, x + 2 * H, bias + 2 * H, H);
    }
    if (s->clip > 0.0f) x86_rnn_clip(ah, H, s->clip);
    x86_rnn_activate(&act[1], ah, H);
    gru_update(h, z, ah, H);
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
                      const float *rt, const float *p, float *h, float *c, float *tmp, float *a) {
    const int64_t H = s->hidden, GH = 4 * H;
    float *i = a, *o = a + H, *f = a + 2 * H, *g = a + 3 * H; /* ONNX's gate order */
    x86_rnn_gemv(h, rt, H, GH, GH, a);
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

/* all steps of direction d for batch row b */
static void run_row(const rnn_job *j, int64_t d, int64_t b) {
    const x86_rnn_state *s = j->s;
    const int64_t H = s->hidden, GH = s->gates * H, T = s->seq, B = s->batch;
    float *h = s->work + (d * B + b) * s->work_row, *c = h + H, *tmp = h + 2 * H, *a = h + 3 * H;
    const float *rt = s->rt + d * H * GH, *bias = s->bias + d * GH;
    const float *p = s->peep ? s->peep + d * 3 * H : NULL, *rbh = s->rbh ? s->rbh + d * H : NULL;
    const x86_rnn_act *act = s->act[d];
    float *y = j->n_out > 0 ? (float *)j->outs[0].data : NULL;
    const int64_t len = seq_len(s, j->ins, b), at = state_at(s, d, b);
    const int reverse = s->reverse || d == 1;
    load_state(s, j->ins, s->in_h0, at, h);
    load_state(s, j->ins, s->in_c0, at, c);
    for (int64_t t = 0; t < T; ++t) {
        const int64_t tt = t < len ? (reverse ? len - 1 - t : t) : t; /* the step's place in X and Y */
        float *yt = y ? y + (s->layout ? (b * T + tt) * s->dirs + d : (tt * s->dirs + d) * B + b) * H : NULL;
        if (t >= len) { /* past the row's length: Y is 0, the state stays */
            if (yt) memset(yt, 0, (size_t)H * sizeof(float));
            continue;
        }
        const float *x = s->xw + (s->layout ? b * T + tt : tt * B + b) * s->dirs * GH + d * GH;
        if (s->cell == X86_LSTM) lstm_step(s, act, x, bias, rt, p, h, c, tmp, a);
        else if (s->cell == X86_GRU) gru_step(s, act, x, bias, rt, rbh, h, tmp, a);
        else rnn_step(s, act, x, bias, rt, h, a);
        if (yt) memcpy(yt, h, (size_t)H * sizeof(float));
    }
    if (j->n_out > 1) memcpy((float *)j->outs[1].data + at, h, (size_t)H * sizeof(float));
    if (j->n_out > 2) memcpy((float *)j->outs[2].data + at, c, (size_t)H * sizeof(float));
}

static void run_rows(void *ctx, int64_t lo, int64_t hi, int worker) {
    const rnn_job *j = (const rnn_job *)ctx;
    (void)worker;
    for (int64_t i = lo; i < hi; ++i) run_row(j, i / j->s->batch, i % j->s->batch);
}

/* weights that arrive at run (not constants): R^T, the biases and the peepholes, refreshed */
static void load_weights(x86_rnn_state *s, const mnn_tensor *ins) {
    const int64_t H = s->hidden, GH = s->gates * H;
    if (s->in_r >= 0) {
        const float *r = (const float *)ins[s->in_r].data;
        for (int64_t d = 0; d < s->dirs; ++d)
            for (int64_t n = 0; n < GH; ++n)
                for (int64_t k = 0; k < H; ++k) s->rt[(d * H + k) * GH + n] = r[(d * GH + n) * H + k];
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
    if (s->seq * s->batch > 0 && project(s, ins) != 0) return 1;
    rnn_job j = {s, ins, outs, n_out};
    x86_pool->ranges(s->op.threads, s->dirs * s->batch, 1, run_rows, &j);
    return 0;
}
