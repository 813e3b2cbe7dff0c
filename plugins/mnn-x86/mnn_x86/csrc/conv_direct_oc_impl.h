/* inference (x86infer): direct convolution with the output channels along the vectors (YOLOv8's
 * downsampling 3x3s at stride 2: 16 -> 32 on 160x160 down to 128 -> 256 on 20x20). Generic over `vf`
 * (VLEN > 1); included by each isa_*.c after gemm_impl.h (copy_n, act_row) and gemm_pack_impl.h.
 *
 * conv_direct_impl.h runs pixels along the vectors: on output rows of 10-40 pixels its 32-pixel tile
 * is a third to two thirds empty, and at stride 2 every tap is an even/odd-split load. im2col + GEMM
 * writes and reads back a K x pixels panel. Here a register tile of DCO_NB vectors of output channels
 * x up to DCO_MAXP consecutive pixels of one output row sums over the K = C * kh * kw taps: per tap
 * DCO_NB weight vectors (packed [block][K][DCO_NB * VLEN]) and one broadcast input float per pixel,
 * read from a padded strip of input rows at any stride. A row's pixels are cut into tiles of equal
 * size, so rows of 10, 20 or 40 waste no lanes. The tiles of a band of output rows go to the
 * worker's scratch as [pixel][channel] and are transposed into the NCHW planes (VLEN x VLEN blocks in
 * registers), or, to an NC16 output, straight into its blocks. An NC16 input's strip keeps the blocks
 * (pixels 16 floats apart): the broadcasts read either. Work items: (image, band of output rows, part
 * of the channel blocks). */
#ifndef MNN_X86_CONV_DIRECT_OC_IMPL_H
#define MNN_X86_CONV_DIRECT_OC_IMPL_H

#if VLEN > 1
#define DCO_NB 2 /* output-channel vectors of a tile (dco_tile: DCO_NB or one) */
#define DCO_MAXP 12 /* pixels of a tile, at most: DCO_NB * DCO_MAXP accumulators (DCO_TILE_SWITCH's cases) */
#ifndef DCO_ROWS /* output rows of a band, fewer when the items would be too few for the threads */
#define DCO_ROWS 4
#endif
#define DCO_OCB (DCO_NB * VLEN) /* output channels of a block */

/* the padded strip's row length: every tap of a row's last pixel inside */
static int64_t FN(dco_rowlen)(const x86_conv_geom *g) { return (g->OW - 1) * g->sw + g->kw; }

/* floats of one channel's strip for `rows` output rows (of a block's, from an NC16 input: X86_NC16 times that) */
static int64_t FN(dco_channel_floats)(const x86_conv_geom *g, int64_t rows) {
    return ((rows - 1) * g->sh + g->kh) * FN(dco_rowlen)(g);
}

/* a worker's scratch: the strip of C channels (whole blocks from an NC16 input), then the band's results
 * [rows * OW][DCO_OCB] (64-byte aligned) */
static int64_t FN(dco_strip_floats)(const x86_conv_geom *g, int64_t rows) {
    const int64_t C = g->in_nc16 ? x86_nc16_channels(g->C) : g->C;
    return (C * FN(dco_channel_floats)(g, rows) + 15) / 16 * 16;
}

static void FN(dco_plan)(const x86_conv_geom *g, int64_t N, int64_t O, int threads, int64_t *rows, int64_t *parts,
                         int64_t *worker_floats, int64_t *w_floats) {
    const int64_t K = g->C * g->kh * g->kw, blocks = (O + DCO_OCB - 1) / DCO_OCB;
    const int64_t want = threads > 1 ? X86_ITEMS_PER_THREAD * (int64_t)threads : 1;
    int64_t r = DCO_ROWS < g->OH ? DCO_ROWS : (g->OH > 0 ? g->OH : 1), p = 1;
    while (r > 1 && N * ((g->OH + r - 1) / r) < want) r /= 2;
    while (p < blocks && N * ((g->OH + r - 1) / r) * p < want) p *= 2;
    *rows = r;
    *parts = p < blocks ? p : (blocks > 0 ? blocks : 1);
    *worker_floats = FN(dco_strip_floats)(g, r) + (r * g->OW * DCO_OCB + 15) / 16 * 16;
    *w_floats = blocks * K * DCO_OCB;
}

/* wd[(b*K + k)*DCO_OCB + o] = w[(b*DCO_OCB + o)*K + k]; channels past O are zeros */
static void FN(dco_pack)(const float *w, int64_t O, int64_t K, float *wd) {
    const int64_t blocks = (O + DCO_OCB - 1) / DCO_OCB;
    for (int64_t b = 0; b < blocks; ++b)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t o = 0; o < DCO_OCB; ++o)
                wd[(b * K + k) * DCO_OCB + o] = b * DCO_OCB + o < O ? w[(b * DCO_OCB + o) * K + k] : 0.0f;
}

