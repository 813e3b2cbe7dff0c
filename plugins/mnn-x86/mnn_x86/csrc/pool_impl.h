/* Max and average pooling, NCHW, over the padded scratch planes of
 * depthwise_impl.h: -inf padding for max, zero padding for average; DW_NV
 * vectors per step. Generic over `vf`. A NaN anywhere in a max window makes the
 * output NaN, as in the reference (vf_max_nan). */
#ifndef MNN_X86_POOL_IMPL_H
#define MNN_X86_POOL_IMPL_H

static inline __attribute__((always_inline)) void FN(pool_vectors)(const int nv, const int is_max, int taps,
                                                                   const float *base, const int64_t *off, int64_t s,
                                                                   vf scale_row, const float *inv_cols, float *dst,
                                                                   int last_n) {
    vf acc[DW_NV];
    for (int v = 0; v < nv; ++v) acc[v] = is_max ? vf_set1(-INFINITY) : vf_zero();
    for (int t = 0; t < taps; ++t) {
        const float *p = base + off[t];
        for (int v = 0; v < nv; ++v) {
            const vf x = vf_load_stride(p + v * VLEN * s, s);
            acc[v] = is_max ? vf_max_nan(acc[v], x) : vf_add(acc[v], x);
        }
    }
    for (int v = 0; v < nv; ++v) {
        const int n = v == nv - 1 ? last_n : VLEN;
        if (!is_max) acc[v] = vf_mul(vf_mul(acc[v], scale_row), vf_load_n(inv_cols + v * VLEN, n));
        vf_store_n(dst + v * VLEN, acc[v], n);
    }
}

static inline __attribute__((always_inline)) void FN(pool_row)(const int is_max, int taps, const float *base,
                                                               const int64_t *off, int64_t s, vf scale_row,
                                                               const float *inv_cols, float *dst, int64_t OW) {
    int64_t ow = 0;
    for (; ow + DW_NV * VLEN <= OW; ow += DW_NV * VLEN)
        FN(pool_vectors)(DW_NV, is_max, taps, base + ow * s, off, s, scale_row, inv_cols + ow, dst + ow, VLEN);
    for (; ow < OW; ow += VLEN)
        FN(pool_vectors)(1, is_max, taps, base + ow * s, off, s, scale_row, inv_cols + ow, dst + ow,
                         (int)(OW - ow < VLEN ? OW - ow : VLEN));
}

static void FN(pool_plane)(const float *x, float *y, int64_t pi, const x86_pool_geom *g, const FN(scratch) *sc) {
    const int64_t taps = g->kh * g->kw, OW = g->OW;
    float *dst = y + pi * g->OH * OW;
    FN(copy_plane)(x + pi * g->H * g->W, g->H, g->W, g->pt, g->pl, sc->PH, sc->PW, &sc->L, sc->pad);
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        const float *base = sc->pad + oh * g->sh * sc->L.rowlen;
        if (g->kind == 0) {
            FN(pool_row)(1, (int)taps, base, sc->off, sc->L.s, vf_set1(1.0f), g->inv_cols, dst + oh * OW, OW);
        } else {
            FN(pool_row)(0, (int)taps, base, sc->off, sc->L.s, vf_set1(g->inv_rows[oh]), g->inv_cols, dst + oh * OW, OW);
        }
    }
}

/* Max pooling with dilation 1 and stride 1 or 2, separably: each output row
 * first takes the column-wise max of its window's input rows (rows outside the
 * input are skipped; as padding they could never win), into a row buffer whose
 * padding columns hold -inf; each output is then the max of kw neighbours in
 * that buffer. The input is read in place, without the padded copy, and a 3x3
 * window costs 3 + 3 maxes instead of 9. Windows 2 or 3 wide at stride 2 across
 * take the register path below (maxpool_plane_s2) instead. */

static int FN(maxpool_by_rows)(const x86_pool_geom *g) {
    return VLEN > 1 && g->kind == 0 && g->dh == 1 && g->dw == 1 && g->sw <= 2;
}

