/* inference (x86infer): direct convolution for few input channels (the stems: 3 -> 64 at 224x224)
 * and for stride-1 1-D kernels of any channel count (openWakeWord's 3x1s and 1x3s: dc_flat below).
 * Generic over `vf`; included by each isa_*.c after depthwise_impl.h (whose padded-plane layout,
 * row copy and tap offsets it reuses) and gemm_impl.h (the tile epilogue).
 *
 * With K = C*kh*kw of 27 or 147, im2col + GEMM writes and reads back a K x pixels panel for little
 * arithmetic per element, and the GEMM's row panels of MR output channels leave some empty (64
 * channels: 70 rows of 14). Here a work item copies the input rows its output rows need into a
 * padded strip (zeros in the padding; with stride 2 each row split into even and odd columns, so
 * every tap is one contiguous load), and a register tile of DIR_OCB output channels x DIR_NV vectors
 * of consecutive output pixels of one row sums over the K taps: per tap DIR_NV loads of the strip and
 * DIR_OCB broadcast weights (packed [block][K][DIR_OCB] at prepare), DIR_OCB * DIR_NV FMAs. The tile
 * starts at the bias and ends in the GEMM's tile epilogue (the fused activation), storing straight
 * into the NCHW rows. Work items: (image, strip of output rows, part of the channel blocks).
 * Measured on Zen 4, one thread, kernel alone: 7x7 3->64 at 224 (ResNet-18) 104-110 GF/s, the
 * 3x3 stride-2 stems 80-100 GF/s (RESULTS.md, "direct convolution for the stems"). */
#ifndef MNN_X86_CONV_DIRECT_IMPL_H
#define MNN_X86_CONV_DIRECT_IMPL_H

/* The tile: DIR_OCB channels (broadcast weights) x DIR_NV vectors of pixels (the GEMM's NR, so full
 * tiles take the epilogue's full-tile stores), with the strip loads and one broadcast in registers.
 * 8 and 4 channels divide the stems' 64 and 32 outputs. Tried on the three stems (kernel alone,
 * interleaved): AVX-512 8x2 against 8x3, 12x2 and 6x3 (8x3 0-20 % slower, the others more);
 * AVX2 4x2 against 4x3, 6x2 and 3x4 (10 % slower and more). */
#ifndef DIR_OCB /* overridable to try other tiles */
#if VLEN >= 16
#define DIR_OCB 8
#elif VLEN >= 8
#define DIR_OCB 4
#else
#define DIR_OCB 2
#endif
#endif
#ifndef DIR_NV
#define DIR_NV GEMM_NV
#endif
#ifndef DIR_ROWS
#define DIR_ROWS 16 /* output rows per work item, fewer when the items would be too few for the threads */
#endif

/* the padded strip's row layout for this geometry (depthwise_impl.h: split even/odd for stride 2) */
static FN(plane_layout) FN(dc_layout)(const x86_conv_geom *g) {
    return FN(layout_for)((g->OW - 1) * g->sw + g->kw, g->sw, 1);
}

/* floats of one channel's strip: rows of padded input for `rows` output rows */
static int64_t FN(dc_channel_floats)(const x86_conv_geom *g, int64_t rows) {
    return ((rows - 1) * g->sh + g->kh) * FN(dc_layout)(g).rowlen;
}

/* A thread's scratch: the strip of C channels, slack that the last vectors read past it (lanes the
 * stores mask off; a gather reads VLEN * sw floats), the K tap offsets (int64). */
static int64_t FN(dc_slack)(const x86_conv_geom *g) { return 2 * DIR_NV * VLEN * (g->sw > 2 ? g->sw : 2) + 64; }
/* where the tap offsets start: after the strip and its slack, 8-byte aligned */
static int64_t FN(dc_offsets_at)(const x86_conv_geom *g, int64_t rows) {
    return (g->C * FN(dc_channel_floats)(g, rows) + FN(dc_slack)(g) + 1) / 2 * 2;
}

