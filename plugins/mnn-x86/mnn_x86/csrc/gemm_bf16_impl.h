/* The bf16 GEMM (bf16.h): packing fp32 into bf16 pair panels and the VDPBF16PS micro-kernel, with
 * a 14 x 32 tile (the fp32 GEMM's until it moved to 6 x 32; not measured for bf16 yet), the fp32
 * GEMM's blocking and epilogue. Included only by isa_avx512_bf16.c, after
 * vec_avx512.h, vmath_impl.h and gemm_epilogue_impl.h.
 *
 * Why the same tile works: a VDPBF16PS does what two FMAs do (a pair of products per lane) on the
 * same registers: 28 accumulators, 2 vectors of B (16 columns x one pair each) and one broadcast
 * pair of A. A K slice is BF_KC pairs, so the MR x KC micro-panel of A is as many bytes as the fp32
 * kernel's (14 x 256 floats: 14 KB, in L1) for twice the K. */
#ifndef MNN_X86_GEMM_BF16_IMPL_H
#define MNN_X86_GEMM_BF16_IMPL_H

#include "bf16.h"

#define BF_KC 256                  /* pairs per K slice */
#define BF_MC_ROWS 120             /* rows of C per block (gemm_impl.h: GEMM_MC_ROWS) */
#define BF_L2_B_BYTES (256 * 1024) /* the slice of packed B a block walks over: kept in L2 */
#define BF_PACK_MIN_WORDS 16384    /* below this, packing on one thread beats handing it out */

static inline int64_t bf_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* lo[i], hi[i] (i < 16) rounded to nearest even into one word each: lo in the low half.
 * VCVTNE2PS2BF16 puts its second operand's 16 values first, then the first's; the permute
 * interleaves the two halves. */
static inline __m512i bf_pairs(__m512 lo, __m512 hi) {
    static const uint16_t interleave[32] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                                            8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    const __m512i t = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    return _mm512_permutexvar_epi16(_mm512_loadu_si512(interleave), t);
}

/* up to 16 floats of a strided row (0 past n), by vector loads when contiguous */
static inline __m512 bf_load_row(const float *p, int64_t cs, int n) {
    if (n <= 0) return _mm512_setzero_ps();
    if (cs == 1) return vf_load_n(p, n);
    float t[16] = {0};
    for (int i = 0; i < n && i < 16; ++i) t[i] = p[i * cs];
    return _mm512_loadu_ps(t);
}

/* -- packing ---------------------------------------------------------------------------------- */

/* One NR-column panel of B: columns [c0, c0 + cols) of the K rows (row k at b + k*rs, column j at
 * + j*cs), each word of row kp the pair (B[2kp][j], B[2kp+1][j]); zero past K and past cols. */
static void bf_pack_b_panel(const float *b, int64_t rs, int64_t cs, int64_t K, int64_t c0, int cols, uint32_t *dst) {
    const int64_t KP = (K + 1) / 2;
    for (int64_t kp = 0; kp < KP; ++kp) {
        const float *r0 = b + 2 * kp * rs + c0 * cs, *r1 = r0 + rs;
        const int has_r1 = 2 * kp + 1 < K;
        for (int v = 0; v < GEMM_NV; ++v) {
            const int n = cols - v * VLEN;
            const __m512 lo = bf_load_row(r0 + v * VLEN * cs, cs, n);
            const __m512 hi = has_r1 ? bf_load_row(r1 + v * VLEN * cs, cs, n) : _mm512_setzero_ps();
            _mm512_storeu_si512(dst + kp * NR + v * VLEN, bf_pairs(lo, hi));
        }
    }
}

typedef struct {
    const float *b;
    int64_t rs, cs, K, N;
    uint32_t *bp;
    int32_t packed; /* 1: b is fp32 packed panels (convert_b), else a strided matrix */
} bf_pack_b_job;

static void bf_pack_b_task(void *ctx, int64_t q, int worker) {
    const bf_pack_b_job *J = (const bf_pack_b_job *)ctx;
    const int64_t KP = (J->K + 1) / 2, c0 = q * NR;
    const int cols = (int)(J->N - c0 < NR ? J->N - c0 : NR);
    (void)worker;
    if (J->packed) /* panel q of the fp32 panels: a K x NR matrix, already zero past N */
        bf_pack_b_panel(J->b + q * NR * J->K, NR, 1, J->K, 0, NR, J->bp + q * NR * KP);
    else
        bf_pack_b_panel(J->b, J->rs, J->cs, J->K, c0, cols, J->bp + q * NR * KP);
}

static void bf_pack_b_run(bf_pack_b_job *J, int threads) {
    const int64_t panels = bf_ceil_div(J->N, NR);
    if (threads > 1 && panels > 1 && J->K * J->N / 2 >= BF_PACK_MIN_WORDS)
        x86_parallel(threads, panels, bf_pack_b_task, J);
    else
        for (int64_t q = 0; q < panels; ++q) bf_pack_b_task(J, q, 0);
}

