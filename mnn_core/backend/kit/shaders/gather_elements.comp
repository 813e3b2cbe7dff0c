#version 450
#extension GL_GOOGLE_include_directive : require
// GatherElements: out[i0..] = data[i0.., idx[i0..] along axis, ..]; the output
// has the indices' shape. Indices are int32 or int64 (negative ones count from
// the end; out-of-range ones are clamped); data elements are `words` words.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer O { uint o[]; };

layout(push_constant) uniform Params {
    uint total, ndim, axis, words;
    uint dim, idx64, u0, u1;
    uint shape[6];
    uint dstride[6];
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    int k = p.idx64 != 0u ? idx[2u * i] : idx[i];
    if (k < 0) k += int(p.dim);
    k = clamp(k, 0, int(p.dim) - 1);
    uint src = 0u, rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        uint c = rem % p.shape[d];
        rem /= p.shape[d];
        src += (uint(d) == p.axis ? uint(k) : c) * p.dstride[d];
    }
    for (uint w = 0u; w < p.words; ++w) o[i * p.words + w] = data[src * p.words + w];
}
