#version 450
#extension GL_GOOGLE_include_directive : require
// out = cond ? x : y with three-way numpy broadcasting; cond is bool bytes,
// x and y elements of `words` 32-bit words (1: float32/int32, 2: int64).
#include "common.glsl"
#include "elements.glsl"

layout(std430, binding = 0) readonly buffer Cond { uint cond[]; };
layout(std430, binding = 1) readonly buffer X { uint x[]; };
layout(std430, binding = 2) readonly buffer Y { uint y[]; };
layout(std430, binding = 3) writeonly buffer O { uint o[]; };

layout(push_constant) uniform Params {
    uint total, ndim, words, unused;
    uint shape[6];
    uint sc[6];
    uint sx[6];
    uint sy[6];
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint ic = 0u, ix = 0u, iy = 0u, rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        uint k = rem % p.shape[d];
        rem /= p.shape[d];
        ic += k * p.sc[d];
        ix += k * p.sx[d];
        iy += k * p.sy[d];
    }
    bool pick = byte_at(cond[ic >> 2u], ic) != 0u;
    for (uint w = 0u; w < p.words; ++w) o[i * p.words + w] = pick ? x[ix * p.words + w] : y[iy * p.words + w];
}
