/* RNN / GRU / LSTM of mnn-arm (armv8-a NEON): see rnn.h. Steps past a batch entry's sequence
 * length leave its state alone and its Y rows zero; a reverse direction walks each entry's own
 * valid steps backwards, as the ONNX reference does. */
#include <arm_neon.h>
#include <string.h>

#include "rnn.h"
#include "vmath.h"

#define AI static inline __attribute__((always_inline))

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

int64_t arm_rnn_packed_elems(int64_t N, int64_t K) { return round_up(N, ARM_RNN_NC) * round_up(K, ARM_RNN_KS); }

/* packed[q][k][c] = w[q * NC + c][k], zeros past N and K */
void arm_rnn_pack(const float *w, int64_t N, int64_t K, float *packed) {
    const int64_t Kp = round_up(K, ARM_RNN_KS);
    for (int64_t q = 0; q * ARM_RNN_NC < N; ++q)
        for (int64_t k = 0; k < Kp; ++k)
            for (int64_t c = 0; c < ARM_RNN_NC; ++c) {
                const int64_t n = q * ARM_RNN_NC + c;
                packed[(q * Kp + k) * ARM_RNN_NC + c] = n < N && k < K ? w[n * K + k] : 0.0f;
            }
}

/* y[N] = init[N] + h @ packed, h holding round_up(K, KS) values (zeros past K). Per 8 k-steps: two
 * loads of h (one ldp), eight 16-float loads of R (one ld1 each), 32 fmla by element and the loop's two. */
static void gemv(const float *h, int64_t K, const float *packed, const float *init, int64_t N, float *y) {
    const int64_t Kp = round_up(K, ARM_RNN_KS);
    for (int64_t n0 = 0; n0 < N; n0 += ARM_RNN_NC) {
        const int64_t nc = N - n0 < ARM_RNN_NC ? N - n0 : ARM_RNN_NC;
        float edge[ARM_RNN_NC] = {0};
        const float *start = init + n0;
        if (nc < ARM_RNN_NC) {
            memcpy(edge, start, (size_t)nc * sizeof(float));
            start = edge;
        }
        float32x4_t a0 = vld1q_f32(start), a1 = vld1q_f32(start + 4);
        float32x4_t a2 = vld1q_f32(start + 8), a3 = vld1q_f32(start + 12);
        const float *p = packed + n0 * Kp, *hk = h;
        /* in assembly: GCC computes each ld1's address with an add of its own instead of post-indexing */
#define RNN_STEP(hv, lane)                                  \
    "ld1 {v16.4s-v19.4s}, [%[p]], #64\n"                    \
    "fmla %[a0].4s, v16.4s, " hv ".s[" #lane "]\n"          \
    "fmla %[a1].4s, v17.4s, " hv ".s[" #lane "]\n"          \
    "fmla %[a2].4s, v18.4s, " hv ".s[" #lane "]\n"          \
    "fmla %[a3].4s, v19.4s, " hv ".s[" #lane "]\n"
        int64_t steps = Kp / ARM_RNN_KS;
        if (steps > 0)
            __asm__ volatile("1:\n"
                             "ldp q20, q21, [%[h]], #32\n" RNN_STEP("v20", 0) RNN_STEP("v20", 1) RNN_STEP("v20", 2)
                                 RNN_STEP("v20", 3) RNN_STEP("v21", 0) RNN_STEP("v21", 1) RNN_STEP("v21", 2)
                                     RNN_STEP("v21", 3) "subs %[n], %[n], #1\n"
                                                        "b.ne 1b\n"
                             : [a0] "+w"(a0), [a1] "+w"(a1), [a2] "+w"(a2), [a3] "+w"(a3), [p] "+r"(p), [h] "+r"(hk),
                               [n] "+r"(steps)
                             :
                             : "v16", "v17", "v18", "v19", "v20", "v21", "cc", "memory");
#undef RNN_STEP
        float *out = nc < ARM_RNN_NC ? edge : y + n0;
        vst1q_f32(out, a0), vst1q_f32(out + 4, a1), vst1q_f32(out + 8, a2), vst1q_f32(out + 12, a3);
        if (nc < ARM_RNN_NC) memcpy(y + n0, edge, (size_t)nc * sizeof(float));
    }
}

/* -- one step's gates, 4 hidden units at a time (n < 4: the last, partial group) ------------------- */

AI float32x4_t ld(const float *p, int n) {
    if (n == 4) return vld1q_f32(p);
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < n; ++i) t[i] = p[i];
    return vld1q_f32(t);
}

AI void st(float *p, float32x4_t v, int n) {
    if (n == 4) {
        vst1q_f32(p, v);
        return;
    }
    float t[4];
    vst1q_f32(t, v);
    for (int i = 0; i < n; ++i) p[i] = t[i];
}

