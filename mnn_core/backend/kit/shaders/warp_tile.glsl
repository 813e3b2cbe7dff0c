// The warp tile of gemm_warp.comp and conv_warp.comp (included by both, after common.glsl). A work
// group of NT invocations is NT/32 subgroups ("warps") of 32, set WARPS_M x WARPS_N; each warp
// computes a 32 x 64 tile of C and each invocation 8x8 of it: rows ly*4.. and 16 + ly*4..,
// columns lx*4.. and 32 + lx*4.. of its warp's tile (lane = ly * 8 + lx). Per k, an invocation
// reads 2 vec4s of A and 2 of B from shared memory for 64 FMAs, and a warp's reads cover 64
// contiguous bytes of A and 128 of B: one bank pass each, the rest broadcast.
// Both slices are staged k-major (A transposed), in two shared buffers: the next slice's global
// loads are issued before the current slice's FMAs and stored into the other buffer after them;
// one barrier per slice.
// With WARP_WIDE defined (gemm_warp_wide.comp) a warp's tile is 32 x 128 and an invocation's 8x16:
// columns lx*4.., 32 + lx*4.., 64 + .., 96 + ..: 4 vec4s of B and 2 of A per k for 128 FMAs.
// With WARP_N96 (gemm_warp_n96.comp) a warp's tile is 32 x 96 and an invocation's 8x12: blocks as
// wide as ConvNeXt's 96- and 192-channel outputs, which 128-wide blocks pad by a quarter.

layout(constant_id = 3) const uint WARPS_N = 2;  // warps side by side along N (the rest along M)
layout(constant_id = 4) const uint VEC = 0;  // 1: 16-byte loads and stores allowed
layout(constant_id = 5) const uint BK = 16;  // a multiple of 4; 8 where shared memory is 32 KiB

#if defined(WARP_WIDE)
#define WARP_NH 4  // column quarters of 4 an invocation computes, 32 apart
#elif defined(WARP_N96)
#define WARP_NH 3
#else
#define WARP_NH 2
#endif
const uint NT = gl_WorkGroupSize.x;
const uint WARPS_M = NT / 32 / WARPS_N;
const uint BM = 32 * WARPS_M;
const uint BN = 32 * WARP_NH * WARPS_N;
const uint LDA = BM / 4 + 1;  // vec4s per staged k-row, one padding vec4 against bank conflicts
const uint LDB = BN / 4 + 1;
const uint A_VECS = BK * BM / 4 / NT;  // groups of 4 elements of A each invocation stages per slice

shared vec4 As[2][BK * LDA];  // As[buf][k * LDA + m / 4]
shared vec4 Bs[2][BK * LDB];  // Bs[buf][k * LDB + n / 4]

// group g of A's slice: (row within the block, k) of its first element, 4 along k when k is
// contiguous (along_k), else 4 along the rows; neighbouring invocations take neighbouring groups
uvec2 a_group(uint g, bool along_k) {
    return along_k ? uvec2(g / (BK / 4), g % (BK / 4) * 4) : uvec2(g % (BM / 4) * 4, g / (BM / 4));
}

void stage_a(uint buf, uint g, bool along_k, vec4 v) {
    uvec2 mk = a_group(g, along_k);
    if (along_k) {
        [[unroll]] for (uint q = 0; q < 4; ++q) As[buf][(mk.y + q) * LDA + mk.x / 4][mk.x % 4] = v[q];
    } else {
        As[buf][mk.y * LDA + mk.x / 4] = v;
    }
}

// the invocation's vec4 index of its first rows in As (ia) and of its first columns in Bs (ib)
#define WARP_PLACE(tid, ia, ib)                                  \
    uint ia = ((tid) / 32 / WARPS_N) * 8 + (tid) % 32 / 8;      \
    uint ib = ((tid) / 32 % WARPS_N) * (8 * WARP_NH) + (tid) % 8;

