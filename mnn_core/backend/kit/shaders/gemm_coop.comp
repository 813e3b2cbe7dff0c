#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
// gemm_h.comp on tensor cores (coop.glsl). Same bindings, push constants and result as gemm.glsl
// (C = act(alpha * A @ B + beta * bias) over a batch, every operand addressed by strides). A is
// staged along K where its K is contiguous, else along M; B along N where its N is contiguous,
// else along K. A chunk is one 16-byte load where the operand's lines are 8-aligned, else 8
// bounded loads; zeros past the edges, so any M, N, K and stride work. Taken only where the
// device offers the shape and binds storage buffers at 16-byte boundaries (kernels/matmul.py:
// use_coopmat).
#define MNN_HALF 1
#include "common.glsl"
#include "act.glsl"
#include "coop.glsl"

layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 0) readonly buffer A8 { uvec4 a8[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 1) readonly buffer B8 { uvec4 b8[]; };
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

uint a0, b0, c0, bias0, m0, n0;
bool a_k, b_k, a_vec, b_vec;

// Chunk e of A's (is_a) or B's tile at K offset k0: `rows` lines (M or N) from r0, s_r apart,
// elements s_k apart along K.
uvec4 load_chunk(bool is_a, uint e, uint k0, out uint slot) {
    bool along_k = is_a ? a_k : b_k, vec = is_a ? a_vec : b_vec;
    uint base = is_a ? a0 : b0, r0 = is_a ? m0 : n0, rows = is_a ? p.M : p.N;
    uint s_r = is_a ? p.a_sm : p.b_sn, s_k = is_a ? p.a_sk : p.b_sk;
    uint line, pos;
    chunk_at(e, along_k, line, pos, slot);
    uint gr = r0 + (along_k ? line : pos), gk = k0 + (along_k ? pos : line);
    if (gr >= rows || gk >= p.K) return uvec4(0);
    uint left = along_k ? p.K - gk : rows - gr;
    uint at = base + gr * s_r + gk * s_k;
    if (vec && left >= 8) return is_a ? a8[at / 8] : b8[at / 8];
    uint step = along_k ? s_k : s_r;
    float16_t v[8];
    [[unroll]] for (uint i = 0; i < 8; ++i) v[i] = i < left ? (is_a ? a[at + i * step] : b[at + i * step]) : float16_t(0.0);
    return pack8(v);
}

void load_step(uint k0, out uvec4 ra[2], out uvec4 rb[2], out uint sa[2], out uint sb[2]) {
    uint tid = gl_LocalInvocationID.x;
    [[unroll]] for (uint j = 0; j < 2; ++j) {
        ra[j] = load_chunk(true, tid + j * NT, k0, sa[j]);
        rb[j] = load_chunk(false, tid + j * NT, k0, sb[j]);
    }
}

void emit(uint gm, uint gn, float acc) {
    float v = p.alpha * acc;
    if (p.has_bias != 0) v += p.beta * float(bias[bias0 + gm * p.bias_sm + gn * p.bias_sn]);
    c[c0 + gm * p.N + gn] = float16_t(apply_act(v, p.act, p.act_a, p.act_b));
}

void main() {
    uint z1 = gl_WorkGroupID.z / p.nb2, z2 = gl_WorkGroupID.z % p.nb2;
    a0 = z1 * p.a_s1 + z2 * p.a_s2;
    b0 = z1 * p.b_s1 + z2 * p.b_s2;
    c0 = z1 * p.c_s1 + z2 * p.c_s2;
    bias0 = z1 * p.bias_s1 + z2 * p.bias_s2;
    m0 = gl_WorkGroupID.y * BM;
    n0 = gl_WorkGroupID.x * BN;
    a_k = p.a_sk == 1;
    b_k = p.b_sn != 1;
    // a 16-byte load needs every line of the operand 8-aligned along its contiguous axis
    a_vec = (a_k || p.a_sm == 1) && (a_k ? p.a_sm : p.a_sk) % 8 == 0 && a0 % 8 == 0;
    b_vec = (!b_k || p.b_sk == 1) && (b_k ? p.b_sn : p.b_sk) % 8 == 0 && b0 % 8 == 0;
    uint wm = (gl_SubgroupID / 4) * 64, wn = (gl_SubgroupID % 4) * 32;

    FMAT acc[8];
    [[unroll]] for (uint i = 0; i < 8; ++i) acc[i] = FMAT(0.0);
    COOP_LOOP(acc, p.K, a_k, b_k, wm, wn, load_step)
    COOP_STORE(acc, m0, n0, wm, wn, p.M, p.N, emit)
}