/* Flat rows: at stride 1 output pixel (r, ow) reads the strip at r * rowlen + ow + off[k], so the
 * output rows of a strip are one run of (rows - 1) * rowlen + OW positions, the rowlen - OW between
 * two rows computed and dropped. That fills the tiles where short rows would leave lanes idle
 * (openWakeWord's 3x1 and 1x3 convolutions on planes 16, 8 and 2 wide: a row a vector at most).
 * Where rowlen == OW (no horizontal padding, kw = 1) the run is the output rows as stored; otherwise
 * it goes through the worker's scratch and its rows are copied out. Taken when the run uses the
 * lanes DIR_FLAT_MIN_GAIN times better than the rows would (or as well, with nothing to copy). */
#ifndef DIR_FLAT_MIN_GAIN
#define DIR_FLAT_MIN_GAIN 1.1
#endif
static int FN(dc_flat)(const x86_conv_geom *g) {
    if (VLEN == 1 || g->sh != 1 || g->sw != 1 || g->OW <= 0) return 0;
    const int64_t rowlen = FN(dc_layout)(g).rowlen;
    const double row_use = (double)g->OW / (double)(((g->OW + VLEN - 1) / VLEN) * VLEN);
    const double flat_use = (double)g->OW / (double)rowlen;
    return rowlen == g->OW ? 1 : flat_use >= DIR_FLAT_MIN_GAIN * row_use;
}

/* floats of the flat run's scratch: DIR_OCB rows of the run (none where the run is the output) */
static int64_t FN(dc_flat_floats)(const x86_conv_geom *g, int64_t rows) {
    if (!FN(dc_flat)(g) || FN(dc_layout)(g).rowlen == g->OW) return 0;
    return DIR_OCB * ((rows * FN(dc_layout)(g).rowlen + 15) / 16 * 16);
}

static void FN(direct_plan)(const x86_conv_geom *g, int64_t N, int64_t O, int threads, int64_t *rows,
                            int64_t *parts, int64_t *worker_floats, int64_t *w_floats) {
    const int64_t K = g->C * g->kh * g->kw, blocks = (O + DIR_OCB - 1) / DIR_OCB;
    const int64_t want = threads > 1 ? X86_ITEMS_PER_THREAD * (int64_t)threads : 1; /* items enough to balance the threads */
    int64_t r = DIR_ROWS, p = 1;
    if (FN(dc_flat)(g)) { /* the channel blocks split first: fewer rows would shorten the run */
        if (r > g->OH) r = g->OH > 0 ? g->OH : 1;
        while (p < blocks && N * ((g->OH + r - 1) / r) * p < want) p *= 2;
        if (p > blocks) p = blocks;
        while (r > 1 && N * ((g->OH + r - 1) / r) * p < want) r /= 2;
    } else {
        while (r > 1 && N * ((g->OH + r - 1) / r) < want) r /= 2;
        if (r > g->OH) r = g->OH > 0 ? g->OH : 1;
        /* split the channel blocks too when there are still too few items */
        while (p < blocks && N * ((g->OH + r - 1) / r) * p < want) p *= 2;
        if (p > blocks) p = blocks;
    }
    *rows = r;
    *parts = p > 0 ? p : 1;
    /* 64-byte aligned parts: the strip and its tap offsets, then the flat run's scratch */
    *worker_floats = (FN(dc_offsets_at)(g, r) + 2 * K + 15) / 16 * 16 + FN(dc_flat_floats)(g, r);
    *w_floats = blocks * K * DIR_OCB;
}

/* wd[(b*K + k)*DIR_OCB + o] = w[(b*DIR_OCB + o)*K + k]; channels past O are zeros */
static void FN(direct_pack)(const float *w, int64_t O, int64_t K, float *wd) {
    const int64_t blocks = (O + DIR_OCB - 1) / DIR_OCB;
    for (int64_t b = 0; b < blocks; ++b)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t o = 0; o < DIR_OCB; ++o)
                wd[(b * K + k) * DIR_OCB + o] = b * DIR_OCB + o < O ? w[(b * DIR_OCB + o) * K + k] : 0.0f;
}

/* One tile: channels [row0, row0 + rows) (rows <= DIR_OCB; the packed weights of the others are
 * zeros) x nv vectors of pixels from `base` (unit: pixel ow at base[ow], else base[ow * s]), cols of
 * them stored at dst (rows ldc floats apart). */
