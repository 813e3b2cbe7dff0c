/* Depthwise convolution on channels-last blocks: VLEN channels at a time, vectors along channels.
 * Generic over `vf`; included by depthwise_impl.h, which chooses between this and the plane path.
 *
 * Why: the plane path (depthwise_impl.h) puts a vector along an output row. A 7x7 or 14x14 plane
 * leaves most lanes idle and pays a per-plane setup, and stride 2 needs its rows split into even and
 * odd columns first. Here an item is a block of VLEN channels of one image and a strip of output
 * rows: the strip's input rows are transposed into a zero-padded scratch [row][col][VLEN] (a 16 x 16
 * register transpose per 16 pixels, taken along the flattened rows, so a 7-wide row does not cost a
 * whole transpose), every output pixel is then one vector (all lanes live, whatever the plane's
 * width; a stride is a pixel step, a dilation a tap step) and the results are transposed back to
 * NCHW. Weights are transposed per block to one vector per tap.
 *
 * An NC16 side (x86.h) needs no transpose: an NC16 input's rows are copied into the padded scratch
 * as they are (VLEN lanes of each 16-channel pixel), and an NC16 output is written by the tiles
 * straight into its blocks (a pixel 16 floats on from the last instead of VLEN).
 *
 * A channels-last output (out_cl: [N][OH][OW][C], x86.DepthwiseNHWC) needs no transpose either: the
 * tiles write a pixel's VLEN channels where they belong (C floats on from the last pixel's); a last
 * block of fewer than VLEN channels goes through the strip's buffer, its real lanes copied out.
 *
 * Scratch per thread (x86_dw_cl_floats): the strip's padded input rows, its output pixels, the tap
 * vectors. The padding columns are zeroed once per thread (never written after); padding rows are
 * zeroed by each strip that has them. */
#ifndef MNN_X86_DEPTHWISE_CL_IMPL_H
#define MNN_X86_DEPTHWISE_CL_IMPL_H

/* output pixels side by side in a register tile: independent FMA chains, and each tap's weight
 * vector loaded once per tile (AVX2 has 16 registers: 4 accumulators + weight + input) */
#if VLEN >= 16
#define DWC_TILE 8
#else
#define DWC_TILE 4
#endif

typedef struct {
    float *in, *out, *wv; /* padded input rows x PW x VLEN; strip pixels x VLEN; taps x VLEN */
    int64_t PW, SR, RIN;  /* padded width, output rows per strip, input rows per strip */
} FN(cl_scratch);