/* `buf` holds PW = (OW - 1) * sw + kw floats plus 2 * VLEN of slack, -inf outside the input columns */
static void FN(maxpool_plane_rows)(const float *x, float *y, const x86_pool_geom *g, float *buf) {
    const int64_t H = g->H, W = g->W, OW = g->OW, PW = (OW - 1) * g->sw + g->kw;
    const int64_t cols = W < PW - g->pl ? W : PW - g->pl; /* input columns some window reads */
    float *row = buf + g->pl;
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        const int64_t r0 = oh * g->sh - g->pt > 0 ? oh * g->sh - g->pt : 0;
        const int64_t r1 = oh * g->sh - g->pt + g->kh < H ? oh * g->sh - g->pt + g->kh : H;
        const float *src = x + r0 * W;
        for (int64_t c = 0; c < cols; c += VLEN) {
            const int n = cols - c < VLEN ? (int)(cols - c) : VLEN;
            vf m = vf_set1(-INFINITY);
            for (int64_t r = 0; r < r1 - r0; ++r) m = vf_max_nan(m, vf_load_n(src + r * W + c, n));
            vf_store_n(row + c, m, n);
        }
        float *out = y + oh * OW;
        for (int64_t ow = 0; ow < OW; ow += VLEN) {
            const float *p = buf + ow * g->sw;
            vf m = vf_load_stride(p, g->sw);
            for (int64_t j = 1; j < g->kw; ++j) m = vf_max_nan(m, vf_load_stride(p + j, g->sw));
            vf_store_n(out + ow, m, OW - ow < VLEN ? (int)(OW - ow) : VLEN);
        }
    }
}

/* Max pooling with stride 2 across and a window 2 or 3 wide (SqueezeNet's and ResNet's 3x3/2, the
 * 2x2/2 of VGG-like nets), all in registers: per output row, the column-wise max of the window's
 * input rows is taken for two vectors of input columns, split into its even and odd columns (one
 * permute each), and each output is max(even, odd) or max(even, odd, even shifted by one column).
 * No row buffer: the column maxes are not stored and read back kw times at odd offsets, as in
 * maxpool_plane_rows (two loads and a permute per strided tap); three permutes serve all taps.
 *
 * NaN: max(x, acc) returns acc when either is NaN, so a chain acc = max(x, acc) keeps a NaN of its
 * first input and loses one of a later x; one unordered compare per two later inputs finds those,
 * and their lanes are set to NaN at the end: 4 instructions for 3 inputs instead of 3 x 3. */
