// The body of gemm.comp and gemm_h.comp (included by both).
// C[z][m][n] = act(alpha * sum_k A[z][m][k] * B[z][k][n] + beta * bias[z][m][n])
// with every operand addressed by strides, so one shader serves MatMul (with
// broadcast batch dimensions), Gemm (transposes, broadcast C) and 1x1
// convolutions (batch = images x groups). The batch index z = z1 * nb2 + z2.
#include "common.glsl"
#include "act.glsl"
#include "tile.glsl"

#ifndef WEIGHT_T
#define WEIGHT_T DATA_T  // float16_t in gemm_h.comp
#endif
layout(std430, binding = 0) readonly buffer A { WEIGHT_T a[]; };
layout(std430, binding = 1) readonly buffer B { DATA_T b[]; };
layout(std430, binding = 2) readonly buffer Bias { DATA_T bias[]; };
layout(std430, binding = 3) writeonly buffer C { DATA_T c[]; };

layout(push_constant) uniform Params {
    uint M, N, K, nb2;
    uint a_sm, a_sk, a_s1, a_s2;
    uint b_sk, b_sn, b_s1, b_s2;
    uint c_s1, c_s2, has_bias;
    int act;
    uint bias_sm, bias_sn, bias_s1, bias_s2;
    float alpha, beta, act_a, act_b;
} p;

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint tid = ty * TX + tx;
    uint z1 = gl_WorkGroupID.z / p.nb2, z2 = gl_WorkGroupID.z % p.nb2;
    uint a0 = z1 * p.a_s1 + z2 * p.a_s2;
    uint b0 = z1 * p.b_s1 + z2 * p.b_s2;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;

    float acc[TM * TN];
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;

    for (uint k0 = 0; k0 < p.K; k0 += BK) {
        // stage A: walk along whichever of m or k is contiguous in memory
        for (uint e = tid; e < BK * BM; e += NT) {
            uint kk = p.a_sk == 1 ? e % BK : e / BM;
            uint mm = p.a_sk == 1 ? e / BK : e % BM;
            uint gm = m0 + mm, gk = k0 + kk;
            As[kk * AS + mm] = HALF_T((gm < p.M && gk < p.K) ? float(a[a0 + gm * p.a_sm + gk * p.a_sk]) : 0.0);
        }
        for (uint e = tid; e < BK * BN; e += NT) {
            uint nn = p.b_sn == 1 ? e % BN : e / BK;
            uint kk = p.b_sn == 1 ? e / BN : e % BK;
            uint gn = n0 + nn, gk = k0 + kk;
            Bs[kk * BS + nn] = HALF_T((gn < p.N && gk < p.K) ? float(b[b0 + gk * p.b_sk + gn * p.b_sn]) : 0.0);
        }
        barrier();
        TILE_MULTIPLY(acc)
        barrier();
    }

    uint c0 = z1 * p.c_s1 + z2 * p.c_s2;
    uint bias0 = z1 * p.bias_s1 + z2 * p.bias_s2;
    [[unroll]] for (uint i = 0; i < TM; ++i) {
        uint gm = m0 + ty + i * TY;
        if (gm >= p.M) continue;
        [[unroll]] for (uint j = 0; j < TN; ++j) {
            uint gn = n0 + tx + j * TX;
            if (gn >= p.N) continue;
            float v = p.alpha * acc[i * TN + j];
            if (p.has_bias != 0) v += p.beta * float(bias[bias0 + gm * p.bias_sm + gn * p.bias_sn]);
            c[c0 + gm * p.N + gn] = DATA_T(apply_act(v, p.act, p.act_a, p.act_b));
        }
    }
}