static FN(cl_scratch) FN(cl_scratch_init)(float *work, const x86_conv_geom *g) {
    FN(cl_scratch) sc;
    sc.PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    sc.SR = x86_dw_cl_rows(g);
    sc.RIN = (sc.SR - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    sc.in = work;
    sc.out = sc.in + sc.RIN * sc.PW * X86_DW_CL_LANES;
    sc.wv = sc.out + (sc.SR * g->OW + X86_DW_CL_LANES) * X86_DW_CL_LANES;
    memset(sc.in, 0, (size_t)(sc.RIN * sc.PW * VLEN) * sizeof(float)); /* the padding columns */
    return sc;
}

/* the kh*kw tap vectors of channels [c0, c0 + nc): wv[t][lane] = w[c0 + lane][t] (0 past nc) */
static void FN(cl_weights)(const float *w, int64_t taps, int64_t c0, int nc, float *wv) {
    for (int64_t t0 = 0; t0 < taps; t0 += VLEN) {
        const int nt = (int)(taps - t0 < VLEN ? taps - t0 : VLEN);
        vf r[VLEN];
#pragma GCC unroll 16
        for (int l = 0; l < VLEN; ++l) r[l] = l < nc ? vf_load_n(w + (c0 + l) * taps + t0, nt) : vf_zero();
        vf_transpose(r);
#pragma GCC unroll 16
        for (int t = 0; t < VLEN; ++t)
            if (t < nt) vf_store(wv + (t0 + t) * VLEN, r[t]);
    }
}

/* Input rows [sy0, sy1) of channels x[0..nc) (planes H*W apart) into the scratch, whose row 0 is
 * padded row py0. Pixels are taken VLEN at a time along the flattened rows; columns the output
 * never reads (past the padded width) are skipped. The loops over lanes are unrolled so that the
 * transposed vectors stay in registers. */
static void FN(cl_transpose_in)(const float *x, int nc, const x86_conv_geom *g, const FN(cl_scratch) *sc,
                                int64_t py0, int64_t sy0, int64_t sy1) {
    const int64_t HW = g->H * g->W, W = g->W, q1 = sy1 * W, PW = sc->PW, pl = g->pl;
    const int64_t wv = W < PW - pl ? W : PW - pl; /* input columns that land in the scratch */
    float *const in = sc->in;
    int64_t sx = 0, at = ((sy0 + g->pt - py0) * PW + pl) * VLEN; /* where pixel (sy, sx) goes */
    for (int64_t q = sy0 * W; q < q1; q += VLEN) {
        const int n = (int)(q1 - q < VLEN ? q1 - q : VLEN);
        vf r[VLEN];
#pragma GCC unroll 16
        for (int l = 0; l < VLEN; ++l) r[l] = l < nc ? vf_load_n(x + l * HW + q, n) : vf_zero();
        vf_transpose(r);
        if (n == VLEN && sx + VLEN <= wv) { /* the common case: VLEN pixels of one row */
#pragma GCC unroll 16
            for (int k = 0; k < VLEN; ++k) vf_store(in + at + k * VLEN, r[k]);
            at += VLEN * VLEN;
            if ((sx += VLEN) == W) sx = 0, at += (PW - W) * VLEN;
            continue;
        }
#pragma GCC unroll 16
        for (int k = 0; k < VLEN; ++k) {
            if (k >= n) break;
            if (sx < wv) vf_store(in + at, r[k]);
            at += VLEN;
            if (++sx == W) sx = 0, at += (PW - W) * VLEN;
        }
    }
}

/* Input rows [sy0, sy1) of an NC16 input (x at the item's first lane, pixels 16 floats apart) into
 * the scratch, whose row 0 is padded row py0: a copy, the lanes are already side by side. */
static void FN(cl_copy_in)(const float *x, const x86_conv_geom *g, const FN(cl_scratch) *sc, int64_t py0,
                           int64_t sy0, int64_t sy1) {
    const int64_t W = g->W, PW = sc->PW, pl = g->pl;
    const int64_t wv = W < PW - pl ? W : PW - pl; /* input columns that land in the scratch */
    for (int64_t sy = sy0; sy < sy1 && wv > 0; ++sy) {
        float *dst = sc->in + ((sy + g->pt - py0) * PW + pl) * VLEN;
        const float *src = x + sy * W * X86_NC16;
        for (int64_t sx = 0; sx < wv; ++sx) {
            __builtin_prefetch(src + (W + sx) * X86_NC16); /* the next row's pixel: one row ahead */
            vf_store(dst + sx * VLEN, vf_load(src + sx * X86_NC16));
        }
    }
}

/* nt output pixels of one row, DWC_TILE at most: in points at the first one's top-left tap, input
 * pixels ps floats apart (VLEN in the scratch, 16 in x86.ConvDepthwise's NC16 rows: pwdw_impl.h); out
 * at the first output pixel, the next ostep floats on (VLEN in the scratch, 16 in an NC16 output) */
static inline __attribute__((always_inline)) void FN(cl_tile)(const int nt, const int64_t kh, const int64_t kw,
                                                              const float *in, int64_t rowstep, int64_t px_step,
                                                              int64_t dh, int64_t dw, const int64_t ps, const float *wv,
                                                              vf b0, const x86_epilogue *e, float *out, int64_t ostep) {
    vf acc[DWC_TILE];
    for (int p = 0; p < nt; ++p) acc[p] = b0;
    for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
            const vf wt = vf_load(wv + (i * kw + j) * VLEN);
            const float *src = in + (i * dh * rowstep + j * dw) * ps;
            for (int p = 0; p < nt; ++p) acc[p] = vf_fma(wt, vf_load(src + p * px_step * ps), acc[p]);
        }
    if (e->act == MNN_ACT_RELU)
        for (int p = 0; p < nt; ++p) acc[p] = vf_relu(acc[p]);
    else if (e->act == MNN_ACT_CLIP)
        for (int p = 0; p < nt; ++p) acc[p] = vf_clamp(acc[p], vf_set1(e->act_alpha), vf_set1(e->act_beta));
    for (int p = 0; p < nt; ++p) vf_store(out + p * ostep, acc[p]);
}