#if VLEN == 16
typedef __mmask16 FN(nan_lanes);
static inline FN(nan_lanes) FN(nan_none)(void) { return 0; }
static inline FN(nan_lanes) FN(nan_either)(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
static inline FN(nan_lanes) FN(nan_or)(FN(nan_lanes) a, FN(nan_lanes) b) { return a | b; }
static inline vf FN(nan_apply)(vf v, FN(nan_lanes) m) { return _mm512_mask_mov_ps(v, m, _mm512_set1_ps(NAN)); }
/* the lanes of the input columns [c, c + 16) that lie in [0, W): a mask, so that every load is one
 * masked load with -inf in the other lanes (their addresses are never read) */
typedef __mmask16 FN(col_lanes);
static inline FN(col_lanes) FN(col_lanes_at)(int64_t c, int64_t W) {
    const int64_t lo = c < 0 ? -c : 0, hi = W - c < 16 ? W - c : 16;
    if (hi <= lo) return 0;
    return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}
static inline vf FN(load_lanes)(const float *p, FN(col_lanes) m) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), m, p);
}
/* a = x[0, 16), b = x[16, 32), next = x[32, 48) -> x[0, 2, .., 30], x[1, 3, .., 31], x[2, 4, .., 32] */
static inline void FN(split_cols)(vf a, vf b, vf next, vf *even, vf *odd, vf *even2) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i i2 = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    *even = _mm512_permutex2var_ps(a, ie, b);
    *odd = _mm512_permutex2var_ps(a, io, b);
    *even2 = _mm512_permutex2var_ps(*even, i2, next);
}
#elif VLEN == 8
typedef __m256 FN(nan_lanes);
static inline FN(nan_lanes) FN(nan_none)(void) { return _mm256_setzero_ps(); }
static inline FN(nan_lanes) FN(nan_either)(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
static inline FN(nan_lanes) FN(nan_or)(FN(nan_lanes) a, FN(nan_lanes) b) { return _mm256_or_ps(a, b); }
/* an all-ones lane is a NaN */
static inline vf FN(nan_apply)(vf v, FN(nan_lanes) m) { return _mm256_or_ps(v, m); }
/* AVX2 has no cheap masked load with a fill: [lo, hi) as numbers, a plain load when it is every lane */
typedef struct {
    int lo, hi;
} FN(col_lanes);
static inline FN(col_lanes) FN(col_lanes_at)(int64_t c, int64_t W) {
    const int64_t lo = c < 0 ? -c : 0, hi = W - c < 8 ? W - c : 8;
    FN(col_lanes) m = {(int)(lo < 8 ? lo : 8), (int)(hi > lo ? hi : lo < 8 ? lo : 8)};
    return m;
}
static inline vf FN(load_lanes)(const float *p, FN(col_lanes) m) {
    if (m.lo == 0 && m.hi == 8) return _mm256_loadu_ps(p);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(m.hi), lane),
                                        _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(m.lo - 1)));
    return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_maskload_ps(p, in), _mm256_castsi256_ps(in));
}
static inline void FN(split_cols)(vf a, vf b, vf next, vf *even, vf *odd, vf *even2) {
    /* shuffle: a0 a2 b0 b2 | a4 a6 b4 b6; the 64-bit permute puts the halves in order */
    *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
    *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
    /* next[0] into lane 0, then rotated to the top */
    *even2 = _mm256_permutevar8x32_ps(_mm256_blend_ps(*even, next, 1), _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
}
#endif

/* Pooling of NC16 tensors (layouts.py): a pixel's 16 channels of a block lie side by side, so an output
 * pixel is the max (or the scaled sum) of its window's pixel vectors, read in place, taps outside the
 * input skipped (as padding they could never win a max, and add nothing to a sum): no padded copy and
 * no column split. Each item is one output row of one block. */
typedef struct {
    const float *x;
    float *y;
    const x86_pool_geom *g;
} FN(pool_nc16_job);

/* taps [lo, hi) of a window of k taps, d apart, from input index `start`, that lie in [0, size) */
static inline void FN(pool_taps_inside)(int64_t start, int64_t size, int64_t k, int64_t d, int64_t *lo, int64_t *hi) {
    *lo = start < 0 ? (-start + d - 1) / d : 0;
    *hi = size - start <= 0 ? 0 : (size - start + d - 1) / d;
    if (*hi > k) *hi = k;
    if (*lo > *hi) *lo = *hi;
}

/* VLEN lanes of one output pixel: taps rows [i0, i1) x columns [j0, j1) from pixel offset `at` (the
 * window's first tap; its taps dh rows and dw pixels apart). A max keeps acc = max(x, acc), which
 * loses a NaN x, so one compare a tap marks those lanes, set to NaN at the end (see above). */
static inline __attribute__((always_inline)) vf FN(pool_nc16_px)(const int is_max, const float *xb, int64_t at,
                                                                int64_t W, int64_t i0, int64_t i1, int64_t j0,
                                                                int64_t j1, int64_t dh, int64_t dw) {
    vf acc = is_max ? vf_set1(-INFINITY) : vf_zero();
#if VLEN > 1
    FN(nan_lanes) nan = FN(nan_none)();
#endif
    for (int64_t i = i0; i < i1; ++i) {
        const float *row = xb + (at + i * dh * W) * X86_NC16;
        for (int64_t j = j0; j < j1; ++j) {
            const vf v = vf_load(row + j * dw * X86_NC16);
#if VLEN > 1
            if (is_max) {
                acc = vf_max(v, acc);
                nan = FN(nan_or)(nan, FN(nan_either)(v, v));
            } else {
                acc = vf_add(acc, v);
            }
#else
            acc = is_max ? vf_max_nan(acc, v) : vf_add(acc, v);
#endif
        }
    }
#if VLEN > 1
    if (is_max) acc = FN(nan_apply)(acc, nan);
#endif
    return acc;
}

static inline __attribute__((always_inline)) void FN(pool_nc16_row)(const int is_max, const FN(pool_nc16_job) *J,
                                                                   int64_t item) {
    const x86_pool_geom *g = J->g;
    const int64_t b = item / g->OH, oh = item % g->OH, ih0 = oh * g->sh - g->pt;
    const float *xb = J->x + b * g->H * g->W * X86_NC16;
    float *yr = J->y + (b * g->OH + oh) * g->OW * X86_NC16;
    int64_t i0, i1, j0, j1;
    FN(pool_taps_inside)(ih0, g->H, g->kh, g->dh, &i0, &i1);
    for (int64_t ow = 0; ow < g->OW; ++ow) {
        const int64_t iw0 = ow * g->sw - g->pl, at = ih0 * g->W + iw0;
        FN(pool_taps_inside)(iw0, g->W, g->kw, g->dw, &j0, &j1);
        const vf scale = is_max ? vf_zero() : vf_set1(g->inv_rows[oh] * g->inv_cols[ow]);
        for (int h = 0; h < X86_NC16; h += VLEN) {
            const vf v = FN(pool_nc16_px)(is_max, xb + h, at, g->W, i0, i1, j0, j1, g->dh, g->dw);
            vf_store(yr + ow * X86_NC16 + h, is_max ? v : vf_mul(v, scale));
        }
    }
}

#if VLEN > 1
/* The max down one input column of n >= 0 rows (p its first, rows rstep floats apart; -inf for none)
 * and its NaN lanes, one compare per two rows (m = max(x, m) loses a NaN x; the lanes are set to NaN
 * by the caller, after its maxes across columns, which lose them too). */
static inline __attribute__((always_inline)) vf FN(pool_nc16_col)(const float *p, int64_t rstep, int64_t n,
                                                                 FN(nan_lanes) *nan) {
    *nan = FN(nan_none)();
    vf m = vf_set1(-INFINITY);
    int64_t r = 0;
    for (; r + 1 < n; r += 2) {
        const vf a = vf_load(p + r * rstep), b = vf_load(p + (r + 1) * rstep);
        m = vf_max(b, vf_max(a, m));
        *nan = FN(nan_or)(*nan, FN(nan_either)(a, b));
    }
    if (r < n) {
        const vf a = vf_load(p + r * rstep);
        m = vf_max(a, m);
        *nan = FN(nan_or)(*nan, FN(nan_either)(a, a));
    }
    return m;
}

/* A max pooling 3 wide at stride 2 across, dilation 1 across (SqueezeNet's): each input column's max
 * down the window's rows is taken once and serves both outputs that hold it, so a pixel vector costs
 * two columns, not three. SqueezeNet's first pooling, in the model: 0.082 ms per window tap by tap,
 * 0.048 so, against 0.058 for the NCHW register path (one thread; two: 0.057, 0.038, 0.049). */
static void FN(maxpool_nc16_row_s2w3)(const FN(pool_nc16_job) *J, int64_t item) {
    const x86_pool_geom *g = J->g;
    const int64_t b = item / g->OH, oh = item % g->OH, ih0 = oh * g->sh - g->pt;
    int64_t i0, i1;
    FN(pool_taps_inside)(ih0, g->H, g->kh, g->dh, &i0, &i1);
    const int64_t n = i1 - i0, rstep = g->dh * g->W * X86_NC16;
    const float *top = J->x + (b * g->H * g->W + (n > 0 ? (ih0 + i0 * g->dh) * g->W : 0)) * X86_NC16;
    float *yr = J->y + (b * g->OH + oh) * g->OW * X86_NC16;
#define NC16_COL(iw, m)                                                                                  \
    ((iw) >= 0 && (iw) < g->W ? FN(pool_nc16_col)(top + (iw) * X86_NC16 + h, rstep, n, &(m))          \
                              : ((m) = FN(nan_none)(), vf_set1(-INFINITY)))
    for (int h = 0; h < X86_NC16; h += VLEN) {
        int64_t iw = -g->pl;
        FN(nan_lanes) n0, n1, n2;
        vf c0 = NC16_COL(iw, n0);
        for (int64_t ow = 0; ow < g->OW; ++ow, iw += 2) {
            const vf c1 = NC16_COL(iw + 1, n1), c2 = NC16_COL(iw + 2, n2);
            const vf m = vf_max(c2, vf_max(c1, c0));
            vf_store(yr + ow * X86_NC16 + h, FN(nan_apply)(m, FN(nan_or)(n0, FN(nan_or)(n1, n2))));
            c0 = c2, n0 = n2;
        }
    }
#undef NC16_COL
}
#endif

static void FN(pool_nc16_rows)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const FN(pool_nc16_job) *J = (const FN(pool_nc16_job) *)ctx;
    const x86_pool_geom *g = J->g;
    (void)worker;
    for (int64_t item = lo; item < hi; ++item) {
#if VLEN > 1
        if (g->kind == 0 && g->sw == 2 && g->kw == 3 && g->dw == 1) {
            FN(maxpool_nc16_row_s2w3)(J, item);
            continue;
        }
#endif
        if (g->kind == 0) FN(pool_nc16_row)(1, J, item);
        else FN(pool_nc16_row)(0, J, item);
    }
}

