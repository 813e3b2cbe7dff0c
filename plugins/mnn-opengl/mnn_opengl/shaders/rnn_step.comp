// One time step of an ONNX RNN / GRU / LSTM, every direction and batch entry at once
// (the algorithm of the backend kit's rnn_step.comp): an invocation per (direction, batch
// entry, hidden unit) computes its gates' dot products over x_t and h (W and R rows), the
// cell and the new h. The state lives in scratch words of the parameter buffer (compiled
// with PARAMS_RW): h[2][D][B][H] double-buffered (everyone reads the old one), c[D][B][H]
// updated in place (only its own unit reads it), rh[D][B][H]. Step 0 reads the initial
// states (or zeros) instead, so nothing is reset between runs; the last step writes Y_h
// and Y_c. GRU without linear_before_reset needs r * h of every unit first: phase 1 writes
// it, phase 2 finishes the step. Entries past their sequence length keep their state and
// write zeros to Y[t]; a reversed direction walks each entry's own valid steps backwards.
// P: kind (0 RNN, 1 GRU, 2 LSTM), phase, t, T, cur, B, I, H, D, reverse, flags, clip, acts,
//    xs_t, xs_b, ys_t, ys_d, ys_b (mnn_core.backend.kit.rnn's step_params), state (from the
//    buffer's end), x, w, r, bias, lens, peep, y, h0, c0, y_h, y_c (-1: none), s_d, s_b
//    (strides of the user's state tensors' direction and batch axes)
#include "act.glsl"

int G, H, I, B, D;
int state_base;

float S(int i) { return uintBitsToFloat(P[state_base + i]); }
void set_S(int i, float v) { P[state_base + i] = floatBitsToUint(v); }

float act_raw(float v, int code) {
    if (code == 0) return mnn_sigmoid(v);
    if (code == 1) return mnn_tanh(v);
    if (code == 2) return max(v, 0.0);
    if (code == 3) return v / (1.0 + abs(v));
    return max(v, 0.0) + log(1.0 + exp(-abs(v)));
}

// a gate's activation: its input clipped first (not the LSTM's output activation of c)
float act(float v, int code) {
    float clip = pf(11);
    return act_raw(clip > 0.0 ? clamp(v, -clip, clip) : v, code);
}

// unit k of direction d, entry b of the current h; at step 0 the initial state (or zero)
float h_old(int d, int b, int k) {
    if (pi(2) == 0) return pi(26) >= 0 ? A[pi(26) + d * pi(30) + b * pi(31) + k] : 0.0;
    return S(pi(4) * D * B * H + (d * B + b) * H + k);
}

float gate_in(int d, int row, int xoff) {
    float s = 0.0;
    int w = pi(20) + (d * G * H + row) * I;
    for (int k = 0; k < I; ++k) s += A[w + k] * A[xoff + k];
    return s;
}

// dot(R[d][row], h) over the current h (rh = false) or a GRU's r * h (rh = true)
float gate_rec(int d, int b, int row, bool rh) {
    float s = 0.0;
    int r = pi(21) + (d * G * H + row) * H;
    int rhi = 3 * D * B * H + (d * B + b) * H;
    for (int k = 0; k < H; ++k) s += A[r + k] * (rh ? S(rhi + k) : h_old(d, b, k));
    return s;
}

float bsum(int d, int row, bool with_rb) {
    if ((pi(10) & 1) == 0) return 0.0;
    int o = pi(22) + d * 2 * G * H;
    return A[o + row] + (with_rb ? A[o + G * H + row] : 0.0);
}