/* Where a tile reads: tap (0, 0) of its first pixel and first channel at in; pixels ps floats apart (1 in
 * a plain strip, X86_NC16 in one of blocks), rows rs; channels cs apart within a group of `lanes` (all C
 * in a plain strip, a block's 16 in one of blocks), groups cg apart. */
typedef struct {
    int64_t cs, cg, lanes, rs, C;
} FN(dco_src);

/* One tile: np pixels (sw pixels apart in the strip) x nb vectors of output channels (nb <= DCO_NB: a
 * last block of at most VLEN channels computes one), summed from the bias b0 over C channels of kh x kw
 * taps; relu / clip in registers, vector v of pixel p stored at out[p * ops + v * ovs]. np, nb, sw and
 * ps are constants where inlined. */
static inline __attribute__((always_inline)) void FN(dco_tile)(const int np, const int nb, const int64_t sw,
                                                               const int64_t ps, const float *in,
                                                               const FN(dco_src) *S, const int kh, const int kw,
                                                               const float *wb, const vf *b0, const x86_epilogue *e,
                                                               float *out, int64_t ops, int64_t ovs) {
    vf acc[DCO_MAXP][DCO_NB];
    for (int p = 0; p < np; ++p)
        for (int v = 0; v < nb; ++v) acc[p][v] = b0[v];
    for (int64_t c0 = 0; c0 < S->C; c0 += S->lanes, in += S->cg) {
        const int64_t cn = S->C - c0 < S->lanes ? S->C - c0 : S->lanes;
        const float *ic = in;
        for (int64_t c = 0; c < cn; ++c, ic += S->cs)
            for (int i = 0; i < kh; ++i)
                for (int j = 0; j < kw; ++j, wb += DCO_OCB) {
                    const float *x = ic + i * S->rs + j * ps;
                    vf w[DCO_NB];
                    for (int v = 0; v < nb; ++v) w[v] = vf_load(wb + v * VLEN);
                    for (int p = 0; p < np; ++p) {
                        const vf xp = vf_set1(x[p * sw * ps]);
                        for (int v = 0; v < nb; ++v) acc[p][v] = vf_fma(xp, w[v], acc[p][v]);
                    }
                }
    }
    if (e->act == MNN_ACT_RELU) {
        for (int p = 0; p < np; ++p)
            for (int v = 0; v < nb; ++v) acc[p][v] = vf_relu(acc[p][v]);
    } else if (e->act == MNN_ACT_CLIP) {
        const vf lo = vf_set1(e->act_alpha), hi = vf_set1(e->act_beta);
        for (int p = 0; p < np; ++p)
            for (int v = 0; v < nb; ++v) acc[p][v] = vf_clamp(acc[p][v], lo, hi);
    }
    for (int p = 0; p < np; ++p)
        for (int v = 0; v < nb; ++v) vf_store(out + p * ops + v * ovs, acc[p][v]);
}

/* the tile of np pixels and nb vectors, both made constants (np 1..DCO_MAXP), at stride SW, pixels PS
 * floats apart, KH x KW taps */
#define DCO_TILE_CASE(NP)                                                                                           \
    case NP:                                                                                                        \
        if (nb == DCO_NB) FN(dco_tile)(NP, DCO_NB, SW, PS, in, S, KH, KW, wb, b0, e, out, ops, ovs);                 \
        else FN(dco_tile)(NP, 1, SW, PS, in, S, KH, KW, wb, b0, e, out, ops, ovs);                                   \
        break;
#define DCO_TILE_SWITCH                                                                                             \
    switch (np) {                                                                                                   \
        DCO_TILE_CASE(1) DCO_TILE_CASE(2) DCO_TILE_CASE(3) DCO_TILE_CASE(4) DCO_TILE_CASE(5) DCO_TILE_CASE(6)       \
        DCO_TILE_CASE(7) DCO_TILE_CASE(8) DCO_TILE_CASE(9) DCO_TILE_CASE(10) DCO_TILE_CASE(11) DCO_TILE_CASE(12)    \
    }

/* 3x3 at stride 2 (a plain strip or one of blocks) and 1: the taps and the pixels' offsets constants; any
 * kernel at stride 2 on a plain strip (ConvNeXt's 2x2s: the pixels' offsets constants); any other */
#define DCO_TILE_FN(NAME)                                                                                           \
    static void FN(NAME)(int np, int nb, int64_t sw, int64_t ps, const float *in, const FN(dco_src) *S, int kh,     \
                         int kw, const float *wb, const vf *b0, const x86_epilogue *e, float *out, int64_t ops,       \
                         int64_t ovs) {                                                                             \
        (void)sw, (void)ps, (void)kh, (void)kw;                                                                     \
        DCO_TILE_SWITCH                                                                                             \
    }