#if VLEN > 1
static inline int FN(maxpool_s2_cols)(const x86_pool_geom *g) {
    return g->kind == 0 && g->dh == 1 && g->dw == 1 && g->sw == 2 && (g->kw == 2 || g->kw == 3);
}

/* the max over `rows` (>= 1) rows, W apart, of the columns at p whose lanes are in m */
static inline __attribute__((always_inline)) vf FN(col_max)(const float *p, int64_t W, int rows, FN(col_lanes) m) {
    vf acc = FN(load_lanes)(p, m);
    FN(nan_lanes) nan = FN(nan_none)();
    int r = 1;
    for (; r + 1 < rows; r += 2) {
        const vf a = FN(load_lanes)(p + r * W, m), b = FN(load_lanes)(p + (r + 1) * W, m);
        acc = vf_max(b, vf_max(a, acc));
        nan = FN(nan_or)(nan, FN(nan_either)(a, b));
    }
    if (r < rows) {
        const vf a = FN(load_lanes)(p + r * W, m);
        acc = vf_max(a, acc);
        nan = FN(nan_or)(nan, FN(nan_either)(a, a));
    }
    return FN(nan_apply)(acc, nan);
}

/* one output row from `rows` input rows at src; c0: the first input column of the first window
 * (-pl). src + c may point before the row (left padding): those lanes are masked, never read. */
