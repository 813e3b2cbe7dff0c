/* One time step of an ONNX RNN / GRU / LSTM over every direction and batch entry (a work-item per
 * (direction, batch entry, hidden unit)): its gates' dot products over x_t and h, the cell, the new h.
 * h is double-buffered in `st` (every item reads the old one), c updated in place; a GRU without
 * linear_before_reset first writes r * h of every unit (phase 1), phase 2 finishes the step. Entries
 * past their sequence length keep their state and write zeros to Y[t]; reversed directions walk each
 * entry's own valid steps backwards. st = h[2][D][B][H], c[D][B][H], rh[D][B][H] (mnn_core.gpu.rnn).
 * Flags: 1 bias, 2 lengths, 4 int64 lengths, 8 peepholes, 16 linear_before_reset, 32 input_forget, 64 Y. */

typedef struct {
    int kind, G, B, I, H, D, DBH, flags, acts;
    float clip;
} rnn_p;

inline float rnn_act_raw(float v, int code) {
    switch (code) {
    case 0: return sigmoid_f(v);
    case 1: return tanh(v);
    case 2: return fmax(v, 0.0f);
    case 3: return v / (1.0f + fabs(v));
    default: return fmax(v, 0.0f) + log(1.0f + exp(-fabs(v)));
    }
}

inline float rnn_act(float v, int code, float clip) {
    return rnn_act_raw(clip > 0.0f ? clamp(v, -clip, clip) : v, code);
}

/* dot(W[d][row], x) + dot(R[d][row], hv) + the biases (the recurrent one when `rb`) */
inline float rnn_gate(const rnn_p *p, __global const float *w, __global const float *r, __global const float *bias,
                      __global const float *xv, __global const float *hv, int d, int row, int with_x, int with_h,
                      int rb) {
    float s = 0.0f;
    if (with_x) {
        __global const float *wr = w + (d * p->G * p->H + row) * p->I;
        for (int k = 0; k < p->I; ++k) s = mad(wr[k], xv[k], s);
        if (p->flags & 1) s += bias[d * 2 * p->G * p->H + row];
    }
    if (with_h) {
        __global const float *rr = r + (d * p->G * p->H + row) * p->H;
        for (int k = 0; k < p->H; ++k) s = mad(rr[k], hv[k], s);
    }
    if (rb && (p->flags & 1)) s += bias[d * 2 * p->G * p->H + p->G * p->H + row];
    return s;
}

__kernel void rnn_step(__global const float *x, int xo, __global const float *w, int wo, __global const float *r,
                       int ro, __global const float *bias, int bo, __global const int *lens, int lo,
                       __global const float *peep, int po, __global float *st, int sto, __global float *y, int yo,
                       int kind, int phase, int t, int T, int cur, int B, int I, int H, int D, int reverse, int flags,
                       float clip, int acts, int xs_t, int xs_b, int ys_t, int ys_d, int ys_b) {
    int i = get_global_id(0);
    rnn_p p = {kind, kind == 2 ? 4 : (kind == 1 ? 3 : 1), B, I, H, D, D * B * H, flags, acts, clip};
    if (i >= p.DBH) return;
    w += wo;
    r += ro;
    bias += bo;
    peep += po;
    st += sto;
    int j = i % H, b = (i / H) % B, d = i / (H * B);
    int steps = T;
    if (flags & 2) steps = min(T, max((flags & 4) ? lens[lo + 2 * b] : lens[lo + b], 0));
    int live = t < steps;
    int rev = reverse || d == 1;
    int ti = rev ? (live ? steps - 1 - t : 0) : t;
    __global float *hcur = st + cur * p.DBH + (d * B + b) * H;
    __global const float *xv = x + xo + ti * xs_t + b * xs_b;
    int hnew = (1 - cur) * p.DBH + i, ci = 2 * p.DBH + i, rhi = 3 * p.DBH + i;
    float hold = hcur[j];
    int fa = acts & 15, ga = (acts >> 4) & 15, ha = (acts >> 8) & 15;
    if (phase == 1) { /* GRU: r * h of this unit */
        if (live) st[rhi] = rnn_act(rnn_gate(&p, w, r, bias, xv, hcur, d, H + j, 1, 1, 1), fa, clip) * hold;
        return;
    }
    if (!live) {
        st[hnew] = hold;
        if (flags & 64) y[yo + t * ys_t + d * ys_d + b * ys_b + j] = 0.0f;
        return;
    }
    float hv;
    if (kind == 0) {
        hv = rnn_act(rnn_gate(&p, w, r, bias, xv, hcur, d, j, 1, 1, 1), fa, clip);
    } else if (kind == 1) {
        float z = rnn_act(rnn_gate(&p, w, r, bias, xv, hcur, d, j, 1, 1, 1), fa, clip);
        int hr = 2 * H + j;
        float xh = rnn_gate(&p, w, r, bias, xv, hcur, d, hr, 1, 0, 0);
        float ht;
        if (flags & 16) {
            float rg = rnn_act(rnn_gate(&p, w, r, bias, xv, hcur, d, H + j, 1, 1, 1), fa, clip);
            ht = rnn_act(xh + rg * rnn_gate(&p, w, r, bias, xv, hcur, d, hr, 0, 1, 1), ga, clip);
        } else {
            __global const float *rh = st + 3 * p.DBH + (d * B + b) * H;
            ht = rnn_act(xh + rnn_gate(&p, w, r, bias, xv, rh, d, hr, 0, 1, 1), ga, clip);
        }
        hv = (1.0f - z) * ht + z * hold;
    } else {
        float c = st[ci];
        int pk = flags & 8;
        float pi = pk ? peep[d * 3 * H + j] : 0.0f, pout = pk ? peep[d * 3 * H + H + j] : 0.0f;
        float pf = pk ? peep[d * 3 * H + 2 * H + j] : 0.0f;
        float gi = rnn_gate(&p, w, r, bias, xv, hcur, d, j, 1, 1, 1);
        float go = rnn_gate(&p, w, r, bias, xv, hcur, d, H + j, 1, 1, 1);
        float gf = rnn_gate(&p, w, r, bias, xv, hcur, d, 2 * H + j, 1, 1, 1);
        float gc = rnn_gate(&p, w, r, bias, xv, hcur, d, 3 * H + j, 1, 1, 1);
        float ig = rnn_act(gi + pi * c, fa, clip);
        float fg = (flags & 32) ? 1.0f - ig : rnn_act(gf + pf * c, fa, clip);
        float cn = fg * c + ig * rnn_act(gc, ga, clip);
        float og = rnn_act(go + pout * cn, fa, clip);
        st[ci] = cn;
        hv = og * rnn_act_raw(cn, ha);
    }
    st[hnew] = hv;
    if (flags & 64) y[yo + ti * ys_t + d * ys_d + b * ys_b + j] = hv;
}