static inline __attribute__((always_inline)) void FN(dc_tile)(const int nv, const int unit, const float *base,
                                                              int64_t s, const int64_t *off, int64_t K,
                                                              const float *wb, const float *bias,
                                                              const int rows, float *dst,
                                                              int64_t ldc, int cols, const x86_epilogue *e,
                                                              int64_t row0, int64_t col0) {
    vf acc[DIR_OCB][DIR_NV];
    for (int o = 0; o < DIR_OCB; ++o) { /* the sums start at the bias: the epilogue has none to add */
        const vf b = bias && o < rows ? vf_set1(bias[row0 + o]) : vf_zero();
        for (int v = 0; v < nv; ++v) acc[o][v] = b;
    }
    for (int64_t k = 0; k < K; ++k, wb += DIR_OCB) {
        const float *p = base + off[k];
        vf xv[DIR_NV];
        for (int v = 0; v < nv; ++v) xv[v] = unit ? vf_load(p + v * VLEN) : vf_load_stride(p + v * VLEN * s, s);
        for (int o = 0; o < DIR_OCB; ++o) {
            const vf wo = vf_set1(wb[o]);
            for (int v = 0; v < nv; ++v) acc[o][v] = vf_fma(wo, xv[v], acc[o][v]);
        }
    }
    TILE_EPILOGUE(acc, rows, nv, dst, ldc, cols, e, row0, col0, 1, 1);
}

/* the tiles of one output row for the channel block b: yrow is that row of the block's first channel,
 * the others `plane` floats apart */
static inline __attribute__((always_inline)) void FN(dc_row)(const int unit, const float *base, int64_t s,
                                                             const int64_t *off, int64_t K, const float *wd,
                                                             int64_t O, int64_t b, float *yrow, int64_t plane,
                                                             int64_t OW, const float *bias, const x86_epilogue *e) {
    const float *wb = wd + b * K * DIR_OCB;
    const int64_t o0 = b * DIR_OCB;
    const int rows = (int)(O - o0 < DIR_OCB ? O - o0 : DIR_OCB);
    for (int64_t ow = 0; ow < OW; ow += DIR_NV * VLEN) {
        const int64_t left = OW - ow;
        const int cols = (int)(left < DIR_NV * VLEN ? left : DIR_NV * VLEN);
        const int nv = (cols + VLEN - 1) / VLEN;
        const float *bp = base + ow * s;
        float *dst = yrow + ow;
        if (rows == DIR_OCB && nv == DIR_NV) {
            FN(dc_tile)(DIR_NV, unit, bp, s, off, K, wb, bias, DIR_OCB, dst, plane, cols, e, o0, ow);
            continue;
        }
        /* the row's last vectors, or the last, partial block (its rows a variable): a vector at a time */
        for (int v = 0; v < nv; ++v) {
            const int n = cols - v * VLEN < VLEN ? cols - v * VLEN : VLEN;
            const float *bv = bp + v * VLEN * s;
            float *dv = dst + v * VLEN;
            if (rows == DIR_OCB)
                FN(dc_tile)(1, unit, bv, s, off, K, wb, bias, DIR_OCB, dv, plane, n, e, o0, ow + v * VLEN);
            else
                FN(dc_tile)(1, unit, bv, s, off, K, wb, bias, rows, dv, plane, n, e, o0, ow + v * VLEN);
        }
    }
}

typedef struct {
    const float *x, *wd;
    float *y, *work;
    const x86_conv_geom *g;
    const float *bias; /* per output channel, or NULL: where the sums start */
    x86_epilogue e;    /* the activation (no bias: the sums started with it) */
    int64_t O, rows, row_blocks, parts, worker_floats;
    int64_t strip_rows; /* the output rows a strip holds input for (rows, or a pooled band's) */
    int flat;           /* the output rows as one run (dc_flat; direct_conv only) */
    const x86_pool_geom *pg; /* direct_conv_pool: the max pooling after the convolution */
} FN(dc_job);

/* Copies the input rows that output rows [oh0, oh1) of image n read into the worker's strip and
 * returns it, with the K tap offsets into it at *off_out. */
