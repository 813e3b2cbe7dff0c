// The body of gemm_warp.comp, gemm_warp_wide.comp (which defines WARP_WIDE) and gemm_warp_n96.comp
// (WARP_N96): gemm.comp's product (same bindings and push constants) on warp tiles (warp_tile.glsl),
// float32.
#include "common.glsl"
#include "act.glsl"
#include "warp_tile.glsl"

const uint B_GROUPS = BK * BN / 4;  // groups of 4 elements of B in a slice
// groups each invocation stages per slice; 96-wide blocks in 8-deep slices leave the last partial
#ifdef WARP_N96
const uint B_VECS = (B_GROUPS + NT - 1) / NT;
#define B_HAS(r) (r < B_VECS && tid + r * NT < B_GROUPS)
#else
const uint B_VECS = B_GROUPS / NT;
#define B_HAS(r) (r < B_VECS)
#endif

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer C { float c[]; };
layout(std430, binding = 3) writeonly buffer C4 { vec4 c4[]; };

layout(push_constant) uniform Params {
    uint M, N, K, nb2;
    uint a_sm, a_sk, a_s1, a_s2;
    uint b_sk, b_sn, b_s1, b_s2;
    uint c_s1, c_s2, has_bias;
    int act;
    uint bias_sm, bias_sn, bias_s1, bias_s2;
    float alpha, beta, act_a, act_b;
} p;

// A's elements (m, k..k+3) where k is contiguous (along_k), else (m..m+3, k); zero outside
vec4 load_a(uint a0, uint m, uint k, bool along_k, bool vec) {
    if (vec && m + (along_k ? 0 : 3) < p.M && k + (along_k ? 3 : 0) < p.K) return a4[(a0 + m * p.a_sm + k * p.a_sk) / 4];
    vec4 v = vec4(0.0);
    [[unroll]] for (uint q = 0; q < 4; ++q) {
        uint gm = along_k ? m : m + q, gk = along_k ? k + q : k;
        if (gm < p.M && gk < p.K) v[q] = a[a0 + gm * p.a_sm + gk * p.a_sk];
    }
    return v;
}

// B's elements (k, n..n+3) where n is contiguous (along_n), else (k..k+3, n); zero outside
vec4 load_b(uint b0, uint k, uint n, bool along_n, bool vec) {
    if (vec && n + (along_n ? 3 : 0) < p.N && k + (along_n ? 0 : 3) < p.K) return b4[(b0 + k * p.b_sk + n * p.b_sn) / 4];
    vec4 v = vec4(0.0);
    [[unroll]] for (uint q = 0; q < 4; ++q) {
        uint gn = along_n ? n + q : n, gk = along_n ? k : k + q;
        if (gn < p.N && gk < p.K) v[q] = b[b0 + gk * p.b_sk + gn * p.b_sn];
    }
    return v;
}

// group g of B's slice: (column within the block, k) of its first element, 4 along the
// contiguous axis
uvec2 b_group(uint g, bool along_n) { return along_n ? uvec2(g % (BN / 4) * 4, g / (BN / 4)) : uvec2(g / (BK / 4), g % (BK / 4) * 4); }

void stage_b(uint buf, uint g, bool along_n, vec4 v) {
    uvec2 nk = b_group(g, along_n);
    if (along_n) {
        Bs[buf][nk.y * LDB + nk.x / 4] = v;
    } else {
        [[unroll]] for (uint q = 0; q < 4; ++q) Bs[buf][(nk.y + q) * LDB + nk.x / 4][nk.x % 4] = v[q];
    }
}

// four neighbouring outputs of row gm from column gn on: alpha, bias, activation (a loop kept
// rolled, v turned by one component a pass, so the activation's code appears once per call),
// then one 16-byte store where allowed
void store4(uint c0, uint bias0, uint gm, uint gn, vec4 v) {
    if (gm >= p.M || gn >= p.N) return;
    [[dont_unroll]] for (uint q = 0; q < 4; ++q) {
        float o = p.alpha * v.x;
        if (p.has_bias != 0 && gn + q < p.N) o += p.beta * bias[bias0 + gm * p.bias_sm + (gn + q) * p.bias_sn];
        v = vec4(v.yzw, apply_act(o, p.act, p.act_a, p.act_b));
    }
    uint at = c0 + gm * p.N + gn;
    if (VEC != 0 && gn + 3 < p.N && at % 4 == 0) {
        c4[at / 4] = v;
        return;
    }
    c[at] = v.x;
    if (gn + 1 < p.N) c[at + 1] = v.y;
    if (gn + 2 < p.N) c[at + 2] = v.z;
    if (gn + 3 < p.N) c[at + 3] = v.w;
}

// row r of the invocation's 8 (output row gm): its WARP_NH groups of 4 columns, 32 apart
#if defined(WARP_WIDE)
#define STORE_ROW(gm, r)                                       \
    store4(c0, bias0, gm, gn0, acc[(r) * 4]);                  \
    store4(c0, bias0, gm, gn0 + 32, acc[(r) * 4 + 1]);         \
    store4(c0, bias0, gm, gn0 + 64, acc[(r) * 4 + 2]);         \
    store4(c0, bias0, gm, gn0 + 96, acc[(r) * 4 + 3]);
