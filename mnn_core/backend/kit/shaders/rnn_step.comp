#version 450
#extension GL_GOOGLE_include_directive : require
// One time step of an ONNX RNN / GRU / LSTM, every direction and batch entry at once:
// an invocation per (direction, batch entry, hidden unit) computes its gates' dot products
// over x_t and h (W and R rows), the cell and the new h. h is double-buffered in the state
// buffer (everyone reads the old one), c is updated in place (only its own unit reads it).
// GRU without linear_before_reset needs r * h of every unit first: phase 1 writes it to the
// state buffer, phase 2 finishes the step. Entries past their sequence length keep their
// state and write zeros to Y[t]; a reversed direction walks each entry's own valid steps
// backwards. Layout: state = h[2][D][B][H], c[D][B][H], rh[D][B][H].
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Wt { float w[]; };     // [D][G*H][I]
layout(std430, binding = 2) readonly buffer Rt { float r[]; };     // [D][G*H][H]
layout(std430, binding = 3) readonly buffer Bt { float bias[]; };  // [D][2*G*H]
layout(std430, binding = 4) readonly buffer L { int lens[]; };     // [B] int32 or int64 words
layout(std430, binding = 5) readonly buffer Pt { float peep[]; };  // [D][3*H]
layout(std430, binding = 6) buffer S { float state[]; };
layout(std430, binding = 7) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint kind;   // 0 RNN, 1 GRU, 2 LSTM
    uint phase;  // 0: the whole step; GRU without linear_before_reset: 1 (r * h), then 2
    uint t, T, cur;  // the step, the sequence's length, which half of h holds the current state
    uint B, I, H, D;
    uint reverse;  // direction == "reverse" (direction 1 of a bidirectional one is always reversed)
    uint flags;    // 1 bias, 2 sequence lengths, 4 int64 lengths, 8 peepholes, 16 linear_before_reset,
                   // 32 input_forget, 64 write Y
    float clip;    // 0: none
    uint acts;     // f | g << 4 | h << 8: 0 Sigmoid, 1 Tanh, 2 Relu, 3 Softsign, 4 Softplus
    uint xs_t, xs_b, ys_t, ys_d, ys_b;  // strides (elements) of X's step and batch axes, Y's step, direction, batch
} p;

float act_raw(float v, uint code) {
    switch (code) {
    case 0u: return v >= 0.0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v));
    case 1u: return tanh(v);
    case 2u: return max(v, 0.0);
    case 3u: return v / (1.0 + abs(v));
    default: return max(v, 0.0) + log(1.0 + exp(-abs(v)));
    }
}

// a gate's activation: its input clipped first (not the LSTM's output activation of c)
float act(float v, uint code) {
    return act_raw(p.clip > 0.0 ? clamp(v, -p.clip, p.clip) : v, code);
}

// dot(W[d][row], x_t[b]) + dot(R[d][row], hv[b]) with hv at `hoff` in the state buffer
float gate_in(uint d, uint row, uint xoff) {
    float s = 0.0;
    uint wrow = (d * (p.kind == 2u ? 4u : (p.kind == 1u ? 3u : 1u)) * p.H + row) * p.I;
    for (uint k = 0u; k < p.I; ++k) s += w[wrow + k] * x[xoff + k];
    return s;
}

float gate_rec(uint d, uint row, uint hoff) {
    float s = 0.0;
    uint rrow = (d * (p.kind == 2u ? 4u : (p.kind == 1u ? 3u : 1u)) * p.H + row) * p.H;
    for (uint k = 0u; k < p.H; ++k) s += r[rrow + k] * state[hoff + k];
    return s;
}

float bsum(uint d, uint G, uint row, bool with_rb) {
    if ((p.flags & 1u) == 0u) return 0.0;
    uint o = d * 2u * G * p.H;
    return bias[o + row] + (with_rb ? bias[o + G * p.H + row] : 0.0);
}