static inline __attribute__((always_inline)) void FN(maxpool_row_s2)(const float *src, float *out, int64_t W,
                                                                     int64_t OW, int64_t c0, int rows, int kw) {
    int64_t c = c0;
    vf a = FN(col_max)(src + c, W, rows, FN(col_lanes_at)(c, W));
    for (int64_t ow = 0; ow < OW; ow += VLEN, c += 2 * VLEN) {
        const vf b = FN(col_max)(src + c + VLEN, W, rows, FN(col_lanes_at)(c + VLEN, W));
        /* past the right edge (small planes, ceil_mode) nothing is loaded */
        const vf next = c + 2 * VLEN < W ? FN(col_max)(src + c + 2 * VLEN, W, rows, FN(col_lanes_at)(c + 2 * VLEN, W))
                                         : vf_set1(-INFINITY);
        vf even, odd, even2, m;
        FN(split_cols)(a, b, next, &even, &odd, &even2);
        if (kw == 3) m = FN(nan_apply)(vf_max(even2, vf_max(odd, even)), FN(nan_either)(odd, even2));
        else m = FN(nan_apply)(vf_max(odd, even), FN(nan_either)(odd, odd));
        vf_store_n(out + ow, m, OW - ow < VLEN ? (int)(OW - ow) : VLEN);
        a = next;
    }
}

/* two output rows of 3x3 windows at stride 2 down: input rows 0-2 and 2-4 at src, the shared row
 * loaded once, and twice the independent work per step */
static inline __attribute__((always_inline)) void FN(col_max_3x2)(const float *p, int64_t W, FN(col_lanes) m,
                                                                   vf *top, vf *bottom) {
    const vf r0 = FN(load_lanes)(p, m), r1 = FN(load_lanes)(p + W, m), r2 = FN(load_lanes)(p + 2 * W, m);
    const vf r3 = FN(load_lanes)(p + 3 * W, m), r4 = FN(load_lanes)(p + 4 * W, m);
    *top = FN(nan_apply)(vf_max(r2, vf_max(r1, r0)), FN(nan_either)(r1, r2));
    *bottom = FN(nan_apply)(vf_max(r4, vf_max(r3, r2)), FN(nan_either)(r3, r4));
}

static inline vf FN(max3_cols)(vf a, vf b, vf next) {
    vf even, odd, even2;
    FN(split_cols)(a, b, next, &even, &odd, &even2);
    return FN(nan_apply)(vf_max(even2, vf_max(odd, even)), FN(nan_either)(odd, even2));
}

