/* Training kernels: convolution and max-pool backward, ReluGrad, SumToShape,
 * softmax cross-entropy (loss and gradient) and the fused optimizer updates.
 * Generic over `vf`; included by isa_body.h after gemm_impl.h, whose packed
 * GEMM the input gradient of a convolution uses. Fills this ISA's
 * x86_grad_kernels table (x86_grad.h).
 *
 * Stride-1 convolutions (LeNet's, most 3x3/5x5 ones) take the direct path
 * (x86_grad.h x86_direct_geom; "the direct path" below): no im2col, no col2im.
 * The forward is W @ taps(padded x), each tap a contiguous run of the padded
 * input at wide output positions; dw is dot products of wide dy rows with those
 * runs; dx accumulates W_t^T @ wide dy per tap t into padded dx planes. Other
 * strides take the im2col path described next.
 *
 * Convolution backward, per image (the threads take whole images, so no two
 * threads ever write the same dx; dw is summed in a fixed number of parts, each
 * over a fixed run of images, then the parts in order, so it is the same at any
 * thread count):
 *   dw: cols = im2col(x) as rows of the OH*OW output positions; then every
 *       dw[o][r] is a dot product of two contiguous rows, dy[o] . cols[r],
 *       computed GW_TO x GW_TR at a time along the positions (no transposes).
 *   dx: cols = W^T @ dy (K = output channels), then col2im adds each tap's
 *       row back onto dx.
 * The forward convolution of a training step (weights change every step, so
 * nothing is worth packing) is y = W @ cols per image. Both products go through
 * rowgemm: a register-tile GEMM that reads B straight from row-major rows
 * (cols or dy, already contiguous along the output positions) and broadcasts
 * A from any strided matrix, so neither operand is ever repacked. */
#ifndef MNN_X86_GRAD_IMPL_H
#define MNN_X86_GRAD_IMPL_H

#include <stdlib.h>

#include "x86_grad.h"

#if VLEN >= 16 /* AVX-512: 32 registers, 20 accumulators + 4 + 1 loads; LeNet's O = 16 and R = 150 tile exactly */
#define GW_TO 4 /* dy rows per dot tile */
#define GW_TR 5 /* im2col rows per dot tile */
#else
#define GW_TO 3 /* dy rows per dot tile */
#define GW_TR 4 /* im2col rows per dot tile: 12 accumulators + 4 loads in 16 registers */
#endif
#define GRAD_PARALLEL_MIN 65536
/* element-wise and 2x2-pooling passes run a few float per ns on one core: below this many elements
 * (about 50 us of work) a parallel loop does not pay for itself where it counts, on a machine whose
 * cores are shared */
#define GRAD_PARALLEL_MIN_STREAM (1 << 20)
/* the weight gradient's partial sums: at most this many, whatever the thread count (determinism) */
#define GRAD_DW_PARTS 8
#define GRAD_DW_PARTS_FLOATS (1 << 22) /* and at most this many floats for them all */

/* The loops run on the inference pool (op_threadpool.c, x86_parallel), each as a context struct and a
 * task: items are claimed one at a time and the caller waits only for items a worker took. An OpenMP
 * region ends in a barrier that waits for every thread of its team, scheduled or not: with one busy
 * process per core, a LeNet epoch took 2.6x longer at 2 threads than at 1 (benchmarks/RESULTS.md). */

/* The range [lo, hi) of output columns ow whose input column ow*s + x0 lies in [0, W). */
static inline void FN(valid_cols)(int64_t x0, int64_t s, int64_t W, int64_t OW, int64_t *lo, int64_t *hi) {
    int64_t a = x0 >= 0 ? 0 : (-x0 + s - 1) / s;
    int64_t b = W - 1 - x0 < 0 ? 0 : (W - 1 - x0) / s + 1;
    if (b > OW) b = OW;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* cols[(c*kh + i)*kw + j][oh*OW + ow] = x[c][oh*sh - pt + i*dh][ow*sw - pl + j*dw] (0 outside).
 * The rows are short (LeNet: 10 or 28 floats), so a library memcpy per row would
 * cost more than the copy: with stride 1 a row goes as whole vectors, the last
 * one spilling past the row's end (it is written over by the next row, or lands
 * in the GRAD_SLACK floats after cols) while the read stays inside this image. */
static void FN(im2col_image)(const float *x, const x86_conv_geom *g, int64_t C, float *cols) {
    const int64_t P = g->OH * g->OW, OW = g->OW;
    const float *x_end = x + C * g->H * g->W;
    for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) {
                float *row = cols + ((c * g->kh + i) * g->kw + j) * P;
                const int64_t x0 = j * g->dw - g->pl;
                int64_t lo, hi;
                FN(valid_cols)(x0, g->sw, g->W, OW, &lo, &hi);
                const int64_t n = hi - lo, whole = (n + VLEN - 1) / VLEN * VLEN;
                for (int64_t oh = 0; oh < g->OH; ++oh) {
                    float *dst = row + oh * OW;
                    const int64_t ih = oh * g->sh - g->pt + i * g->dh;
                    if (ih < 0 || ih >= g->H) {
                        for (int64_t ow = 0; ow < OW; ++ow) dst[ow] = 0.0f;
                        continue;
                    }
                    const float *src = x + (c * g->H + ih) * g->W + x0;
                    for (int64_t ow = 0; ow < lo; ++ow) dst[ow] = 0.0f;
                    if (g->sw == 1) {
                        if (src + lo + whole <= x_end) {
                            for (int64_t k = 0; k < n; k += VLEN) vf_store(dst + lo + k, vf_load(src + lo + k));
                        } else {
                            FN(copy_n)(dst + lo, src + lo, n);
                        }
                    } else {
                        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * g->sw];
                    }
                    for (int64_t ow = hi; ow < OW; ++ow) dst[ow] = 0.0f;
                }
            }
}

/* The adjoint of im2col_image: dx[c][ih][iw] += cols[row][position] (dx not cleared here) */
static void FN(col2im_rows)(const float *cols, const x86_conv_geom *g, int64_t C, float *dx) {
    const int64_t P = g->OH * g->OW, OW = g->OW;
    for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) {
                const float *row = cols + ((c * g->kh + i) * g->kw + j) * P;
                const int64_t x0 = j * g->dw - g->pl;
                int64_t lo, hi;
                FN(valid_cols)(x0, g->sw, g->W, OW, &lo, &hi);
                for (int64_t oh = 0; oh < g->OH; ++oh) {
                    const int64_t ih = oh * g->sh - g->pt + i * g->dh;
                    if (ih < 0 || ih >= g->H) continue;
                    const float *src = row + oh * OW;
                    float *dst = dx + (c * g->H + ih) * g->W + x0;
                    if (g->sw == 1) {
                        int64_t ow = lo;
                        for (; ow + VLEN <= hi; ow += VLEN) vf_store(dst + ow, vf_add(vf_load(dst + ow), vf_load(src + ow)));
                        for (; ow < hi; ++ow) dst[ow] += src[ow];
                    } else {
                        for (int64_t ow = lo; ow < hi; ++ow) dst[ow * g->sw] += src[ow];
                    }
                }
            }
}

/* out[i][j] = sum over images m < nimg of (a[i] + m*as) . (b[j] + m*bs), n floats each:
 * the products of several images summed in registers, then one horizontal sum */
static inline __attribute__((always_inline)) void FN(dot_tile)(const float *const *a, const float *const *b, int64_t n,
                                                               int64_t nimg, int64_t as, int64_t bs,
                                                               float out[GW_TO][GW_TR]) {
    vf acc[GW_TO][GW_TR];
    for (int i = 0; i < GW_TO; ++i)
        for (int j = 0; j < GW_TR; ++j) acc[i][j] = vf_zero();
    for (int64_t m = 0; m < nimg; ++m) {
        int64_t p = 0;
        for (; p + VLEN <= n; p += VLEN) {
            vf va[GW_TO];
            for (int i = 0; i < GW_TO; ++i) va[i] = vf_load(a[i] + m * as + p);
            for (int j = 0; j < GW_TR; ++j) {
                const vf vb = vf_load(b[j] + m * bs + p);
                for (int i = 0; i < GW_TO; ++i) acc[i][j] = vf_fma(va[i], vb, acc[i][j]);
            }
        }
        if (p < n) {
            const int r = (int)(n - p);
            vf va[GW_TO];
            for (int i = 0; i < GW_TO; ++i) va[i] = vf_load_n(a[i] + m * as + p, r);
            for (int j = 0; j < GW_TR; ++j) {
                const vf vb = vf_load_n(b[j] + m * bs + p, r);
                for (int i = 0; i < GW_TO; ++i) acc[i][j] = vf_fma(va[i], vb, acc[i][j]);
            }
        }
    }
    for (int i = 0; i < GW_TO; ++i)
        for (int j = 0; j < GW_TR; ++j) out[i][j] = vf_hsum(acc[i][j]);
}