#elif defined(WARP_N96)
#define STORE_ROW(gm, r)                                       \
    store4(c0, bias0, gm, gn0, acc[(r) * 3]);                  \
    store4(c0, bias0, gm, gn0 + 32, acc[(r) * 3 + 1]);         \
    store4(c0, bias0, gm, gn0 + 64, acc[(r) * 3 + 2]);
#else
#define STORE_ROW(gm, r)                                       \
    store4(c0, bias0, gm, gn0, acc[(r) * 2]);                  \
    store4(c0, bias0, gm, gn0 + 32, acc[(r) * 2 + 1]);
#endif

// group r of this invocation's share of slice k0.. loaded into v, or stored from v into buffer buf
#define LOAD_A(r, v) if (r < A_VECS) { uvec2 mk = a_group(tid + r * NT, a_along_k); v = load_a(a0, m0 + mk.x, k0 + mk.y, a_along_k, a_vec); }
#define LOAD_B(r, v) if (B_HAS(r)) { uvec2 nk = b_group(tid + r * NT, b_along_n); v = load_b(b0, k0 + nk.y, n0 + nk.x, b_along_n, b_vec); }
#define STAGE_A(r, v) if (r < A_VECS) stage_a(buf, tid + r * NT, a_along_k, v);
#define STAGE_B(r, v) if (B_HAS(r)) stage_b(buf, tid + r * NT, b_along_n, v);
#define LOAD_ALL()                                                                                  \
    LOAD_A(0, ra0) LOAD_A(1, ra1) LOAD_A(2, ra2) LOAD_A(3, ra3)                                     \
    LOAD_B(0, rb0) LOAD_B(1, rb1) LOAD_B(2, rb2) LOAD_B(3, rb3)
#define STAGE_ALL()                                                                                 \
    STAGE_A(0, ra0) STAGE_A(1, ra1) STAGE_A(2, ra2) STAGE_A(3, ra3)                                 \
    STAGE_B(0, rb0) STAGE_B(1, rb1) STAGE_B(2, rb2) STAGE_B(3, rb3)

void main() {
    uint tid = gl_LocalInvocationID.x;
    WARP_PLACE(tid, ia, ib)
    uint z1 = gl_WorkGroupID.z / p.nb2, z2 = gl_WorkGroupID.z % p.nb2;
    uint a0 = z1 * p.a_s1 + z2 * p.a_s2;
    uint b0 = z1 * p.b_s1 + z2 * p.b_s2;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
    bool a_along_k = p.a_sk == 1, b_along_n = p.b_sn == 1;
    bool a_vec = VEC != 0 && a0 % 4 == 0 && (a_along_k ? p.a_sm % 4 == 0 : p.a_sm == 1 && p.a_sk % 4 == 0);
    bool b_vec = VEC != 0 && b0 % 4 == 0 && (b_along_n ? p.b_sk % 4 == 0 : p.b_sk == 1 && p.b_sn % 4 == 0);

    vec4 acc[8 * WARP_NH];  // see WARP_FMAS
    [[unroll]] for (uint i = 0; i < 8 * WARP_NH; ++i) acc[i] = vec4(0.0);
    // slice t+1's groups, held from their loads to their stores: named, not an array, since
    // glslc leaves the loop that stores them rolled (an array would stay in memory)
    vec4 ra0 = vec4(0.0), ra1 = vec4(0.0), ra2 = vec4(0.0), ra3 = vec4(0.0);
    vec4 rb0 = vec4(0.0), rb1 = vec4(0.0), rb2 = vec4(0.0), rb3 = vec4(0.0);

    uint steps = (p.K + BK - 1) / BK;
    {  // slice 0 into buffer 0
        uint k0 = 0, buf = 0;
        LOAD_ALL()
        STAGE_ALL()
    }
    barrier();

    for (uint t = 0; t < steps; ++t) {
        bool more = t + 1 < steps;
        // slice t+1's global loads, in flight during slice t's FMAs
        if (more) {
            uint k0 = (t + 1) * BK;
            LOAD_ALL()
        }
        uint cur = t & 1;
        WARP_FMAS(acc, cur)
        // slice t+1 into the other buffer, whose last reads (slice t-1's) ended at the previous
        // barrier; this barrier ends slice t's reads and publishes slice t+1
        if (more) {
            uint buf = cur ^ 1;
            STAGE_ALL()
        }
        barrier();
    }

    uint c0 = z1 * p.c_s1 + z2 * p.c_s2;
    uint bias0 = z1 * p.bias_s1 + z2 * p.bias_s2;
    // written out, not looped: a loop around store4's rolled one stays rolled, and acc[] would
    // then be indexed at run time
    uint gm0 = m0 + ia * 4, gm1 = gm0 + 16;
    uint gn0 = n0 + ib * 4;
    STORE_ROW(gm0, 0)
    STORE_ROW(gm0 + 1, 1)
    STORE_ROW(gm0 + 2, 2)
    STORE_ROW(gm0 + 3, 3)
    STORE_ROW(gm1, 4)
    STORE_ROW(gm1 + 1, 5)
    STORE_ROW(gm1 + 2, 6)
    STORE_ROW(gm1 + 3, 7)
}