static void FN(maxpool_rows_3x3s2)(const float *src, float *out, int64_t W, int64_t OW, int64_t c0) {
    int64_t c = c0;
    vf a0, a1;
    FN(col_max_3x2)(src + c, W, FN(col_lanes_at)(c, W), &a0, &a1);
    for (int64_t ow = 0; ow < OW; ow += VLEN, c += 2 * VLEN) {
        vf b0, b1, n0 = vf_set1(-INFINITY), n1 = n0;
        FN(col_max_3x2)(src + c + VLEN, W, FN(col_lanes_at)(c + VLEN, W), &b0, &b1);
        if (c + 2 * VLEN < W) FN(col_max_3x2)(src + c + 2 * VLEN, W, FN(col_lanes_at)(c + 2 * VLEN, W), &n0, &n1);
        const int n = OW - ow < VLEN ? (int)(OW - ow) : VLEN;
        vf_store_n(out + ow, FN(max3_cols)(a0, b0, n0), n);
        vf_store_n(out + OW + ow, FN(max3_cols)(a1, b1, n1), n);
        a0 = n0, a1 = n1;
    }
}

/* output rows [oh0, oh1) of one plane */
static void FN(maxpool_plane_s2)(const float *x, float *y, const x86_pool_geom *g, int64_t oh0, int64_t oh1) {
    const int64_t H = g->H, W = g->W, OW = g->OW;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
        const int64_t r0 = oh * g->sh - g->pt > 0 ? oh * g->sh - g->pt : 0;
        const int64_t r1 = oh * g->sh - g->pt + g->kh < H ? oh * g->sh - g->pt + g->kh : H;
        const float *src = x + r0 * W;
        float *out = y + oh * OW;
        const int rows = (int)(r1 - r0);
        if (rows == 3 && g->kh == 3 && g->kw == 3 && g->sh == 2 && oh + 1 < oh1 && r1 + 2 <= H) { /* and the next row */
            FN(maxpool_rows_3x3s2)(src, out, W, OW, -g->pl);
            ++oh;
            continue;
        }
        /* constant row counts and widths, so that each call is unrolled for them */
        if (rows == 3 && g->kw == 3) FN(maxpool_row_s2)(src, out, W, OW, -g->pl, 3, 3);
        else if (rows == 2 && g->kw == 3) FN(maxpool_row_s2)(src, out, W, OW, -g->pl, 2, 3);
        else if (rows == 2 && g->kw == 2) FN(maxpool_row_s2)(src, out, W, OW, -g->pl, 2, 2);
        else if (rows >= 1) FN(maxpool_row_s2)(src, out, W, OW, -g->pl, rows, (int)g->kw);
        else /* a window of padding rows only (pads as large as the kernel) */
            for (int64_t ow = 0; ow < OW; ++ow) out[ow] = -INFINITY;
    }
}
#endif

/* inference (x86infer): planes as ranges on the thread pool; each worker sets
 * up its scratch (padding fill, tap offsets) on its first range */
typedef struct {
    const float *x;
    float *y;
    float *work;
    int64_t per_thread;
    float fill;
    const x86_pool_geom *g;
    FN(scratch) sc[DW_MAX_WORKERS];
    int ready[DW_MAX_WORKERS];
} FN(pool_job);

static void FN(pool_range)(void *ctx, int64_t lo, int64_t hi, int worker) {
    FN(pool_job) *J = (FN(pool_job) *)ctx;
    const x86_pool_geom *g = J->g;
    if (!J->ready[worker]) {
        J->sc[worker] = FN(scratch_init)(J->work + worker * J->per_thread, J->per_thread, g->OH, g->OW, g->kh, g->kw,
                                         g->sh, g->sw, g->dh, g->dw, J->fill);
        J->ready[worker] = 1;
    }
    for (int64_t pi = lo; pi < hi; ++pi) FN(pool_plane)(J->x, J->y, pi, g, &J->sc[worker]);
}