static inline float FN(sum_n)(const float *x, int64_t n) {
    vf acc = vf_zero();
    int64_t p = 0;
    for (; p + VLEN <= n; p += VLEN) acc = vf_add(acc, vf_load(x + p));
    if (p < n) acc = vf_add(acc, vf_load_n(x + p, (int)(n - p)));
    return vf_hsum(acc);
}

/* -- rowgemm: C = act(A @ B + bias), B row-major and unpacked ------------------------------------ */

#if VLEN >= 16 /* AVX-512: 32 registers; LeNet's 16 output channels are two full tiles */
#define RG_MR 8 /* rows of C per register tile */
#else
#define RG_MR 6 /* rows of C per register tile: 12 accumulators + 2 B vectors + 1 broadcast */
#endif
#define RG_NV 2 /* vectors of C per row */
#define RG_NR (RG_NV * VLEN)

/* one tile: `rows` (<= RG_MR) rows, `cols` (<= nv * VLEN) columns, nv <= RG_NV vectors per row (a narrow
 * tail takes nv = 1, so it costs half a tile);
 * A(m, k) = a[m*ars + k*acs], B(k, n) = b[k*ldb + n] */
static inline __attribute__((always_inline)) void FN(rg_tile)(const int rows, const int nv, const float *a,
                                                              int64_t ars, int64_t acs, const float *b, int64_t ldb,
                                                              int64_t K, float *c, int64_t ldc, int cols,
                                                              const float *bias, int relu) {
    vf acc[RG_MR][RG_NV];
    for (int r = 0; r < RG_MR; ++r)
        for (int v = 0; v < RG_NV; ++v) acc[r][v] = vf_zero();
    if (cols >= nv * VLEN) {
        for (int64_t k = 0; k < K; ++k) {
            vf bv[RG_NV];
            for (int v = 0; v < nv; ++v) bv[v] = vf_load(b + k * ldb + v * VLEN);
            for (int r = 0; r < rows; ++r) {
                const vf av = vf_set1(a[r * ars + k * acs]);
                for (int v = 0; v < nv; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);
            }
        }
    } else {
        for (int64_t k = 0; k < K; ++k) {
            vf bv[RG_NV];
            for (int v = 0; v < nv; ++v) bv[v] = v * VLEN < cols ? vf_load_n(b + k * ldb + v * VLEN, cols - v * VLEN)
                                                                 : vf_zero();
            for (int r = 0; r < rows; ++r) {
                const vf av = vf_set1(a[r * ars + k * acs]);
                for (int v = 0; v < nv; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);
            }
        }
    }
    for (int r = 0; r < rows; ++r) {
        const vf bb = bias ? vf_set1(bias[r]) : vf_zero();
        for (int v = 0; v < nv && v * VLEN < cols; ++v) {
            vf o = vf_add(acc[r][v], bb);
            if (relu) o = vf_relu(o);
            if (cols >= (v + 1) * VLEN) vf_store(c + r * ldc + v * VLEN, o);
            else vf_store_n(c + r * ldc + v * VLEN, o, cols - v * VLEN);
        }
    }
}

/* a constant row count and vector count per call, so the tile's loops unroll */
#define RG_ROWS(NV)                                                                                              \
    switch (rows) {                                                                                              \
    RG_CASES(NV)                                                                                                 \
    default: FN(rg_tile)(1, NV, am, ars, acs, b + n0, ldb, K, cm, ldc, cols, bm, relu); break;                    \
    }
#define RG_CASE(R, NV) \
    case R: FN(rg_tile)(R, NV, am, ars, acs, b + n0, ldb, K, cm, ldc, cols, bm, relu); break;
#if RG_MR == 8
#define RG_CASES(NV) \
    RG_CASE(8, NV) RG_CASE(7, NV) RG_CASE(6, NV) RG_CASE(5, NV) RG_CASE(4, NV) RG_CASE(3, NV) RG_CASE(2, NV)
#else
#define RG_CASES(NV) RG_CASE(6, NV) RG_CASE(5, NV) RG_CASE(4, NV) RG_CASE(3, NV) RG_CASE(2, NV)
#endif

static void FN(rowgemm)(int64_t M, int64_t N, int64_t K, const float *a, int64_t ars, int64_t acs, const float *b,
                        int64_t ldb, float *c, int64_t ldc, const float *bias, int relu) {
    for (int64_t m0 = 0; m0 < M; m0 += RG_MR) {
        const int rows = (int)(M - m0 < RG_MR ? M - m0 : RG_MR);
        const float *am = a + m0 * ars, *bm = bias ? bias + m0 : NULL;
        for (int64_t n0 = 0; n0 < N; n0 += RG_NR) {
            const int cols = (int)(N - n0 < RG_NR ? N - n0 : RG_NR);
            float *cm = c + m0 * ldc + n0;
            if (cols > VLEN) {
                RG_ROWS(RG_NV)
            } else {
                RG_ROWS(1)
            }
        }
    }
}
#undef RG_ROWS
#undef RG_CASE
#undef RG_CASES

/* -- the direct path of stride-1 convolutions (x86_grad.h: x86_direct_geom) ----------------------- */

#if VLEN >= 16 /* AVX-512, 32 registers: 8 rows x 3 vectors or up to 6 rows x 4 vectors (24 accumulators) */
#define DC_MR 8
#define DC_NV 3
#define DC_NV_SHORT 4 /* vectors per row when M <= DC_MR_SHORT */
#define DC_MR_SHORT 6
#else /* AVX2 (16 registers) and scalar: 6 rows x 2 vectors */
#define DC_MR 6
#define DC_NV 2
#define DC_NV_SHORT 2
#define DC_MR_SHORT 6
#endif

/* C(r, n) (+)= sum_k A(r, k) * B_k[n] for `rows` rows and nv whole vectors of columns, where
 * A(r, k) = a[r*ars + k*acs] and B_k = b + boff[k]: the B rows are runs at any offsets (the taps
 * of a padded input, or the rows of a wide dy). accum: start from C instead of zero.
 * Two instances, each with its accumulator array exactly as large as its tile: a larger array
 * (one for both shapes) is more than GCC scalarizes, and it then stores the accumulators to
 * the stack at every k. */
#define DC_TILE(NAME, MRMAX, NVMAX)                                                                               \
static inline __attribute__((always_inline)) void FN(NAME)(const int rows, const int nv, const float *a,          \
                                                          int64_t ars, int64_t acs, const float *b,               \
                                                          const int64_t *boff, int64_t K, float *c, int64_t ldc,  \
                                                          const float *bias, int relu, int accum) {               \
    vf acc[MRMAX][NVMAX];                                                                                         \
    for (int r = 0; r < rows; ++r)                                                                                \
        for (int v = 0; v < nv; ++v) acc[r][v] = accum ? vf_load(c + r * ldc + v * VLEN) : vf_zero();             \
    for (int64_t k = 0; k < K; ++k) {                                                                             \
        const float *bk = b + boff[k];                                                                            \
        vf bv[NVMAX];                                                                                             \
        for (int v = 0; v < nv; ++v) bv[v] = vf_load(bk + v * VLEN);                                              \
        for (int r = 0; r < rows; ++r) {                                                                          \
            const vf av = vf_set1(a[r * ars + k * acs]);                                                          \
            for (int v = 0; v < nv; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);                                \
        }                                                                                                         \
    }                                                                                                             \
    for (int r = 0; r < rows; ++r) {                                                                              \
        const vf bb = bias ? vf_set1(bias[r]) : vf_zero();                                                        \
        for (int v = 0; v < nv; ++v) {                                                                            \
            vf o = vf_add(acc[r][v], bb);                                                                         \
            if (relu) o = vf_relu(o);                                                                   \
            vf_store(c + r * ldc + v * VLEN, o);                                                                  \
        }                                                                                                         \
    }                                                                                                             \
}
DC_TILE(dc_tile_wide, DC_MR, DC_NV)
DC_TILE(dc_tile_short, DC_MR_SHORT, DC_NV_SHORT)
#undef DC_TILE

#define DC_CALL(T, R, NV) FN(T)(R, NV, am, ars, acs, b + n0, boff, K, cm, ldc, bm, relu, accum)
#define DC_NV3(T, R)                                                                                            \
    switch (nvt) {                                                                                              \
    case 1: DC_CALL(T, R, 1); break;                                                                            \
    case 2: DC_CALL(T, R, 2); break;                                                                            \
    default: DC_CALL(T, R, 3); break;                                                                           \
    }