static void bf_pack_b(const float *b, int64_t rs, int64_t cs, int64_t K, int64_t N, uint32_t *bp, int threads) {
    bf_pack_b_job J = {b, rs, cs, K, N, bp, 0};
    bf_pack_b_run(&J, threads);
}

static void bf_convert_b(const float *bp32, int64_t K, int64_t N, uint32_t *bp, int threads) {
    bf_pack_b_job J = {bp32, NR, 1, K, N, bp, 1};
    bf_pack_b_run(&J, threads);
}

/* One MR-row panel of A: rows [r0, r0 + rows) (row i at a + i*rs, column k at + k*cs), each word
 * of row kp the pair (A[i][2kp], A[i][2kp+1]). Along a row the pairs are consecutive floats, so 32
 * of them convert in one step and their 16 words go to 16 rows of the panel. */
static void bf_pack_a_panel(const float *a, int64_t rs, int64_t cs, int64_t K, int64_t r0, int rows, uint32_t *dst) {
    const int64_t KP = (K + 1) / 2;
    uint32_t w[16];
    if (rs == 1) { /* a transposed source (Winograd's V^T): each k holds the panel's rows contiguous */
        for (int64_t kp = 0; kp < KP; ++kp) {
            const float *k0 = a + r0 + 2 * kp * cs;
            const __m512 hi = 2 * kp + 1 < K ? vf_load_n(k0 + cs, rows) : _mm512_setzero_ps();
            _mm512_mask_storeu_epi32(dst + kp * MR, (__mmask16)((1u << MR) - 1u), bf_pairs(vf_load_n(k0, rows), hi));
        }
        return;
    }
    for (int r = 0; r < MR; ++r) {
        if (r >= rows) {
            for (int64_t kp = 0; kp < KP; ++kp) dst[kp * MR + r] = 0;
            continue;
        }
        const float *row = a + (r0 + r) * rs;
        for (int64_t k0 = 0; k0 < K; k0 += 2 * VLEN) {
            const int n = (int)(K - k0 < 2 * VLEN ? K - k0 : 2 * VLEN);
            const __m512 lo = bf_load_row(row + k0 * cs, cs, n), hi = bf_load_row(row + (k0 + VLEN) * cs, cs, n - VLEN);
            _mm512_storeu_si512(w, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
            for (int j = 0; j < (n + 1) / 2; ++j) dst[(k0 / 2 + j) * MR + r] = w[j];
        }
    }
}

typedef struct {
    const float *a;
    int64_t rs, cs, M, K;
    uint32_t *ap;
} bf_pack_a_job;

static void bf_pack_a_task(void *ctx, int64_t p, int worker) {
    const bf_pack_a_job *J = (const bf_pack_a_job *)ctx;
    const int64_t r0 = p * MR;
    (void)worker;
    bf_pack_a_panel(J->a, J->rs, J->cs, J->K, r0, (int)(J->M - r0 < MR ? J->M - r0 : MR),
                    J->ap + p * MR * ((J->K + 1) / 2));
}

static void bf_pack_a(const float *a, int64_t rs, int64_t cs, int64_t M, int64_t K, uint32_t *ap, int threads) {
    bf_pack_a_job J = {a, rs, cs, M, K, ap};
    const int64_t panels = bf_ceil_div(M, MR);
    if (threads > 1 && panels > 1 && M * K / 2 >= BF_PACK_MIN_WORDS)
        x86_parallel(threads, panels, bf_pack_a_task, &J);
    else
        for (int64_t p = 0; p < panels; ++p) bf_pack_a_task(&J, p, 0);
}

/* -- the micro-kernel and its driver -------------------------------------------------------------- */

/* One MR x NR tile (rows x cols valid) over kc pairs of one K slice; rows and nv (vectors of
 * columns computed) are constants at every call, so the accumulators stay in registers. */
static inline __attribute__((always_inline)) void bf_tile(const int rows, const int nv, int64_t kc, const uint32_t *a,
                                                          const uint32_t *b, float *c, int64_t ldc, int cols,
                                                          const x86_epilogue *e, int64_t row0, int64_t col0,
                                                          int first, int last) {
    vf acc[MR][GEMM_NV];
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < nv; ++v) acc[r][v] = vf_zero();
#pragma GCC unroll 4
    for (int64_t kp = 0; kp < kc; ++kp) {
        __m512bh bv[GEMM_NV];
        for (int v = 0; v < nv; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + kp * NR + v * VLEN);
        for (int r = 0; r < rows; ++r) {
            const __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[kp * MR + r]);
            for (int v = 0; v < nv; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
        }
    }
    TILE_EPILOGUE(acc, rows, nv, c, ldc, cols, e, row0, col0, first, last);
}