static void FN(maxpool_rows_range)(void *ctx, int64_t lo, int64_t hi, int worker) {
    FN(pool_job) *J = (FN(pool_job) *)ctx;
    const x86_pool_geom *g = J->g;
#if VLEN > 1
    if (FN(maxpool_s2_cols)(g)) { /* no row buffer */
        for (int64_t pi = lo; pi < hi; ++pi)
            FN(maxpool_plane_s2)(J->x + pi * g->H * g->W, J->y + pi * g->OH * g->OW, g, 0, g->OH);
        return;
    }
#endif
    float *buf = J->work + worker * J->per_thread;
    if (!J->ready[worker]) { /* the padding columns stay -inf: rows write only input columns */
        const int64_t n = (g->OW - 1) * g->sw + g->kw + 2 * VLEN;
        for (int64_t i = 0; i < n; ++i) buf[i] = -INFINITY;
        J->ready[worker] = 1;
    }
    for (int64_t pi = lo; pi < hi; ++pi) FN(maxpool_plane_rows)(J->x + pi * g->H * g->W, J->y + pi * g->OH * g->OW, g, buf);
}

#if VLEN > 1
/* At two threads and more, the stride-2 max pooling of big planes goes by bands of output rows
 * across all planes, a band per thread (x86_parallel hands each a contiguous run of items), the way
 * its producer divided the rows (the stems' direct convolution and the GEMMs take strips of rows,
 * every channel of each): each thread reads the rows its own core wrote rather than whole planes
 * written by both. Smaller planes are faster whole (the measurements: benchmarks/RESULTS.md,
 * "Notes moved from the code"). */
#define MP_BANDS_MIN_OUT 2048 /* output pixels per plane */
typedef struct {
    const float *x;
    float *y;
    const x86_pool_geom *g;
    int64_t planes, plane_chunk, chunks, band_rows;
} FN(mp_bands);

static void FN(mp_band_task)(void *ctx, int64_t item, int worker) {
    const FN(mp_bands) *J = (const FN(mp_bands) *)ctx;
    const x86_pool_geom *g = J->g;
    const int64_t band = item / J->chunks, p0 = item % J->chunks * J->plane_chunk;
    const int64_t p1 = p0 + J->plane_chunk < J->planes ? p0 + J->plane_chunk : J->planes;
    const int64_t oh0 = band * J->band_rows, oh1 = oh0 + J->band_rows < g->OH ? oh0 + J->band_rows : g->OH;
    (void)worker;
    for (int64_t pi = p0; pi < p1; ++pi)
        FN(maxpool_plane_s2)(J->x + pi * g->H * g->W, J->y + pi * g->OH * g->OW, g, oh0, oh1);
}

static int FN(maxpool_s2_bands)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, int threads) {
    if (threads <= 1 || !FN(maxpool_s2_cols)(g) || g->OH * g->OW < MP_BANDS_MIN_OUT || g->OH < threads) return 0;
    FN(mp_bands) J = {x, y, g, planes, 1, 1, (g->OH + threads - 1) / threads};
    J.chunks = X86_ITEMS_PER_THREAD < planes ? X86_ITEMS_PER_THREAD : planes; /* a band's planes in a few items */
    J.plane_chunk = (planes + J.chunks - 1) / J.chunks;
    J.chunks = (planes + J.plane_chunk - 1) / J.plane_chunk;
    x86_parallel(threads, (g->OH + J.band_rows - 1) / J.band_rows * J.chunks, FN(mp_band_task), &J);
    return 1;
}
#endif

static void FN(pool)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, float *work, int threads) {
    if (g->nc16) { /* planes: blocks */
        FN(pool_nc16_job) J = {x, y, g};
        const int64_t row_floats = g->OW * g->kh * g->kw * X86_NC16;
        x86_parallel_ranges(threads, planes * g->OH, 1 + PARALLEL_MIN / 8 / (row_floats > 0 ? row_floats : 1),
                            FN(pool_nc16_rows), &J);
        return;
    }
#if VLEN > 1
    if (FN(maxpool_s2_bands)(x, y, planes, g, threads)) return;
#endif
    FN(pool_job) J;
    J.x = x, J.y = y, J.work = work, J.per_thread = x86_pool_work_floats(g), J.g = g;
    J.fill = g->kind == 0 ? -INFINITY : 0.0f;
    memset(J.ready, 0, sizeof J.ready);
    if (threads > DW_MAX_WORKERS) threads = DW_MAX_WORKERS;
    const int64_t plane_floats = g->OH * g->OW * g->kh * g->kw;
    x86_parallel_ranges(threads, planes, 1 + PARALLEL_MIN / 8 / (plane_floats > 0 ? plane_floats : 1),
                        FN(maxpool_by_rows)(g) ? FN(maxpool_rows_range) : FN(pool_range), &J);
}

#endif