/* one output row: tiles of DWC_TILE pixels, then halves of it for the rest */
static inline __attribute__((always_inline)) void FN(cl_row)(const int64_t kh, const int64_t kw, const float *in,
                                                             int64_t rowstep, int64_t sw, int64_t dh, int64_t dw,
                                                             const int64_t ps, const float *wv, vf b0,
                                                             const x86_epilogue *e, float *out, int64_t ostep,
                                                             int64_t OW) {
    int64_t ow = 0;
    for (; ow + DWC_TILE <= OW; ow += DWC_TILE)
        FN(cl_tile)(DWC_TILE, kh, kw, in + ow * sw * ps, rowstep, sw, dh, dw, ps, wv, b0, e, out + ow * ostep, ostep);
    if (DWC_TILE > 4 && ow + 4 <= OW)
        FN(cl_tile)(4, kh, kw, in + ow * sw * ps, rowstep, sw, dh, dw, ps, wv, b0, e, out + ow * ostep, ostep), ow += 4;
    if (ow + 2 <= OW)
        FN(cl_tile)(2, kh, kw, in + ow * sw * ps, rowstep, sw, dh, dw, ps, wv, b0, e, out + ow * ostep, ostep), ow += 2;
    if (ow < OW) FN(cl_tile)(1, kh, kw, in + ow * sw * ps, rowstep, sw, dh, dw, ps, wv, b0, e, out + ow * ostep, ostep);
}

/* the strip's pixels (np of them, from output pixel p0 of each plane) back to NCHW, VLEN at a time */
static void FN(cl_transpose_out)(const float *out, int64_t np, int nc, float *y, int64_t plane, int64_t p0,
                                 const x86_epilogue *e) {
    for (int64_t q = 0; q < np; q += VLEN) {
        const int n = (int)(np - q < VLEN ? np - q : VLEN);
        vf r[VLEN];
#pragma GCC unroll 16
        for (int k = 0; k < VLEN; ++k) r[k] = k < n ? vf_load(out + (q + k) * VLEN) : vf_zero();
        vf_transpose(r);
#pragma GCC unroll 16
        for (int l = 0; l < VLEN; ++l)
            if (l < nc) vf_store_n(y + l * plane + p0 + q, r[l], n);
    }
    if (e->act > MNN_ACT_CLIP) /* the activations not applied in registers */
        for (int l = 0; l < nc; ++l)
            FN(act_row)(e->act, e->act_alpha, e->act_beta, y + l * plane + p0, y + l * plane + p0, np);
}

/* Output rows [oh0, oh1) of VLEN channels (nc of them real) from padded input rows at `in` (padded row
 * oh0 * sh at its row 0; rows PW pixels long, pixels ps floats apart), taps wv, bias b0: into an NC16
 * output where they belong (y at the channels' lane of the block's first pixel), or through buf into
 * NCHW (y at their first plane); then the activations not applied in registers. cl_strip's and
 * x86.ConvDepthwise's (pwdw_impl.h) */
static void FN(cl_out_rows)(const float *in, const int64_t ps, int64_t PW, const x86_conv_geom *g, const float *wv,
                            vf b0, const x86_epilogue *e, int nc, int64_t oh0, int64_t oh1, float *y, float *buf) {
    /* the tiles store into the output itself where each of their vectors is VLEN real channels of a pixel */
    const int in_place = g->out_nc16 || (g->out_cl && nc == VLEN);
    const int64_t OW = g->OW, ostep = g->out_nc16 ? X86_NC16 : in_place ? g->C : VLEN;
    float *const out0 = in_place ? y + oh0 * OW * ostep : buf;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
        const float *src = in + (oh - oh0) * g->sh * PW * ps;
        float *out = out0 + (oh - oh0) * OW * ostep;
        if (g->kh == 3 && g->kw == 3) FN(cl_row)(3, 3, src, PW, g->sw, g->dh, g->dw, ps, wv, b0, e, out, ostep, OW);
        else FN(cl_row)(g->kh, g->kw, src, PW, g->sw, g->dh, g->dw, ps, wv, b0, e, out, ostep, OW);
    }
    const int64_t np = (oh1 - oh0) * OW;
    if (g->out_cl) {
        float *const yc = y + oh0 * OW * g->C;
        if (!in_place)
            for (int64_t p = 0; p < np; ++p) vf_store_n(yc + p * g->C, vf_load(buf + p * VLEN), nc);
        if (e->act > MNN_ACT_CLIP)
            for (int64_t p = 0; p < np; ++p) FN(act_row)(e->act, e->act_alpha, e->act_beta, yc + p * g->C, yc + p * g->C, nc);
    } else if (!g->out_nc16) {
        FN(cl_transpose_out)(buf, np, nc, y, g->OH * OW, oh0 * OW, e);
    } else if (e->act > MNN_ACT_CLIP) { /* only these VLEN lanes of each pixel */
        if (VLEN == X86_NC16) FN(act_row)(e->act, e->act_alpha, e->act_beta, out0, out0, np * X86_NC16);
        else
            for (int64_t p = 0; p < np; ++p)
                FN(act_row)(e->act, e->act_alpha, e->act_beta, out0 + p * X86_NC16, out0 + p * X86_NC16, VLEN);
    }
}