/* a last row panel of fewer than MR rows: one specialized tile per row count */
static void bf_tile_rows(int rows, int64_t kc, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc, int cols,
                         const x86_epilogue *e, int64_t row0, int64_t col0, int first, int last) {
    switch (rows) {
#define BF_ROWS(R)                                                                    \
    case R:                                                                           \
        bf_tile(R, GEMM_NV, kc, a, b, c, ldc, cols, e, row0, col0, first, last);      \
        break;
        BF_ROWS(1) BF_ROWS(2) BF_ROWS(3) BF_ROWS(4) BF_ROWS(5) BF_ROWS(6) BF_ROWS(7)
        BF_ROWS(8) BF_ROWS(9) BF_ROWS(10) BF_ROWS(11) BF_ROWS(12) BF_ROWS(13)
#undef BF_ROWS
    default: break;
    }
}
#if MR != 14
#error "bf_tile_rows covers MR = 14"
#endif

/* one GEMM cut into blocks of mcp row panels x ncp column panels of C, as the fp32 driver's */
typedef struct {
    int64_t M, N, KP, ldc, mp, np, mcp, ncp, mb;
    const uint32_t *ap, *bp;
    float *c;
    const x86_epilogue *e;
} bf_gemm_plan;

static void bf_gemm_block(void *ctx, int64_t blk, int worker) {
    const bf_gemm_plan *G = (const bf_gemm_plan *)ctx;
    const int64_t KP = G->KP, p0 = (blk % G->mb) * G->mcp, q0 = (blk / G->mb) * G->ncp;
    const int64_t p1 = p0 + G->mcp < G->mp ? p0 + G->mcp : G->mp, q1 = q0 + G->ncp < G->np ? q0 + G->ncp : G->np;
    (void)worker;
    for (int64_t k0 = 0;; k0 += BF_KC) {
        const int64_t kc = KP - k0 < BF_KC ? KP - k0 : BF_KC;
        const int first = k0 == 0, last = k0 + kc >= KP;
        for (int64_t p = p0; p < p1; ++p) { /* rows outer: the micro-panel of A stays in L1 */
            const uint32_t *apk = G->ap + p * MR * KP + k0 * MR;
            const int rows = (int)(G->M - p * MR < MR ? G->M - p * MR : MR);
            for (int64_t q = q0; q < q1; ++q) {
                const uint32_t *bq = G->bp + q * NR * KP + k0 * NR;
                const int cols = (int)(G->N - q * NR < NR ? G->N - q * NR : NR);
                float *cp = G->c + p * MR * G->ldc + q * NR;
                if (rows == MR && cols > VLEN)
                    bf_tile(MR, GEMM_NV, kc, apk, bq, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else if (rows == MR) /* a last panel of one vector (13x13, 14x14 planes): half the work */
                    bf_tile(MR, 1, kc, apk, bq, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
                else
                    bf_tile_rows(rows, kc, apk, bq, cp, G->ldc, cols, G->e, p * MR, q * NR, first, last);
            }
        }
        if (last) break;
    }
}

static void bf_gemm(int64_t M, int64_t N, int64_t K, const uint32_t *ap, const uint32_t *bp, float *c, int64_t ldc,
                    const x86_epilogue *e, int threads) {
    if (M <= 0 || N <= 0) return;
    bf_gemm_plan G;
    G.M = M, G.N = N, G.KP = (K + 1) / 2, G.ldc = ldc, G.ap = ap, G.bp = bp, G.c = c, G.e = e;
    G.mp = bf_ceil_div(M, MR), G.np = bf_ceil_div(N, NR);
    const int64_t kc_max = G.KP < BF_KC ? (G.KP > 0 ? G.KP : 1) : BF_KC;
    int64_t mcp = BF_MC_ROWS / MR, ncp = BF_L2_B_BYTES / (int64_t)sizeof(uint32_t) / (kc_max * NR);
    if (mcp > G.mp) mcp = G.mp;
    if (mcp < 1) mcp = 1;
    if (ncp > G.np) ncp = G.np;
    if (ncp < 1) ncp = 1;
    /* four blocks per thread or more (claimed one at a time): split the longer side first */
    while (threads > 1 && bf_ceil_div(G.mp, mcp) * bf_ceil_div(G.np, ncp) < 4 * threads && (mcp > 1 || ncp > 1)) {
        if (ncp * NR >= mcp * MR && ncp > 1) ncp = (ncp + 1) / 2;
        else if (mcp > 1) mcp = (mcp + 1) / 2;
        else ncp = (ncp + 1) / 2;
    }
    G.mcp = mcp, G.ncp = ncp, G.mb = bf_ceil_div(G.mp, mcp);
    const int64_t blocks = G.mb * bf_ceil_div(G.np, ncp);
    if (threads > 1 && blocks > 1)
        x86_parallel(threads, blocks, bf_gemm_block, &G);
    else
        for (int64_t blk = 0; blk < blocks; ++blk) bf_gemm_block(&G, blk, 0);
}

#endif
