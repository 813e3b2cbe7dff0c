/* RNN / GRU / LSTM of mnn-arm (armv8-a, fp32 path's packed GEMM): see rnn.h. Steps past a batch
 * entry's sequence length leave its state alone and its Y rows zero; a reverse direction walks each
 * entry's own valid steps backwards, as the ONNX reference does. */
#include <math.h>
#include <string.h>

#include "rnn.h"

static inline float sigm(float v) { return v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v)); }
static inline float clipv(float v, float c) { return c > 0.0f ? (v < -c ? -c : (v > c ? c : v)) : v; }

static int64_t x_row(const arm_rnn_state *s, int64_t t, int64_t b) {
    return s->layout ? b * s->seq + t : t * s->batch + b;
}

static int64_t state_at(const arm_rnn_state *s, int d, int64_t b) {
    return (s->layout ? b * s->dirs + d : d * s->batch + b) * s->hidden;
}

static int64_t y_at(const arm_rnn_state *s, int d, int64_t t, int64_t b) {
    return (s->layout ? (b * s->seq + t) * s->dirs + d : (t * s->dirs + d) * s->batch + b) * s->hidden;
}

/* one step of batch entry b: gates from xg (input projection + W bias) and hg (h R^T) */
static void cell_step(const arm_rnn_state *s, int d, int64_t b, const float *xr) {
    const int64_t H = s->hidden, G = s->gates * H;
    const float *hr = s->hg + b * G, *rb = s->rb[d];
    float *h = s->h + b * H, *c = s->c + b * H;
    for (int64_t j = 0; j < H; ++j) {
        if (s->cell == ARM_CELL_RNN) {
            h[j] = tanhf(clipv(xr[j] + hr[j] + rb[j], s->clip));
        } else if (s->cell == ARM_CELL_GRU) {
            const float z = sigm(clipv(xr[j] + hr[j] + rb[j], s->clip));
            const float r = sigm(clipv(xr[H + j] + hr[H + j] + rb[H + j], s->clip));
            const float rec = s->lbr ? r * (hr[2 * H + j] + rb[2 * H + j]) : s->hh[b * H + j] + rb[2 * H + j];
            const float ht = tanhf(clipv(xr[2 * H + j] + rec, s->clip));
            h[j] = (1.0f - z) * ht + z * h[j];
        } else {
            const float *p = s->p[d];
            const float gi = xr[j] + hr[j] + rb[j], go = xr[H + j] + hr[H + j] + rb[H + j];
            const float gf = xr[2 * H + j] + hr[2 * H + j] + rb[2 * H + j];
            const float gc = xr[3 * H + j] + hr[3 * H + j] + rb[3 * H + j];
            const float i = sigm(clipv(gi + (p ? p[j] * c[j] : 0.0f), s->clip));
            const float f = s->input_forget ? 1.0f - i : sigm(clipv(gf + (p ? p[2 * H + j] * c[j] : 0.0f), s->clip));
            const float cn = f * c[j] + i * tanhf(clipv(gc, s->clip));
            const float o = sigm(clipv(go + (p ? p[H + j] * cn : 0.0f), s->clip));
            c[j] = cn;
            h[j] = o * tanhf(cn);
        }
    }
}

int arm_rnn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_rnn_state *s = (arm_rnn_state *)state;
    const int64_t H = s->hidden, G = s->gates * H, B = s->batch, T = s->seq;
    const float *x = (const float *)arm_data(&ins[0]);
    arm_epilogue plain;
    memset(&plain, 0, sizeof(plain));
    plain.alpha = plain.beta = 1.0f;
    plain.act = MNN_ACT_NONE;
    for (int64_t b = 0; b < B; ++b) {
        int64_t len = T;
        if (s->in_lens >= 0 && s->in_lens < n_in) {
            const mnn_tensor *l = &ins[s->in_lens];
            len = l->dtype == MNN_INT64 ? ((const int64_t *)arm_data(l))[b] : ((const int32_t *)arm_data(l))[b];
        }
        if (len < 0 || len > T) {
            s->op.error = "RNN: a sequence length is negative or beyond the sequence";
            return 1;
        }
        s->lens[b] = len;
    }
    float *y = n_out > 0 ? (float *)arm_data(&outs[0]) : NULL;
    if (y) memset(y, 0, (size_t)(T * s->dirs * B * H) * sizeof(float));
    const float *h0 = s->in_h0 >= 0 && s->in_h0 < n_in ? (const float *)arm_data(&ins[s->in_h0]) : NULL;
    const float *c0 = s->in_c0 >= 0 && s->in_c0 < n_in ? (const float *)arm_data(&ins[s->in_c0]) : NULL;
    for (int d = 0; d < s->dirs; ++d) {
        const int reverse = s->reverse || d == 1;
        /* xg = X W^T + Wb for every step and batch entry, in X's row order */
        s->k->pack_a(x, s->input, 1, T * B, s->input, s->apack);
        arm_gemm_par(s->k, arm_threads(s), T * B, G, s->input, s->apack, s->wT[d], s->xg, G, &plain);
        for (int64_t r = 0; r < T * B; ++r)
            for (int64_t j = 0; j < G; ++j) s->xg[r * G + j] += s->wb[d][j];
        for (int64_t b = 0; b < B; ++b) {
            for (int64_t j = 0; j < H; ++j) {
                s->h[b * H + j] = h0 ? h0[state_at(s, d, b) + j] : 0.0f;
                s->c[b * H + j] = c0 ? c0[state_at(s, d, b) + j] : 0.0f;
            }
        }
        for (int64_t t = 0; t < T; ++t) {
            s->k->pack_a(s->h, H, 1, B, H, s->apack);
            s->k->gemm(B, G, H, s->apack, s->rT[d], s->hg, G, &plain);
            if (s->cell == ARM_CELL_GRU && !s->lbr) { /* (r * h) Rh^T needs r first */
                for (int64_t b = 0; b < B; ++b) {
                    const int64_t tt = reverse ? (t < s->lens[b] ? s->lens[b] - 1 - t : 0) : t;
                    const float *xr = s->xg + x_row(s, tt, b) * G;
                    for (int64_t j = 0; j < H; ++j) {
                        const float r = sigm(clipv(xr[H + j] + s->hg[b * G + H + j] + s->rb[d][H + j], s->clip));
                        s->hr[b * H + j] = r * s->h[b * H + j];
                    }
                }
                s->k->pack_a(s->hr, H, 1, B, H, s->apack);
                s->k->gemm(B, H, H, s->apack, s->rhT[d], s->hh, H, &plain);
            }
            for (int64_t b = 0; b < B; ++b) {
                if (t >= s->lens[b]) continue;
                const int64_t tt = reverse ? s->lens[b] - 1 - t : t;
                cell_step(s, d, b, s->xg + x_row(s, tt, b) * G);
                if (y) memcpy(y + y_at(s, d, tt, b), s->h + b * H, (size_t)H * sizeof(float));
            }
        }
        for (int64_t b = 0; b < B; ++b) {
            if (n_out > 1) memcpy((float *)arm_data(&outs[1]) + state_at(s, d, b), s->h + b * H, (size_t)H * sizeof(float));
            if (n_out > 2) memcpy((float *)arm_data(&outs[2]) + state_at(s, d, b), s->c + b * H, (size_t)H * sizeof(float));
        }
    }
    return 0;
}
