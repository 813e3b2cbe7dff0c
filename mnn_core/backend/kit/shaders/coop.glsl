// The tensor-core product shared by gemm_coop.comp and conv_coop.comp (VK_NV_cooperative_matrix:
// 16x16x16 float16 matrices per subgroup of 32, summed in float32). A work group of 256
// invocations (8 subgroups) computes a 128x128 block of C, each subgroup a 64x32 part as 4x2
// matrices. A (M x K) and B (K x N) are staged in two shared buffers, in chunks of 8 float16
// (one uvec4) along whichever axis the shader loads contiguously: a tile staged along K is 128
// lines of 4 chunks, one along M or N is 32 lines of 16; one padding chunk per line spreads the
// lines over shared-memory banks. The including shader loads the chunks (the next K step's while
// the current one multiplies) and writes each 16x16 result through its subgroup's scratch.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require

const uint BM = 128, BN = 128, BK = 32, NT = 256;
const uint KLINE = BK / 8 + 1;  // uvec4s per line of a tile staged along K (128 lines)
const uint RLINE = BN / 8 + 1;  // ... along M or N (32 lines)
shared uvec4 As[2][128 * KLINE];
shared uvec4 Bs[2][128 * KLINE];
shared float Cs[8][16 * 16];

#define HMAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FMAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

uvec4 pack8(float16_t v[8]) {
    return uvec4(packFloat2x16(f16vec2(v[0], v[1])), packFloat2x16(f16vec2(v[2], v[3])),
                 packFloat2x16(f16vec2(v[4], v[5])), packFloat2x16(f16vec2(v[6], v[7])));
}

// Chunk e (0..511) of a staged tile: its line and its position along the line, and its slot.
void chunk_at(uint e, bool along_k, out uint line, out uint pos, out uint slot) {
    if (along_k) {
        line = e / 4;
        pos = (e % 4) * 8;
        slot = line * KLINE + e % 4;
    } else {
        line = e / 16;
        pos = (e % 16) * 8;
        slot = line * RLINE + e % 16;
    }
}

// acc[4 x 2] += the staged tiles As[cur] and Bs[cur] for the subgroup's part (wm, wn); a_k / b_k:
// whether A / B were staged along K.
#define COOP_MULTIPLY(acc, cur, a_k, b_k, wm, wn)                                                      \
    [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {                                                  \
        HMAT ma[4];                                                                                    \
        HMAT mb[2];                                                                                    \
        [[unroll]] for (uint i = 0; i < 4; ++i) {                                                      \
            uint m_ = wm + 16 * i;                                                                     \
            if (a_k) coopMatLoadNV(ma[i], As[cur], m_ * KLINE + kk / 8, KLINE, false);                 \
            else coopMatLoadNV(ma[i], As[cur], kk * RLINE + m_ / 8, RLINE, true);                      \
        }                                                                                              \
        [[unroll]] for (uint j = 0; j < 2; ++j) {                                                      \
            uint n_ = wn + 16 * j;                                                                     \
            if (b_k) coopMatLoadNV(mb[j], Bs[cur], n_ * KLINE + kk / 8, KLINE, true);                  \
            else coopMatLoadNV(mb[j], Bs[cur], kk * RLINE + n_ / 8, RLINE, false);                     \
        }                                                                                              \
        [[unroll]] for (uint i = 0; i < 4; ++i)                                                        \
            [[unroll]] for (uint j = 0; j < 2; ++j) acc[i * 2 + j] = coopMatMulAddNV(ma[i], mb[j], acc[i * 2 + j]); \
    }

// Every result of the subgroup's part (row m0 + wm + ..., column n0 + wn + ...) through its
// scratch: EMIT(row, column, value) for those inside M x N.
#define COOP_STORE(acc, m0, n0, wm, wn, M, N, EMIT)                                                    \
    [[unroll]] for (uint i = 0; i < 4; ++i) {                                                          \
        [[unroll]] for (uint j = 0; j < 2; ++j) {                                                      \
            coopMatStoreNV(acc[i * 2 + j], Cs[gl_SubgroupID], 0, 16, false);                           \
            subgroupMemoryBarrierShared();                                                             \
            subgroupBarrier();                                                                         \
            for (uint e = gl_SubgroupInvocationID; e < 256; e += 32) {                                 \
                uint gm_ = m0 + wm + 16 * i + e / 16, gn_ = n0 + wn + 16 * j + e % 16;                 \
                if (gm_ < M && gn_ < N) EMIT(gm_, gn_, Cs[gl_SubgroupID][e]);                          \
            }                                                                                          \
            subgroupMemoryBarrierShared();                                                             \
            subgroupBarrier();                                                                         \
        }                                                                                              \
    }

// The K loop: LOAD(k0, ra, rb, sa, sb) gives the invocation's two chunks of A and of B at K
// offset k0 and their slots; they are stored after the current step's product, into the
// buffer the next step reads (one barrier a step).
#define COOP_LOOP(acc, K, a_k, b_k, wm, wn, LOAD)                                                      \
    {                                                                                                  \
        uvec4 ra[2], rb[2];                                                                            \
        uint sa[2], sb[2];                                                                             \
        uint steps = (K + BK - 1) / BK;                                                                \
        LOAD(0, ra, rb, sa, sb);                                                                       \
        [[unroll]] for (uint j = 0; j < 2; ++j) {                                                      \
            As[0][sa[j]] = ra[j];                                                                      \
            Bs[0][sb[j]] = rb[j];                                                                      \
        }                                                                                              \
        barrier();                                                                                     \
        for (uint s = 0; s < steps; ++s) {                                                             \
            uint cur = s & 1;                                                                          \
            bool more = s + 1 < steps;                                                                 \
            if (more) LOAD((s + 1) * BK, ra, rb, sa, sb);                                              \
            COOP_MULTIPLY(acc, cur, a_k, b_k, wm, wn)                                                  \
            if (more) {                                                                                \
                [[unroll]] for (uint j = 0; j < 2; ++j) {                                              \
                    As[cur ^ 1][sa[j]] = ra[j];                                                        \
                    Bs[cur ^ 1][sb[j]] = rb[j];                                                        \
                }                                                                                      \
            }                                                                                          \
            barrier();                                                                                 \
        }                                                                                              \
    }
