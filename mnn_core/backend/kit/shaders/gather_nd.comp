#version 450
#extension GL_GOOGLE_include_directive : require
// GatherND: output element i is word s of slice j (S words a slice): the slice starts at
// batch(j) * batch_stride + sum_k idx[j][k] * stride[k] in the data (in words), with
// negative indices counting from the end and out-of-range ones clamped (a recorded command
// buffer cannot raise). j / per_batch is the batch entry (batch_dims flattened).
// 1-byte data (bool, uint8, int8; `bytes` set, sizes in elements): an invocation assembles
// one output word from four gathered bytes.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer O { uint dst[]; };

layout(push_constant) uniform Params {
    uint total, S, m, per_batch, batch_stride, idx64, bytes, pad1;
    uint dims[8];
    uint strides[8];
} p;

uint source(uint i) {  // where output element i comes from, in elements of the data
    uint s = i % p.S, j = i / p.S;
    uint at = (j / p.per_batch) * p.batch_stride;
    for (uint k = 0u; k < p.m; ++k) {
        uint q = j * p.m + k;
        int v = p.idx64 != 0u ? idx[2u * q] : idx[q];
        if (v < 0) v += int(p.dims[k]);
        at += uint(clamp(v, 0, int(p.dims[k]) - 1)) * p.strides[k];
    }
    return at + s;
}

void main() {
    uint i = flat_index();
    if (p.bytes == 0u) {
        if (i < p.total) dst[i] = data[source(i)];
        return;
    }
    if (i * 4u >= p.total) return;
    uint word = 0u;
    for (uint b = 0u; b < 4u && i * 4u + b < p.total; ++b) {
        uint src = source(i * 4u + b);
        word |= ((data[src >> 2] >> (8u * (src & 3u))) & 255u) << (8u * b);
    }
    dst[i] = word;
}