#define DC_NV4(T, R)                                                                                            \
    switch (nvt) {                                                                                              \
    case 1: DC_CALL(T, R, 1); break;                                                                            \
    case 2: DC_CALL(T, R, 2); break;                                                                            \
    case 3: DC_CALL(T, R, 3); break;                                                                            \
    default: DC_CALL(T, R, 4); break;                                                                           \
    }
#if DC_NV_SHORT == 4
#define DC_SHORT(R) DC_NV4(dc_tile_short, R)
#else
#define DC_SHORT(R) DC_NV2(dc_tile_short, R)
#endif
#if DC_NV == 3
#define DC_WIDE(R) DC_NV3(dc_tile_wide, R)
#else
#define DC_WIDE(R) DC_NV2(dc_tile_wide, R)
#endif
#define DC_NV2(T, R)                                                                                            \
    switch (nvt) {                                                                                              \
    case 1: DC_CALL(T, R, 1); break;                                                                            \
    default: DC_CALL(T, R, 2); break;                                                                           \
    }

/* C = act(A @ B + bias) (accum: C += A @ B) over M rows and N columns (a multiple of VLEN: the wide
 * rows are padded to x86_direct_geom.Pr), B_k = b + boff[k]: up to
 * DC_MR_SHORT rows as one block of short, broad tiles, more in blocks of DC_MR rows */
static void FN(dc_gemm)(int64_t M, int64_t N, int64_t K, const float *a, int64_t ars, int64_t acs, const float *b,
                        const int64_t *boff, float *c, int64_t ldc, const float *bias, int relu, int accum) {
    const int is_short = M <= DC_MR_SHORT;
    const int64_t mr = is_short ? M : DC_MR, nvmax = is_short ? DC_NV_SHORT : DC_NV;
    /* the row's vectors spread evenly over the fewest tiles (9 vectors: 3+3+3, not 4+4+1, whose last
     * tile would load a broadcast per FMA) */
    const int64_t nvec = N / VLEN, tiles = (nvec + nvmax - 1) / nvmax;
    for (int64_t m0 = 0; m0 < M; m0 += mr) {
        const int rows = (int)(M - m0 < mr ? M - m0 : mr);
        const float *am = a + m0 * ars, *bm = bias ? bias + m0 : NULL;
        float *crow = c + m0 * ldc;
        for (int64_t t = 0, n0 = 0; t < tiles; ++t) {
            const int nvt = (int)(nvec / tiles + (t < nvec % tiles ? 1 : 0));
            float *cm = crow + n0;
            if (is_short) {
                switch (rows) {
                case 1: DC_SHORT(1) break;
                case 2: DC_SHORT(2) break;
                case 3: DC_SHORT(3) break;
                case 4: DC_SHORT(4) break;
                case 5: DC_SHORT(5) break;
                default: DC_SHORT(DC_MR_SHORT) break;
                }
            } else {
                switch (rows) {
                case 1: DC_WIDE(1) break;
                case 2: DC_WIDE(2) break;
                case 3: DC_WIDE(3) break;
                case 4: DC_WIDE(4) break;
                case 5: DC_WIDE(5) break;
#if DC_MR > 6
                case 6: DC_WIDE(6) break;
                case 7: DC_WIDE(7) break;
#endif
                default: DC_WIDE(DC_MR) break;
                }
            }
            n0 += nvt * VLEN;
        }
    }
}
#undef DC_CALL
#undef DC_NV2
#undef DC_NV3
#undef DC_NV4
#undef DC_SHORT
#undef DC_WIDE

/* the padded input planes of one image (C channels) and the zeroed slack after them. A row is
 * written as whole (masked) vectors: lanes past the input's cw columns load as zeros. */
static void FN(pad_image)(const float *x, const x86_conv_geom *g, const x86_direct_geom *d, int64_t C, float *xp) {
    const int64_t cw = g->W < d->Wp - g->pl ? g->W : d->Wp - g->pl; /* input columns inside the plane */
    const int64_t right = d->Wp - g->pl;                            /* floats from the first input column on */
    for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < d->Hp; ++r) {
            float *dst = xp + c * d->plane + r * d->Wp;
            const int64_t ih = r - g->pt;
            if (ih < 0 || ih >= g->H || cw <= 0) {
                memset(dst, 0, (size_t)d->Wp * sizeof(float));
                continue;
            }
            const float *src = x + (c * g->H + ih) * g->W;
            for (int64_t k = 0; k < g->pl; ++k) dst[k] = 0.0f;
            for (int64_t k = 0; k < right; k += VLEN) {
                const int64_t left = cw - k;
                vf_store_n(dst + g->pl + k, vf_load_n(src + k, left < 0 ? 0 : left > VLEN ? VLEN : (int)left),
                           right - k < VLEN ? (int)(right - k) : VLEN);
            }
        }
    memset(xp + C * d->plane, 0, (size_t)d->slack * sizeof(float));
}

/* rows [n][OH][OW] -> wide rows [n][Pr], the junk columns (and the row's end past OH*Wp) zero; whole
 * (masked) vectors, lanes past OW loading as zeros */
static void FN(widen_rows)(const float *y, int64_t n, const x86_conv_geom *g, const x86_direct_geom *d, float *yw) {
    for (int64_t o = 0; o < n; ++o) {
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            float *dst = yw + o * d->Pr + oh * d->Wp;
            const float *src = y + (o * g->OH + oh) * g->OW;
            for (int64_t k = 0; k < d->Wp; k += VLEN) {
                const int64_t left = g->OW - k;
                vf_store_n(dst + k, vf_load_n(src + k, left < 0 ? 0 : left > VLEN ? VLEN : (int)left),
                           d->Wp - k < VLEN ? (int)(d->Wp - k) : VLEN);
            }
        }
        for (int64_t k = d->Pw; k < d->Pr; ++k) yw[o * d->Pr + k] = 0.0f;
    }
}

/* boff[(c*kh + i)*kw + j] = c*plane + i*dh*Wp + j*dw: where tap (i, j) of channel c starts */
static void FN(conv_tap_offsets)(const x86_conv_geom *g, const x86_direct_geom *d, int64_t C, int64_t *boff) {
    for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) boff[(c * g->kh + i) * g->kw + j] = c * d->plane + i * g->dh * d->Wp + j * g->dw;
}

/* forward, one image: y_g = act(W_g @ taps(xpad_g) + b_g) in wide positions, then the OW real columns of each row */
static void FN(conv_forward_direct_image)(const float *x, const float *w, const float *bias, float *y,
                                          const x86_convgrad_geom *cg, int relu, float *work) {
    const x86_conv_geom *g = &cg->g;
    const x86_direct_geom d = x86_direct_geometry(cg);
    const int64_t R = g->C * g->kh * g->kw, og = cg->O / cg->group, P = g->OH * g->OW;
    int64_t *boff = (int64_t *)work;
    float *xp = work + x86_direct_offsets_floats(cg), *yw = xp + x86_direct_padded_floats(cg);
    FN(conv_tap_offsets)(g, &d, g->C, boff);
    FN(pad_image)(x, g, &d, g->C * cg->group, xp);
    for (int64_t gi = 0; gi < cg->group; ++gi) {
        FN(dc_gemm)(og, d.Pr, R, w + gi * og * R, R, 1, xp + gi * g->C * d.plane, boff, yw, d.Pr,
                    bias ? bias + gi * og : NULL, relu, 0);
        for (int64_t o = 0; o < og; ++o)
            for (int64_t oh = 0; oh < g->OH; ++oh)
                FN(copy_n)(y + (gi * og + o) * P + oh * g->OW, yw + o * d.Pr + oh * d.Wp, g->OW);
    }
}

/* dx of one image: per group and tap t, dxpad_g[p + toff[t]] += W_g[:, :, t]^T @ dywide_g[p] (K = the
 * group's output channels), then the real part of the padded planes. Whole passes over p per tap, so a tap's
 * read-modify-write never directly follows the previous tap's store to the overlapping floats. */