void main() {
    uint i = flat_index();
    uint DBH = p.D * p.B * p.H;
    if (i >= DBH) return;
    uint j = i % p.H, b = (i / p.H) % p.B, d = i / (p.H * p.B);
    uint G = p.kind == 2u ? 4u : (p.kind == 1u ? 3u : 1u);
    uint T_len = 0xffffffffu;
    if ((p.flags & 2u) != 0u) T_len = uint(max((p.flags & 4u) != 0u ? lens[2u * b] : lens[b], 0));
    bool live = p.t < min(T_len, p.T);
    bool rev = p.reverse != 0u || d == 1u;
    uint steps = min(T_len, p.T);
    uint ti = rev ? (live ? steps - 1u - p.t : 0u) : p.t;
    uint hcur = (p.cur * DBH) + (d * p.B + b) * p.H;  // this entry's current h (all units)
    uint hnew = ((1u - p.cur) * DBH) + i;
    uint ci = 2u * DBH + i, rhi = 3u * DBH + i;
    uint xoff = ti * p.xs_t + b * p.xs_b;
    float hold = state[hcur + j];
    if (p.phase == 1u) {  // GRU: r * h of this unit, for phase 2's (r * h) R_h
        if (live) {
            float rg = act(gate_in(d, p.H + j, xoff) + gate_rec(d, p.H + j, hcur) + bsum(d, G, p.H + j, true),
                           p.acts & 15u);
            state[rhi] = rg * hold;
        }
        return;
    }
    uint yi = ((p.flags & 64u) != 0u) ? 1u : 0u;
    if (!live) {
        state[hnew] = hold;
        if (yi != 0u) y[p.t * p.ys_t + d * p.ys_d + b * p.ys_b + j] = 0.0;
        return;
    }
    uint fa = p.acts & 15u, ga = (p.acts >> 4) & 15u, ha = (p.acts >> 8) & 15u;
    float hv;
    if (p.kind == 0u) {
        hv = act(gate_in(d, j, xoff) + gate_rec(d, j, hcur) + bsum(d, G, j, true), fa);
    } else if (p.kind == 1u) {
        float z = act(gate_in(d, j, xoff) + gate_rec(d, j, hcur) + bsum(d, G, j, true), fa);
        uint hr = 2u * p.H + j;
        float xh = gate_in(d, hr, xoff) + bsum(d, G, hr, false);
        float rb = (p.flags & 1u) != 0u ? bias[d * 2u * G * p.H + G * p.H + hr] : 0.0;
        float ht;
        if ((p.flags & 16u) != 0u) {
            float rg = act(gate_in(d, p.H + j, xoff) + gate_rec(d, p.H + j, hcur) + bsum(d, G, p.H + j, true), fa);
            ht = act(xh + rg * (gate_rec(d, hr, hcur) + rb), ga);
        } else {
            ht = act(xh + gate_rec(d, hr, 3u * DBH + (d * p.B + b) * p.H) + rb, ga);
        }
        hv = (1.0 - z) * ht + z * hold;
    } else {
        float c = state[ci];
        bool has_peep = (p.flags & 8u) != 0u;
        float pi = has_peep ? peep[d * 3u * p.H + j] : 0.0;
        float po = has_peep ? peep[d * 3u * p.H + p.H + j] : 0.0;
        float pf = has_peep ? peep[d * 3u * p.H + 2u * p.H + j] : 0.0;
        float gi = gate_in(d, j, xoff) + gate_rec(d, j, hcur) + bsum(d, G, j, true);
        float go = gate_in(d, p.H + j, xoff) + gate_rec(d, p.H + j, hcur) + bsum(d, G, p.H + j, true);
        float gf = gate_in(d, 2u * p.H + j, xoff) + gate_rec(d, 2u * p.H + j, hcur) + bsum(d, G, 2u * p.H + j, true);
        float gc = gate_in(d, 3u * p.H + j, xoff) + gate_rec(d, 3u * p.H + j, hcur) + bsum(d, G, 3u * p.H + j, true);
        float ig = act(gi + pi * c, fa);
        float fg = (p.flags & 32u) != 0u ? 1.0 - ig : act(gf + pf * c, fa);
        float cn = fg * c + ig * act(gc, ga);
        float og = act(go + po * cn, fa);
        state[ci] = cn;
        hv = og * act_raw(cn, ha);
    }
    state[hnew] = hv;
    if (yi != 0u) y[ti * p.ys_t + d * p.ys_d + b * p.ys_b + j] = hv;
}
