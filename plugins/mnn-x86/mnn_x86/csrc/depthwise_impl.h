/* Depthwise convolution (one filter per channel), NCHW, and the padded
 * scratch planes it shares with pooling. Generic over `vf`; included by each
 * isa_*.c.
 *
 * Each thread copies a plane into a padded scratch plane, so the inner loop
 * has no bounds checks. With stride 2 (and no dilation) the scratch rows are
 * split into even and odd columns, so every tap is a contiguous load. The
 * output is computed DW_NV vectors at a time: independent accumulators hide
 * the FMA latency that one chain of kh*kw FMAs would expose. */
#ifndef MNN_X86_DEPTHWISE_IMPL_H
#define MNN_X86_DEPTHWISE_IMPL_H

#ifdef _OPENMP
#endif

#define DW_NV 4
/* rows of a 3x3 tile (dw_tile9): DW_TILE_ROWS x 2 accumulators beside the 9 weights */
#if VLEN >= 16
#define DW_TILE_ROWS 4
#else
#define DW_TILE_ROWS 2
#endif

/* How a scratch plane is laid out: element (py, px) of the padded plane is at
 * row py * rowlen, and output column ow of tap column j reads
 *   plain: px = ow*s + j*dw  -> offset ow*s + j*dw
 *   split: px = 2*ow + j     -> offset ow + (j odd ? half : 0) + j/2 */
typedef struct {
    int64_t rowlen, s, half;
    int split;
} FN(plane_layout);

static FN(plane_layout) FN(layout_for)(int64_t PW, int64_t sw, int64_t dw) {
    FN(plane_layout) L;
    L.split = sw == 2 && dw == 1 && VLEN > 1;
    L.half = (PW + 1) / 2;
    L.rowlen = L.split ? 2 * L.half : PW;
    L.s = L.split ? 1 : sw;
    return L;
}

/* Every other float of the last avail (< 2 * VLEN) of a row, by masked loads that never read
 * past the row (one element at a time, the tails of a 56-wide row cost as much as the rest of
 * the stride-2 convolution; through a stack buffer, the load waits for the buffer's stores). */
static inline void FN(split_tail)(float *dst, const float *src, int64_t avail) {
    vf_store_n(dst, vf_load_even_n(src, (int)avail), (int)((avail + 1) / 2));
}

/* The input rows of one plane into the scratch plane. Padding positions are
 * never written here: they keep the fill the thread wrote once per run. */
static void FN(copy_plane)(const float *src, int64_t H, int64_t W, int64_t pt, int64_t pl, int64_t PH, int64_t PW,
                           const FN(plane_layout) *L, float *pad) {
    const int64_t x1 = pl + W < PW ? pl + W : PW; /* padded columns that hold input */
    for (int64_t py = 0; py < PH; ++py) {
        const int64_t sy = py - pt;
        if (sy < 0 || sy >= H || x1 <= pl) continue;
        float *row = pad + py * L->rowlen;
        if (!L->split) {
            FN(copy_n)(row + pl, src + sy * W, x1 - pl);
            continue;
        }
        const float *in = src + sy * W - pl; /* in[px] for px in [pl, x1) */
        float *even = row, *odd = row + L->half;
        int64_t k = (pl + 1) / 2; /* first even column that holds input */
        for (; 2 * (k + VLEN) <= x1; k += VLEN) vf_store(even + k, vf_load_stride(in + 2 * k, 2));
        if (2 * k < x1) FN(split_tail)(even + k, in + 2 * k, x1 - 2 * k);
        k = pl / 2; /* first odd one */
        for (; 2 * (k + VLEN) + 1 <= x1; k += VLEN) vf_store(odd + k, vf_load_stride(in + 2 * k + 1, 2));
        if (2 * k + 1 < x1) FN(split_tail)(odd + k, in + 2 * k + 1, x1 - 2 * k - 1);
    }
}

static void FN(tap_offsets)(const FN(plane_layout) *L, int64_t kh, int64_t kw, int64_t dh, int64_t dw, int64_t *off) {
    for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
            off[i * kw + j] = i * dh * L->rowlen + (L->split ? (j & 1) * L->half + (j >> 1) : j * dw);
}

