/* The GEMM driver both float paths share, instantiated by fp32.c and fp16.c
 * (each compiled with its own flags). Before including, define ELEM (the
 * packed element type), MR x NR (the register tile), LANES (elements per B
 * vector) and NV = NR / LANES; XHALF (1: activations are fp16 in memory, the
 * "fp16h" path; default 0: fp32), XV, COPY_X(d, s) (XV activation elements
 * packed at once) and COPY_X2 (XV of every other element); optionally PACK_A_ROWS / PACK_B_COLS (A's rows,
 * B's columns contiguous) and IM2COL_B (an im2col of its own, 0 where it
 * declines); after it, define tile_full and tile_part.
 *
 * Activation pointers (what pack_a / pack_b / im2col_b read, what the GEMM
 * writes) are `xelem`: float, or __fp16 under XHALF. Weights are packed with
 * the same functions, so under XHALF they are handed over as fp16.
 *
 * Blocking for the cache (MNN 1.0's re-tiling for cache lines): KC rows of K
 * at a time, so one B panel (NR x KC) stays in L1 while it meets MC / MR
 * panels of A, and the A block (MC x KC) stays in L2 while every B panel of
 * the chunk streams past it. Buffers are 64-byte aligned and every panel is a
 * multiple of 64 bytes long, so panels start on cache lines; the micro-kernels
 * prefetch the lines they will need a few k-steps ahead. */
#include <arm_neon.h>
#include <math.h>

#include "arm.h"

#ifndef KC
#define KC 512
#endif
#define MC 64
#ifndef XHALF
#define XHALF 0
#endif

#if XHALF
typedef __fp16 xelem;
static inline float32x4_t load_c4(const xelem *p) { return vcvt_f32_f16(vld1_f16(p)); }
static inline void store_c4(xelem *p, float32x4_t v) { vst1_f16(p, vcvt_f16_f32(v)); }
/* the generic epilogue on fp16 rows: widened 256 values at a time */
static void epilogue_rows_x(xelem *c, int64_t ldc, int64_t M, int64_t N, const arm_epilogue *e) {
#ifdef HALF_ACT_ROWS
    if (HALF_ACT_ROWS(c, ldc, M, N, e)) return;
#endif
    float tmp[256];
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n0 = 0; n0 < N; n0 += 256) {
            const int64_t n = N - n0 < 256 ? N - n0 : 256;
            xelem *p = c + m * ldc + n0;
            for (int64_t j = 0; j < n; ++j) tmp[j] = (float)p[j];
            arm_epilogue_rows(tmp, 0, m, n0, 1, n, e);
            for (int64_t j = 0; j < n; ++j) p[j] = (xelem)tmp[j];
        }
}
#else
typedef float xelem;
static inline float32x4_t load_c4(const xelem *p) { return vld1q_f32(p); }
static inline void store_c4(xelem *p, float32x4_t v) { vst1q_f32(p, v); }
static void epilogue_rows_x(xelem *c, int64_t ldc, int64_t M, int64_t N, const arm_epilogue *e) {
    arm_epilogue_rows(c, ldc, 0, 0, M, N, e);
}
#endif

typedef struct tile_args {
    int64_t kc;
    const ELEM *a, *b;
    xelem *c;
    int64_t ldc;
    int mr, nc;     /* valid rows and columns of this tile */
    int accumulate; /* add to what C holds (a later K block) */
    int epi;        /* apply the in-tile epilogue (last K block, simple epilogue) */
    const arm_epilogue *e;
    int64_t m;      /* first row of the tile, for the bias */
} tile_args;

static void tile_full(const tile_args *t);
static void tile_part(const tile_args *t, int nv);

static inline float row_bias(const tile_args *t, int r) {
    const arm_epilogue *e = t->e;
    return e->bias ? e->beta * e->bias[(t->m + r) * e->bias_rs] : 0.0f;
}

/* bounds of the in-tile activation: none, relu or clip */
static inline void clamp_bounds(const arm_epilogue *e, float *lo, float *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    if (e->act == MNN_ACT_RELU) *lo = 0.0f;
    if (e->act == MNN_ACT_CLIP) *lo = e->act_alpha, *hi = e->act_beta;
}

/* store 4 results of a full tile: row r, columns [col, col + 4) */
static inline __attribute__((always_inline)) void put4(const tile_args *t, int r, int col, float32x4_t v) {
    xelem *p = t->c + r * t->ldc + col;
    if (t->accumulate) v = vaddq_f32(v, load_c4(p));
    if (t->epi) {
        float lo, hi;
        clamp_bounds(t->e, &lo, &hi);
        v = vaddq_f32(v, vdupq_n_f32(row_bias(t, r)));
        if (t->e->act != MNN_ACT_NONE) v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(lo)), vdupq_n_f32(hi));
    }
    store_c4(p, v);
}