static float *FN(dc_fill)(const FN(dc_job) *J, int64_t n, int64_t oh0, int64_t oh1, int worker, int64_t **off_out) {
    const x86_conv_geom *g = J->g;
    const int64_t taps = g->kh * g->kw;
    const FN(plane_layout) L = FN(dc_layout)(g);
    const int64_t PW = (g->OW - 1) * g->sw + g->kw, cs = FN(dc_channel_floats)(g, J->strip_rows);
    const int64_t rin = (oh1 - oh0 - 1) * g->sh + g->kh; /* strip rows this item fills */
    float *strip = J->work + worker * J->worker_floats;
    int64_t *off = (int64_t *)(strip + FN(dc_offsets_at)(g, J->strip_rows));
    /* zeros first where the taps reach padding (and rows a previous item left behind there); without
     * padding every float a stored lane reads is copied below (the rest only feeds lanes never stored) */
    const int padded = g->pt > 0 || g->pl > 0 || PW > g->W || (g->OH - 1) * g->sh + g->kh > g->H;
    if (padded) memset(strip, 0, (size_t)(g->C * cs + FN(dc_slack)(g)) * sizeof(float));
    for (int64_t c = 0; c < g->C; ++c)
        FN(copy_plane)(J->x + (n * g->C + c) * g->H * g->W, g->H, g->W, g->pt - oh0 * g->sh, g->pl, rin, PW, &L,
                       strip + c * cs);
    FN(tap_offsets)(&L, g->kh, g->kw, 1, 1, off);
    for (int64_t c = g->C - 1; c >= 0; --c) /* every channel's taps: the first channel's offsets moved */
        for (int64_t t = 0; t < taps; ++t) off[c * taps + t] = off[t] + c * cs;
    *off_out = off;
    return strip;
}

/* the blocks [b0, b1) of one part of the channel blocks */
static int FN(dc_part_blocks)(const FN(dc_job) *J, int64_t part, int64_t *b0, int64_t *b1) {
    const int64_t blocks = (J->O + DIR_OCB - 1) / DIR_OCB, per_part = (blocks + J->parts - 1) / J->parts;
    *b0 = part * per_part;
    *b1 = *b0 + per_part < blocks ? *b0 + per_part : blocks;
    return *b0 < *b1;
}

/* Block b's output rows for the strip's first `rows` output rows: row r of its first channel at
 * y0 + r * OW, the block's other channels `plane` floats apart. */
static inline __attribute__((always_inline)) void FN(dc_block_rows)(const FN(dc_job) *J, const float *strip,
                                                                    const int64_t *off, int64_t b, int64_t rows,
                                                                    float *y0, int64_t plane) {
    const x86_conv_geom *g = J->g;
    const FN(plane_layout) L = FN(dc_layout)(g);
    const int64_t K = g->C * g->kh * g->kw;
    if (J->flat) {
        const int64_t n = (rows - 1) * L.rowlen + g->OW; /* run positions up to the last output */
        if (L.rowlen == g->OW) { /* the run is the output rows as stored */
            FN(dc_row)(1, strip, 1, off, K, J->wd, J->O, b, y0, plane, n, J->bias, &J->e);
            return;
        }
        /* into the scratch after the strip, then each channel's rows out of it */
        const int64_t tplane = (rows * L.rowlen + 15) / 16 * 16;
        float *tmp = (float *)strip + (FN(dc_offsets_at)(g, J->strip_rows) + 2 * K + 15) / 16 * 16;
        FN(dc_row)(1, strip, 1, off, K, J->wd, J->O, b, tmp, tplane, n, J->bias, &J->e);
        const int64_t o0 = b * DIR_OCB, nrows = J->O - o0 < DIR_OCB ? J->O - o0 : DIR_OCB;
        for (int64_t o = 0; o < nrows; ++o)
            for (int64_t r = 0; r < rows; ++r)
                FN(copy_n)(y0 + o * plane + r * g->OW, tmp + o * tplane + r * L.rowlen, g->OW);
        return;
    }
    for (int64_t r = 0; r < rows; ++r) {
        const float *base = strip + r * g->sh * L.rowlen;
        float *yrow = y0 + r * g->OW;
        if (L.s == 1) FN(dc_row)(1, base, 1, off, K, J->wd, J->O, b, yrow, plane, g->OW, J->bias, &J->e);
        else FN(dc_row)(0, base, L.s, off, K, J->wd, J->O, b, yrow, plane, g->OW, J->bias, &J->e);
    }
}