static void FN(conv_grad_input_direct_image)(const float *dy, const float *w, float *dx, const x86_convgrad_geom *cg,
                                             float *work) {
    const x86_conv_geom *g = &cg->g;
    const x86_direct_geom d = x86_direct_geometry(cg);
    const int64_t R = g->C * g->kh * g->kw, og = cg->O / cg->group, taps = g->kh * g->kw, C = g->C * cg->group;
    int64_t *ooff = (int64_t *)work, *toff = ooff + og;
    float *dxp = work + x86_direct_offsets_floats(cg), *dyw = dxp + x86_direct_padded_floats(cg);
    for (int64_t o = 0; o < og; ++o) ooff[o] = o * d.Pr;
    for (int64_t t = 0; t < taps; ++t) toff[t] = (t / g->kw) * g->dh * d.Wp + (t % g->kw) * g->dw;
    memset(dxp, 0, (size_t)x86_direct_padded_floats(cg) * sizeof(float));
    FN(widen_rows)(dy, cg->O, g, &d, dyw);
    for (int64_t gi = 0; gi < cg->group; ++gi)
        for (int64_t t = 0; t < taps; ++t) /* A(c, o) = w[gi*og + o][c][t] */
            FN(dc_gemm)(g->C, d.Pr, og, w + gi * og * R + t, taps, R, dyw + gi * og * d.Pr, ooff,
                        dxp + gi * g->C * d.plane + toff[t], d.plane, NULL, 0, 1);
    const int64_t rows = g->H < d.Hp - g->pt ? g->H : d.Hp - g->pt, cw = g->W < d.Wp - g->pl ? g->W : d.Wp - g->pl;
    for (int64_t c = 0; c < C; ++c)
        for (int64_t ih = 0; ih < g->H; ++ih) {
            float *dst = dx + (c * g->H + ih) * g->W;
            int64_t iw = 0;
            if (ih < rows && cw > 0) {
                FN(copy_n)(dst, dxp + c * d.plane + (ih + g->pt) * d.Wp + g->pl, cw);
                iw = cw;
            }
            for (; iw < g->W; ++iw) dst[iw] = 0.0f; /* inputs no window reads */
        }
}

/* dw and db of nimg consecutive images (direct): per image its padded input and its wide dy (junk columns zero,
 * so they add nothing), then dw[o][c,i,j] = sum over images and wide positions of dyw[o][p] * xpad[c][p + off] */
static void FN(conv_grad_weight_direct_block)(const float *dy, const float *x, int64_t nimg,
                                              const x86_convgrad_geom *cg, float *work, float *dw_acc,
                                              float *db_acc) {
    const x86_conv_geom *g = &cg->g;
    const x86_direct_geom d = x86_direct_geometry(cg);
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group, C = g->C * cg->group;
    const int64_t pad_floats = x86_direct_padded_floats(cg), img = pad_floats + x86_direct_wide_floats(cg);
    const int64_t x_image = C * g->H * g->W, dy_image = cg->O * P;
    int64_t *boff = (int64_t *)work;
    float *base = work + x86_direct_offsets_floats(cg);
    FN(conv_tap_offsets)(g, &d, g->C, boff);
    for (int64_t m = 0; m < nimg; ++m) {
        FN(pad_image)(x + m * x_image, g, &d, C, base + m * img);
        FN(widen_rows)(dy + m * dy_image, cg->O, g, &d, base + m * img + pad_floats);
    }
    for (int64_t gi = 0; gi < cg->group; ++gi) {
        const float *xg = base + gi * g->C * d.plane, *dyg = base + pad_floats + gi * og * d.Pr;
        for (int64_t r0 = 0; r0 < R; r0 += GW_TR) {
            const float *b[GW_TR];
            for (int j = 0; j < GW_TR; ++j) b[j] = xg + boff[r0 + j < R ? r0 + j : R - 1];
            for (int64_t o0 = 0; o0 < og; o0 += GW_TO) {
                const float *a[GW_TO];
                for (int i = 0; i < GW_TO; ++i) a[i] = dyg + (o0 + i < og ? o0 + i : og - 1) * d.Pr;
                float out[GW_TO][GW_TR];
                FN(dot_tile)(a, b, d.Pr, nimg, img, img, out);
                for (int i = 0; i < GW_TO && o0 + i < og; ++i)
                    for (int j = 0; j < GW_TR && r0 + j < R; ++j) dw_acc[(gi * og + o0 + i) * R + r0 + j] += out[i][j];
            }
        }
    }
    if (db_acc)
        for (int64_t m = 0; m < nimg; ++m)
            for (int64_t o = 0; o < cg->O; ++o) db_acc[o] += FN(sum_n)(dy + m * dy_image + o * P, P);
}

/* the convolution loops' context: one image an item, `work` per_thread floats a worker */
typedef struct {
    const float *x, *w, *bias, *dy;
    float *y, *dx, *work;
    const x86_convgrad_geom *cg;
    int64_t per_thread;
    int relu, direct;
} grad_conv_loop;

static void FN(conv_forward_task)(void *ctx, int64_t n, int worker) {
    const grad_conv_loop *c = (const grad_conv_loop *)ctx;
    const x86_convgrad_geom *cg = c->cg;
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group;
    const int64_t x_image = g->C * cg->group * g->H * g->W, y_image = cg->O * P;
    float *work = c->work + worker * c->per_thread, *y = c->y + n * y_image;
    if (c->direct) {
        FN(conv_forward_direct_image)(c->x + n * x_image, c->w, c->bias, y, cg, c->relu, work);
        return;
    }
    FN(im2col_image)(c->x + n * x_image, g, g->C * cg->group, work);
    for (int64_t gi = 0; gi < cg->group; ++gi)
        FN(rowgemm)(og, P, R, c->w + gi * og * R, R, 1, work + gi * R * P, P, y + gi * og * P, P,
                    c->bias ? c->bias + gi * og : NULL, c->relu);
}

/* forward convolution of a training step: per image, cols = im2col(x), y_g = act(W_g @ cols_g + b_g) */
static void FN(conv_forward)(const float *x, const float *w, const float *bias, float *y, const x86_convgrad_geom *cg,
                             int relu, float *work, int threads) {
    grad_conv_loop c = {x, w, bias, NULL, y, NULL, work, cg, x86_conv_forward_work_floats(cg), relu, x86_conv_direct(cg)};
    x86_parallel(threads, cg->N, FN(conv_forward_task), &c);
}

/* dw and db of nimg consecutive images, added into dw_acc [O][R] and db_acc [O]; cols holds
 * the im2col of each image (x86_conv_grad_weight_block images fit) */
static void FN(conv_grad_weight_block)(const float *dy, const float *x, int64_t nimg, const x86_convgrad_geom *cg,
                                       float *cols, float *dw_acc, float *db_acc) {
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group;
    const int64_t col_image = R * cg->group * P, x_image = g->C * cg->group * g->H * g->W, dy_image = cg->O * P;
    for (int64_t m = 0; m < nimg; ++m) FN(im2col_image)(x + m * x_image, g, g->C * cg->group, cols + m * col_image);
    for (int64_t gi = 0; gi < cg->group; ++gi) {
        const float *dyg = dy + gi * og * P, *colg = cols + gi * R * P;
        /* im2col rows outside, dy rows inside: a tile's GW_TR im2col rows (of every image in the block) stay in
         * L1 while all of dy's rows pass over them, and dy (O rows of the block's images) is small enough to stay
         * there too; the other order streamed the whole im2col block from L2 once per dy tile */
        for (int64_t r0 = 0; r0 < R; r0 += GW_TR) {
            const float *b[GW_TR];
            for (int j = 0; j < GW_TR; ++j) b[j] = colg + (r0 + j < R ? r0 + j : R - 1) * P;
            for (int64_t o0 = 0; o0 < og; o0 += GW_TO) {
                const float *a[GW_TO];
                for (int i = 0; i < GW_TO; ++i) a[i] = dyg + (o0 + i < og ? o0 + i : og - 1) * P;
                float out[GW_TO][GW_TR];
                FN(dot_tile)(a, b, P, nimg, dy_image, col_image, out);
                for (int i = 0; i < GW_TO && o0 + i < og; ++i)
                    for (int j = 0; j < GW_TR && r0 + j < R; ++j) dw_acc[(gi * og + o0 + i) * R + r0 + j] += out[i][j];
            }
        }
    }
    if (db_acc)
        for (int64_t m = 0; m < nimg; ++m)
            for (int64_t o = 0; o < cg->O; ++o) db_acc[o] += FN(sum_n)(dy + m * dy_image + o * P, P);
}

/* the weight gradient's loop: part p sums the blocks [blocks*p/parts, blocks*(p+1)/parts) into acc + p*stride
 * ([O][R] then [O]), with a worker's cols at work + worker*per_thread */
typedef struct {
    const float *dy, *x;
    const x86_convgrad_geom *cg;
    float *work, *acc;
    int64_t per_thread, block, blocks, parts, stride;
    int db;
} grad_dw_loop;