/* What the in-tile epilogue of a whole tile needs, computed once per tile
 * rather than per stored vector: bias per row, clamp bounds. */
typedef struct tile_epi {
    float bias[MR];
    float lo, hi;
    int clamp;
} tile_epi;

static inline void tile_epi_init(const tile_args *t, tile_epi *q) {
    for (int r = 0; r < MR; ++r) q->bias[r] = row_bias(t, r);
    clamp_bounds(t->e, &q->lo, &q->hi);
    q->clamp = t->e->act != MNN_ACT_NONE;
}

/* store the valid part of a partial tile held in tmp[MR][NR] */
static void put_partial(const tile_args *t, const float *tmp) {
    float lo, hi;
    clamp_bounds(t->e, &lo, &hi);
    for (int r = 0; r < t->mr; ++r) {
        const float bias = t->epi ? row_bias(t, r) : 0.0f;
        for (int j = 0; j < t->nc; ++j) {
            xelem *p = t->c + r * t->ldc + j;
            float v = tmp[r * NR + j] + (t->accumulate ? (float)*p : 0.0f);
            if (t->epi) {
                v += bias;
                if (t->e->act != MNN_ACT_NONE) v = v < lo ? lo : (v > hi ? hi : v);
            }
            *p = (xelem)v;
        }
    }
}

static void gemm_driver(int64_t M, int64_t N, int64_t K, const void *apv, const void *bpv, void *cv, int64_t ldc,
                        const arm_epilogue *e) {
    const ELEM *ap = (const ELEM *)apv, *bp = (const ELEM *)bpv;
    xelem *c = (xelem *)cv;
    const int simple = arm_epilogue_in_tile(e);
    if (K == 0) { /* an empty sum: the epilogue applied to zeros */
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) c[m * ldc + n] = (xelem)0;
        epilogue_rows_x(c, ldc, M, N, e);
        return;
    }
#ifdef GEMV_ROW
    if (M == 1) { /* one row: a matrix-vector product over B's panels, the epilogue after */
        GEMV_ROW(N, K, ap, bp, c);
        epilogue_rows_x(c, ldc, 1, N, e);
        return;
    }
#endif
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        const int64_t kc = K - k0 < KC ? K - k0 : KC;
        const int first = k0 == 0, last = k0 + kc == K;
        for (int64_t m0 = 0; m0 < M; m0 += MC) {
            const int64_t m1 = M < m0 + MC ? M : m0 + MC;
            for (int64_t n = 0; n < N; n += NR) {
                const int64_t nc = N - n < NR ? N - n : NR;
                const ELEM *b = bp + (n / NR) * NR * K + k0 * NR;
                for (int64_t m = m0; m < m1; m += MR) {
                    const int64_t mr = M - m < MR ? M - m : MR;
                    const tile_args t = {kc, ap + (m / MR) * MR * K + k0 * MR, b, c + m * ldc + n, ldc,
                                         (int)mr, (int)nc, !first, last && simple, e, m};
                    const int nv = (int)((nc + LANES - 1) / LANES);
                    if (nv == NV) tile_full(&t);
                    else tile_part(&t, nv);
                }
            }
        }
    }
    if (!simple) epilogue_rows_x(c, ldc, M, N, e);
}

/* Pack rows [p*MR, p*MR + MR) of A (strides rs, cs) as ap[p][k][MR], zero padded. */
static void pack_a_impl(const void *av, int64_t rs, int64_t cs, int64_t M, int64_t K, void *apv) {
#ifdef PACK_A_ROWS
    if (cs == 1) {
        PACK_A_ROWS((const xelem *)av, rs, M, K, (ELEM *)apv);
        return;
    }
#endif
    const xelem *a = (const xelem *)av;
    ELEM *ap = (ELEM *)apv;
    for (int64_t p = 0; p * MR < M; ++p) {
        ELEM *dst = ap + p * MR * K;
        for (int64_t k = 0; k < K; ++k)
            for (int r = 0; r < MR; ++r) {
                const int64_t m = p * MR + r;
                dst[k * MR + r] = m < M ? (ELEM)a[m * rs + k * cs] : (ELEM)0;
            }
    }
}

