#version 450
#extension GL_GOOGLE_include_directive : require
// One time step of DynamicQuantizeLSTM (ONNX gate order i, o, f, c; default activations): for each
// (direction, batch, unit), the state h quantized to uint8 with its direction's dq_range parameters,
// times R [D, H, 4H] in int32, scaled once, plus the input projection (dq_lstm_x) and the biases;
// then the cell update. The state is h (two slots: this step reads `cur`, writes the other) and c.
#include "common.glsl"
#include "bytes.glsl"

// the scratch holds (at float offsets) the quantization parameters (0), gx and the state
layout(std430, binding = 0) buffer S { float scratch[]; };
layout(std430, binding = 1) readonly buffer R { uint r[]; };
layout(std430, binding = 2) readonly buffer RS { float rscale[]; };
layout(std430, binding = 3) readonly buffer RZ { uint rzp[]; };
layout(std430, binding = 4) readonly buffer B { float bias[]; };
layout(std430, binding = 5) readonly buffer PH { float peep[]; };
layout(std430, binding = 6) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint total, T, t, B, H, D, cur;
    uint flags;  // 1 bias, 2 peepholes, 4 Y, 8 input_forget, 16 R signed, 32 R zero point
    uint dirs_mode, scale_cols, zp_cols;  // 0 forward, 1 reverse, 2 bidirectional
    float clip;                           // 0: none
    uint gx_at, state_at;                 // float offsets in the scratch
} p;

float clipped(float v) {
    return p.clip > 0.0 ? clamp(v, -p.clip, p.clip) : v;
}

float sigm(float v) {
    float e = exp(-abs(v));
    return v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

float tanh_(float v) {
    return tanh(clamp(v, -15.0, 15.0));
}

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint j = i % p.H, t = i / p.H;
    uint b = t % p.B, d = t / p.B;
    uint dbh = p.D * p.B * p.H, bh = p.B * p.H;
    bool reverse = p.dirs_mode == 1u || (p.dirs_mode == 2u && d == 1u);
    uint tx = reverse ? p.T - 1u - p.t : p.t;
    bool rs = (p.flags & 16u) != 0u;
    int rz = (p.flags & 32u) != 0u ? BYTE_AT(rzp, d * p.zp_cols, rs) : 0;
    float sh = scratch[2u + 2u * d], zh = scratch[3u + 2u * d];
    uint h_at = p.state_at + p.cur * dbh + d * bh + b * p.H, g4 = 4u * p.H;
    ivec4 acc = ivec4(0);
    for (uint k = 0u; k < p.H; ++k) {
        int q = int(clamp(roundEven(scratch[h_at + k] / sh) + zh, 0.0, 255.0) - zh);
        uint ro = (d * p.H + k) * g4 + j;
        acc += q * (ivec4(BYTE_AT(r, ro, rs), BYTE_AT(r, ro + p.H, rs), BYTE_AT(r, ro + 2u * p.H, rs),
                          BYTE_AT(r, ro + 3u * p.H, rs)) - rz);
    }
    float gate[4];
    for (uint g = 0u; g < 4u; ++g) {
        uint col = g * p.H + j;
        float rsc = rscale[d * p.scale_cols + (p.scale_cols == 1u ? 0u : col)];
        float v = scratch[p.gx_at + (d * p.T + tx) * p.B * g4 + b * g4 + col] + float(acc[g]) * (sh * rsc);
        if ((p.flags & 1u) != 0u) v += bias[d * 2u * g4 + col] + bias[d * 2u * g4 + g4 + col];
        gate[g] = v;
    }
    float pi = 0.0, po = 0.0, pf = 0.0;
    if ((p.flags & 2u) != 0u) {
        pi = peep[d * 3u * p.H + j];
        po = peep[d * 3u * p.H + p.H + j];
        pf = peep[d * 3u * p.H + 2u * p.H + j];
    }
    uint at = p.state_at + d * bh + b * p.H + j;
    float c = scratch[2u * dbh + at];
    float ig = sigm(clipped(gate[0] + pi * c));
    float fg = (p.flags & 8u) != 0u ? 1.0 - ig : sigm(clipped(gate[2] + pf * c));
    c = fg * c + ig * tanh_(clipped(gate[3]));
    float h = sigm(clipped(gate[1] + po * c)) * tanh_(c);
    scratch[2u * dbh + at] = c;
    scratch[(1u - p.cur) * dbh + at] = h;
    if ((p.flags & 4u) != 0u) y[((tx * p.D + d) * p.B + b) * p.H + j] = h;
}
