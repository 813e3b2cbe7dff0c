/* Packed GEMM: operand packing, the register-tile micro-kernel and the
 * cache-blocked, OpenMP-parallel driver. Generic over `vf`; included by each
 * isa_*.c, whose vec_*.h sets VLEN, GEMM_MR and GEMM_NV (NR = GEMM_NV * VLEN).
 *
 *   C[M][N] = act(alpha * A[M][K] @ B[K][N] + beta * bias)
 *
 * Both operands come packed over the full K (see x86.h), or A as rows in place
 * (gemm_a_rows: a MatMul's activations, whose rows the tiles read as they are). A thread owns a block
 * of C (MC_ROWS rows, as many columns as keep a KC slice of B in L2) and runs
 * all of K over it in KC slices: for each slice an MR x KC micro-panel of A
 * stays in L1 while the tiles walk along its row panel of C. Partial sums of
 * earlier slices live in C itself; the epilogue (bias, ReLU, clip) runs once,
 * on the last slice, while the tile is still in registers; other activations
 * run over the block's rows after their tiles. */
#ifndef MNN_X86_GEMM_IMPL_H
#define MNN_X86_GEMM_IMPL_H

#define MR GEMM_MR
#define NR (GEMM_NV * VLEN)
#ifndef GEMM_KC
#define GEMM_KC 256
#endif
#ifndef GEMM_KC_ROWS /* K slice of an unpacked B (gemm_rows) */
#define GEMM_KC_ROWS 64
#endif
#ifndef GEMM_MC_ROWS
#define GEMM_MC_ROWS 120
#endif
#ifndef GEMM_L2_B_BYTES /* the slice of packed B a block walks over: kept in L2 */
#define GEMM_L2_B_BYTES (256 * 1024)
#endif

/* Software prefetch of B's rows, in k steps ahead (0: none; vec_avx512.h sets it), where B comes from
 * memory (gemm_hint): weights too big for the caches reach a tile from DRAM, whose latency the
 * hardware prefetchers do not hide; on B already in cache the prefetches only cost, hence only where
 * B streams (the measurements: benchmarks/RESULTS.md, "Notes moved from the code"). AVX2 and scalar:
 * none. */
#ifndef GEMM_PF_NEAR
#define GEMM_PF_NEAR 0
#endif
#ifndef GEMM_PF_FAR
#define GEMM_PF_FAR 96
#endif
/* a packed B of at least this many bytes is taken to come from memory (prefetched): half the L2 */
#define GEMM_PF_MIN_BYTES (1 << 20)

#include <stdlib.h>

#include "gemm_epilogue_impl.h"

static inline int64_t FN(ceil_div)(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* While `on`, the nv vectors of row k of B (rows ld floats apart), GEMM_PF_NEAR rows ahead into L1
 * and GEMM_PF_FAR rows ahead into L2: the GEMM tiles and the pointwise kernel's W^T panel. A macro,
 * not an inline function, so that each kernel compiles exactly as it did with the loop written out
 * (as a function it changed the register allocation of the 14x32 tiles). */
#define GEMM_PREFETCH_B_AHEAD(on, b, k, ld, nv)                                                 \
    for (int l_ = 0; (on) && l_ < (nv) * VLEN * (int)sizeof(float); l_ += 64) {                \
        __builtin_prefetch((const char *)((b) + ((k) + GEMM_PF_NEAR) * (ld)) + l_, 0, 3);      \
        __builtin_prefetch((const char *)((b) + ((k) + GEMM_PF_FAR) * (ld)) + l_, 0, 1);       \
    }

/* Copy n floats (n may be 0); masked loads never touch memory past src + n. */
static inline void FN(copy_n)(float *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) vf_store(dst + i, vf_load(src + i));
    if (i < n) vf_store_n(dst + i, vf_load_n(src + i, (int)(n - i)), (int)(n - i));
}

static inline void FN(zero_n)(float *dst, int64_t n) { memset(dst, 0, (size_t)n * sizeof(float)); }

/* n floats (a segment of a panel row: at most NR) by vector stores, no call */
static inline void FN(zero_short)(float *dst, int64_t n) {
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) vf_store(dst + i, vf_zero());
    if (i < n) vf_store_n(dst + i, vf_zero(), (int)(n - i));
}

#include "gemm_pack_impl.h"

