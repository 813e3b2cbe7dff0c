#version 450
// gemm.comp's product (same bindings and push constants) on large register blocks, float32:
// a work group of TX x TY invocations computes a (8*TY) x (8*TX) block of C, each invocation
// 8x8 outputs as four 4x4 quarters, rows ty*4.. and 4*TY + ty*4.., columns likewise. The
// staged slices are k-major, so an invocation reads its 4 rows of A and 4 columns of B for one
// k as one vec4 each: 16 shared-memory loads feed 64 FMAs (gemm.comp's 4x4 tile: 8 for 16).
// Two shared buffers: while the group multiplies one BK-deep slice, each invocation has
// already loaded its part of the next one from memory into registers, and stores it into the
// other buffer afterwards; one barrier per slice.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "act.glsl"

layout(constant_id = 5) const uint BK = 8;  // 16 where shared memory holds 2 x 2 x 16 slices (33 KiB at 16x16)

const uint TX = gl_WorkGroupSize.x;
const uint TY = gl_WorkGroupSize.y;
const uint NT = TX * TY;
const uint BM = 8 * TY;
const uint BN = 8 * TX;
const uint AS4 = BM / 4 + 1;  // vec4s per staged k-row, one padding vec4 against bank conflicts
const uint BS4 = BN / 4 + 1;
const uint A_PER = BK * BM / NT;  // elements each invocation stages per slice
const uint B_PER = BK * BN / NT;
// Every array an invocation keeps has a constant size and every loop over one a constant trip
// count, so glslc -O unrolls them, indexes them by constants, and splits them into registers:
// arrays sized or indexed by specialization constants were left in memory ("Function" arrays)
// for the driver, and NVIDIA's compiler kept them in local memory (7-8x slower than gemm.comp).
const uint MAX_PER = 16;  // A_PER and B_PER at most: 8 * BK / TX, BK <= 16, TX >= 8

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer C { float c[]; };

layout(push_constant) uniform Params {
    uint M, N, K, nb2;
    uint a_sm, a_sk, a_s1, a_s2;
    uint b_sk, b_sn, b_s1, b_s2;
    uint c_s1, c_s2, has_bias;
    int act;
    uint bias_sm, bias_sn, bias_s1, bias_s2;
    float alpha, beta, act_a, act_b;
} p;

shared vec4 As[2][BK * AS4];  // As[buf][k * AS4 + m / 4]
shared vec4 Bs[2][BK * BS4];  // Bs[buf][k * BS4 + n / 4]

// staged element e of a slice: (row or column within the block, k), walking along whichever of
// them is contiguous in memory so that neighbouring invocations load neighbouring words
uvec2 a_place(uint e) { return p.a_sk == 1 ? uvec2(e / BK, e % BK) : uvec2(e % BM, e / BM); }
uvec2 b_place(uint e) { return p.b_sn == 1 ? uvec2(e % BN, e / BN) : uvec2(e / BK, e % BK); }

