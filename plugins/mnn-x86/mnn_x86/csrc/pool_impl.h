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
 * window costs 3 + 3 maxes instead of 9. */

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
    float *buf = J->work + worker * J->per_thread;
    if (!J->ready[worker]) { /* the padding columns stay -inf: rows write only input columns */
        const int64_t n = (g->OW - 1) * g->sw + g->kw + 2 * VLEN;
        for (int64_t i = 0; i < n; ++i) buf[i] = -INFINITY;
        J->ready[worker] = 1;
    }
    for (int64_t pi = lo; pi < hi; ++pi) FN(maxpool_plane_rows)(J->x + pi * g->H * g->W, J->y + pi * g->OH * g->OW, g, buf);
}

static void FN(pool)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, float *work, int threads) {
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
