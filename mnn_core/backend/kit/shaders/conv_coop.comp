#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
// conv2d_h.comp's implicit GEMM on tensor cores (coop.glsl), one group per z: for group g,
// Y[o][col] = act(sum_k W[o][k] * X~[k][col] + bias[o]), k over (input channel, ky, kx), col over
// (image, oy, ox), X~ gathered from the NCHW input through the host's k table (padding reads as
// zero). Same bindings and push constants as conv2d.glsl, without split-K. The weights are staged
// along K (16-byte loads where K is a multiple of 8); the gathered input along the columns: each
// invocation stages the same 8 columns at every step and decomposes them once.
#define MNN_HALF 1
#include "common.glsl"
#include "act.glsl"
#include "coop.glsl"

layout(std430, binding = 0) readonly buffer X { float16_t x[]; };
layout(std430, binding = 1) readonly buffer Wt { float16_t w[]; };
layout(std430, binding = 1) readonly buffer Wt8 { uvec4 w8[]; };
layout(std430, binding = 2) readonly buffer Bias { float16_t bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float16_t y[]; };
layout(std430, binding = 4) writeonly buffer Partial { float partial[]; };
layout(std430, binding = 5) readonly buffer KTab { int ktab[]; };

layout(push_constant) uniform Params {
    uint N, C, H, W;
    uint O, OH, OW, group;
    uint KH, KW, sh, sw;
    uint ph, pw, dh, dw;
    int act;
    uint has_bias;
    float act_a, act_b;
    uint ksplit, kchunk;
} p;

uint og, K, OHW, NCOL, wbase, g, m0, n0;
// the invocation's 8 columns: input offset of the tap (0, 0) and its position (iy0 < -2^20: past the edge)
int xbase[8], iy0[8], ix0[8];

void load_step(uint k0, out uvec4 ra[2], out uvec4 rb[2], out uint sa[2], out uint sb[2]) {
    uint tid = gl_LocalInvocationID.x;
    [[unroll]] for (uint j = 0; j < 2; ++j) {
        uint line, pos;
        chunk_at(tid + j * NT, true, line, pos, sa[j]);  // weights: line m, 8 along K
        uint gm = m0 + line, gk = k0 + pos;
        ra[j] = uvec4(0);
        if (gm < og && gk < K) {
            uint at = wbase + gm * K + gk;
            if (K % 8 == 0) {
                ra[j] = w8[at / 8];
            } else {
                float16_t v[8];
                [[unroll]] for (uint i = 0; i < 8; ++i) v[i] = gk + i < K ? w[at + i] : float16_t(0.0);
                ra[j] = pack8(v);
            }
        }
        chunk_at(tid + j * NT, false, line, pos, sb[j]);  // input: line k, 8 columns
        gk = k0 + line;
        float16_t v[8];
        [[unroll]] for (uint i = 0; i < 8; ++i) v[i] = float16_t(0.0);
        if (gk < K) {
            int off = ktab[3u * gk], dy = ktab[3u * gk + 1u], dx = ktab[3u * gk + 2u];
            [[unroll]] for (uint i = 0; i < 8; ++i) {
                int iy = iy0[i] + dy, ix = ix0[i] + dx;
                if (iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W)) v[i] = x[xbase[i] + off];
            }
        }
        rb[j] = pack8(v);
    }
}

void emit(uint gm, uint col, float acc) {
    uint oc = g * og + gm;
    float v = acc + (p.has_bias != 0 ? float(bias[oc]) : 0.0);
    y[((col / OHW) * p.O + oc) * OHW + col % OHW] = float16_t(apply_act(v, p.act, p.act_a, p.act_b));
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    g = gl_WorkGroupID.z;
    og = p.O / p.group;
    uint cg = p.C / p.group;
    K = cg * p.KH * p.KW;
    OHW = p.OH * p.OW;
    NCOL = p.N * OHW;
    wbase = g * og * K;
    m0 = gl_WorkGroupID.y * BM;
    n0 = gl_WorkGroupID.x * BN;
    uint HW = p.H * p.W;
    // both of this invocation's B chunks (e = tid, tid + 256) cover columns (tid % 16) * 8 + 0..7
    [[unroll]] for (uint i = 0; i < 8; ++i) {
        uint col = n0 + (tid % 16) * 8 + i;
        if (col < NCOL) {
            uint img = col / OHW, pix = col % OHW;
            iy0[i] = int(pix / p.OW) * int(p.sh) - int(p.ph);
            ix0[i] = int(pix % p.OW) * int(p.sw) - int(p.pw);
            xbase[i] = int((img * p.C + g * cg) * HW) + iy0[i] * int(p.W) + ix0[i];
        } else {
            iy0[i] = -(1 << 24);
            ix0[i] = 0;
            xbase[i] = 0;
        }
    }
    uint wm = (gl_SubgroupID / 4) * 64, wn = (gl_SubgroupID % 4) * 32;

    FMAT acc[8];
    [[unroll]] for (uint i = 0; i < 8; ++i) acc[i] = FMAT(0.0);
    COOP_LOOP(acc, K, true, false, wm, wn, load_step)
    COOP_STORE(acc, m0, n0, wm, wn, og, NCOL, emit)
}