void main() {
    int kind = pi(0), phase = pi(1), t = pi(2), T = pi(3), cur = pi(4), flags = pi(10), acts = pi(12);
    B = pi(5);
    I = pi(6);
    H = pi(7);
    D = pi(8);
    G = kind == 2 ? 4 : (kind == 1 ? 3 : 1);
    state_base = int(P.length()) + pi(18);
    int i = flat_index(), DBH = D * B * H;
    if (i >= DBH) return;
    int j = i % H, b = (i / H) % B, d = i / (H * B);
    int steps = T;
    if ((flags & 2) != 0) steps = min(T, max(floatBitsToInt(A[pi(23) + ((flags & 4) != 0 ? 2 * b : b)]), 0));  // int words, read as bits
    bool live = t < steps;
    bool rev = pi(9) != 0 || d == 1;
    int ti = rev ? (live ? steps - 1 - t : 0) : t;
    int hnew = (1 - cur) * DBH + i, ci = 2 * DBH + i, rhi = 3 * DBH + i;
    int xoff = pi(19) + ti * pi(13) + b * pi(14);
    int user = d * pi(30) + b * pi(31) + j;  // this unit in the user's state tensors
    float hold = h_old(d, b, j);
    int fa = acts & 15, ga = (acts >> 4) & 15, ha = (acts >> 8) & 15;
    if (phase == 1) {  // GRU: r * h of this unit, for phase 2's (r * h) R_h
        if (live) set_S(rhi, act(gate_in(d, H + j, xoff) + gate_rec(d, b, H + j, false) + bsum(d, H + j, true), fa) * hold);
        return;
    }
    bool write_y = (flags & 64) != 0;
    float c = kind == 2 ? (t == 0 ? (pi(27) >= 0 ? A[pi(27) + user] : 0.0) : S(ci)) : 0.0;
    float hv = hold, cn = c;
    if (!live) {
        if (write_y) A[pi(25) + t * pi(15) + d * pi(16) + b * pi(17) + j] = 0.0;
    } else if (kind == 0) {
        hv = act(gate_in(d, j, xoff) + gate_rec(d, b, j, false) + bsum(d, j, true), fa);
    } else if (kind == 1) {
        float z = act(gate_in(d, j, xoff) + gate_rec(d, b, j, false) + bsum(d, j, true), fa);
        int hr = 2 * H + j;
        float xh = gate_in(d, hr, xoff) + bsum(d, hr, false);
        float rb = (flags & 1) != 0 ? A[pi(22) + d * 2 * G * H + G * H + hr] : 0.0;
        float ht;
        if ((flags & 16) != 0) {
            float rg = act(gate_in(d, H + j, xoff) + gate_rec(d, b, H + j, false) + bsum(d, H + j, true), fa);
            ht = act(xh + rg * (gate_rec(d, b, hr, false) + rb), ga);
        } else {
            ht = act(xh + gate_rec(d, b, hr, true) + rb, ga);
        }
        hv = (1.0 - z) * ht + z * hold;
    } else {
        bool peep = (flags & 8) != 0;
        int po = pi(24) + d * 3 * H;
        float p_i = peep ? A[po + j] : 0.0, p_o = peep ? A[po + H + j] : 0.0, p_f = peep ? A[po + 2 * H + j] : 0.0;
        float gi = gate_in(d, j, xoff) + gate_rec(d, b, j, false) + bsum(d, j, true);
        float go = gate_in(d, H + j, xoff) + gate_rec(d, b, H + j, false) + bsum(d, H + j, true);
        float gf = gate_in(d, 2 * H + j, xoff) + gate_rec(d, b, 2 * H + j, false) + bsum(d, 2 * H + j, true);
        float gc = gate_in(d, 3 * H + j, xoff) + gate_rec(d, b, 3 * H + j, false) + bsum(d, 3 * H + j, true);
        float ig = act(gi + p_i * c, fa);
        float fg = (flags & 32) != 0 ? 1.0 - ig : act(gf + p_f * c, fa);
        cn = fg * c + ig * act(gc, ga);
        float og = act(go + p_o * cn, fa);
        hv = og * act_raw(cn, ha);
    }
    set_S(hnew, hv);
    if (kind == 2) set_S(ci, cn);
    if (live && write_y) A[pi(25) + ti * pi(15) + d * pi(16) + b * pi(17) + j] = hv;
    if (t == T - 1) {
        if (pi(28) >= 0) A[pi(28) + user] = hv;
        if (pi(29) >= 0 && kind == 2) A[pi(29) + user] = cn;
    }
}
