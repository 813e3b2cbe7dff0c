#version 450
#extension GL_GOOGLE_include_directive : require
// Pad (negative pads crop): per output element and dim, the source index is
// out - begin, mapped by the mode when it falls outside the input:
// 0 constant (the value), 1 reflect (mirror, edge excluded), 2 edge (clamp),
// 3 wrap (modulo).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint total, ndim, mode;
    float value;
    uint ishape[6];
    uint oshape[6];
    int begin[6];
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint rem = i, src = 0, stride = 1;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        int n = int(p.ishape[d]);
        int s = int(rem % p.oshape[d]) - p.begin[d];
        rem /= p.oshape[d];
        if (s < 0 || s >= n) {
            if (p.mode == 0) {
                y[i] = p.value;
                return;
            } else if (p.mode == 1) {
                s = s < 0 ? -s : 2 * (n - 1) - s;
            } else if (p.mode == 2) {
                s = clamp(s, 0, n - 1);
            } else {
                // unsigned remainders: GLSL leaves % of a negative operand undefined
                // (NVIDIA's driver returned negative indices here)
                s = s < 0 ? n - 1 - int(uint(-s - 1) % uint(n)) : int(uint(s) % uint(n));
            }
        }
        src += uint(s) * stride;
        stride *= uint(n);
    }
    y[i] = x[src];
}