#define KH 3
#define KW 3
#define SW 2
#define PS 1
DCO_TILE_FN(dco_tile_3x3s2)
#undef PS
#define PS X86_NC16
DCO_TILE_FN(dco_tile_3x3s2_nc16)
#undef PS
#undef SW
#define SW 1
#define PS 1
DCO_TILE_FN(dco_tile_3x3s1)
#undef PS
#undef SW
#undef KH
#undef KW
#define KH kh
#define KW kw
#define SW 2
#define PS 1
DCO_TILE_FN(dco_tile_s2)
#undef PS
#undef SW
#define SW sw
#define PS ps
DCO_TILE_FN(dco_tile_any)
#undef PS
#undef SW
#undef KH
#undef KW
#undef DCO_TILE_FN
#undef DCO_TILE_SWITCH
#undef DCO_TILE_CASE

typedef struct {
    const float *x, *wd, *bias;
    float *y, *work;
    const x86_conv_geom *g;
    const x86_epilogue *e;
    int64_t O, rows, row_blocks, parts, worker_floats;
} FN(dco_job);

/* Copies the input rows that output rows [oh0, oh1) of image n read into the strip (C channels of
 * rows rowlen floats, or of an NC16 input its blocks of rows of rowlen pixels; zeros where the taps
 * reach padding). */
static void FN(dco_fill)(const FN(dco_job) *J, int64_t n, int64_t oh0, int64_t oh1, float *strip) {
    const x86_conv_geom *g = J->g;
    const int64_t ps = g->in_nc16 ? X86_NC16 : 1, planes = g->in_nc16 ? (g->C + X86_NC16 - 1) / X86_NC16 : g->C;
    const int64_t PW = FN(dco_rowlen)(g), rin = (oh1 - oh0 - 1) * g->sh + g->kh;
    const int64_t cs = FN(dco_channel_floats)(g, J->rows) * ps;
    const int64_t x1 = g->pl + g->W < PW ? g->pl + g->W : PW; /* strip columns that hold input */
    for (int64_t c = 0; c < planes; ++c) {
        const float *src = J->x + (n * planes + c) * g->H * g->W * ps;
        for (int64_t r = 0; r < rin; ++r) {
            float *row = strip + c * cs + r * PW * ps;
            const int64_t sy = oh0 * g->sh - g->pt + r;
            if (sy < 0 || sy >= g->H || x1 <= g->pl) {
                memset(row, 0, (size_t)(PW * ps) * sizeof(float));
                continue;
            }
            for (int64_t i = 0; i < g->pl * ps; ++i) row[i] = 0.0f;
            FN(copy_n)(row + g->pl * ps, src + sy * g->W * ps, (x1 - g->pl) * ps);
            for (int64_t i = x1 * ps; i < PW * ps; ++i) row[i] = 0.0f;
        }
    }
}

/* np pixels of a band's results [pixel][DCO_OCB] (their activation applied) into nc planes of y from pixel p0 */
static void FN(dco_store)(const float *buf, int64_t np, int64_t nc, float *y, int64_t plane, int64_t p0) {
    for (int64_t q = 0; q < np; q += VLEN) {
        const int n = (int)(np - q < VLEN ? np - q : VLEN);
        for (int64_t c0 = 0; c0 < nc; c0 += VLEN) {
            vf r[VLEN];
            for (int k = 0; k < VLEN; ++k) r[k] = k < n ? vf_load(buf + (q + k) * DCO_OCB + c0) : vf_zero();
            vf_transpose(r);
            const int64_t lanes = nc - c0 < VLEN ? nc - c0 : VLEN;
            for (int l = 0; l < lanes; ++l) vf_store_n(y + (c0 + l) * plane + p0 + q, r[l], n);
        }
    }
}

