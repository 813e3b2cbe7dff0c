#version 450
#extension GL_GOOGLE_include_directive : require
// OneHot: out[o][k][i] = values[1] where indices[o][i] (negative ones counting from the end)
// equals k, else values[0]; k runs along the inserted axis (depth cells). Elements of `words`
// 32-bit words (float32/int32: 1, int64: 2); indices int32, int64 (low word) or float32.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer I { int idx[]; };
layout(std430, binding = 1) readonly buffer V { uint values[]; };
layout(std430, binding = 2) writeonly buffer O { uint dst[]; };

layout(push_constant) uniform Params {
    uint total, inner, depth, words, idx_kind;  // idx_kind 0 int32, 1 int64, 2 float32
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint e = i / p.words, w = i % p.words;
    uint in_i = e % p.inner, t = e / p.inner;
    uint k = t % p.depth, o = t / p.depth;
    uint at = o * p.inner + in_i;
    int v = p.idx_kind == 1u ? idx[2u * at] : (p.idx_kind == 2u ? int(intBitsToFloat(idx[at])) : idx[at]);
    if (v < 0) v += int(p.depth);
    dst[i] = values[(v == int(k) ? p.words : 0u) + w];
}