static void FN(conv_grad_weight_part)(void *ctx, int64_t p, int worker) {
    const grad_dw_loop *c = (const grad_dw_loop *)ctx;
    const x86_convgrad_geom *cg = c->cg;
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, O = cg->O;
    const int64_t x_image = g->C * cg->group * g->H * g->W, dy_image = O * P;
    void (*block_fn)(const float *, const float *, int64_t, const x86_convgrad_geom *, float *, float *, float *) =
        x86_conv_direct(cg) ? FN(conv_grad_weight_direct_block) : FN(conv_grad_weight_block);
    float *acc = c->acc + p * c->stride;
    memset(acc, 0, (size_t)(O * R + O) * sizeof(float));
    for (int64_t bi = c->blocks * p / c->parts; bi < c->blocks * (p + 1) / c->parts; ++bi) {
        const int64_t n = bi * c->block;
        block_fn(c->dy + n * dy_image, c->x + n * x_image, cg->N - n < c->block ? cg->N - n : c->block, cg,
                 c->work + worker * c->per_thread, acc, c->db ? acc + O * R : NULL);
    }
}

/* dw (and db) as the sum of parts in order, part 0 first: the same floats at any thread count. One thread
 * sums each part in its own scratch's accumulator as it goes; several hold all parts at once */
static void FN(conv_grad_weight)(const float *dy, const float *x, float *dw, float *db, const x86_convgrad_geom *cg,
                                 float *work, int threads) {
    const int64_t R = cg->g.C * cg->g.kh * cg->g.kw, O = cg->O, block = x86_conv_grad_weight_block(cg);
    const int64_t blocks = (cg->N + block - 1) / block, stride = x86_grad_round16(O * R + O);
    int64_t parts = blocks < 1 ? 1 : blocks < GRAD_DW_PARTS ? blocks : GRAD_DW_PARTS;
    while (parts > 1 && parts * stride > GRAD_DW_PARTS_FLOATS) --parts;
    grad_dw_loop c = {dy, x, cg, work, NULL, x86_conv_grad_weight_work_floats(cg), block, blocks, parts, 0, db != NULL};
    float *acc = NULL;
    if (threads > 1 && parts > 1 && posix_memalign((void **)&acc, 64, (size_t)(parts * stride) * sizeof(float)))
        acc = NULL;
    if (acc == NULL) { /* one thread */
        c.acc = work + x86_conv_grad_weight_cols_floats(cg);
        for (int64_t p = 0; p < parts; ++p) {
            FN(conv_grad_weight_part)(&c, p, 0);
            for (int64_t e = 0; e < O * R; ++e) dw[e] = p ? dw[e] + c.acc[e] : c.acc[e];
            for (int64_t o = 0; db && o < O; ++o) db[o] = p ? db[o] + c.acc[O * R + o] : c.acc[O * R + o];
        }
        return;
    }
    c.acc = acc;
    c.stride = stride;
    x86_parallel(threads, parts, FN(conv_grad_weight_part), &c);
    for (int64_t e = 0; e < O * R + O; ++e) {
        float s = acc[e];
        for (int64_t p = 1; p < parts; ++p) s += acc[p * stride + e];
        if (e < O * R) dw[e] = s;
        else if (db) db[e - O * R] = s;
    }
    free(acc);
}

/* one image's dx: per group, cols = W_g^T @ dy_g, then col2im */
static void FN(conv_grad_input_image)(const float *dy, const float *w, float *dx, const x86_convgrad_geom *cg,
                                      float *cols) {
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group;
    memset(dx, 0, (size_t)(g->C * cg->group * g->H * g->W) * sizeof(float));
    for (int64_t gi = 0; gi < cg->group; ++gi) { /* A(r, o) = w[o][r] */
        FN(rowgemm)(R, P, og, w + gi * og * R, 1, R, dy + gi * og * P, P, cols, P, NULL, 0);
        FN(col2im_rows)(cols, g, g->C, dx + gi * g->C * g->H * g->W);
    }
}

static void FN(conv_grad_input_task)(void *ctx, int64_t n, int worker) {
    const grad_conv_loop *c = (const grad_conv_loop *)ctx;
    const x86_conv_geom *g = &c->cg->g;
    const int64_t x_image = g->C * c->cg->group * g->H * g->W, dy_image = c->cg->O * g->OH * g->OW;
    float *work = c->work + worker * c->per_thread;
    if (c->direct) FN(conv_grad_input_direct_image)(c->dy + n * dy_image, c->w, c->dx + n * x_image, c->cg, work);
    else FN(conv_grad_input_image)(c->dy + n * dy_image, c->w, c->dx + n * x_image, c->cg, work);
}

static void FN(conv_grad_input)(const float *dy, const float *w, float *dx, const x86_convgrad_geom *cg, float *work,
                                int threads) {
    grad_conv_loop c = {NULL, w, NULL, dy, NULL, dx, work, cg, x86_conv_grad_input_work_floats(cg), 0,
                        x86_conv_direct(cg)};
    x86_parallel(threads, cg->N, FN(conv_grad_input_task), &c);
}

/* -- Gemm with runtime operands (a training step's fully connected layers) -------------------------- */

/* C [M][N] = act(A @ op(B) + bias[n]), A(m, k) = a[m*ars + k*acs], B [K][N] row-major or, transB, [N][K].
 * Nothing is packed: B's rows are read where they lie. transB: every C(m, n) is a dot product of two
 * contiguous rows (dot_tile, GW_TO rows of A x GW_TR rows of B); else rowgemm broadcasts A and streams
 * B's rows. Threads take blocks of rows of C. */
typedef struct {
    int64_t M, N, K, ars, acs;
    const float *a, *b, *bias;
    float *c;
    int transB, relu;
} grad_gemm_loop;

/* rows [bi*GW_TO, bi*GW_TO + GW_TO) of C, for bi in [lo, hi) */
static void FN(gemm_rt_blocks)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_gemm_loop *g = (const grad_gemm_loop *)ctx;
    const int64_t M = g->M, N = g->N, K = g->K, ars = g->ars, acs = g->acs;
    const float *a = g->a, *b = g->b, *bias = g->bias;
    float *c = g->c;
    (void)worker;
    for (int64_t bi = lo; bi < hi; ++bi) {
        const int64_t m0 = bi * GW_TO, rows = M - m0 < GW_TO ? M - m0 : GW_TO;
        if (g->transB) { /* a's rows contiguous along K (acs == 1): checked by the caller */
            const float *ap[GW_TO];
            for (int i = 0; i < GW_TO; ++i) ap[i] = a + (m0 + (i < rows ? i : rows - 1)) * ars;
            for (int64_t n0 = 0; n0 < N; n0 += GW_TR) {
                const float *bp[GW_TR];
                for (int j = 0; j < GW_TR; ++j) bp[j] = b + (n0 + j < N ? n0 + j : N - 1) * K;
                float out[GW_TO][GW_TR];
                FN(dot_tile)(ap, bp, K, 1, 0, 0, out);
                for (int i = 0; i < rows; ++i)
                    for (int j = 0; j < GW_TR && n0 + j < N; ++j) {
                        const float v = out[i][j] + (bias ? bias[n0 + j] : 0.0f);
                        c[(m0 + i) * N + n0 + j] = g->relu && v < 0.0f ? 0.0f : v; /* NaN stays */
                    }
            }
        } else {
            FN(rowgemm)(rows, N, K, a + m0 * ars, ars, acs, b, N, c + m0 * N, N, NULL, 0);
            if (bias || g->relu)
                for (int64_t i = m0; i < m0 + rows; ++i)
                    for (int64_t n = 0; n < N; ++n) {
                        const float v = c[i * N + n] + (bias ? bias[n] : 0.0f);
                        c[i * N + n] = g->relu && v < 0.0f ? 0.0f : v;
                    }
        }
    }
}

static void FN(gemm_rt)(int64_t M, int64_t N, int64_t K, const float *a, int64_t ars, int64_t acs, const float *b,
                        int transB, const float *bias, int relu, float *c, int threads) {
    const int64_t blocks = (M + GW_TO - 1) / GW_TO;
    grad_gemm_loop g = {M, N, K, ars, acs, a, b, bias, c, transB, relu};
    x86_parallel_ranges(M * N * K >= 16 * GRAD_PARALLEL_MIN_STREAM ? threads : 1, blocks, 1, FN(gemm_rt_blocks), &g);
}

/* -- pooling ------------------------------------------------------------------------------ */