/* item = (image, band of output rows, part of the channel blocks) */
static void FN(dco_task)(void *ctx, int64_t item, int worker) {
    const FN(dco_job) *J = (const FN(dco_job) *)ctx;
    const x86_conv_geom *g = J->g;
    const int64_t part = item % J->parts, rb = (item / J->parts) % J->row_blocks, n = item / (J->parts * J->row_blocks);
    const int64_t oh0 = rb * J->rows, oh1 = oh0 + J->rows < g->OH ? oh0 + J->rows : g->OH;
    const int64_t blocks = (J->O + DCO_OCB - 1) / DCO_OCB, per_part = (blocks + J->parts - 1) / J->parts;
    const int64_t b0 = part * per_part, b1 = b0 + per_part < blocks ? b0 + per_part : blocks;
    if (b0 >= b1) return;
    float *strip = J->work + worker * J->worker_floats, *buf = strip + FN(dco_strip_floats)(g, J->rows);
    FN(dco_fill)(J, n, oh0, oh1, strip);
    const int64_t K = g->C * g->kh * g->kw, PW = FN(dco_rowlen)(g), ps = g->in_nc16 ? X86_NC16 : 1;
    const int64_t cf = FN(dco_channel_floats)(g, J->rows);
    const FN(dco_src) S = {g->in_nc16 ? 1 : cf, cf * ps, g->in_nc16 ? X86_NC16 : g->C, PW * ps, g->C};
    const int64_t OW = g->OW, plane = g->OH * OW, tiles = (OW + DCO_MAXP - 1) / DCO_MAXP, np_band = (oh1 - oh0) * OW;
    const int64_t oblocks = (J->O + X86_NC16 - 1) / X86_NC16; /* an NC16 output's */
    for (int64_t b = b0; b < b1; ++b) {
        const float *wb = J->wd + b * K * DCO_OCB;
        const int64_t o0 = b * DCO_OCB, nc = J->O - o0 < DCO_OCB ? J->O - o0 : DCO_OCB;
        vf bias[DCO_NB];
        for (int v = 0; v < DCO_NB; ++v)
            bias[v] = J->bias ? vf_load_n(J->bias + o0 + v * VLEN, (int)(nc - v * VLEN)) : vf_zero();
        const int nb = nc > VLEN ? DCO_NB : 1, k33 = g->kh == 3 && g->kw == 3;
        /* vector v of pixel p: into the band's results, or into its NC16 block (of X86_NC16 channels) of y */
        float *const yb = J->y + (n * oblocks + o0 / X86_NC16) * plane * X86_NC16 + oh0 * OW * X86_NC16;
        const int64_t ops = g->out_nc16 ? X86_NC16 : DCO_OCB;
        const int64_t ovs = !g->out_nc16 ? VLEN : VLEN >= X86_NC16 ? plane * X86_NC16 : VLEN;
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const float *in = strip + (oh - oh0) * g->sh * PW * ps;
            float *out = (g->out_nc16 ? yb : buf) + (oh - oh0) * OW * ops;
            /* the row in tiles of equal size (within one pixel): rows of 10, 20, 40 fill them */
            for (int64_t t = 0, ow = 0; t < tiles; ++t) {
                const int np = (int)((OW - ow + (tiles - t) - 1) / (tiles - t));
                const float *at = in + ow * g->sw * ps;
                float *to = out + ow * ops;
                if (k33 && g->sw == 2 && ps == 1) FN(dco_tile_3x3s2)(np, nb, 2, 1, at, &S, 3, 3, wb, bias, J->e, to, ops, ovs);
                else if (k33 && g->sw == 2) FN(dco_tile_3x3s2_nc16)(np, nb, 2, ps, at, &S, 3, 3, wb, bias, J->e, to, ops, ovs);
                else if (k33 && g->sw == 1 && ps == 1) FN(dco_tile_3x3s1)(np, nb, 1, 1, at, &S, 3, 3, wb, bias, J->e, to, ops, ovs);
                else if (g->sw == 2 && ps == 1)
                    FN(dco_tile_s2)(np, nb, 2, 1, at, &S, (int)g->kh, (int)g->kw, wb, bias, J->e, to, ops, ovs);
                else
                    FN(dco_tile_any)(np, nb, g->sw, ps, at, &S, (int)g->kh, (int)g->kw, wb, bias, J->e, to, ops, ovs);
                ow += np;
            }
        }
        if (g->out_nc16) { /* the activations not applied in registers, on the band of each block */
            for (int64_t q = 0; J->e->act > MNN_ACT_CLIP && q * X86_NC16 < nc; ++q)
                FN(act_row)(J->e->act, J->e->act_alpha, J->e->act_beta, yb + q * plane * X86_NC16, yb + q * plane * X86_NC16,
                            np_band * X86_NC16);
            continue;
        }
        if (J->e->act > MNN_ACT_CLIP) FN(act_row)(J->e->act, J->e->act_alpha, J->e->act_beta, buf, buf, np_band * DCO_OCB);
        FN(dco_store)(buf, np_band, nc, J->y + (n * J->O + o0) * plane, plane, oh0 * OW);
    }
}

/* N images; bias per output channel or NULL; rows, parts, worker_floats from dco_plan */
static void FN(dco_conv)(const float *x, const float *wd, const float *bias, float *y, int64_t N, int64_t O,
                         const x86_conv_geom *g, const x86_epilogue *e, int64_t rows, int64_t parts,
                         int64_t worker_floats, float *work, int threads) {
    FN(dco_job) J = {x, wd, bias, y, work, g, e, O, rows, (g->OH + rows - 1) / rows, parts, worker_floats};
    const int64_t items = N * J.row_blocks * parts;
    if (threads > 1 && items > 1)
        x86_parallel(threads, items, FN(dco_task), &J);
    else
        for (int64_t t = 0; t < items; ++t) FN(dco_task)(&J, t, 0);
}
#endif

#endif
