#version 450
#extension GL_GOOGLE_include_directive : require
// Gather along an axis: the data is (outer, dim, inner), the indices (n of
// them, int32 or int64 little-endian words, negative ones counting from the
// end) pick rows: out[o][j][i] = data[o][idx[j]][i]. Out-of-range indices are
// clamped (the host cannot raise from a recorded command buffer).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer O { uint dst[]; };

layout(push_constant) uniform Params {
    uint total, inner, dim, n, idx64;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint in_i = i % p.inner, t = i / p.inner;
    uint j = t % p.n, o = t / p.n;
    int k = p.idx64 != 0 ? idx[2 * j] : idx[j];  // the low word holds any valid index
    if (k < 0) k += int(p.dim);
    k = clamp(k, 0, int(p.dim) - 1);
    dst[i] = data[(o * p.dim + uint(k)) * p.inner + in_i];
}
