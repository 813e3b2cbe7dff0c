/* Part of grad_impl.h (the training kernels), included there once per ISA: im2col/col2im, the dot tiles of the weight gradient and rowgemm, the GEMM that reads B from unpacked rows. */

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