/* window (oh, ow) of a plane: its first maximum's position in the plane, or -1 (tap 0 in the padding) */
static inline int64_t FN(max_pool_arg)(const float *x, const x86_pool_geom *g, int64_t oh, int64_t ow) {
    const int64_t h0 = oh * g->sh - g->pt, w0 = ow * g->sw - g->pl;
    int64_t bh = h0, bw = w0; /* tap 0 when nothing beats -inf (all -inf or NaN), as in the reference */
    float best = -INFINITY;
    for (int64_t i = 0; i < g->kh; ++i) {
        const int64_t ih = h0 + i * g->dh;
        if (ih < 0 || ih >= g->H) continue;
        for (int64_t j = 0; j < g->kw; ++j) {
            const int64_t iw = w0 + j * g->dw;
            if (iw < 0 || iw >= g->W) continue;
            const float v = x[ih * g->W + iw];
            if (v > best) {
                best = v;
                bh = ih;
                bw = iw;
            }
        }
    }
    return bh >= 0 && bh < g->H && bw >= 0 && bw < g->W ? bh * g->W + bw : -1;
}

#define POOL_MAX_TAPS 64

/* dx of one plane. Windows inside the plane go without bounds checks: VLEN at a
 * time where a whole vector fits (the winning tap of each lane found with vector
 * compares and selects), one at a time with branch-free selects elsewhere; the
 * strict > keeps each window's first maximum, as the reference does. Windows
 * touching the padding take the checked path. off[t] is tap t's offset. */
static void FN(max_pool_grad_plane)(const float *dy, const float *x, float *dx, const x86_pool_geom *g,
                                    const int64_t *off) {
    memset(dx, 0, (size_t)(g->H * g->W) * sizeof(float));
    const int64_t taps = g->kh * g->kw, s = g->sw, W = g->W;
    /* output columns [c0, c1) have windows inside the row */
    const int64_t c0 = g->pl > 0 ? (g->pl + s - 1) / s : 0;
    int64_t c1 = W - 1 - (g->kw - 1) * g->dw + g->pl < 0 ? 0 : (W - 1 - (g->kw - 1) * g->dw + g->pl) / s + 1;
    if (c1 > g->OW) c1 = g->OW;
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        const int64_t h0 = oh * g->sh - g->pt;
        const float *dyr = dy + oh * g->OW;
        const int inside = h0 >= 0 && h0 + (g->kh - 1) * g->dh < g->H;
        int64_t ow = 0;
        if (inside) {
            for (; ow < c0; ++ow) {
                const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
                if (at >= 0) dx[at] += dyr[ow];
            }
            const float *xr = x + h0 * W - g->pl;
            float *dxr = dx + h0 * W - g->pl;
#if VLEN > 1
            /* a vector of windows from ow reads, per tap, up to `reach` floats from ow*s: vf_load_stride
             * takes up to VLEN * max(s, 2) floats, which must stay inside the row */
            const int64_t reach = (g->kw - 1) * g->dw + VLEN * (s > 2 ? s : 2);
            for (; ow + VLEN <= c1 && ow * s - g->pl + reach <= W; ow += VLEN) {
                vf best = vf_set1(-INFINITY), arg = vf_zero();
                for (int64_t t = 0; t < taps; ++t) {
                    const vf v = vf_load_stride(xr + ow * s + off[t], s);
                    const vmask gt = vf_lt(best, v);
                    best = vf_select(gt, v, best);
                    arg = vf_select(gt, vf_set1((float)t), arg);
                }
                float at[VLEN];
                vf_store(at, arg);
                for (int l = 0; l < VLEN; ++l) dxr[(ow + l) * s + off[(int)at[l]]] += dyr[ow + l];
            }
#endif
            for (; ow < c1; ++ow) {
                const float *xw = xr + ow * s;
                float best = -INFINITY;
                int64_t at = off[0];
                for (int64_t t = 0; t < taps; ++t) {
                    const float v = xw[off[t]];
                    const int gt = v > best;
                    at = gt ? off[t] : at;
                    best = gt ? v : best;
                }
                dxr[ow * s + at] += dyr[ow];
            }
        }
        for (; ow < g->OW; ++ow) {
            const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
            if (at >= 0) dx[at] += dyr[ow];
        }
    }
}

static void FN(max_pool_grad_plane_any)(const float *dy, const float *x, float *dx, const x86_pool_geom *g) {
    memset(dx, 0, (size_t)(g->H * g->W) * sizeof(float));
    for (int64_t oh = 0; oh < g->OH; ++oh)
        for (int64_t ow = 0; ow < g->OW; ++ow) {
            const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
            if (at >= 0) dx[at] += dy[oh * g->OW + ow];
        }
}

/* 2x2 windows at stride 2 (no padding, no dilation; LeNet's pools): VLEN windows at a time, whole vectors
 * throughout. The even and odd columns of a row pair are split into the four taps of VLEN windows, the first
 * maximum picked with the same strict > from -inf as the reference, dy handed to the winning tap by selects,
 * and the four results interleaved back and stored: every input of a whole window is written once, so the
 * plane needs no clearing first (only when odd edges or ceil_mode windows leave inputs outside them). */
#if VLEN == 16
/* row[0, 2n) (n <= 16 windows) -> its even and odd columns */
static inline void FN(pool2_split)(const float *row, int n, vf *even, vf *odd) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const vf a = vf_load_n(row, 2 * n), b = vf_load_n(row + 16, 2 * n - 16);
    *even = _mm512_permutex2var_ps(a, ie, b);
    *odd = _mm512_permutex2var_ps(a, io, b);
}
static inline void FN(pool2_merge)(float *row, int n, vf even, vf odd) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    vf_store_n(row, _mm512_permutex2var_ps(even, lo, odd), 2 * n);
    if (n > 8) vf_store_n(row + 16, _mm512_permutex2var_ps(even, hi, odd), 2 * n - 16);
}
#elif VLEN == 8
static inline void FN(pool2_split)(const float *row, int n, vf *even, vf *odd) {
    const vf a = vf_load_n(row, 2 * n), b = vf_load_n(row + 8, 2 * n - 8);
    /* shuffle: a0 a2 b0 b2 | a4 a6 b4 b6; the 64-bit permute puts the halves in order */
    *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
    *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}
static inline void FN(pool2_merge)(float *row, int n, vf even, vf odd) {
    const vf lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd); /* e0 o0 e1 o1 | e4 o4 e5 o5 */
    vf_store_n(row, _mm256_permute2f128_ps(lo, hi, 0x20), 2 * n);
    if (n > 4) vf_store_n(row + 8, _mm256_permute2f128_ps(lo, hi, 0x31), 2 * n - 8);
}
#else
static inline void FN(pool2_split)(const float *row, int n, vf *even, vf *odd) {
    (void)n;
    *even = row[0];
    *odd = row[1];
}
static inline void FN(pool2_merge)(float *row, int n, vf even, vf odd) {
    (void)n;
    row[0] = even;
    row[1] = odd;
}
#endif

static inline int FN(pool2_fast)(const x86_pool_geom *g) {
    return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->dh == 1 && g->dw == 1 && g->pt == 0 &&
           g->pl == 0;
}

static void FN(max_pool_grad_plane_2x2)(const float *dy, const float *x, float *dx, const x86_pool_geom *g) {
    const int64_t W = g->W, rows = g->OH < g->H / 2 ? g->OH : g->H / 2, cols = g->OW < W / 2 ? g->OW : W / 2;
    const int edges = rows * 2 != g->H || cols * 2 != W || rows != g->OH || cols != g->OW;
    if (edges) memset(dx, 0, (size_t)(g->H * W) * sizeof(float));
    const vf ninf = vf_set1(-INFINITY), zero = vf_zero();
    for (int64_t oh = 0; oh < rows; ++oh) {
        const float *x0 = x + 2 * oh * W, *x1 = x0 + W;
        float *d0 = dx + 2 * oh * W, *d1 = d0 + W;
        for (int64_t ow = 0; ow < cols; ow += VLEN) {
            const int n = (int)(cols - ow < VLEN ? cols - ow : VLEN);
            vf a, b, c, d;
            FN(pool2_split)(x0 + 2 * ow, n, &a, &b);
            FN(pool2_split)(x1 + 2 * ow, n, &c, &d);
            /* taps in the reference's order a, b, c, d; the last tap that beats the running best wins */
            vf best = vf_select(vf_lt(ninf, a), a, ninf);
            const vmask gb = vf_lt(best, b);
            best = vf_select(gb, b, best);
            const vmask gc = vf_lt(best, c);
            best = vf_select(gc, c, best);
            const vmask gd = vf_lt(best, d);
            vf rest = vf_load_n(dy + oh * g->OW + ow, n);
            const vf td = vf_select(gd, rest, zero);
            rest = vf_select(gd, zero, rest);
            const vf tc = vf_select(gc, rest, zero);
            rest = vf_select(gc, zero, rest);
            const vf tb = vf_select(gb, rest, zero);
            rest = vf_select(gb, zero, rest); /* a: it won, or nothing beat -inf (tap 0, as the reference) */
            FN(pool2_merge)(d0 + 2 * ow, n, rest, tb);
            FN(pool2_merge)(d1 + 2 * ow, n, tc, td);
        }
    }
    if (!edges) return;
    for (int64_t oh = 0; oh < g->OH; ++oh) /* ceil_mode windows past the whole ones */
        for (int64_t ow = oh < rows ? cols : 0; ow < g->OW; ++ow) {
            const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
            if (at >= 0) dx[at] += dy[oh * g->OW + ow];
        }
}

