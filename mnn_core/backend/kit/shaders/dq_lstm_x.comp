#version 450
#extension GL_GOOGLE_include_directive : require
// DynamicQuantizeLSTM's input projection for every step at once: X [rows, I] quantized to uint8 with
// dq_range's (scale, zero point) at params[0..1], times W [D, I, 4H] (int8 / uint8) minus its zero
// point, summed exactly in int32 and scaled once: gx[d][row][j] = float(acc) * (x_scale * w_scale).
#include "common.glsl"
#include "bytes.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer WS { float wscale[]; };
layout(std430, binding = 3) readonly buffer WZ { uint wzp[]; };
layout(std430, binding = 4) readonly buffer P { float params[]; };
layout(std430, binding = 5) writeonly buffer G { float gx[]; };

layout(push_constant) uniform Params {
    uint total, rows, I, G4, flags;  // flags 1: W signed, 2: has a zero point
    uint scale_cols, zp_cols;        // per direction: 1 or 4H scales; the zero point tensor's width
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint j = i % p.G4, t = i / p.G4;
    uint row = t % p.rows, d = t / p.rows;
    bool ws = (p.flags & 1u) != 0u;
    float sx = params[0], zx = params[1];
    int wz = (p.flags & 2u) != 0u ? BYTE_AT(wzp, d * p.zp_cols, ws) : 0;
    int acc = 0;
    uint wo = d * p.I * p.G4 + j;
    for (uint k = 0u; k < p.I; ++k) {
        int q = int(clamp(roundEven(x[row * p.I + k] / sx) + zx, 0.0, 255.0) - zx);
        acc += q * (BYTE_AT(w, wo + k * p.G4, ws) - wz);
    }
    gx[i] = float(acc) * (sx * wscale[d * p.scale_cols + (p.scale_cols == 1u ? 0u : j)]);
}
