/* Max and average pooling, NCHW, over the padded scratch planes of
 * depthwise_impl.h: -inf padding for max, zero padding for average; DW_NV
 * vectors per step. Generic over `vf`. */
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
            acc[v] = is_max ? vf_max(acc[v], x) : vf_add(acc[v], x);
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

static void FN(pool)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, float *work, int threads) {
    const int64_t per_thread = x86_pool_work_floats(g);
    const float fill = g->kind == 0 ? -INFINITY : 0.0f;
    if (threads > 1 && planes > 1) {
#pragma omp parallel num_threads(threads)
        {
#ifdef _OPENMP
            float *mine = work + omp_get_thread_num() * per_thread;
#else
            float *mine = work;
#endif
            const FN(scratch) sc = FN(scratch_init)(mine, per_thread, g->OH, g->OW, g->kh, g->kw, g->sh, g->sw, g->dh,
                                                    g->dw, fill);
#pragma omp for schedule(static)
            for (int64_t pi = 0; pi < planes; ++pi) FN(pool_plane)(x, y, pi, g, &sc);
        }
        return;
    }
    const FN(scratch) sc = FN(scratch_init)(work, per_thread, g->OH, g->OW, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw,
                                            fill);
    for (int64_t pi = 0; pi < planes; ++pi) FN(pool_plane)(x, y, pi, g, &sc);
}

#endif
