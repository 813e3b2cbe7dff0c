#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
// gemm_h.comp on tensor cores (VK_NV_cooperative_matrix): float16 operands, products of
// 16x16x16 matrices summed in float32. Same bindings, push constants and result as gemm.glsl
// (C = act(alpha * A @ B + beta * bias) over a batch, every operand addressed by strides).
// A work group of 128 invocations (4 subgroups of 32) computes a 64x64 block of C, each
// subgroup a 32x32 quarter as 2x2 matrices. A and B are staged through shared memory with
// zeros past the edges, so any M, N, K and stride work; the block of C goes back through
// shared memory for the epilogue (bias, activation, bounds). Taken only where the device
// reports that shape at subgroup scope with subgroups of 32 (kernels/matmul.py: use_coopmat).
#define MNN_HALF 1
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 2) readonly buffer Bias { float16_t bias[]; };
layout(std430, binding = 3) writeonly buffer C { float16_t c[]; };

layout(push_constant) uniform Params {
    uint M, N, K, nb2;
    uint a_sm, a_sk, a_s1, a_s2;
    uint b_sk, b_sn, b_s1, b_s2;
    uint c_s1, c_s2, has_bias;
    int act;
    uint bias_sm, bias_sn, bias_s1, bias_s2;
    float alpha, beta, act_a, act_b;
} p;

const uint BM = 64, BN = 64, BK = 32, NT = 128;
// Row strides of the staged tiles, padded by 16 bytes: cooperative loads and stores want
// 16-byte aligned rows, and the padding spreads rows over shared-memory banks.
const uint AS = BK + 8;  // As[m * AS + k]
const uint BS = BN + 8;  // Bs[k * BS + n]
const uint CS = BN + 4;  // Cs[m * CS + n]
shared float16_t As[BM * AS];
shared float16_t Bs[BK * BS];
shared float Cs[BM * CS];

#define HMAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FMAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint z1 = gl_WorkGroupID.z / p.nb2, z2 = gl_WorkGroupID.z % p.nb2;
    uint a0 = z1 * p.a_s1 + z2 * p.a_s2;
    uint b0 = z1 * p.b_s1 + z2 * p.b_s2;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
    uint wm = (gl_SubgroupID / 2) * 32, wn = (gl_SubgroupID % 2) * 32;

    FMAT acc[4];
    [[unroll]] for (uint i = 0; i < 4; ++i) acc[i] = FMAT(0.0);

    for (uint k0 = 0; k0 < p.K; k0 += BK) {
        // stage A and B, walking along whichever axis is contiguous in memory
        for (uint e = tid; e < BM * BK; e += NT) {
            uint kk = p.a_sk == 1 ? e % BK : e / BM;
            uint mm = p.a_sk == 1 ? e / BK : e % BM;
            uint gm = m0 + mm, gk = k0 + kk;
            As[mm * AS + kk] = (gm < p.M && gk < p.K) ? a[a0 + gm * p.a_sm + gk * p.a_sk] : float16_t(0.0);
        }
        for (uint e = tid; e < BK * BN; e += NT) {
            uint nn = p.b_sn == 1 ? e % BN : e / BK;
            uint kk = p.b_sn == 1 ? e / BN : e % BK;
            uint gn = n0 + nn, gk = k0 + kk;
            Bs[kk * BS + nn] = (gn < p.N && gk < p.K) ? b[b0 + gk * p.b_sk + gn * p.b_sn] : float16_t(0.0);
        }
        barrier();
        [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
            HMAT ma[2];
            HMAT mb[2];
            [[unroll]] for (uint i = 0; i < 2; ++i) coopMatLoadNV(ma[i], As, (wm + 16 * i) * AS + kk, AS, false);
            [[unroll]] for (uint j = 0; j < 2; ++j) coopMatLoadNV(mb[j], Bs, kk * BS + wn + 16 * j, BS, false);
            [[unroll]] for (uint i = 0; i < 2; ++i)
                [[unroll]] for (uint j = 0; j < 2; ++j) acc[i * 2 + j] = coopMatMulAddNV(ma[i], mb[j], acc[i * 2 + j]);
        }
        barrier();
    }
    [[unroll]] for (uint i = 0; i < 2; ++i)
        [[unroll]] for (uint j = 0; j < 2; ++j)
            coopMatStoreNV(acc[i * 2 + j], Cs, (wm + 16 * i) * CS + wn + 16 * j, CS, false);
    barrier();

    uint c0 = z1 * p.c_s1 + z2 * p.c_s2;
    uint bias0 = z1 * p.bias_s1 + z2 * p.bias_s2;
    for (uint e = tid; e < BM * BN; e += NT) {
        uint gm = m0 + e / BN, gn = n0 + e % BN;
        if (gm >= p.M || gn >= p.N) continue;
        float v = p.alpha * Cs[(e / BN) * CS + e % BN];
        if (p.has_bias != 0) v += p.beta * float(bias[bias0 + gm * p.bias_sm + gn * p.bias_sn]);
        c[c0 + gm * p.N + gn] = float16_t(apply_act(v, p.act, p.act_a, p.act_b));
    }
}