/* One strip: output rows [oh0, oh1) of the block; `carried` of its first padded rows are already
 * in the scratch (the previous strip's last ones) */
static void FN(cl_strip)(const float *x, float *y, int nc, int64_t oh0, int64_t oh1, int64_t carried,
                         const x86_conv_geom *g, const x86_epilogue *e, const FN(cl_scratch) *sc, vf b0) {
    const int64_t OW = g->OW, PW = sc->PW;
    const int64_t py0 = oh0 * g->sh, py1 = (oh1 - 1) * g->sh + (g->kh - 1) * g->dh + 1; /* padded rows read */
    const int64_t pn = py0 + carried; /* the first row to fill */
    const int64_t sy0 = pn - g->pt > 0 ? pn - g->pt : 0, sy1 = py1 - g->pt < g->H ? py1 - g->pt : g->H;
    for (int64_t py = pn; py < py1; ++py) /* padding rows; a strip of the plane's middle has none */
        if (py < g->pt || py - g->pt >= g->H)
            memset(sc->in + (py - py0) * PW * VLEN, 0, (size_t)(PW * VLEN) * sizeof(float));
    if (sy0 < sy1 && g->in_nc16) FN(cl_copy_in)(x, g, sc, py0, sy0, sy1);
    else if (sy0 < sy1) FN(cl_transpose_in)(x, nc, g, sc, py0, sy0, sy1);
    FN(cl_out_rows)(sc->in, VLEN, PW, g, sc->wv, b0, e, nc, oh0, oh1, y, sc->out);
}

/* One item: channels [c0, c0 + nc) of one image (x, y at their first plane), output rows [oh0, oh1),
 * strip after strip. The input rows two strips share (kernel height - stride) move to the top of the
 * scratch rather than being transposed again: with strips of a few rows that would be most of the
 * transposing. */
static void FN(cl_item)(const float *x, const float *w, const float *bias, float *y, int64_t c0, int nc,
                        int64_t oh0, int64_t oh1, const x86_conv_geom *g, const x86_epilogue *e,
                        const FN(cl_scratch) *sc) {
    FN(cl_weights)(w, g->kh * g->kw, c0, nc, sc->wv);
    vf b0 = vf_zero();
    if (bias) b0 = vf_load_n(bias + c0, nc);
    const int64_t shared = (g->kh - 1) * g->dh + 1 - g->sh, row = sc->PW * VLEN;
    /* an NC16 side: the block's first pixel, at this item's lane in it */
    x += g->in_nc16 ? x86_nc16_at(c0, 0, g->H * g->W) : c0 * g->H * g->W;
    y += g->out_nc16 ? x86_nc16_at(c0, 0, g->OH * g->OW) : g->out_cl ? c0 : c0 * g->OH * g->OW;
    for (int64_t r0 = oh0; r0 < oh1; r0 += sc->SR) {
        const int64_t r1 = r0 + sc->SR < oh1 ? r0 + sc->SR : oh1;
        int64_t carried = 0;
        if (r0 > oh0 && shared > 0) { /* the previous strip read padded rows up to r0*sh + shared */
            memmove(sc->in, sc->in + sc->SR * g->sh * row, (size_t)(shared * row) * sizeof(float));
            carried = shared;
        }
        FN(cl_strip)(x, y, nc, r0, r1, carried, g, e, sc, b0);
    }
}

