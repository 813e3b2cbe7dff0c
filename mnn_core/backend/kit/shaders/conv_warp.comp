#version 450
// conv2d.comp's implicit GEMM (same bindings, push constants, k-table and split-K) on warp tiles
// (warp_tile.glsl), float32: for group g, Y[o][col] = act(sum_k W[o][k] * X~[k][col] + bias[o]),
// rows the group's output channels, columns (image, oy, ox), k over (input channel, ky, kx), in
// 128x128, 128x64 or 64x128 blocks of 8x8 outputs per invocation. W's rows (k contiguous) are
// read 4 at a time, as one 16-byte load where allowed (VEC, K a multiple of 4); X~ is gathered
// while it is staged: each invocation keeps one column (its image and window origin computed
// once) and fetches it at BK / KSTEP values of k a slice, the taps' offsets from the k-table.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "act.glsl"
#include "warp_tile.glsl"

const uint KSTEP = NT / BN;  // invocations per staged column: each fetches every KSTEP-th k of a slice
const uint B_PER = BK / KSTEP;  // elements of X~ each invocation fetches per slice (at most 16)

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Wt { float w[]; };
layout(std430, binding = 1) readonly buffer Wt4 { vec4 w4[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 3) writeonly buffer Y4 { vec4 y4[]; };
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

const uint NONE = 0xffffffffu;  // a column past the last

// W's elements (m, k..k+3) of the group's og x K matrix at wbase; zero past og rows or k_end
vec4 load_w(uint wbase, uint m, uint k, uint og, uint K, uint k_end, bool vec) {
    if (vec && m < og && k + 3 < k_end) return w4[(wbase + m * K + k) / 4];
    vec4 v = vec4(0.0);
    [[unroll]] for (uint q = 0; q < 4; ++q) {
        if (m < og && k + q < k_end) v[q] = w[wbase + m * K + k + q];
    }
    return v;
}

// X~[k][the invocation's column]: its tap k of the window at (iy0, ix0), zero in the padding
float gather(uint k, uint k_end, bool col_ok, int xbase, int iy0, int ix0) {
    if (!col_ok || k >= k_end) return 0.0;
    int iy = iy0 + ktab[3u * k + 1u], ix = ix0 + ktab[3u * k + 2u];
    bool inside = iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W);
    return inside ? x[xbase + ktab[3u * k]] : 0.0;
}

// where columns c..c+3 go in Y (image * O * OHW + pixel; the channel's oc * OHW is added), or NONE
uvec4 col_offsets(uint c, uint OHW, uint NCOL) {
    uvec4 o;
    [[unroll]] for (uint q = 0; q < 4; ++q) o[q] = c + q < NCOL ? (c + q) / OHW * p.O * OHW + (c + q) % OHW : NONE;
    return o;
}

// four outputs of channel oc (a row of the block below og) at columns cols: the slice's partial
// sums under split-K; else bias and activation (a loop kept rolled, v turned by one component a
// pass, so the activation's code appears once per call), one 16-byte store where the four are
// neighbours in Y and aligned
void store4(uint oc, bool row_ok, uvec4 cols, vec4 v, uint OHW, uint split) {
    if (!row_ok || cols.x == NONE) return;
    uint base = oc * OHW;
    if (p.ksplit > 1) {
        uint at = split * p.N * p.O * OHW + base;
        partial[at + cols.x] = v.x;
        if (cols.y != NONE) partial[at + cols.y] = v.y;
        if (cols.z != NONE) partial[at + cols.z] = v.z;
        if (cols.w != NONE) partial[at + cols.w] = v.w;
        return;
    }
    float b = p.has_bias != 0 ? bias[oc] : 0.0;
    [[dont_unroll]] for (uint q = 0; q < 4; ++q) v = vec4(v.yzw, apply_act(v.x + b, p.act, p.act_a, p.act_b));
    if (VEC != 0 && cols.w == cols.x + 3 && (base + cols.x) % 4 == 0) {
        y4[(base + cols.x) / 4] = v;
        return;
    }
    y[base + cols.x] = v.x;
    if (cols.y != NONE) y[base + cols.y] = v.y;
    if (cols.z != NONE) y[base + cols.z] = v.z;
    if (cols.w != NONE) y[base + cols.w] = v.w;
}

// group r of this invocation's share of slice k0.. of W, and fetches r*4..r*4+3 of X~, loaded
// into v, or stored from v into buffer buf
#define LOAD_A(r, v) if (r < A_VECS) { uvec2 mk = a_group(tid + r * NT, true); v = load_w(wbase, m0 + mk.x, k0 + mk.y, og, K, k_end, a_vec); }
#define GATHER1(r, q, v) if (r * 4 + q < B_PER) v[q] = gather(k0 + kb + (r * 4 + q) * KSTEP, k_end, col_ok, xbase, iy0, ix0);
#define GATHER(r, v) GATHER1(r, 0, v) GATHER1(r, 1, v) GATHER1(r, 2, v) GATHER1(r, 3, v)
#define STAGE_A(r, v) if (r < A_VECS) stage_a(buf, tid + r * NT, true, v);
#define STAGE1(r, q, v) if (r * 4 + q < B_PER) Bs[buf][(kb + (r * 4 + q) * KSTEP) * LDB + bn / 4][bn % 4] = v[q];
#define STAGE_B(r, v) STAGE1(r, 0, v) STAGE1(r, 1, v) STAGE1(r, 2, v) STAGE1(r, 3, v)
#define LOAD_ALL()                                                                                  \
    LOAD_A(0, ra0) LOAD_A(1, ra1) LOAD_A(2, ra2) LOAD_A(3, ra3)                                     \
    GATHER(0, rb0) GATHER(1, rb1) GATHER(2, rb2) GATHER(3, rb3)