// four neighbouring outputs of row gm from column gn on; a loop kept rolled (v turned by one
// component a pass: no dynamic index), so the activation's code appears once per call
void store4(uint c0, uint bias0, uint gm, uint gn, vec4 v) {
    if (gm >= p.M) return;
    [[dont_unroll]] for (uint q = 0; q < 4; ++q) {
        if (gn + q < p.N) {
            float o = p.alpha * v.x;
            if (p.has_bias != 0) o += p.beta * bias[bias0 + gm * p.bias_sm + (gn + q) * p.bias_sn];
            c[c0 + gm * p.N + gn + q] = apply_act(o, p.act, p.act_a, p.act_b);
        }
        v = v.yzwx;
    }
}

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint tid = ty * TX + tx;
    uint z1 = gl_WorkGroupID.z / p.nb2, z2 = gl_WorkGroupID.z % p.nb2;
    uint a0 = z1 * p.a_s1 + z2 * p.a_s2;
    uint b0 = z1 * p.b_s1 + z2 * p.b_s2;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;

    // acc[i * 2 + h]: row i (rows ty*4.. then 4*TY + ty*4..), columns tx*4.. (h = 0) or 4*TX + tx*4..
    vec4 acc[16];
    [[unroll]] for (uint i = 0; i < 16; ++i) acc[i] = vec4(0.0);
    float ra[MAX_PER];
    float rb[MAX_PER];
    [[unroll]] for (uint r = 0; r < MAX_PER; ++r) {
        ra[r] = 0.0;
        rb[r] = 0.0;
    }

    uint steps = (p.K + BK - 1) / BK;
    for (uint t = 0; t <= steps; ++t) {
        // load slice t (if any) into registers: its global reads overlap slice t-1's FMAs
        if (t < steps) {
            uint k0 = t * BK;
            [[unroll]] for (uint r = 0; r < MAX_PER; ++r) {
                if (r < A_PER) {
                    uvec2 mk = a_place(tid + r * NT);
                    uint gm = m0 + mk.x, gk = k0 + mk.y;
                    ra[r] = (gm < p.M && gk < p.K) ? a[a0 + gm * p.a_sm + gk * p.a_sk] : 0.0;
                }
                if (r < B_PER) {
                    uvec2 nk = b_place(tid + r * NT);
                    uint gn = n0 + nk.x, gk = k0 + nk.y;
                    rb[r] = (gn < p.N && gk < p.K) ? b[b0 + gk * p.b_sk + gn * p.b_sn] : 0.0;
                }
            }
        }
        if (t > 0) {
            uint cur = (t - 1) & 1;
            [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
                vec4 av0 = As[cur][kk * AS4 + ty];
                vec4 av1 = As[cur][kk * AS4 + TY + ty];
                vec4 bv0 = Bs[cur][kk * BS4 + tx];
                vec4 bv1 = Bs[cur][kk * BS4 + TX + tx];
                [[unroll]] for (uint i = 0; i < 4; ++i) {
                    acc[i * 2] = fma(vec4(av0[i]), bv0, acc[i * 2]);
                    acc[i * 2 + 1] = fma(vec4(av0[i]), bv1, acc[i * 2 + 1]);
                    acc[8 + i * 2] = fma(vec4(av1[i]), bv0, acc[8 + i * 2]);
                    acc[8 + i * 2 + 1] = fma(vec4(av1[i]), bv1, acc[8 + i * 2 + 1]);
                }
            }
        }
        // slice t goes into the buffer slice t-1 did not use; the barrier also ends the reads
        // of slice t-1, so the next pass may overwrite its buffer
        if (t < steps) {
            uint buf = t & 1;
            [[unroll]] for (uint r = 0; r < MAX_PER; ++r) {
                if (r < A_PER) {
                    uvec2 mk = a_place(tid + r * NT);
                    As[buf][mk.y * AS4 + mk.x / 4][mk.x % 4] = ra[r];
                }
                if (r < B_PER) {
                    uvec2 nk = b_place(tid + r * NT);
                    Bs[buf][nk.y * BS4 + nk.x / 4][nk.x % 4] = rb[r];
                }
            }
        }
        barrier();
    }

    uint c0 = z1 * p.c_s1 + z2 * p.c_s2;
    uint bias0 = z1 * p.bias_s1 + z2 * p.bias_s2;
    // written out, not looped: glslc leaves a loop around store4's loop rolled, and acc[] would
    // then be indexed at run time
    uint gm0 = m0 + ty * 4, gm1 = m0 + 4 * TY + ty * 4;
    uint gn0 = n0 + tx * 4, gn1 = n0 + 4 * TX + tx * 4;
    store4(c0, bias0, gm0, gn0, acc[0]);
    store4(c0, bias0, gm0, gn1, acc[1]);
    store4(c0, bias0, gm0 + 1, gn0, acc[2]);
    store4(c0, bias0, gm0 + 1, gn1, acc[3]);
    store4(c0, bias0, gm0 + 2, gn0, acc[4]);
    store4(c0, bias0, gm0 + 2, gn1, acc[5]);
    store4(c0, bias0, gm0 + 3, gn0, acc[6]);
    store4(c0, bias0, gm0 + 3, gn1, acc[7]);
    store4(c0, bias0, gm1, gn0, acc[8]);
    store4(c0, bias0, gm1, gn1, acc[9]);
    store4(c0, bias0, gm1 + 1, gn0, acc[10]);
    store4(c0, bias0, gm1 + 1, gn1, acc[11]);
    store4(c0, bias0, gm1 + 2, gn0, acc[12]);
    store4(c0, bias0, gm1 + 2, gn1, acc[13]);
    store4(c0, bias0, gm1 + 3, gn0, acc[14]);
    store4(c0, bias0, gm1 + 3, gn1, acc[15]);
}
