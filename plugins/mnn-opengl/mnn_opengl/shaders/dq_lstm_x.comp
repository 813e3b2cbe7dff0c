// DynamicQuantizeLSTM's input projection for every step at once (the kit's dq_lstm_x.comp): X [rows, I]
// quantized to uint8 with dq_range's (scale, zero point) at scratch[0..1], times W [D, I, 4H] (int8 /
// uint8) minus its zero point, summed exactly in int32 and scaled once:
// gx[d][row][j] = float(acc) * (x_scale * w_scale), into the scratch at gx_at.
// P: total, rows, I, G4, flags (1: W signed, 2: has a zero point), scale_cols, zp_cols
//    (kit.quant.DqLstmPlan.x_push), x_off, w_off, wscale_off, wzp_off, scratch, gx_at
#include "bytes.glsl"

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int rows = pi(1), I = pi(2), G4 = pi(3), flags = pi(4), scale_cols = pi(5);
    int sbase = int(P.length()) + pi(11), x = pi(7), w = pi(8);
    int j = i % G4, t = i / G4;
    int row = t % rows, d = t / rows;
    bool ws = (flags & 1) != 0;
    float sx = uintBitsToFloat(P[sbase]), zx = uintBitsToFloat(P[sbase + 1]);
    int wzi = d * pi(6);
    int wz = (flags & 2) != 0 ? byte_value(A[pi(10) + (wzi >> 2)], uint(wzi), ws) : 0;
    int acc = 0;
    int wo = d * I * G4 + j;
    for (int k = 0; k < I; ++k) {
        int q = int(clamp(roundEven(uintBitsToFloat(A[x + row * I + k]) / sx) + zx, 0.0, 255.0) - zx);
        int wi = wo + k * G4;
        acc += q * (byte_value(A[w + (wi >> 2)], uint(wi), ws) - wz);
    }
    float wscale = uintBitsToFloat(A[pi(9) + d * scale_cols + (scale_cols == 1 ? 0 : j)]);
    P[sbase + pi(12) + i] = floatBitsToUint(float(acc) * (sx * wscale));
}
