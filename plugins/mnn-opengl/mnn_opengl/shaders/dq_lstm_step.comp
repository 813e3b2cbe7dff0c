// One time step of DynamicQuantizeLSTM (ONNX gate order i, o, f, c; default activations), the kit's
// dq_lstm_step.comp: for each (direction, batch, unit), the state h quantized to uint8 with its
// direction's dq_range parameters, times R [D, H, 4H] in int32, scaled once, plus the input
// projection (dq_lstm_x) and the biases; then the cell update. The scratch holds (at float offsets)
// the quantization parameters (0), gx and the state: h in two slots (this step reads `cur`, writes
// the other) and c.
// P: total, T, t, B, H, D, cur, flags (1 bias, 2 peepholes, 4 Y, 8 input_forget, 16 R signed,
//    32 R zero point), dirs_mode (0 forward, 1 reverse, 2 bidirectional), scale_cols, zp_cols, clip,
//    gx_at, state_at (kit.quant.DqLstmPlan.step_push), r_off, rscale_off, rzp_off, bias_off,
//    peep_off, y_off, scratch
#include "act.glsl"
#include "bytes.glsl"

int sbase;

float S(int i) { return uintBitsToFloat(P[sbase + i]); }

float clipped(float v) {
    float clip = pf(11);
    return clip > 0.0 ? clamp(v, -clip, clip) : v;
}

int r_byte(int i, bool s) { return byte_value(A[pi(14) + (i >> 2)], uint(i), s); }

float F(int at) { return uintBitsToFloat(A[at]); }

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int T = pi(1), B = pi(3), H = pi(4), D = pi(5), cur = pi(6), flags = pi(7), mode = pi(8), scale_cols = pi(9);
    sbase = int(P.length()) + pi(20);
    int j = i % H, t = i / H;
    int b = t % B, d = t / B;
    int dbh = D * B * H, bh = B * H;
    bool reverse = mode == 1 || (mode == 2 && d == 1);
    int tx = reverse ? T - 1 - pi(2) : pi(2);
    bool rs = (flags & 16) != 0;
    int rzi = d * pi(10);
    int rz = (flags & 32) != 0 ? byte_value(A[pi(16) + (rzi >> 2)], uint(rzi), rs) : 0;
    float sh = S(2 + 2 * d), zh = S(3 + 2 * d);
    int state = pi(13), h_at = state + cur * dbh + d * bh + b * H, g4 = 4 * H;
    ivec4 acc = ivec4(0);
    for (int k = 0; k < H; ++k) {
        int q = int(clamp(roundEven(S(h_at + k) / sh) + zh, 0.0, 255.0) - zh);
        int ro = (d * H + k) * g4 + j;
        acc += q * (ivec4(r_byte(ro, rs), r_byte(ro + H, rs), r_byte(ro + 2 * H, rs), r_byte(ro + 3 * H, rs)) - rz);
    }
    float gate[4];
    for (int g = 0; g < 4; ++g) {
        int col = g * H + j;
        float rsc = F(pi(15) + d * scale_cols + (scale_cols == 1 ? 0 : col));
        float v = S(pi(12) + (d * T + tx) * B * g4 + b * g4 + col) + float(acc[g]) * (sh * rsc);
        if ((flags & 1) != 0) v += F(pi(17) + d * 2 * g4 + col) + F(pi(17) + d * 2 * g4 + g4 + col);
        gate[g] = v;
    }
    float p_i = 0.0, p_o = 0.0, p_f = 0.0;
    if ((flags & 2) != 0) {
        int po = pi(18) + d * 3 * H + j;
        p_i = F(po);
        p_o = F(po + H);
        p_f = F(po + 2 * H);
    }
    int at = state + d * bh + b * H + j;
    float c = S(2 * dbh + at);
    float ig = mnn_sigmoid(clipped(gate[0] + p_i * c));
    float fg = (flags & 8) != 0 ? 1.0 - ig : mnn_sigmoid(clipped(gate[2] + p_f * c));
    c = fg * c + ig * mnn_tanh(clipped(gate[3]));
    float h = mnn_sigmoid(clipped(gate[1] + p_o * c)) * mnn_tanh(c);
    P[sbase + 2 * dbh + at] = floatBitsToUint(c);
    P[sbase + (1 - cur) * dbh + at] = floatBitsToUint(h);
    if ((flags & 4) != 0) A[pi(19) + ((tx * D + d) * B + b) * H + j] = floatBitsToUint(h);
}
