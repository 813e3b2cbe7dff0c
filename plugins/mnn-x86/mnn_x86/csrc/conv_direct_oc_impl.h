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
 * registers). Work items: (image, band of output rows, part of the channel blocks). */
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

/* floats of one channel's strip for `rows` output rows */
static int64_t FN(dco_channel_floats)(const x86_conv_geom *g, int64_t rows) {
    return ((rows - 1) * g->sh + g->kh) * FN(dco_rowlen)(g);
}

/* a worker's scratch: the strip of C channels, then the band's results [rows * OW][DCO_OCB] (64-byte aligned) */
static int64_t FN(dco_strip_floats)(const x86_conv_geom *g, int64_t rows) {
    return (g->C * FN(dco_channel_floats)(g, rows) + 15) / 16 * 16;
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

/* One tile: np pixels (at in[p * sw] for tap (0, 0) of channel 0; channels cs, rows rs floats apart)
 * x nb vectors of output channels (nb <= DCO_NB: a last block of at most VLEN channels computes one),
 * summed from the bias b0 over C channels of kh x kw taps; relu / clip in registers, stored at
 * out[p * DCO_OCB]. np, nb and sw are constants where inlined. */
static inline __attribute__((always_inline)) void FN(dco_tile)(const int np, const int nb, const int64_t sw,
                                                               const float *in, int64_t cs, int64_t rs, int64_t C,
                                                               const int kh, const int kw, const float *wb,
                                                               const vf *b0, const x86_epilogue *e, float *out) {
    vf acc[DCO_MAXP][DCO_NB];
    for (int p = 0; p < np; ++p)
        for (int v = 0; v < nb; ++v) acc[p][v] = b0[v];
    for (int64_t c = 0; c < C; ++c, in += cs)
        for (int i = 0; i < kh; ++i)
            for (int j = 0; j < kw; ++j, wb += DCO_OCB) {
                const float *x = in + i * rs + j;
                vf w[DCO_NB];
                for (int v = 0; v < nb; ++v) w[v] = vf_load(wb + v * VLEN);
                for (int p = 0; p < np; ++p) {
                    const vf xp = vf_set1(x[p * sw]);
                    for (int v = 0; v < nb; ++v) acc[p][v] = vf_fma(xp, w[v], acc[p][v]);
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
        for (int v = 0; v < nb; ++v) vf_store(out + p * DCO_OCB + v * VLEN, acc[p][v]);
}

/* the tile of np pixels and nb vectors, both made constants (np 1..DCO_MAXP), at stride SW, KH x KW taps */
#define DCO_TILE_CASE(NP)                                                                                           \
    case NP:                                                                                                        \
        if (nb == DCO_NB) FN(dco_tile)(NP, DCO_NB, SW, in, cs, rs, C, KH, KW, wb, b0, e, out);                       \
        else FN(dco_tile)(NP, 1, SW, in, cs, rs, C, KH, KW, wb, b0, e, out);                                         \
        break;
#define DCO_TILE_SWITCH                                                                                             \
    switch (np) {                                                                                                   \
        DCO_TILE_CASE(1) DCO_TILE_CASE(2) DCO_TILE_CASE(3) DCO_TILE_CASE(4) DCO_TILE_CASE(5) DCO_TILE_CASE(6)       \
        DCO_TILE_CASE(7) DCO_TILE_CASE(8) DCO_TILE_CASE(9) DCO_TILE_CASE(10) DCO_TILE_CASE(11) DCO_TILE_CASE(12)    \
    }

/* 3x3 at stride 2 and 1: the taps and the pixels' offsets constants; any other kernel or stride */
#define KH 3
#define KW 3
#define SW 2
static void FN(dco_tile_3x3s2)(int np, int nb, const float *in, int64_t cs, int64_t rs, int64_t C, const float *wb,
                               const vf *b0, const x86_epilogue *e, float *out) {
    DCO_TILE_SWITCH
}
#undef SW
#define SW 1
static void FN(dco_tile_3x3s1)(int np, int nb, const float *in, int64_t cs, int64_t rs, int64_t C, const float *wb,
                               const vf *b0, const x86_epilogue *e, float *out) {
    DCO_TILE_SWITCH
}
#undef SW
#undef KH
#undef KW
#define KH kh
#define KW kw
#define SW sw
static void FN(dco_tile_any)(int np, int nb, int64_t sw, const float *in, int64_t cs, int64_t rs, int64_t C, int kh,
                             int kw, const float *wb, const vf *b0, const x86_epilogue *e, float *out) {
    DCO_TILE_SWITCH
}
#undef SW
#undef KH
#undef KW
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
 * rows rowlen floats, zeros where the taps reach padding). */
static void FN(dco_fill)(const FN(dco_job) *J, int64_t n, int64_t oh0, int64_t oh1, float *strip) {
    const x86_conv_geom *g = J->g;
    const int64_t PW = FN(dco_rowlen)(g), rin = (oh1 - oh0 - 1) * g->sh + g->kh, cs = FN(dco_channel_floats)(g, J->rows);
    const int64_t x1 = g->pl + g->W < PW ? g->pl + g->W : PW; /* strip columns that hold input */
    for (int64_t c = 0; c < g->C; ++c) {
        const float *src = J->x + (n * g->C + c) * g->H * g->W;
        for (int64_t r = 0; r < rin; ++r) {
            float *row = strip + c * cs + r * PW;
            const int64_t sy = oh0 * g->sh - g->pt + r;
            if (sy < 0 || sy >= g->H || x1 <= g->pl) {
                memset(row, 0, (size_t)PW * sizeof(float));
                continue;
            }
            if (g->pl > 0) memset(row, 0, (size_t)g->pl * sizeof(float));
            FN(copy_n)(row + g->pl, src + sy * g->W, x1 - g->pl);
            if (x1 < PW) memset(row + x1, 0, (size_t)(PW - x1) * sizeof(float));
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
    const int64_t K = g->C * g->kh * g->kw, PW = FN(dco_rowlen)(g), cs = FN(dco_channel_floats)(g, J->rows);
    const int64_t OW = g->OW, plane = g->OH * OW, tiles = (OW + DCO_MAXP - 1) / DCO_MAXP, np_band = (oh1 - oh0) * OW;
    for (int64_t b = b0; b < b1; ++b) {
        const float *wb = J->wd + b * K * DCO_OCB;
        const int64_t o0 = b * DCO_OCB, nc = J->O - o0 < DCO_OCB ? J->O - o0 : DCO_OCB;
        vf bias[DCO_NB];
        for (int v = 0; v < DCO_NB; ++v)
            bias[v] = J->bias ? vf_load_n(J->bias + o0 + v * VLEN, (int)(nc - v * VLEN)) : vf_zero();
        const int nb = nc > VLEN ? DCO_NB : 1, k33 = g->kh == 3 && g->kw == 3;
        for (int64_t oh = oh0; oh < oh1; ++oh) {
            const float *in = strip + (oh - oh0) * g->sh * PW;
            float *out = buf + (oh - oh0) * OW * DCO_OCB;
            /* the row in tiles of equal size (within one pixel): rows of 10, 20, 40 fill them */
            for (int64_t t = 0, ow = 0; t < tiles; ++t) {
                const int np = (int)((OW - ow + (tiles - t) - 1) / (tiles - t));
                const float *at = in + ow * g->sw;
                if (k33 && g->sw == 2) FN(dco_tile_3x3s2)(np, nb, at, cs, PW, g->C, wb, bias, J->e, out + ow * DCO_OCB);
                else if (k33 && g->sw == 1) FN(dco_tile_3x3s1)(np, nb, at, cs, PW, g->C, wb, bias, J->e, out + ow * DCO_OCB);
                else
                    FN(dco_tile_any)(np, nb, g->sw, at, cs, PW, g->C, (int)g->kh, (int)g->kw, wb, bias, J->e,
                                     out + ow * DCO_OCB);
                ow += np;
            }
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