typedef struct gate_args {
    const float *x, *hg, *hh, *xb, *p; /* x: this step's X W^T row; hg: h R^T + its start values */
    float *h, *c, *hr;
    int64_t H;
    float32x4_t lo, hi;
    int clip, input_forget, lbr;
} gate_args;

AI float32x4_t clipped(const gate_args *g, float32x4_t v) { return g->clip ? vminq_f32(vmaxq_f32(v, g->lo), g->hi) : v; }

AI void rnn4(const gate_args *g, int64_t j, int n) {
    st(g->h + j, v_tanh(clipped(g, vaddq_f32(ld(g->x + j, n), ld(g->hg + j, n)))), n);
}

AI void lstm4(const gate_args *g, int64_t j, int n) {
    const int64_t H = g->H;
    const float32x4_t c = ld(g->c + j, n);
    float32x4_t gi = vaddq_f32(ld(g->x + j, n), ld(g->hg + j, n));
    float32x4_t gf = vaddq_f32(ld(g->x + 2 * H + j, n), ld(g->hg + 2 * H + j, n));
    if (g->p) {
        gi = vfmaq_f32(gi, ld(g->p + j, n), c);
        gf = vfmaq_f32(gf, ld(g->p + 2 * H + j, n), c);
    }
    const float32x4_t i = v_sigmoid(clipped(g, gi));
    const float32x4_t f = g->input_forget ? vsubq_f32(vdupq_n_f32(1.0f), i) : v_sigmoid(clipped(g, gf));
    const float32x4_t gc = vaddq_f32(ld(g->x + 3 * H + j, n), ld(g->hg + 3 * H + j, n));
    const float32x4_t cn = vfmaq_f32(vmulq_f32(f, c), i, v_tanh(clipped(g, gc)));
    float32x4_t go = vaddq_f32(ld(g->x + H + j, n), ld(g->hg + H + j, n));
    if (g->p) go = vfmaq_f32(go, ld(g->p + H + j, n), cn);
    st(g->c + j, cn, n);
    st(g->h + j, vmulq_f32(v_sigmoid(clipped(g, go)), v_tanh(cn)), n);
}

/* GRU without lbr, first pass: r, and r * h for (r * h) Rh^T */
AI void gru_r4(const gate_args *g, int64_t j, int n) {
    const int64_t H = g->H;
    const float32x4_t r = v_sigmoid(clipped(g, vaddq_f32(ld(g->x + H + j, n), ld(g->hg + H + j, n))));
    st(g->hr + j, vmulq_f32(r, ld(g->h + j, n)), n);
}

/* GRU: h = ht + z (h - ht), ht = tanh(xh + (r * h) Rh^T + biases) or, with lbr, tanh(xh + Wbh + r (h Rh^T + Rbh)) */
AI void gru4(const gate_args *g, int64_t j, int n) {
    const int64_t H = g->H;
    const float32x4_t z = v_sigmoid(clipped(g, vaddq_f32(ld(g->x + j, n), ld(g->hg + j, n))));
    float32x4_t pre;
    if (g->lbr) {
        const float32x4_t r = v_sigmoid(clipped(g, vaddq_f32(ld(g->x + H + j, n), ld(g->hg + H + j, n))));
        pre = vfmaq_f32(vaddq_f32(ld(g->x + 2 * H + j, n), ld(g->xb + j, n)), r, ld(g->hg + 2 * H + j, n));
    } else {
        pre = vaddq_f32(ld(g->x + 2 * H + j, n), ld(g->hh + j, n));
    }
    const float32x4_t ht = v_tanh(clipped(g, pre)), h = ld(g->h + j, n);
    st(g->h + j, vfmaq_f32(ht, z, vsubq_f32(h, ht)), n);
}

#define OVER_HIDDEN(fn, g)                                         \
    do {                                                           \
        int64_t j_ = 0;                                            \
        for (; j_ + 4 <= (g)->H; j_ += 4) fn(g, j_, 4);            \
        if (j_ < (g)->H) fn(g, j_, (int)((g)->H - j_));            \
    } while (0)

/* -- the layer --------------------------------------------------------------------------------------- */

static int64_t x_row(const arm_rnn_state *s, int64_t t, int64_t b) { return s->layout ? b * s->seq + t : t * s->batch + b; }

static int64_t state_at(const arm_rnn_state *s, int d, int64_t b) {
    return (s->layout ? b * s->dirs + d : d * s->batch + b) * s->hidden;
}

static int64_t y_at(const arm_rnn_state *s, int d, int64_t t, int64_t b) {
    return (s->layout ? (b * s->seq + t) * s->dirs + d : (t * s->dirs + d) * s->batch + b) * s->hidden;
}