/* nv output vectors from `ow`: sum over taps of w[t] * plane[base + off[t] + ow*s] */
static inline __attribute__((always_inline)) void FN(dw_vectors)(const int nv, const int taps, const float *base,
                                                                 const int64_t *off, const float *w, const vf *wv,
                                                                 int64_t s, vf b0, const x86_epilogue *e, float *dst,
                                                                 int last_n) {
    vf acc[DW_NV];
    for (int v = 0; v < nv; ++v) acc[v] = b0;
    for (int t = 0; t < taps; ++t) {
        const vf wt = wv ? wv[t] : vf_set1(w[t]);
        const float *p = base + off[t];
        for (int v = 0; v < nv; ++v) acc[v] = vf_fma(wt, vf_load_stride(p + v * VLEN * s, s), acc[v]);
    }
    if (e->act == MNN_ACT_RELU) /* relu and clip in registers; others by act_row after the row */
        for (int v = 0; v < nv; ++v) acc[v] = vf_relu(acc[v]);
    else if (e->act == MNN_ACT_CLIP)
        for (int v = 0; v < nv; ++v) acc[v] = vf_clamp(acc[v], vf_set1(e->act_alpha), vf_set1(e->act_beta));
    for (int v = 0; v < nv - 1; ++v) vf_store(dst + v * VLEN, acc[v]);
    vf_store_n(dst + (nv - 1) * VLEN, acc[nv - 1], last_n);
}

/* one output row of a kh x kw depthwise filter; taps9: the 3x3 case, weights in registers */
static inline __attribute__((always_inline)) void FN(dw_row)(const int taps9, const float *base, const int64_t *off,
                                                             int taps, const float *w, const vf *wv, int64_t s,
                                                             vf b0, const x86_epilogue *e, float *dst, int64_t OW) {
    int64_t ow = 0;
    for (; ow + DW_NV * VLEN <= OW; ow += DW_NV * VLEN)
        FN(dw_vectors)(DW_NV, taps9 ? 9 : taps, base + ow * s, off, w, wv, s, b0, e, dst + ow, VLEN);
    for (; ow < OW; ow += VLEN)
        FN(dw_vectors)(1, taps9 ? 9 : taps, base + ow * s, off, w, wv, s, b0, e, dst + ow,
                       (int)(OW - ow < VLEN ? OW - ow : VLEN));
}

/* A tile of nr output rows x nv vectors of a 3x3 filter, weights in registers.
 * One row of a small plane (OW of 7..56) is only one to four vectors, so a
 * row at a time leaves one chain of 9 dependent FMAs per vector: the loop
 * then waits on FMA latency, not throughput. Rows side by side give nr*nv
 * independent chains. `rstep` is the scratch distance between output rows. */
static inline __attribute__((always_inline)) void FN(dw_tile9)(const int nr, const int nv, const float *base,
                                                               int64_t rstep, const int64_t *off, const vf *wv,
                                                               int64_t s, vf b0, const x86_epilogue *e, float *dst,
                                                               int64_t OW, int last_n) {
    vf acc[DW_TILE_ROWS * 2];
    for (int a = 0; a < nr * nv; ++a) acc[a] = b0;
    for (int t = 0; t < 9; ++t) {
        for (int r = 0; r < nr; ++r) {
            const float *p = base + r * rstep + off[t];
            for (int v = 0; v < nv; ++v) acc[r * nv + v] = vf_fma(wv[t], vf_load_stride(p + v * VLEN * s, s), acc[r * nv + v]);
        }
    }
    if (e->act == MNN_ACT_RELU)
        for (int a = 0; a < nr * nv; ++a) acc[a] = vf_relu(acc[a]);
    else if (e->act == MNN_ACT_CLIP)
        for (int a = 0; a < nr * nv; ++a) acc[a] = vf_clamp(acc[a], vf_set1(e->act_alpha), vf_set1(e->act_beta));
    for (int r = 0; r < nr; ++r) {
        for (int v = 0; v < nv - 1; ++v) vf_store(dst + r * OW + v * VLEN, acc[r * nv + v]);
        vf_store_n(dst + r * OW + (nv - 1) * VLEN, acc[r * nv + nv - 1], last_n);
    }
}

/* nr output rows of a 3x3 filter: tiles of nr x 2 full vectors, then one vector (maybe partial) */
static inline __attribute__((always_inline)) void FN(dw_rows9)(const int nr, const float *base, int64_t rstep,
                                                               const int64_t *off, const vf *wv, int64_t s, vf b0,
                                                               const x86_epilogue *e, float *dst, int64_t OW) {
    int64_t ow = 0;
    for (; ow + 2 * VLEN <= OW; ow += 2 * VLEN)
        FN(dw_tile9)(nr, 2, base + ow * s, rstep, off, wv, s, b0, e, dst + ow, OW, VLEN);
    for (; ow < OW; ow += VLEN)
        FN(dw_tile9)(nr, 1, base + ow * s, rstep, off, wv, s, b0, e, dst + ow, OW,
                     (int)(OW - ow < VLEN ? OW - ow : VLEN));
}