/* MaxPool forward, 2x2 windows at stride 2 with OH = H/2, OW = W/2 (a trailing odd row or column unread):
 * VLEN windows per step from the split row pair; a NaN anywhere in a window makes it NaN, as the reference's max */
static void FN(max_pool_2x2_plane)(const float *x, float *y, const x86_pool_geom *g) {
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        const float *x0 = x + 2 * oh * g->W, *x1 = x0 + g->W;
        for (int64_t ow = 0; ow < g->OW; ow += VLEN) {
            const int n = (int)(g->OW - ow < VLEN ? g->OW - ow : VLEN);
            vf a, b, c, d;
            FN(pool2_split)(x0 + 2 * ow, n, &a, &b);
            FN(pool2_split)(x1 + 2 * ow, n, &c, &d);
            vf m = vf_max(vf_max(a, b), vf_max(c, d));
            m = vf_select(vf_isnan(a), a, m);
            m = vf_select(vf_isnan(b), b, m);
            m = vf_select(vf_isnan(c), c, m);
            m = vf_select(vf_isnan(d), d, m);
            vf_store_n(y + oh * g->OW + ow, m, n);
        }
    }
}

/* the pooling loops: planes [lo, hi) */
typedef struct {
    const float *x, *dy;
    float *y, *dx;
    const x86_pool_geom *g;
    const int64_t *off; /* max_pool_grad's tap offsets (NULL: more taps than POOL_MAX_TAPS) */
    int two;
} grad_pool_loop;

static void FN(max_pool_2x2_planes)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_pool_loop *c = (const grad_pool_loop *)ctx;
    const int64_t in_plane = c->g->H * c->g->W, out_plane = c->g->OH * c->g->OW;
    (void)worker;
    for (int64_t pi = lo; pi < hi; ++pi) FN(max_pool_2x2_plane)(c->x + pi * in_plane, c->y + pi * out_plane, c->g);
}

static void FN(max_pool_2x2)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, int threads) {
    grad_pool_loop c = {x, NULL, y, NULL, g, NULL, 1};
    if (planes * g->H * g->W < GRAD_PARALLEL_MIN_STREAM) threads = 1;
    x86_parallel_ranges(threads, planes, 1, FN(max_pool_2x2_planes), &c);
}

static void FN(max_pool_grad_planes)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_pool_loop *c = (const grad_pool_loop *)ctx;
    const int64_t in_plane = c->g->H * c->g->W, out_plane = c->g->OH * c->g->OW;
    (void)worker;
    for (int64_t pi = lo; pi < hi; ++pi) {
        const float *dy = c->dy + pi * out_plane, *x = c->x + pi * in_plane;
        float *dx = c->dx + pi * in_plane;
        if (c->two) FN(max_pool_grad_plane_2x2)(dy, x, dx, c->g);
        else if (c->off) FN(max_pool_grad_plane)(dy, x, dx, c->g, c->off);
        else FN(max_pool_grad_plane_any)(dy, x, dx, c->g);
    }
}

static void FN(max_pool_grad)(const float *dy, const float *x, float *dx, int64_t planes, const x86_pool_geom *g,
                              int threads) {
    const int64_t in_plane = g->H * g->W, taps = g->kh * g->kw;
    int64_t off[POOL_MAX_TAPS];
    for (int64_t t = 0; t < taps && t < POOL_MAX_TAPS; ++t) off[t] = (t / g->kw) * g->dh * g->W + (t % g->kw) * g->dw;
    const int two = FN(pool2_fast)(g);
    grad_pool_loop c = {x, dy, NULL, dx, g, taps <= POOL_MAX_TAPS ? off : NULL, two};
    if (planes * in_plane < (two ? GRAD_PARALLEL_MIN_STREAM : GRAD_PARALLEL_MIN)) threads = 1;
    x86_parallel_ranges(threads, planes, 1, FN(max_pool_grad_planes), &c);
}

/* -- element-wise ---------------------------------------------------------------------------- */

static void FN(relu_grad_range)(const float *dy, const float *y, float *dx, int64_t n) {
    const vf one = vf_set1(1.0f), zero = vf_zero();
    int64_t i = 0; /* dy * (y > 0), a product as in the reference, so a NaN dy stays NaN */
    for (; i + VLEN <= n; i += VLEN)
        vf_store(dx + i, vf_mul(vf_load(dy + i), vf_select(vf_lt(zero, vf_load(y + i)), one, zero)));
    if (i < n) {
        const int m = (int)(n - i);
        vf_store_n(dx + i, vf_mul(vf_load_n(dy + i, m), vf_select(vf_lt(zero, vf_load_n(y + i, m)), one, zero)), m);
    }
}

#define GRAD_CHUNK 16384 /* the element-wise loops' grain */

/* the element-wise loops (ReluGrad, the optimizers): their operands, a range [lo, hi) an item */
typedef struct {
    const float *a, *b, *c, *d; /* dy, y | p, g[, buf | m, v] */
    float *out0, *out1, *out2;
    const x86_optim_params *o;
} grad_stream_loop;

static void FN(relu_grad_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_stream_loop *s = (const grad_stream_loop *)ctx;
    (void)worker;
    FN(relu_grad_range)(s->a + lo, s->b + lo, s->out0 + lo, hi - lo);
}

static void FN(relu_grad)(const float *dy, const float *y, float *dx, int64_t n, int threads) {
    grad_stream_loop s = {dy, y, NULL, NULL, dx, NULL, NULL, NULL};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN_STREAM ? threads : 1, n, GRAD_CHUNK, FN(relu_grad_ranges), &s);
}

static void FN(sum_to)(const float *x, float *y, int64_t ysize, int ndim, const int64_t *dims,
                       const int64_t *ystrides) {
    memset(y, 0, (size_t)ysize * sizeof(float));
    const int64_t inner = dims[ndim - 1], ys = ystrides[ndim - 1];
    int64_t rows = 1, idx[X86_GRAD_MAX_DIMS] = {0};
    for (int d = 0; d < ndim - 1; ++d) rows *= dims[d];
    int64_t yoff = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float *src = x + r * inner;
        if (ys) { /* a kept inner axis (stride 1 in y): add the row */
            float *dst = y + yoff;
            int64_t i = 0;
            for (; i + VLEN <= inner; i += VLEN) vf_store(dst + i, vf_add(vf_load(dst + i), vf_load(src + i)));
            if (i < inner) {
                const int m = (int)(inner - i);
                vf_store_n(dst + i, vf_add(vf_load_n(dst + i, m), vf_load_n(src + i, m)), m);
            }
        } else {
            y[yoff] += FN(sum_n)(src, inner);
        }
        for (int d = ndim - 2; d >= 0; --d) { /* next row: an odometer over the outer dims */
            yoff += ystrides[d];
            if (++idx[d] < dims[d]) break;
            yoff -= ystrides[d] * dims[d];
            idx[d] = 0;
        }
    }
}

/* -- softmax cross-entropy (double inside: the loss of a batch is one number) ---------------------- */

/* per-class target weight of item (o, s), and whether the item counts; 0 or -1 (class out of range) */
static inline int FN(ce_weights)(const void *target, const x86_ce_geom *g, int64_t o, int64_t s, double *w,
                                 int *keep) {
    const int64_t C = g->C;
    const double eps = g->label_smoothing;
    if (g->target_kind == X86_TARGET_F32) {
        const float *t = (const float *)target;
        for (int64_t c = 0; c < C; ++c) w[c] = (double)t[(o * C + c) * g->inner + s] * (1.0 - eps) + eps / C;
        *keep = 1;
        return 0;
    }
    const int64_t cls = g->target_kind == X86_TARGET_I64 ? ((const int64_t *)target)[o * g->inner + s]
                                                          : ((const int32_t *)target)[o * g->inner + s];
    *keep = cls != g->ignore_index;
    if (*keep && (cls < 0 || cls >= C)) return -1;
    for (int64_t c = 0; c < C; ++c) w[c] = *keep ? (c == cls ? 1.0 - eps : 0.0) + eps / C : 0.0;
    return 0;
}