/* One MR x NR tile (rows x cols valid) over one KC slice (A[r][k] at a[r * ars + k * aks]: a packed
 * panel, ars 1 and aks MR, or rows of A in place, ars their stride and aks 1), of which the
 * first nv vectors of columns are computed (nv < GEMM_NV: a last panel of at
 * most nv * VLEN columns, e.g. 13x13 or 14x14 planes, 16 Winograd tiles, so
 * it does not pay for the whole panel). `rows` and `nv` are compile-time
 * constants at every call site, so the accumulators stay in registers and
 * the loops unroll. */
static inline __attribute__((always_inline)) void FN(tile_b)(const int rows, const int b_masked, const int nv,
                                                             const int pf,
                                                             int64_t kc, const float *a, const int64_t ars,
                                                             const int64_t aks, const float *b, int64_t ldb, float *c,
                                                             int64_t ldc, int cols, const x86_epilogue *e,
                                                             int64_t row0, int64_t col0, int first, int last) {
    vf acc[MR][GEMM_NV];
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < nv; ++v) acc[r][v] = vf_zero();
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k) {
        vf bv[GEMM_NV];
#if GEMM_PF_NEAR
        GEMM_PREFETCH_B_AHEAD(pf, b, k, ldb, nv) /* B's rows ahead, into L1 and into L2 */
#endif
        for (int v = 0; v < nv; ++v) /* b_masked: an unpacked B's last columns, never read past them */
            bv[v] = b_masked ? vf_load_n(b + k * ldb + v * VLEN, cols - v * VLEN) : vf_load(b + k * ldb + v * VLEN);
        for (int r = 0; r < rows; ++r) {
            const vf av = vf_set1(a[k * aks + r * ars]);
            for (int v = 0; v < nv; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);
        }
    }
    TILE_EPILOGUE(acc, rows, nv, c, ldc, cols, e, row0, col0, first, last);
}

/* One row of C over one KC slice (M = 1: a fully connected layer, a projection at batch 1). tile_b's
 * one-row tile has GEMM_NV accumulators, each FMA waiting on the one before it (4 cycles): at 2 of
 * the 8 FMAs in flight that it needs, it ran at a quarter of the FMA units' rate. Four sets of
 * accumulators, over k mod 4 and summed at the end, keep 4 * GEMM_NV in flight. */
static inline __attribute__((always_inline)) void FN(tile_row1)(const int b_masked, const int pf, int64_t kc,
                                                                const float *a, const float *b, int64_t ldb,
                                                                float *c, int64_t ldc, int cols,
                                                                const x86_epilogue *e, int64_t row0, int64_t col0,
                                                                int first, int last) {
    vf acc[MR][GEMM_NV], s[3][GEMM_NV];
    for (int v = 0; v < GEMM_NV; ++v) acc[0][v] = s[0][v] = s[1][v] = s[2][v] = vf_zero();
#define ROW1_B(k, v) (b_masked ? vf_load_n(b + (k) * ldb + (v) * VLEN, cols - (v) * VLEN) : vf_load(b + (k) * ldb + (v) * VLEN))
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
#if GEMM_PF_NEAR
        GEMM_PREFETCH_B_AHEAD(pf, b, k, ldb, GEMM_NV)
        GEMM_PREFETCH_B_AHEAD(pf, b, k + 1, ldb, GEMM_NV)
        GEMM_PREFETCH_B_AHEAD(pf, b, k + 2, ldb, GEMM_NV)
        GEMM_PREFETCH_B_AHEAD(pf, b, k + 3, ldb, GEMM_NV)
#endif
        const vf a0 = vf_set1(a[k * MR]), a1 = vf_set1(a[(k + 1) * MR]), a2 = vf_set1(a[(k + 2) * MR]),
                 a3 = vf_set1(a[(k + 3) * MR]);
        for (int v = 0; v < GEMM_NV; ++v) {
            acc[0][v] = vf_fma(a0, ROW1_B(k, v), acc[0][v]);
            s[0][v] = vf_fma(a1, ROW1_B(k + 1, v), s[0][v]);
            s[1][v] = vf_fma(a2, ROW1_B(k + 2, v), s[1][v]);
            s[2][v] = vf_fma(a3, ROW1_B(k + 3, v), s[2][v]);
        }
    }
    for (; k < kc; ++k) {
        const vf ak = vf_set1(a[k * MR]);
        for (int v = 0; v < GEMM_NV; ++v) acc[0][v] = vf_fma(ak, ROW1_B(k, v), acc[0][v]);
    }