/* NR zeros (no memset call: it would run outside the counted code) */
static inline void zero_panel_row(ELEM *d) {
#if LANES == 8
    for (int j = 0; j < NR; j += 8) vst1q_f16(d + j, vdupq_n_f16(0));
#else
    for (int j = 0; j < NR; j += 4) vst1q_f32(d + j, vdupq_n_f32(0.0f));
#endif
}

/* Pack columns of B (strides rs, cs) as bp[q][k][NR]; the contiguous-row case copies vectors. */
static void pack_b_impl(const void *bv, int64_t rs, int64_t cs, int64_t K, int64_t N, void *bpv) {
#ifdef PACK_B_COLS
    if (rs == 1 && cs != 1) { /* columns contiguous: each a row of B^T */
        PACK_B_COLS((const xelem *)bv, cs, K, N, (ELEM *)bpv);
        return;
    }
#endif
    const xelem *b = (const xelem *)bv;
    ELEM *bp = (ELEM *)bpv;
    for (int64_t q = 0; q * NR < N; ++q) {
        const int64_t n0 = q * NR, nc = N - n0 < NR ? N - n0 : NR;
        ELEM *dst = bp + q * NR * K;
        for (int64_t k = 0; k < K; ++k) {
            const xelem *src = b + k * rs + n0 * cs;
            ELEM *d = dst + k * NR;
            if (cs == 1 && nc == NR) {
                for (int j = 0; j < NR; j += XV) COPY_X(d + j, src + j);
            } else { /* a partial panel (or strided columns): zeros in whole vectors, then the columns there are */
                zero_panel_row(d);
                int j = 0;
                if (cs == 1)
                    for (; j + XV <= nc; j += XV) COPY_X(d + j, src + j);
                for (; j < nc; ++j) d[j] = (ELEM)src[j * cs];
            }
        }
    }
}

/* im2col of output columns [n0, n0 + ncols) straight into packed panels.
 * Row k = (c, i, j) of B holds x[c][oh*sh + i*dh - pt][ow*sw + j*dw - pl] (0 outside). */
static void im2col_b_impl(const void *xv, const arm_conv_geom *g, int64_t n0, int64_t ncols, void *bpv) {
#ifdef IM2COL_B
    if (IM2COL_B((const xelem *)xv, g, n0, ncols, (ELEM *)bpv)) return;
#endif
    const xelem *x = (const xelem *)xv;
    ELEM *bp = (ELEM *)bpv;
    const int64_t K = g->C * g->kh * g->kw;
    for (int64_t q = 0; q * NR < ncols; ++q) {
        ELEM *dst = bp + q * NR * K;
        const int64_t c0 = n0 + q * NR, nc = ncols - q * NR < NR ? ncols - q * NR : NR;
        for (int64_t k = 0; k < K; ++k) {
            const int64_t ch = k / (g->kh * g->kw), i = (k / g->kw) % g->kh, j = k % g->kw;
            const xelem *plane = x + ch * g->H * g->W;
            ELEM *d = dst + k * NR;
            int64_t oh = c0 / g->OW, ow = c0 % g->OW;
            int col = 0;
            while (col < NR) {
                const int64_t ih = oh * g->sh + i * g->dh - g->pt;
                /* a run of columns along one output row */
                int run = (int)(g->OW - ow);
                if (run > NR - col) run = NR - col;
                if (col + run > nc) run = (int)(nc - col) > 0 ? (int)(nc - col) : 0;
                if (run <= 0) {
                    for (; col < NR; ++col) d[col] = (ELEM)0;
                    break;
                }
                if (ih < 0 || ih >= g->H) {
                    for (int r = 0; r < run; ++r) d[col + r] = (ELEM)0;
                } else {
                    const xelem *row = plane + ih * g->W;
                    const int64_t iw0 = ow * g->sw + j * g->dw - g->pl, sw = g->sw;
                    int r = 0;
                    for (; r < run && iw0 + r * sw < 0; ++r) d[col + r] = (ELEM)0; /* left padding */
                    /* the columns inside the row, XV at a time (stride 2: every other element) */
                    if (sw == 1)
                        for (; r + XV <= run && iw0 + r + XV <= g->W; r += XV) COPY_X(d + col + r, row + iw0 + r);
                    else if (sw == 2)
                        for (; r + XV <= run && iw0 + 2 * (r + XV) <= g->W; r += XV)
                            COPY_X2(d + col + r, row + iw0 + 2 * r);
                    for (; r < run; ++r) {
                        const int64_t iw = iw0 + r * sw;
                        d[col + r] = iw < g->W ? (ELEM)row[iw] : (ELEM)0;
                    }
                }
                col += run;
                ow = 0;
                ++oh;
            }
        }
    }
}
