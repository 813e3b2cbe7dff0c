#version 450
#extension GL_GOOGLE_include_directive : require
// GatherND: output element i is word s of slice j (S words a slice): the slice starts at
// batch(j) * batch_stride + sum_k idx[j][k] * stride[k] in the data (in words), with
// negative indices counting from the end and out-of-range ones clamped (a recorded command
// buffer cannot raise). j / per_batch is the batch entry (batch_dims flattened).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer O { uint dst[]; };

layout(push_constant) uniform Params {
    uint total, S, m, per_batch, batch_stride, idx64, pad0, pad1;
    uint dims[8];
    uint strides[8];
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint s = i % p.S, j = i / p.S;
    uint at = (j / p.per_batch) * p.batch_stride;
    for (uint k = 0u; k < p.m; ++k) {
        uint q = j * p.m + k;
        int v = p.idx64 != 0u ? idx[2u * q] : idx[q];
        if (v < 0) v += int(p.dims[k]);
        at += uint(clamp(v, 0, int(p.dims[k]) - 1)) * p.strides[k];
    }
    dst[i] = data[at + s];
}