#undef ROW1_B
    for (int v = 0; v < GEMM_NV; ++v) acc[0][v] = vf_add(vf_add(acc[0][v], s[0][v]), vf_add(s[1][v], s[2][v]));
    (void)pf;
    TILE_EPILOGUE(acc, 1, GEMM_NV, c, ldc, cols, e, row0, col0, first, last);
}

static void FN(tile_any)(int rows, int b_masked, int pf, int64_t kc, const float *a, const float *b, int64_t ldb,
                         float *c, int64_t ldc, int cols, const x86_epilogue *e, int64_t row0, int64_t col0,
                         int first, int last) {
    /* each case calls tile_b with constant rows, masking and prefetch, so all are specialized when it is
     * inlined; pf: B streams (a fully connected layer at batch 1, one row: MobileNetV2's 0.436 -> 0.379 ms) */
    switch (rows) {
#define ROWS_CASE(R)                                                                          \
    case R:                                                                                   \
        if (b_masked)                                                                         \
            FN(tile_b)(R, 1, GEMM_NV, 0, kc, a, 1, MR, b, ldb, c, ldc, cols, e, row0, col0, first, last);        \
        else if (pf)                                                                          \
            FN(tile_b)(R, 0, GEMM_NV, 1, kc, a, 1, MR, b, ldb, c, ldc, cols, e, row0, col0, first, last);        \
        else                                                                                  \
            FN(tile_b)(R, 0, GEMM_NV, 0, kc, a, 1, MR, b, ldb, c, ldc, cols, e, row0, col0, first, last);        \
        break;
    ROWS_CASE(1)
#if MR > 1
    ROWS_CASE(2)
#endif
#if MR > 2
    ROWS_CASE(3)
#endif
#if MR > 3
    ROWS_CASE(4)
#endif
#if MR > 4
    ROWS_CASE(5)
#endif
#if MR > 5
    ROWS_CASE(6)
#endif
#if MR > 6
    ROWS_CASE(7)
#endif
#if MR > 7
    ROWS_CASE(8)
#endif
#if MR > 8
    ROWS_CASE(9)
#endif
#if MR > 9
    ROWS_CASE(10)
#endif
#if MR > 10
    ROWS_CASE(11)
#endif
#if MR > 11
    ROWS_CASE(12)
#endif
#if MR > 12
    ROWS_CASE(13)
#endif
#if MR > 13
    ROWS_CASE(14)
#endif
#undef ROWS_CASE
    default: break;
    }
}

/* one GEMM cut into blocks of mcp row panels x ncp column panels of C */
typedef struct {
    int64_t M, N, K, ldb, ldc, b_panel, kc_blk, mp, np, mcp, ncp, mb;
    const float *ap, *bp;
    const float *a_rows; /* A's rows in place (gemm_a_rows), lda apart; then ap: its last partial panel */
    int64_t lda;
    int a_copy; /* a_rows whose micro-panels would not stay in L1 (a_rows_fit_l1): each copied first */
    float *c;
    const x86_epilogue *e;
    const x86_epilogue *act_rows; /* NULL, or its activation, run over a block's rows after their tiles */
    int unpacked, pack_b; /* pack_b: an unpacked B packed block by block (b_scratch) */
    int prefetch; /* B streams from memory: the tiles prefetch it (GEMM_PF_NEAR) */
} FN(gemm_plan);

/* A block's KC x NC slice of an unpacked B, packed into panels in a buffer of the calling thread
 * (grown as needed, kept for the thread's life: at most GEMM_L2_B_BYTES plus one panel). Rows read
 * in place, far apart, are slow to read once another core has just written them; packed, each tile
 * reads one contiguous panel. */
static float *FN(b_scratch)(int64_t floats) {
    static __thread float *buf = NULL;
    static __thread int64_t cap = 0;
    if (floats > cap) {
        void *p = NULL;
        if (posix_memalign(&p, 64, (size_t)floats * sizeof(float)) != 0) return NULL;
        free(buf);
        buf = (float *)p, cap = floats;
    }
    return buf;
}