/* log-sum-exp of logits (o, :, s) */
static inline double FN(ce_lse)(const float *logits, const x86_ce_geom *g, int64_t o, int64_t s) {
    double m = -INFINITY, sum = 0.0;
    for (int64_t c = 0; c < g->C; ++c) {
        const double z = logits[(o * g->C + c) * g->inner + s];
        if (z > m) m = z;
    }
    for (int64_t c = 0; c < g->C; ++c) sum += exp((double)logits[(o * g->C + c) * g->inner + s] - m);
    return m + log(sum);
}

#define CE_STACK 256
static int FN(softmax_ce)(const float *logits, const void *target, float *loss, const x86_ce_geom *g) {
    double wbuf[CE_STACK], *w = g->C <= CE_STACK ? wbuf : (double *)malloc((size_t)g->C * sizeof(double));
    double total = 0.0;
    int64_t count = 0;
    int rc = w ? 0 : -1;
    for (int64_t o = 0; o < g->outer && !rc; ++o)
        for (int64_t s = 0; s < g->inner; ++s) {
            int keep;
            if ((rc = FN(ce_weights)(target, g, o, s, w, &keep)) != 0) break;
            const double lse = FN(ce_lse)(logits, g, o, s);
            double item = 0.0;
            for (int64_t c = 0; c < g->C; ++c)
                if (w[c] != 0.0) item += w[c] * (lse - (double)logits[(o * g->C + c) * g->inner + s]);
            if (g->reduction == X86_RED_NONE) loss[o * g->inner + s] = (float)item;
            total += item;
            count += keep;
        }
    if (w != wbuf) free(w);
    if (g->reduction == X86_RED_MEAN) loss[0] = (float)(total / (double)(count > 0 ? count : 1));
    else if (g->reduction == X86_RED_SUM) loss[0] = (float)total;
    return rc;
}

static int FN(softmax_ce_grad)(const float *dloss, const float *logits, const void *target, float *dlogits,
                               const x86_ce_geom *g) {
    double wbuf[CE_STACK], *w = g->C <= CE_STACK ? wbuf : (double *)malloc((size_t)g->C * sizeof(double));
    if (!w) return -1;
    double scale = dloss[0];
    if (g->reduction == X86_RED_MEAN) { /* the mean divides by the items that count */
        int64_t count = 0;
        for (int64_t o = 0; o < g->outer; ++o)
            for (int64_t s = 0; s < g->inner; ++s) {
                int keep = 1;
                if (g->target_kind != X86_TARGET_F32) {
                    const int64_t cls = g->target_kind == X86_TARGET_I64 ? ((const int64_t *)target)[o * g->inner + s]
                                                                          : ((const int32_t *)target)[o * g->inner + s];
                    keep = cls != g->ignore_index;
                }
                count += keep;
            }
        scale /= (double)(count > 0 ? count : 1);
    }
    int rc = 0;
    for (int64_t o = 0; o < g->outer && !rc; ++o)
        for (int64_t s = 0; s < g->inner; ++s) {
            int keep;
            if ((rc = FN(ce_weights)(target, g, o, s, w, &keep)) != 0) break;
            const double lse = FN(ce_lse)(logits, g, o, s);
            const double sc = g->reduction == X86_RED_NONE ? (double)dloss[o * g->inner + s] : scale;
            double wsum = 0.0;
            for (int64_t c = 0; c < g->C; ++c) wsum += w[c];
            for (int64_t c = 0; c < g->C; ++c) {
                const int64_t at = (o * g->C + c) * g->inner + s;
                dlogits[at] = (float)((exp((double)logits[at] - lse) * wsum - w[c]) * sc);
            }
        }
    if (w != wbuf) free(w);
    return rc;
}

/* -- optimizer updates ---------------------------------------------------------------------------- */

static void FN(sgd_momentum_range)(const float *p, const float *g, const float *buf, float *p_out, float *buf_out,
                                   int64_t n, const x86_optim_params *o) {
    const vf lr = vf_set1(o->lr), mu = vf_set1(o->momentum), keep = vf_set1(1.0f - o->dampening);
    const vf wd = vf_set1(o->weight_decay);
    const int first = o->step == 1.0f, nesterov = o->nesterov; /* PyTorch starts the buffer at d */
    for (int64_t i = 0; i < n; i += VLEN) {
        const int m = n - i < VLEN ? (int)(n - i) : VLEN;
        const vf pv = vf_load_n(p + i, m);
        const vf d = vf_fma(wd, pv, vf_load_n(g + i, m));
        const vf nb = first ? d : vf_fma(mu, vf_load_n(buf + i, m), vf_mul(keep, d));
        const vf step = nesterov ? vf_fma(mu, nb, d) : nb;
        vf_store_n(p_out + i, vf_fnma(lr, step, pv), m);
        vf_store_n(buf_out + i, nb, m);
    }
}

static void FN(sgd_momentum_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_stream_loop *s = (const grad_stream_loop *)ctx;
    (void)worker;
    FN(sgd_momentum_range)(s->a + lo, s->b + lo, s->c + lo, s->out0 + lo, s->out1 + lo, hi - lo, s->o);
}

static void FN(sgd_momentum)(const float *p, const float *g, const float *buf, float *p_out, float *buf_out,
                             int64_t n, const x86_optim_params *o, int threads) {
    grad_stream_loop s = {p, g, buf, NULL, p_out, buf_out, NULL, o};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN ? threads : 1, n, GRAD_CHUNK, FN(sgd_momentum_ranges), &s);
}

static void FN(sgd_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_stream_loop *s = (const grad_stream_loop *)ctx;
    const vf lr = vf_set1(s->o->lr), wd = vf_set1(s->o->weight_decay);
    (void)worker;
    for (int64_t i = lo; i < hi; i += VLEN) {
        const int m = hi - i < VLEN ? (int)(hi - i) : VLEN;
        const vf pv = vf_load_n(s->a + i, m);
        vf_store_n(s->out0 + i, vf_fnma(lr, vf_fma(wd, pv, vf_load_n(s->b + i, m)), pv), m);
    }
}

static void FN(sgd)(const float *p, const float *g, float *p_out, int64_t n, const x86_optim_params *o,
                    int threads) {
    grad_stream_loop s = {p, g, NULL, NULL, p_out, NULL, NULL, o};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN ? threads : 1, n, GRAD_CHUNK, FN(sgd_ranges), &s);
}

/* Adam / AdamW: the bias corrections in double, once; the rest per element as the compiler vectorizes it */
typedef struct {
    const float *p, *g, *m, *v;
    float *p_out, *m_out, *v_out;
    float b1, b2, eps, step_size, inv_bc2, shrink, l2;
} grad_adam_loop;

static void FN(adam_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_adam_loop *k = (const grad_adam_loop *)ctx;
    const float *p = k->p, *g = k->g, *m = k->m, *v = k->v; /* in locals: the stores may not alias them */
    float *p_out = k->p_out, *m_out = k->m_out, *v_out = k->v_out;
    const float b1 = k->b1, b2 = k->b2, eps = k->eps, step_size = k->step_size, inv_bc2 = k->inv_bc2;
    const float shrink = k->shrink, l2 = k->l2;
    (void)worker;
    for (int64_t i = lo; i < hi; ++i) {
        const float gi = g[i] + l2 * p[i];
        const float m2 = b1 * m[i] + (1.0f - b1) * gi, v2 = b2 * v[i] + (1.0f - b2) * gi * gi;
        const float denom = sqrtf(v2) * inv_bc2 + eps;
        p_out[i] = p[i] * shrink - step_size * m2 / denom;
        m_out[i] = m2;
        v_out[i] = v2;
    }
}

static void FN(adam)(const float *p, const float *g, const float *m, const float *v, float *p_out, float *m_out,
                     float *v_out, int64_t n, const x86_optim_params *o, int threads) {
    const double t = o->step;
    const float lr = o->lr, wd = o->weight_decay;
    grad_adam_loop k = {p, g, m, v, p_out, m_out, v_out, o->beta1, o->beta2, o->eps,
                        (float)((double)o->lr / (1.0 - pow((double)o->beta1, t))),
                        (float)(1.0 / sqrt(1.0 - pow((double)o->beta2, t))),
                        o->decoupled ? 1.0f - lr * wd : 1.0f, o->decoupled ? 0.0f : wd};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN ? threads : 1, n, GRAD_CHUNK, FN(adam_ranges), &k);
}

const x86_grad_kernels FN(x86_grad_kernels) = {
    STR(ISA),
    FN(conv_forward),
    FN(conv_grad_weight),
    FN(conv_grad_input),
    FN(max_pool_grad),
    FN(max_pool_2x2),
    FN(gemm_rt),
    FN(relu_grad),
    FN(sum_to),
    FN(softmax_ce),
    FN(softmax_ce_grad),
    FN(sgd_momentum),
    FN(sgd),
    FN(adam),
};

#endif