/* item = (image, strip of output rows, part of the channel blocks) */
static void FN(dc_task)(void *ctx, int64_t item, int worker) {
    const FN(dc_job) *J = (const FN(dc_job) *)ctx;
    const x86_conv_geom *g = J->g;
    const int64_t part = item % J->parts, rb = (item / J->parts) % J->row_blocks, n = item / (J->parts * J->row_blocks);
    const int64_t oh0 = rb * J->rows, oh1 = oh0 + J->rows < g->OH ? oh0 + J->rows : g->OH;
    int64_t b0, b1, *off;
    if (!FN(dc_part_blocks)(J, part, &b0, &b1)) return;
    const float *strip = FN(dc_fill)(J, n, oh0, oh1, worker, &off);
    const int64_t plane = g->OH * g->OW;
    float *yn = J->y + n * J->O * plane;
    /* block by block, its rows in turn: the stores run along DIR_OCB planes at a time, streams the
     * hardware prefetches (all blocks of one row at a time wrote 64 planes at once: with the output
     * out of cache that ran 2x slower, each store's line fetched on demand); the strip stays in L2 */
    for (int64_t b = b0; b < b1; ++b)
        FN(dc_block_rows)(J, strip, off, b, oh1 - oh0, yn + b * DIR_OCB * plane + oh0 * g->OW, plane);
}

/* The job's fields both drivers share; the sums start at the bias (a Conv's epilogue has alpha = beta =
 * 1, _x86.pyx), so the epilogue keeps only the activation */
static void FN(dc_job_init)(FN(dc_job) *J, const float *x, const float *wd, const float *bias, float *y, int64_t O,
                            const x86_conv_geom *g, const x86_epilogue *e, int64_t worker_floats, float *work) {
    J->x = x, J->wd = wd, J->y = y, J->work = work, J->g = g, J->pg = NULL, J->flat = 0;
    J->bias = bias;
    J->e = *e;
    J->e.bias = NULL;
    J->O = O, J->worker_floats = worker_floats;
}

/* the items in turn, or on the thread pool (worker ids stay below threads: the scratch has a strip for each) */
static void FN(dc_run)(FN(dc_job) *J, int64_t items, x86_task_fn task, int threads) {
    if (threads > 1 && items > 1)
        x86_parallel(threads, items, task, J);
    else
        for (int64_t t = 0; t < items; ++t) task(J, t, 0);
}

static void FN(direct_conv)(const float *x, const float *wd, const float *bias, float *y, int64_t N, int64_t O,
                            const x86_conv_geom *g, const x86_epilogue *e, int64_t rows, int64_t parts,
                            int64_t worker_floats, float *work, int threads) {
    FN(dc_job) J;
    FN(dc_job_init)(&J, x, wd, bias, y, O, g, e, worker_floats, work);
    J.rows = rows, J.row_blocks = (g->OH + rows - 1) / rows, J.parts = parts, J.strip_rows = rows;
    J.flat = FN(dc_flat)(g);
    FN(dc_run)(&J, N * J.row_blocks * parts, FN(dc_task), threads);
}

#if VLEN > 1
/* A direct convolution and the max pooling after it (3x3 or 2x2 windows, stride 2 across:
 * pool_impl.h's maxpool_plane_s2), as one op (mnn-x86 fuses them: fuse.py). The stems of SqueezeNet
 * and ResNet-18 write 64 planes of 111x111 or 112x112 (3.2 MB, more than the L2) for the pooling to
 * read back once; here an item computes the convolution rows its band of pooled rows needs, one
 * channel block at a time, into the worker's scratch (DIR_OCB planes of those rows, in L2), and pools
 * them into the output at once. Bands overlap by the window's rows beyond the stride (one row of a
 * 3x3/2 window), which neighbouring items both compute: DIRP_ROWS pooled rows per item keep that
 * below 4 %. Items: (image, band of pooled rows, part of the channel blocks). */
#ifndef DIRP_ROWS
#define DIRP_ROWS 14
#endif

/* the convolution rows [c0, c1) that pooled rows [ph0, ph1) read */
static void FN(dcp_conv_rows)(const x86_pool_geom *pg, int64_t ph0, int64_t ph1, int64_t *c0, int64_t *c1) {
    const int64_t lo = ph0 * pg->sh - pg->pt, hi = (ph1 - 1) * pg->sh - pg->pt + pg->kh;
    *c0 = lo > 0 ? lo : 0;
    *c1 = hi < pg->H ? hi : pg->H;
}