/* items (image, channel block, range of output rows) for x86_parallel; each worker sets up its
 * scratch on its first */
typedef struct {
    const float *x, *w, *bias;
    float *y, *work;
    int64_t per_thread, blocks, ranges, range_rows; /* range_rows 0: the rows split evenly into ranges */
    const x86_conv_geom *g;
    const x86_epilogue *e;
    FN(cl_scratch) sc[DW_MAX_WORKERS];
    int ready[DW_MAX_WORKERS];
} FN(cl_job);

static void FN(cl_task)(void *ctx, int64_t item, int worker) {
    FN(cl_job) *J = (FN(cl_job) *)ctx;
    const x86_conv_geom *g = J->g;
    if (!J->ready[worker]) {
        J->sc[worker] = FN(cl_scratch_init)(J->work + worker * J->per_thread, g);
        J->ready[worker] = 1;
    }
    const int64_t cb = item % J->blocks, part = item / J->blocks % J->ranges, n = item / (J->ranges * J->blocks);
    const int64_t c0 = cb * VLEN, oh0 = J->range_rows ? part * J->range_rows : g->OH * part / J->ranges;
    const int64_t oh_end = J->range_rows ? oh0 + J->range_rows : g->OH * (part + 1) / J->ranges;
    const int64_t oh1 = oh_end < g->OH ? oh_end : g->OH;
    const int nc = (int)(g->C - c0 < VLEN ? g->C - c0 : VLEN);
    const int64_t cx = g->in_nc16 ? x86_nc16_channels(g->C) : g->C, cy = g->out_nc16 ? x86_nc16_channels(g->C) : g->C;
    FN(cl_item)(J->x + n * cx * g->H * g->W, J->w, J->bias, J->y + n * cy * g->OH * g->OW, c0, nc, oh0, oh1, g, J->e,
                &J->sc[worker]);
}

/* images = planes / C; work: x86_depthwise_work_floats per thread.
 * Items are (image, range of output rows, channel block), the block innermost. At two threads and
 * more a plane of 16x16 or more is cut into at least one range per thread, so that x86_parallel,
 * which gives each thread a contiguous run of items first, gives it the same rows of every block: the
 * pointwise kernel before and after takes pixels the same way, and a layer then mostly reads what its
 * own core wrote. Smaller planes are shared by blocks: a range of a few rows costs more in set-up
 * than it saves (the measurements: benchmarks/RESULTS.md, "Notes moved from the code"). Ranges cut by rows split the
 * rows evenly (the threads' runs of ranges then hold as many rows: with whole strips per range,
 * MobileNetV2's 112x112 layer gave one thread 60 rows and the other 52, and the first waited for the
 * second's stolen item); others are whole strips where there are enough strips. */
static void FN(depthwise_cl)(const float *x, const float *w, const float *bias, float *y, int64_t images,
                             const x86_conv_geom *g, const x86_epilogue *e, float *work, int64_t per_thread,
                             int threads) {
    FN(cl_job) J;
    J.x = x, J.w = w, J.bias = bias, J.y = y, J.work = work, J.per_thread = per_thread, J.g = g, J.e = e;
    J.blocks = (g->C + VLEN - 1) / VLEN;
    const int64_t SR = x86_dw_cl_rows(g), strips = (g->OH + SR - 1) / SR, want = X86_ITEMS_PER_THREAD * (int64_t)threads;
    int64_t ranges = threads > 1 && images * J.blocks < want ? (want + images * J.blocks - 1) / (images * J.blocks) : 1;
    const int by_rows = threads > 1 && g->OH * g->OW >= 256;
    if (by_rows && ranges < threads) ranges = threads;
    if (by_rows) {
        J.range_rows = 0;
        J.ranges = ranges < g->OH ? ranges : g->OH;
    } else {
        J.range_rows = ranges <= strips ? (strips + ranges - 1) / ranges * SR : SR;
        J.ranges = (g->OH + J.range_rows - 1) / J.range_rows;
    }
    memset(J.ready, 0, sizeof J.ready);
    x86_parallel(threads < DW_MAX_WORKERS ? threads : DW_MAX_WORKERS, images * J.blocks * J.ranges, FN(cl_task), &J);
}

#endif