#define STAGE_ALL()                                                                                 \
    STAGE_A(0, ra0) STAGE_A(1, ra1) STAGE_A(2, ra2) STAGE_A(3, ra3)                                 \
    STAGE_B(0, rb0) STAGE_B(1, rb1) STAGE_B(2, rb2) STAGE_B(3, rb3)

void main() {
    uint tid = gl_LocalInvocationID.x;
    WARP_PLACE(tid, ia, ib)
    uint g = gl_WorkGroupID.z / p.ksplit, split = gl_WorkGroupID.z % p.ksplit;
    uint og = p.O / p.group, cg = p.C / p.group;
    uint K = cg * p.KH * p.KW;
    uint OHW = p.OH * p.OW, NCOL = p.N * OHW, HW = p.H * p.W;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
    uint wbase = g * og * K;
    bool a_vec = VEC != 0 && K % 4 == 0;

    // the column this invocation stages, the same at every k: decomposed once
    uint bn = tid % BN, kb = tid / BN;
    uint col = n0 + bn;
    bool col_ok = col < NCOL;
    uint img = col_ok ? col / OHW : 0, pix = col_ok ? col % OHW : 0;
    int iy0 = int(pix / p.OW) * int(p.sh) - int(p.ph);
    int ix0 = int(pix % p.OW) * int(p.sw) - int(p.pw);
    int xbase = int((img * p.C + g * cg) * HW) + iy0 * int(p.W) + ix0;

    vec4 acc[16];  // see WARP_FMAS
    [[unroll]] for (uint i = 0; i < 16; ++i) acc[i] = vec4(0.0);
    // the next slice, held from its loads to its stores: named, not arrays (see gemm_warp.comp)
    vec4 ra0 = vec4(0.0), ra1 = vec4(0.0), ra2 = vec4(0.0), ra3 = vec4(0.0);
    vec4 rb0 = vec4(0.0), rb1 = vec4(0.0), rb2 = vec4(0.0), rb3 = vec4(0.0);

    uint k_begin = split * p.kchunk, k_end = min(K, k_begin + p.kchunk);
    uint steps = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
    {  // slice 0 into buffer 0
        uint k0 = k_begin, buf = 0;
        LOAD_ALL()
        STAGE_ALL()
    }
    barrier();

    for (uint t = 0; t < steps; ++t) {
        bool more = t + 1 < steps;
        if (more) {  // in flight during this slice's FMAs
            uint k0 = k_begin + (t + 1) * BK;
            LOAD_ALL()
        }
        uint cur = t & 1;
        WARP_FMAS(acc, cur)
        if (more) {  // the other buffer's last reads ended at the previous barrier
            uint buf = cur ^ 1;
            STAGE_ALL()
        }
        barrier();
    }

    uint gm0 = m0 + ia * 4, gm1 = gm0 + 16;
    uint oc0 = g * og + gm0, oc1 = g * og + gm1;
    uvec4 cols0 = col_offsets(n0 + ib * 4, OHW, NCOL), cols1 = col_offsets(n0 + ib * 4 + 32, OHW, NCOL);
    // written out, not looped (see gemm_warp.comp)
    store4(oc0, gm0 < og, cols0, acc[0], OHW, split);
    store4(oc0, gm0 < og, cols1, acc[1], OHW, split);
    store4(oc0 + 1, gm0 + 1 < og, cols0, acc[2], OHW, split);
    store4(oc0 + 1, gm0 + 1 < og, cols1, acc[3], OHW, split);
    store4(oc0 + 2, gm0 + 2 < og, cols0, acc[4], OHW, split);
    store4(oc0 + 2, gm0 + 2 < og, cols1, acc[5], OHW, split);
    store4(oc0 + 3, gm0 + 3 < og, cols0, acc[6], OHW, split);
    store4(oc0 + 3, gm0 + 3 < og, cols1, acc[7], OHW, split);
    store4(oc1, gm1 < og, cols0, acc[8], OHW, split);
    store4(oc1, gm1 < og, cols1, acc[9], OHW, split);
    store4(oc1 + 1, gm1 + 1 < og, cols0, acc[10], OHW, split);
    store4(oc1 + 1, gm1 + 1 < og, cols1, acc[11], OHW, split);
    store4(oc1 + 2, gm1 + 2 < og, cols0, acc[12], OHW, split);
    store4(oc1 + 2, gm1 + 2 < og, cols1, acc[13], OHW, split);
    store4(oc1 + 3, gm1 + 3 < og, cols0, acc[14], OHW, split);
    store4(oc1 + 3, gm1 + 3 < og, cols1, acc[15], OHW, split);
}