/* nv vectors of a small plane's outputs taken along the flattened scratch rows (stride 1):
 * flat position q = oh * rowlen + ow reads pad[q + off[t]], so a vector spans rows and a 7x7
 * plane is 4 vectors (61 positions, 12 of them junk past a row's end) instead of 7 vectors of
 * 7 live lanes each; the results go to `tmp`, whose rows dw_flat_plane compacts into y. */
static inline __attribute__((always_inline)) void FN(dw_flat9)(const int nv, const float *base, const int64_t *off,
                                                               const vf *wv, vf b0, const x86_epilogue *e,
                                                               float *tmp) {
    vf acc[8];
    for (int v = 0; v < nv; ++v) acc[v] = b0;
    for (int t = 0; t < 9; ++t)
        for (int v = 0; v < nv; ++v) acc[v] = vf_fma(wv[t], vf_load(base + off[t] + v * VLEN), acc[v]);
    if (e->act == MNN_ACT_RELU)
        for (int v = 0; v < nv; ++v) acc[v] = vf_relu(acc[v]);
    else if (e->act == MNN_ACT_CLIP)
        for (int v = 0; v < nv; ++v) acc[v] = vf_clamp(acc[v], vf_set1(e->act_alpha), vf_set1(e->act_beta));
    for (int v = 0; v < nv; ++v) vf_store(tmp + v * VLEN, acc[v]);
}

/* what a thread's scratch holds: the padded plane (its padding filled once
 * per run) and, after it, the tap offsets */
typedef struct {
    float *pad, *tmp; /* tmp: dw_flat9's rows, when flat */
    int64_t *off;
    FN(plane_layout) L;
    int64_t PH, PW;
    int flat;
} FN(scratch);

static FN(scratch) FN(scratch_init)(float *work, int64_t per_thread, int64_t OH, int64_t OW, int64_t kh, int64_t kw,
                                    int64_t sh, int64_t sw, int64_t dh, int64_t dw, float fill) {
    FN(scratch) sc;
    const int64_t plane_floats = x86_scratch_offsets_at(per_thread, kh, kw);
    sc.pad = work;
    sc.off = (int64_t *)(work + plane_floats);
    sc.PH = (OH - 1) * sh + (kh - 1) * dh + 1;
    sc.PW = (OW - 1) * sw + (kw - 1) * dw + 1;
    sc.L = FN(layout_for)(sc.PW, sw, dw);
    /* flat when a row's vectors would leave over a quarter of their lanes idle; the scratch of
     * x86_depthwise_work_floats ends with room for the flat rows (x86_dw_flat_floats) */
    sc.flat = VLEN > 1 && kh == 3 && kw == 3 && sh == 1 && sw == 1 &&
              4 * sc.PW <= 3 * VLEN * ((OW + VLEN - 1) / VLEN);
    sc.tmp = work + plane_floats - x86_dw_flat_floats(OH, sc.PW);
    for (int64_t i = 0; i < plane_floats; ++i) work[i] = fill;
    FN(tap_offsets)(&sc.L, kh, kw, dh, dw, sc.off);
    return sc;
}