static void FN(direct_pool_plan)(const x86_conv_geom *g, const x86_pool_geom *pg, int64_t N, int64_t O, int threads,
                                 int64_t *rows, int64_t *parts, int64_t *worker_floats) {
    const int64_t K = g->C * g->kh * g->kw, blocks = (O + DIR_OCB - 1) / DIR_OCB;
    const int64_t want = threads > 1 ? X86_ITEMS_PER_THREAD * (int64_t)threads : 1;
    int64_t r = DIRP_ROWS;
    while (r > 1 && N * ((pg->OH + r - 1) / r) < want) r = (r + 1) / 2;
    if (r > pg->OH) r = pg->OH > 0 ? pg->OH : 1;
    int64_t p = 1;
    while (p < blocks && N * ((pg->OH + r - 1) / r) * p < want) p *= 2;
    if (p > blocks) p = blocks;
    int64_t crows = (r - 1) * pg->sh + pg->kh; /* convolution rows of a band, at most */
    if (crows > g->OH) crows = g->OH;
    *rows = r;
    *parts = p > 0 ? p : 1;
    /* the strip and its tap offsets, then the band's DIR_OCB planes (64-byte aligned) */
    *worker_floats = (FN(dc_offsets_at)(g, crows) + 2 * K + 15) / 16 * 16 + (DIR_OCB * crows * g->OW + 15) / 16 * 16;
}

static void FN(dcp_task)(void *ctx, int64_t item, int worker) {
    const FN(dc_job) *J = (const FN(dc_job) *)ctx;
    const x86_conv_geom *g = J->g;
    const x86_pool_geom *pg = J->pg;
    const int64_t part = item % J->parts, rb = (item / J->parts) % J->row_blocks, n = item / (J->parts * J->row_blocks);
    const int64_t ph0 = rb * J->rows, ph1 = ph0 + J->rows < pg->OH ? ph0 + J->rows : pg->OH;
    int64_t b0, b1, c0, c1, *off;
    if (!FN(dc_part_blocks)(J, part, &b0, &b1)) return;
    FN(dcp_conv_rows)(pg, ph0, ph1, &c0, &c1);
    if (c1 <= c0) return; /* not for a pooling python accepts (fuse.py: every window holds an input row) */
    const float *strip = FN(dc_fill)(J, n, c0, c1, worker, &off);
    float *band = J->work + worker * J->worker_floats + J->worker_floats - (DIR_OCB * J->strip_rows * g->OW + 15) / 16 * 16;
    const int64_t bplane = (c1 - c0) * g->OW, pplane = pg->OH * pg->OW;
    x86_pool_geom at = *pg; /* the pooling of the band: its rows from c0 */
    at.H = c1 - c0, at.pt = pg->pt + c0;
    for (int64_t b = b0; b < b1; ++b) {
        FN(dc_block_rows)(J, strip, off, b, c1 - c0, band, bplane);
        const int64_t o0 = b * DIR_OCB, o1 = o0 + DIR_OCB < J->O ? o0 + DIR_OCB : J->O;
        for (int64_t o = o0; o < o1; ++o)
            FN(maxpool_plane_s2)(band + (o - o0) * bplane, J->y + (n * J->O + o) * pplane, &at, ph0, ph1);
    }
}

/* pg: the pooling of the convolution's output (its H x W are g's OH x OW); rows, parts, worker_floats
 * from direct_pool_plan */
static void FN(direct_conv_pool)(const float *x, const float *wd, const float *bias, float *y, int64_t N, int64_t O,
                                 const x86_conv_geom *g, const x86_pool_geom *pg, const x86_epilogue *e, int64_t rows,
                                 int64_t parts, int64_t worker_floats, float *work, int threads) {
    FN(dc_job) J;
    FN(dc_job_init)(&J, x, wd, bias, y, O, g, e, worker_floats, work);
    J.pg = pg;
    J.rows = rows, J.row_blocks = (pg->OH + rows - 1) / rows, J.parts = parts;
    J.strip_rows = (rows - 1) * pg->sh + pg->kh < g->OH ? (rows - 1) * pg->sh + pg->kh : g->OH;
    FN(dc_run)(&J, N * J.row_blocks * parts, FN(dcp_task), threads);
}
#endif

#endif
