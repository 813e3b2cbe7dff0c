#version 450
#extension GL_GOOGLE_include_directive : require
// Resize of NCHW images: every output pixel blends up to 2 x 2 input pixels.
// The per-row and per-column source indices and weights are computed on the
// host exactly as the reference does (float64) and uploaded once as a table:
// (lo, hi, w_lo, w_hi) per output row, then per output column. Nearest mode
// is the same with weights (1, 0).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer T { float table[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint total, H, W, OH, OW;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint ox = i % p.OW, t = i / p.OW;
    uint oy = t % p.OH, nc = t / p.OH;
    uint ty = oy * 4, tx = (p.OH + ox) * 4;
    uint y0 = uint(table[ty]), y1 = uint(table[ty + 1]);
    uint x0 = uint(table[tx]), x1 = uint(table[tx + 1]);
    uint base = nc * p.H * p.W;
    float top = x[base + y0 * p.W + x0] * table[tx + 2];
    float bottom = x[base + y1 * p.W + x0] * table[tx + 2];
    if (table[tx + 3] != 0.0) {
        top += x[base + y0 * p.W + x1] * table[tx + 3];
        bottom += x[base + y1 * p.W + x1] * table[tx + 3];
    }
    float v = top * table[ty + 2];
    if (table[ty + 3] != 0.0) v += bottom * table[ty + 3];
    y[i] = v;
}