static void FN(depthwise_plane)(const float *x, const float *w, const float *bias, float *y, int64_t pi,
                                const x86_conv_geom *g, const x86_epilogue *e, const FN(scratch) *sc) {
    const int64_t taps = g->kh * g->kw, OW = g->OW, c = pi % g->C;
    const float *wc = w + c * taps;
    const vf b0 = vf_set1(bias ? bias[c] : 0.0f);
    float *dst = y + pi * g->OH * OW;
    const int64_t s = sc->L.s;
    FN(copy_plane)(x + pi * g->H * g->W, g->H, g->W, g->pt, g->pl, sc->PH, sc->PW, &sc->L, sc->pad);
    vf wv[9];
    if (taps == 9)
        for (int t = 0; t < 9; ++t) wv[t] = vf_set1(wc[t]);
    const int64_t rstep = g->sh * sc->L.rowlen;
    if (sc->flat) {
        const int64_t n = (g->OH - 1) * sc->L.rowlen + OW; /* flat positions up to the last output */
        for (int64_t q = 0; q < n;) { /* the vectors left, in blocks of 8, 4, 2, 1 */
            const int64_t left = (n - q + VLEN - 1) / VLEN;
            if (left >= 8) FN(dw_flat9)(8, sc->pad + q, sc->off, wv, b0, e, sc->tmp + q), q += 8 * VLEN;
            else if (left >= 4) FN(dw_flat9)(4, sc->pad + q, sc->off, wv, b0, e, sc->tmp + q), q += 4 * VLEN;
            else if (left >= 2) FN(dw_flat9)(2, sc->pad + q, sc->off, wv, b0, e, sc->tmp + q), q += 2 * VLEN;
            else FN(dw_flat9)(1, sc->pad + q, sc->off, wv, b0, e, sc->tmp + q), q += VLEN;
        }
        for (int64_t oh = 0; oh < g->OH; ++oh) FN(copy_n)(dst + oh * OW, sc->tmp + oh * sc->L.rowlen, OW);
        if (e->act > MNN_ACT_CLIP) FN(act_row)(e->act, e->act_alpha, e->act_beta, dst, dst, g->OH * OW);
        return;
    }
    int64_t oh = 0;
    if (taps == 9 && VLEN > 1) { /* row tiles; the rows left over below */
        for (; oh + DW_TILE_ROWS <= g->OH; oh += DW_TILE_ROWS) {
            const float *base = sc->pad + oh * rstep;
            if (s == 1) FN(dw_rows9)(DW_TILE_ROWS, base, rstep, sc->off, wv, 1, b0, e, dst + oh * OW, OW);
            else FN(dw_rows9)(DW_TILE_ROWS, base, rstep, sc->off, wv, s, b0, e, dst + oh * OW, OW);
        }
        for (; oh + 2 <= g->OH; oh += 2)
            FN(dw_rows9)(2, sc->pad + oh * rstep, rstep, sc->off, wv, s, b0, e, dst + oh * OW, OW);
    }
    for (; oh < g->OH; ++oh) {
        const float *base = sc->pad + oh * rstep;
        float *row = dst + oh * OW;
        if (taps == 9 && s == 1) FN(dw_row)(1, base, sc->off, 9, wc, wv, 1, b0, e, row, OW);
        else if (taps == 9) FN(dw_row)(1, base, sc->off, 9, wc, wv, s, b0, e, row, OW);
        else FN(dw_row)(0, base, sc->off, (int)taps, wc, NULL, s, b0, e, row, OW);
    }
    if (e->act > MNN_ACT_CLIP) FN(act_row)(e->act, e->act_alpha, e->act_beta, dst, dst, g->OH * OW);
}

/* inference (x86infer): planes in items of DW_PLANES for x86_parallel; each
 * worker sets up its scratch (padding fill, tap offsets) on its first item */
#define DW_PLANES 4
#define DW_MAX_WORKERS 64
typedef struct {
    const float *x, *w, *bias;
    float *y, *work;
    int64_t planes, per_thread;
    const x86_conv_geom *g;
    const x86_epilogue *e;
    FN(scratch) sc[DW_MAX_WORKERS];
    int ready[DW_MAX_WORKERS];
} FN(dw_job);

static void FN(dw_task)(void *ctx, int64_t item, int worker) {
    FN(dw_job) *J = (FN(dw_job) *)ctx;
    const x86_conv_geom *g = J->g;
    if (!J->ready[worker]) {
        J->sc[worker] = FN(scratch_init)(J->work + worker * J->per_thread, J->per_thread, g->OH, g->OW, g->kh, g->kw,
                                         g->sh, g->sw, g->dh, g->dw, 0.0f);
        J->ready[worker] = 1;
    }
    const int64_t p1 = (item + 1) * DW_PLANES < J->planes ? (item + 1) * DW_PLANES : J->planes;
    for (int64_t pi = item * DW_PLANES; pi < p1; ++pi) FN(depthwise_plane)(J->x, J->w, J->bias, J->y, pi, g, J->e,
                                                                          &J->sc[worker]);
}

#include "depthwise_cl_impl.h"

static void FN(depthwise)(const float *x, const float *w, const float *bias, float *y, int64_t planes,
                          const x86_conv_geom *g, const x86_epilogue *e, float *work, int threads) {
    const int64_t per_thread = x86_depthwise_work_floats(g, VLEN);
    if (planes > 0 && x86_dw_channels_last(g, VLEN)) {
        FN(depthwise_cl)(x, w, bias, y, planes / g->C, g, e, work, per_thread, threads);
        return;
    }
    if (threads > 1 && planes > 1) {
        FN(dw_job) J;
        J.x = x, J.w = w, J.bias = bias, J.y = y, J.work = work, J.planes = planes, J.per_thread = per_thread;
        J.g = g, J.e = e;
        memset(J.ready, 0, sizeof J.ready);
        x86_parallel(threads < DW_MAX_WORKERS ? threads : DW_MAX_WORKERS, (planes + DW_PLANES - 1) / DW_PLANES,
                     FN(dw_task), &J);
        return;
    }
    const FN(scratch) sc = FN(scratch_init)(work, per_thread, g->OH, g->OW, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw,
                                            0.0f);
    for (int64_t pi = 0; pi < planes; ++pi) FN(depthwise_plane)(x, w, bias, y, pi, g, e, &sc);
}

#endif
