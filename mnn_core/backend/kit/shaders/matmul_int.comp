#version 450
#extension GL_GOOGLE_include_directive : require
// MatMulInteger: int32 (A - a_zero_point) @ (B - b_zero_point), A [batch, M, K] and B [batch or 1, K, N]
// int8 or uint8; A's zero point per tensor or per row, B's per tensor or per column. One invocation
// per output element.
#include "common.glsl"
#include "bytes.glsl"

layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer AZ { uint azp[]; };
layout(std430, binding = 3) readonly buffer BZ { uint bzp[]; };
layout(std430, binding = 4) writeonly buffer Y { int y[]; };

layout(push_constant) uniform Params {
    uint total, flags;  // 1: A signed, 2: B signed, 4: has A zp, 8: has B zp, 16: A's per row, 32: B's per column
    uint M, K, N, b_batch;  // b_batch: B's batch stride in elements (0: one B for every batch)
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint col = i % p.N, t = i / p.N;
    uint row = t % p.M, bt = t / p.M;
    bool as_ = (p.flags & 1u) != 0u, bs = (p.flags & 2u) != 0u;
    int az = (p.flags & 4u) != 0u ? BYTE_AT(azp, (p.flags & 16u) != 0u ? row : 0u, as_) : 0;
    int bz = (p.flags & 8u) != 0u ? BYTE_AT(bzp, (p.flags & 32u) != 0u ? col : 0u, bs) : 0;
    uint ao = t * p.K, bo = bt * p.b_batch + col;
    int acc = 0;
    for (uint k = 0u; k < p.K; ++k) acc += (BYTE_AT(a, ao + k, as_) - az) * (BYTE_AT(b, bo + k * p.N, bs) - bz);
    y[i] = acc;
}