/* An MR x KC micro-panel of A's rows, copied kc floats apart, in a buffer of the calling thread (kept
 * for the thread's life, like b_scratch's). Rows 12 KB apart (K = 3072) all fall in the same L1 sets,
 * and each tile reloaded them from L2; copied contiguously, they spread over every set. 14 rows of 1 KB
 * are copied in a few hundred cycles, against the ~30000 the tiles then spend on them. */
static float *FN(a_copy_panel)(const float *a, int64_t lda, int64_t kc) {
    static __thread float *buf = NULL;
    if (!buf) {
        void *p = NULL;
        if (posix_memalign(&p, 64, (size_t)MR * GEMM_KC * sizeof(float)) != 0) return NULL;
        buf = (float *)p;
    }
    for (int64_t r = 0; r < MR; ++r) FN(copy_n)(buf + r * kc, a + r * lda, kc);
    return buf;
}

static void FN(gemm_block)(void *ctx, int64_t blk, int worker) {
    const FN(gemm_plan) *G = (const FN(gemm_plan) *)ctx;
    const int64_t M = G->M, N = G->N, K = G->K, kc_blk = G->kc_blk;
    const int64_t p0 = (blk % G->mb) * G->mcp, q0 = (blk / G->mb) * G->ncp;
    const int64_t p1 = p0 + G->mcp < G->mp ? p0 + G->mcp : G->mp, q1 = q0 + G->ncp < G->np ? q0 + G->ncp : G->np;
    float *slice = G->pack_b ? FN(b_scratch)(kc_blk * (q1 - q0) * NR) : NULL;
    const int packs = slice != NULL;
    const int64_t ldb = packs ? NR : G->ldb;
    (void)worker;
    for (int64_t k0 = 0;; k0 += kc_blk) {
        const int64_t kc = K - k0 < kc_blk ? K - k0 : kc_blk;
        const int first = k0 == 0, last = k0 + kc >= K;
        if (packs) { /* panel q - q0 of the slice at slice + (q - q0) * kc * NR */
            const int64_t c1 = q1 * NR < N ? q1 * NR : N;
            FN(pack_b)(G->bp + k0 * G->ldb + q0 * NR, G->ldb, 1, kc, c1 - q0 * NR, slice, 1);
        }
        /* rows outer: the MR x KC micro-panel of A stays in L1 while the tiles
         * walk along a row of C, whose stores then stream */
        for (int64_t p = p0; p < p1; ++p) {
            const int rows = (int)(M - p * MR < MR ? M - p * MR : MR);
            const int in_place = G->a_rows && rows == MR; /* else a packed panel (a_rows: the last one) */
            const float *apk = in_place  ? G->a_rows + p * MR * G->lda + k0
                               : G->a_rows ? G->ap + k0 * MR
                                           : G->ap + p * MR * K + k0 * MR;
            int64_t lda = G->lda;
            if (in_place && G->a_copy) {
                const float *copied = FN(a_copy_panel)(apk, lda, kc);
                if (copied) apk = copied, lda = kc;
            }
            for (int64_t q = q0; q < q1; ++q) {
                const float *bq = packs ? slice + (q - q0) * kc * NR : G->bp + q * G->b_panel + k0 * ldb;
                const int cols = (int)(N - q * NR < NR ? N - q * NR : NR);
                const int b_masked = G->unpacked && !packs && cols < NR;
                float *cp = G->c + p * MR * G->ldc + q * NR;
                if (in_place) { /* B packed (gemm_a_rows), so never masked */
#if GEMM_NV > 1
                    if (cols <= VLEN)
                        FN(tile_b)(MR, 0, 1, 0, kc, apk, lda, 1, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR,
                                   first, last);
                    else
#endif
                    if (G->prefetch)
                        FN(tile_b)(MR, 0, GEMM_NV, 1, kc, apk, lda, 1, bq, ldb, cp, G->ldc, cols, G->e, p * MR,
                                   q * NR, first, last);
                    else
                        FN(tile_b)(MR, 0, GEMM_NV, 0, kc, apk, lda, 1, bq, ldb, cp, G->ldc, cols, G->e, p * MR,
                                   q * NR, first, last);
                    continue;
                }
#if GEMM_NV > 1
                /* a last panel of one vector or less, packed or not: one vector of columns computed
                 * (x86.Attention's S^T blocks are MR columns wide; 14 of 32 computed in full) */
                if (rows == MR && cols <= VLEN)
                    FN(tile_b)(MR, b_masked, 1, 0, kc, apk, 1, MR, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else
#endif
                if (rows == MR && !b_masked && G->prefetch)
                    FN(tile_b)(MR, 0, GEMM_NV, 1, kc, apk, 1, MR, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else if (rows == MR && !b_masked)
                    FN(tile_b)(MR, 0, GEMM_NV, 0, kc, apk, 1, MR, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else if (rows == 1 && b_masked)
                    FN(tile_row1)(1, 0, kc, apk, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else if (rows == 1 && G->prefetch)
                    FN(tile_row1)(0, 1, kc, apk, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else if (rows == 1)
                    FN(tile_row1)(0, 0, kc, apk, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else
                    FN(tile_any)(rows, b_masked, G->prefetch, kc, apk, bq, ldb, cp, G->ldc, cols, G->e, p * MR, q * NR,
                                 first, last);
            }
            if (last && G->act_rows) { /* the panel's rows, still in L1, along the block's columns */
                const int64_t c0 = q0 * NR, c1 = q1 * NR < N ? q1 * NR : N;
                const x86_epilogue *a = G->act_rows;
                for (int r = 0; r < rows; ++r) {
                    float *y = G->c + (p * MR + r) * G->ldc + c0;
                    FN(act_row)(a->act, a->act_alpha, a->act_beta, y, y, c1 - c0);
                }
            }
        }
        if (last) break;
    }
}

/* The largest load of a thread over the mean when x86_parallel hands out blocks of mcp row panels x
 * ncp column panels in their order (row blocks inner) as a contiguous run per thread; a block's
 * load is its rows times its columns rounded up to whole vectors (a last panel of a few columns
 * runs a one-vector tile, tile_b's nv). */
static double FN(gemm_imbalance)(int64_t M, int64_t N, int threads, int64_t mcp, int64_t ncp) {
    const int64_t mb = FN(ceil_div)(M, mcp * MR), nb = FN(ceil_div)(N, ncp * NR), n = mb * nb;
    double worst = 0, total = 0;
    for (int r = 0; r < threads; ++r) {
        double load = 0;
        for (int64_t blk = n * r / threads; blk < n * (r + 1) / threads; ++blk) {
            const int64_t i = blk % mb, j = blk / mb;
            const int64_t rows = M - i * mcp * MR < mcp * MR ? M - i * mcp * MR : mcp * MR;
            const int64_t cols = N - j * ncp * NR < ncp * NR ? N - j * ncp * NR : ncp * NR;
            load += (double)rows * (double)(FN(ceil_div)(cols, VLEN) * VLEN);
        }
        total += load;
        if (load > worst) worst = load;
    }
    return total > 0 ? worst * threads / total : 1.0;
}

/* Where one thread would take 5 % more than the mean, smaller blocks (down to half of either side,
 * at most 8 sizes of each) that share the work more evenly: SqueezeNet's classifier (1000 x 169)
 * made 9 blocks of 8 row panels, 5 for one thread and 4 for the other (0.63 ms at two threads);
 * 12 blocks of 6 share it evenly (0.58 ms). Ties keep the bigger blocks. One row block stays one:
 * gemm_rows packs B only then. This runs per call, so the search is kept short. */
static void FN(gemm_balance)(int64_t M, int64_t N, int threads, int64_t *mcp, int64_t *ncp) {
    const int64_t m0 = *mcp, n0 = *ncp;
    double best = FN(gemm_imbalance)(M, N, threads, m0, n0);
    if (best <= 1.05) return;
    int64_t m_min = m0 * MR >= M ? m0 : (m0 + 1) / 2, q_min = (n0 + 1) / 2;
    if (m_min < m0 - 7) m_min = m0 - 7;
    if (q_min < n0 - 7) q_min = n0 - 7;
    for (int64_t m = m0; m >= m_min && best > 1.001; --m)
        for (int64_t q = n0; q >= q_min; --q) {
            const double v = FN(gemm_imbalance)(M, N, threads, m, q);
            if (v < best - 0.001) best = v, *mcp = m, *ncp = q;
        }
}

/* B either packed (panel q at bp + q*NR*K, row k of it at + k*NR) or, for
 * gemm_rows, plain rows of a row-major K x N matrix with row stride ldb
 * (panel q at b + q*NR, row k at + k*ldb; its last partial panel is read
 * with masked loads). Blocks go to threads through x86_parallel. */
static void FN(gemm_any)(int64_t M, int64_t N, int64_t K, const float *ap, const float *bp, int unpacked,
                         int64_t ldb, float *c, int64_t ldc, const x86_epilogue *e, int threads, int prefetch,
                         const float *a_rows, int64_t lda, int a_copy) {
    if (M <= 0 || N <= 0) return;
    FN(gemm_plan) G;
    G.M = M, G.N = N, G.K = K, G.ldb = ldb, G.ldc = ldc, G.ap = ap, G.bp = bp, G.c = c, G.e = e;
    G.a_rows = a_rows, G.lda = lda, G.a_copy = a_copy;
    /* an activation of many steps (GELU, SiLU, ...) once per row of a block, 8-16 vectors at a time, not
     * once per tile row of 2 vectors: in the tiles' epilogue GELU took 2.7x its time per element alone */
    x86_epilogue tiles = *e;
    G.act_rows = e->act > MNN_ACT_CLIP ? e : NULL;
    if (G.act_rows) tiles.act = MNN_ACT_NONE, G.e = &tiles;
    G.unpacked = unpacked;
    G.prefetch = GEMM_PF_NEAR > 0 && prefetch;
    G.b_panel = unpacked ? NR : NR * K;
    G.mp = FN(ceil_div)(M, MR), G.np = FN(ceil_div)(N, NR);
    /* unpacked B rows a multiple of 256 bytes apart map onto 16 L1 sets or fewer:
     * shorter K slices keep them cached (other strides spread over the sets) */
    G.kc_blk = unpacked && (ldb * (int64_t)sizeof(float)) % 256 == 0 ? GEMM_KC_ROWS : GEMM_KC;
    const int64_t kc_max = K < G.kc_blk ? (K > 0 ? K : 1) : G.kc_blk;
    /* a block: mcp row panels x ncp column panels of C; its KC x NC slice of B stays in L2 */
    int64_t mcp = GEMM_MC_ROWS / MR, ncp = GEMM_L2_B_BYTES / (int64_t)sizeof(float) / (kc_max * NR);
    const int64_t mp = G.mp, np = G.np;
    if (mcp < 1) mcp = 1;
    if (mcp > mp) mcp = mp;
    if (ncp < 1) ncp = 1;
    if (ncp > np) ncp = np;
    /* enough blocks for every thread (X86_ITEMS_PER_THREAD each: claimed one at a time, they even out
     * preemption and uneven blocks): split the longer side first. An unpacked B whose M fits one row
     * block keeps it, and splits only its columns, however few blocks that makes (as long as each
     * thread gets a column panel): gemm_block packs B only then (below). SqueezeNet's 13x13 squeezes
     * at two threads had been cut into two row blocks for more items, and ran 0.044-0.068 ms instead
     * of 0.037-0.057. */
    const int one_row_block = unpacked && mcp >= mp && np >= threads;
    while (threads > 1 && FN(ceil_div)(mp, mcp) * FN(ceil_div)(np, ncp) < X86_ITEMS_PER_THREAD * threads && (mcp > 1 || ncp > 1)) {
        if (ncp > 1 && (one_row_block || ncp * NR >= mcp * MR)) ncp = (ncp + 1) / 2;
        else if (one_row_block) break;
        else if (mcp > 1) mcp = (mcp + 1) / 2;
        else ncp = (ncp + 1) / 2;
    }
    if (threads > 1) FN(gemm_balance)(M, N, threads, &mcp, &ncp);
    G.mcp = mcp, G.ncp = ncp, G.mb = FN(ceil_div)(mp, mcp);
    /* Packing pays at two threads and more, where the rows in place ran slow after a producer, and
     * only while one row block covers M, so each slice is packed once: at one thread it cost 10 %
     * (SqueezeNet's squeezes), and SqueezeNet's classifier (1000 rows, 9 row blocks) lost 8 %. */
    G.pack_b = unpacked && threads > 1 && G.mb == 1;
    const int64_t blocks = G.mb * FN(ceil_div)(np, ncp);
    if (threads > 1 && blocks > 1) {
        x86_parallel(threads, blocks, FN(gemm_block), &G);
    } else {
        for (int64_t blk = 0; blk < blocks; ++blk) FN(gemm_block)(&G, blk, 0);
    }
}

/* prefetch: B comes from memory (a caller that knows, such as Winograd's 36 GEMMs over weights that
 * are large only together, says so; gemm judges by B's size) */
static void FN(gemm_hint)(int64_t M, int64_t N, int64_t K, const float *ap, const float *bp, float *c, int64_t ldc,
                          const x86_epilogue *e, int threads, int prefetch) {
    FN(gemm_any)(M, N, K, ap, bp, 0, NR, c, ldc, e, threads, prefetch, NULL, 0, 0);
}

static void FN(gemm)(int64_t M, int64_t N, int64_t K, const float *ap, const float *bp, float *c, int64_t ldc,
                     const x86_epilogue *e, int threads) {
    FN(gemm_hint)(M, N, K, ap, bp, c, ldc, e, threads, K * N * (int64_t)sizeof(float) >= GEMM_PF_MIN_BYTES);
}

/* inference (x86infer): B unpacked, row k at b + k*ldb (a 1x1 convolution's NCHW input) */
static void FN(gemm_rows)(int64_t M, int64_t N, int64_t K, const float *ap, const float *b, int64_t ldb, float *c,
                          int64_t ldc, const x86_epilogue *e, int threads) {
    FN(gemm_any)(M, N, K, ap, b, 1, ldb, c, ldc, e, threads, 0, NULL, 0, 0);
}

/* Whether an MR x GEMM_KC micro-panel of A's rows in place, lda floats apart, stays in L1 while the
 * tiles walk along its row of C: at most `ways` of its cache lines in any one of L1's 64 sets (row
 * strides of a multiple of 4 KB put all MR rows in the same sets, and each tile would reload them). */
static int FN(a_rows_fit_l1)(int64_t lda, int64_t K, int ways) {
    int per_set[64] = {0};
    const int64_t lines = ((K < GEMM_KC ? K : GEMM_KC) * (int64_t)sizeof(float) + 63) / 64 + 1;
    for (int64_t r = 0; r < MR; ++r)
        for (int64_t l = 0; l < lines; ++l)
            if (++per_set[(r * lda * (int64_t)sizeof(float) / 64 + l) % 64] > ways) return 0;
    return 1;
}

/* The lines of A an L1 set may hold while B streams through the others: 4 of an 8-way L1. The 14-row
 * tile runs only on cores with two 512-bit FMA units (Zen 5, Intel's server cores), whose L1s are
 * 12-way: 8 there, which takes in the rows of K = 384, 768 and 1536 (at most 6-8 lines a set) but not
 * those of K = 1024, 2048 or 3072 (all 14 rows in the same sets: copied, a_copy_panel); measured in
 * benchmarks/RESULTS_ZOO.md (2026-12-07, 19:30). */
#define GEMM_A_WAYS (MR > 8 ? 8 : 4)

/* C = A B with A's rows read in place (row i at a + i * lda, its K floats contiguous: a MatMul's
 * activations) and B packed: no pass that packs A (it wrote and read back all of A, 3 MB at BERT-base
 * batch 8, about a sixth of the GEMM's time). Only a last panel of fewer than MR rows is packed, into
 * tail (MR * K floats). Rows that would not stay in L1 are read through a_copy_panel, one micro-panel
 * at a time. Returns 0 (nothing done) where M < MR: pack A then. */
static int FN(gemm_a_rows)(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, float *tail,
                           const float *bp, float *c, int64_t ldc, const x86_epilogue *e, int threads) {
    if (M < MR) return 0;
    const int a_copy = !FN(a_rows_fit_l1)(lda, K, GEMM_A_WAYS);
    if (M % MR) {
        FN(pack_args) g = {a + M / MR * MR * lda, lda, 1, M % MR, K, tail};
        FN(pack_a_panel)(&g, 0);
    }
    FN(gemm_any)(M, N, K, tail, bp, 0, NR, c, ldc, e, threads, K * N * (int64_t)sizeof(float) >= GEMM_PF_MIN_BYTES,
                 a, lda, a_copy);
    return 1;
}

#endif