// acc[r * WARP_NH + h] += the slice in buffer cur: row r of the invocation's 8 (ly*4 + r, then
// 16 + ly*4 + r - 4), columns h*32 + lx*4..
#ifdef WARP_WIDE
#define WARP_FMAS(acc, cur)                                                              \
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {                                        \
        vec4 av0 = As[cur][kk * LDA + ia];                                               \
        vec4 av1 = As[cur][kk * LDA + ia + 4];                                           \
        vec4 bv0 = Bs[cur][kk * LDB + ib];                                               \
        vec4 bv1 = Bs[cur][kk * LDB + ib + 8];                                           \
        vec4 bv2 = Bs[cur][kk * LDB + ib + 16];                                          \
        vec4 bv3 = Bs[cur][kk * LDB + ib + 24];                                          \
        [[unroll]] for (uint i = 0; i < 4; ++i) {                                        \
            acc[i * 4] = fma(vec4(av0[i]), bv0, acc[i * 4]);                             \
            acc[i * 4 + 1] = fma(vec4(av0[i]), bv1, acc[i * 4 + 1]);                     \
            acc[i * 4 + 2] = fma(vec4(av0[i]), bv2, acc[i * 4 + 2]);                     \
            acc[i * 4 + 3] = fma(vec4(av0[i]), bv3, acc[i * 4 + 3]);                     \
            acc[16 + i * 4] = fma(vec4(av1[i]), bv0, acc[16 + i * 4]);                   \
            acc[16 + i * 4 + 1] = fma(vec4(av1[i]), bv1, acc[16 + i * 4 + 1]);           \
            acc[16 + i * 4 + 2] = fma(vec4(av1[i]), bv2, acc[16 + i * 4 + 2]);           \
            acc[16 + i * 4 + 3] = fma(vec4(av1[i]), bv3, acc[16 + i * 4 + 3]);           \
        }                                                                                \
    }
#elif defined(WARP_N96)
#define WARP_FMAS(acc, cur)                                                              \
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {                                        \
        vec4 av0 = As[cur][kk * LDA + ia];                                               \
        vec4 av1 = As[cur][kk * LDA + ia + 4];                                           \
        vec4 bv0 = Bs[cur][kk * LDB + ib];                                               \
        vec4 bv1 = Bs[cur][kk * LDB + ib + 8];                                           \
        vec4 bv2 = Bs[cur][kk * LDB + ib + 16];                                          \
        [[unroll]] for (uint i = 0; i < 4; ++i) {                                        \
            acc[i * 3] = fma(vec4(av0[i]), bv0, acc[i * 3]);                             \
            acc[i * 3 + 1] = fma(vec4(av0[i]), bv1, acc[i * 3 + 1]);                     \
            acc[i * 3 + 2] = fma(vec4(av0[i]), bv2, acc[i * 3 + 2]);                     \
            acc[12 + i * 3] = fma(vec4(av1[i]), bv0, acc[12 + i * 3]);                   \
            acc[12 + i * 3 + 1] = fma(vec4(av1[i]), bv1, acc[12 + i * 3 + 1]);           \
            acc[12 + i * 3 + 2] = fma(vec4(av1[i]), bv2, acc[12 + i * 3 + 2]);           \
        }                                                                                \
    }
#else
#define WARP_FMAS(acc, cur)                                                              \
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {                                        \
        vec4 av0 = As[cur][kk * LDA + ia];                                               \
        vec4 av1 = As[cur][kk * LDA + ia + 4];                                           \
        vec4 bv0 = Bs[cur][kk * LDB + ib];                                               \
        vec4 bv1 = Bs[cur][kk * LDB + ib + 8];                                           \
        [[unroll]] for (uint i = 0; i < 4; ++i) {                                        \
            acc[i * 2] = fma(vec4(av0[i]), bv0, acc[i * 2]);                             \
            acc[i * 2 + 1] = fma(vec4(av0[i]), bv1, acc[i * 2 + 1]);                     \
            acc[8 + i * 2] = fma(vec4(av1[i]), bv0, acc[8 + i * 2]);                     \
            acc[8 + i * 2 + 1] = fma(vec4(av1[i]), bv1, acc[8 + i * 2 + 1]);             \
        }                                                                                \
    }
#endif