/* one step of batch entry b: h R^T, then the gates; the GRU without lbr needs r before (r * h) Rh^T */
static void step(const arm_rnn_state *s, int d, int64_t b, const float *xrow) {
    const int64_t H = s->hidden, hp = s->hpad;
    gate_args g = {xrow, s->hg + b * s->rn, s->hh + b * H, s->xb[d], s->p[d], s->h + b * hp, s->c + b * H,
                   s->hr + b * hp, H, vdupq_n_f32(-s->clip), vdupq_n_f32(s->clip), s->clip > 0.0f,
                   s->input_forget, s->lbr};
    gemv(g.h, H, s->rp[d], s->hb[d], s->rn, (float *)g.hg);
    if (s->cell == ARM_CELL_RNN) {
        OVER_HIDDEN(rnn4, &g);
    } else if (s->cell == ARM_CELL_LSTM) {
        OVER_HIDDEN(lstm4, &g);
    } else {
        if (!s->lbr) {
            OVER_HIDDEN(gru_r4, &g);
            gemv(g.hr, H, s->rhp[d], s->hhb[d], H, (float *)g.hh);
        }
        OVER_HIDDEN(gru4, &g);
    }
}

static int read_lens(arm_rnn_state *s, const mnn_tensor *ins, int32_t n_in) {
    for (int64_t b = 0; b < s->batch; ++b) {
        int64_t len = s->seq;
        if (s->in_lens >= 0 && s->in_lens < n_in) {
            const mnn_tensor *l = &ins[s->in_lens];
            len = l->dtype == MNN_INT64 ? ((const int64_t *)arm_data(l))[b] : ((const int32_t *)arm_data(l))[b];
        }
        if (len < 0 || len > s->seq) {
            s->op.error = "RNN: a sequence length is negative or beyond the sequence";
            return 1;
        }
        s->lens[b] = len;
    }
    return 0;
}

int arm_rnn_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_rnn_state *s = (arm_rnn_state *)state;
    const int64_t H = s->hidden, G = s->gates * H, B = s->batch, T = s->seq, hp = s->hpad;
    if (read_lens(s, ins, n_in)) return 1;
    const int short_rows = s->in_lens >= 0 && s->in_lens < n_in;
    arm_epilogue plain;
    memset(&plain, 0, sizeof(plain));
    plain.alpha = plain.beta = 1.0f;
    plain.act = MNN_ACT_NONE;
    float *y = n_out > 0 ? (float *)arm_data(&outs[0]) : NULL;
    if (y && short_rows) memset(y, 0, (size_t)(T * s->dirs * B * H) * sizeof(float));
    const float *h0 = s->in_h0 >= 0 && s->in_h0 < n_in ? (const float *)arm_data(&ins[s->in_h0]) : NULL;
    const float *c0 = s->in_c0 >= 0 && s->in_c0 < n_in ? (const float *)arm_data(&ins[s->in_c0]) : NULL;
    s->k->pack_a(arm_data(&ins[0]), s->input, 1, T * B, s->input, s->apack);
    for (int d = 0; d < s->dirs; ++d) {
        const int reverse = s->reverse || d == 1;
        /* xg = X W^T for every step and batch entry, in X's row order (the biases start h R^T) */
        arm_gemm_par(s->k, arm_threads(s), T * B, G, s->input, s->apack, s->wT[d], s->xg, G, &plain);
        for (int64_t b = 0; b < B; ++b) { /* the padding past H stays zero: the matrix-vector loop reads it */
            for (int64_t j = 0; j < H; ++j) {
                s->h[b * hp + j] = h0 ? h0[state_at(s, d, b) + j] : 0.0f;
                s->c[b * H + j] = c0 ? c0[state_at(s, d, b) + j] : 0.0f;
            }
        }
        for (int64_t t = 0; t < T; ++t) {
            for (int64_t b = 0; b < B; ++b) {
                if (t >= s->lens[b]) continue;
                const int64_t tt = reverse ? s->lens[b] - 1 - t : t;
                step(s, d, b, s->xg + x_row(s, tt, b) * G);
                if (y) memcpy(y + y_at(s, d, tt, b), s->h + b * hp, (size_t)H * sizeof(float));
            }
        }
        for (int64_t b = 0; b < B; ++b) {
            if (n_out > 1) memcpy((float *)arm_data(&outs[1]) + state_at(s, d, b), s->h + b * hp, (size_t)H * sizeof(float));
            if (n_out > 2) memcpy((float *)arm_data(&outs[2]) + state_at(s, d, b), s->c + b * H, (size_t)H * sizeof(float));
        }
    }
    return 0;
}
