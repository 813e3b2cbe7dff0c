/* inference (x86infer): a 1x1 convolution with an NC16 input or output, as C^T = X^T W^T: the
 * register tile's MR rows are pixels, its NR columns output channels. Generic over `vf`; included
 * by isa_body.h after gemm_impl.h (MR, NR, act_row).
 *
 * Why this orientation: a pixel's 16 channels sit side by side in an NC16 tensor, so an output
 * tile's vectors are the output's own blocks (stored where they belong, no transpose), and X^T's
 * elements are read where they are, one broadcast load each (pixel r of k's block at r*16 + k%16):
 * nothing is packed at run. A dense NCHW input is read in place the same way (pixel r of channel k
 * at k*P + r). A dense output (the last 1x1 before a pooling, say) takes each tile through a small
 * buffer and writes its columns as NCHW rows. W^T comes packed at prepare (pack_b's NR panels). The
 * whole K runs in registers per tile: the B panel (K x NR) stays in L2 while an item's pixel tiles
 * walk along it. Its first tile reads it from L3 or memory (MobileNetV2's 1x1 weights are 9 MB in
 * all), so the 14x32 table's tiles prefetch it; the 6x32 table has too few FMAs per row of it to
 * hide the prefetches behind. */
#ifndef MNN_X86_POINTWISE_IMPL_H
#define MNN_X86_POINTWISE_IMPL_H

#define PW_TILES 4 /* pixel tiles (of MR) per work item */

typedef struct {
    const float *x, *wt, *bias;
    const float *res; /* NULL, or a residual laid out as y, added before the activation (x86.ConvAdd) */
    float *y;
    int64_t K, O, P, Op; /* Op: the output's channels as stored (rounded up to 16 when NC16) */
    int64_t yP, y_p0;    /* pixel p of y's block b at y + x86_nc16_at(16b, p - y_p0, yP) (dense: channel o's
                          * row yP apart); P and 0 but in x86.ConvDepthwise's rows (pwdw_impl.h) */
    int64_t a_ps, a_ks;  /* element (pixel r, channel k) of X at x + (k/16)*16*P + (k%16)*a_ks + r*a_ps */
    int64_t panels, panel_items, px_items, tiles_per_item, panels_per_item;
    int64_t parts, px_per_part; /* the pixels in `parts` equal parts (one a thread), px_per_part items each */
    int stream; /* the NC16 output by streaming stores (g->out_stream, and y aligned to a vector) */
    const x86_conv_geom *g;
    const x86_epilogue *e;
} FN(pw_job);

/* One tile: pixels [p0, p0 + rows) x output channels [o0, o0 + nv * VLEN) over all of K. `rows`,
 * `nv` and `has_res` (J->res is set) are compile-time constants at each call site (pw_tile_any), so
 * the accumulators stay in registers; nv < GEMM_NV for a last panel of at most VLEN channels (O = 16,
 * 144: half the FMAs). With the residual's tests made at run time instead, the tiles without one ran
 * 5-8 % slower (MobileNetV2's 1x1s of K = 16 and 24 at one thread). */
static inline __attribute__((always_inline)) void FN(pw_tile)(const int rows, const int nv, const int has_res,
                                                              const FN(pw_job) *J, int64_t p0, int64_t q) {
    const int64_t K = J->K, P = J->P, o0 = q * NR, a_ps = J->a_ps, a_ks = J->a_ks;
    const int cols = (int)(J->O - o0 < NR ? J->O - o0 : NR);
    const float *b = J->wt + q * NR * K;
    const x86_epilogue *e = J->e;
    vf acc[MR][GEMM_NV];
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < nv; ++v) acc[r][v] = vf_zero();
    if (has_res && J->g->out_nc16) /* the residual's lines on their way while the FMAs run */
        for (int v = 0; v < nv && o0 + v * VLEN < J->Op; ++v)
            for (int r = 0; r < rows; ++r)
                __builtin_prefetch(J->res + x86_nc16_at(o0 + v * VLEN, p0 + r, P), 0, 3);
    for (int64_t k0 = 0; k0 < K; k0 += X86_NC16) {
        const int64_t kn = K - k0 < X86_NC16 ? K - k0 : X86_NC16;
        const float *a = J->x + k0 * P + p0 * a_ps; /* block k0/16 (or channel k0) at pixel p0 */
        for (int64_t kk = 0; kk < kn; ++kk, b += NR) {
            vf bv[GEMM_NV];
#if GEMM_PF_NEAR && MR >= 8 /* tall tiles: W^T's panel ahead (gemm_impl.h); MobileNetV2 3-7 % faster */
            GEMM_PREFETCH_B_AHEAD(1, b, 0, NR, nv)
#endif
            for (int v = 0; v < nv; ++v) bv[v] = vf_load(b + v * VLEN);
            const float *ak = a + kk * a_ks;
            for (int r = 0; r < rows; ++r) {
                const vf av = vf_set1(ak[r * a_ps]);
                for (int v = 0; v < nv; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);
            }
        }
    }
    /* a dense output's residual is added as its columns are written, so its activation waits too */
    const int late_act = has_res && !J->g->out_nc16;
    for (int v = 0; v < nv; ++v) { /* bias, an NC16 residual, then the activation, in registers */
        const int n = cols - v * VLEN;
        const int64_t o = o0 + v * VLEN;
        const vf bias = e->bias && n > 0 ? vf_mul(vf_set1(e->beta), vf_load_n(e->bias + o, n)) : vf_zero();
        /* the residual's vector for pixel p0 (none past the stored blocks: a 48-wide panel's last) */
        const float *res = has_res && J->g->out_nc16 && o < J->Op ? J->res + x86_nc16_at(o, p0, P) : NULL;
        for (int r = 0; r < rows; ++r) {
            vf t = vf_add(e->alpha != 1.0f ? vf_mul(acc[r][v], vf_set1(e->alpha)) : acc[r][v], bias);
            if (res) t = vf_add(t, vf_load(res + r * X86_NC16));
            if (e->act == MNN_ACT_RELU && !late_act) t = vf_relu(t);
            else if (e->act == MNN_ACT_CLIP && !late_act) t = vf_clamp(t, vf_set1(e->act_alpha), vf_set1(e->act_beta));
            acc[r][v] = t;
        }
    }
    if (J->g->out_nc16) { /* a vector is VLEN lanes of one block: stored whole, padding lanes included */
        for (int v = 0; v < nv; ++v) {
            const int64_t o = o0 + v * VLEN;
            if (o >= J->Op) break;
            float *yv = J->y + x86_nc16_at(o, p0 - J->y_p0, J->yP);
            for (int r = 0; r < rows; ++r) {
                vf t = acc[r][v];
                if (e->act > MNN_ACT_CLIP) t = vf_activate(t, e->act, e->act_alpha, e->act_beta);
                if (J->stream) vf_stream(yv + r * X86_NC16, t);
                else vf_store(yv + r * X86_NC16, t);
            }
        }
        return;
    }
#if VLEN > 1 && MR <= VLEN
    /* dense output: each vector of channels transposed in registers, so that a channel's `rows`
     * pixels are one masked store (an NCHW row segment) and its residual one masked load. Through a
     * buffer, column by column, ResNet-50's 32 -> 128 1x1 + residual + relu on 56x56 took 4.5x
     * ONNX Runtime's time (the scalar copies cost more than its 32 FMAs a pixel). */
    const int act = e->act > MNN_ACT_CLIP || late_act ? e->act : MNN_ACT_NONE;
    for (int v = 0; v < nv; ++v) {
        const int n = cols - v * VLEN < VLEN ? cols - v * VLEN : VLEN;
        vf t[VLEN];
        for (int r = 0; r < VLEN; ++r) t[r] = r < rows ? acc[r][v] : vf_zero();
        vf_transpose(t);
        for (int c = 0; c < n; ++c) {
            const int64_t o = o0 + v * VLEN + c;
            vf u = t[c];
            if (has_res) u = vf_add(u, vf_load_n(J->res + o * P + p0, rows));
            if (act != MNN_ACT_NONE) u = vf_activate(u, act, e->act_alpha, e->act_beta);
            vf_store_n(J->y + o * J->yP + p0 - J->y_p0, u, rows);
        }
    }
#else
    /* dense output: the tile through a buffer, each column an NCHW row segment of `rows` pixels */
    float buf[MR * NR];
    memset(buf, 0, sizeof buf); /* the columns past nv vectors are never read; this tells the compiler */
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < nv; ++v) vf_store(buf + r * NR + v * VLEN, acc[r][v]);
    for (int c = 0; c < cols; ++c) {
        float *yc = J->y + (o0 + c) * J->yP + p0 - J->y_p0;
        if (has_res) {
            const float *rc = J->res + (o0 + c) * P + p0;
            for (int r = 0; r < rows; ++r) yc[r] = buf[r * NR + c] + rc[r];
        } else {
            for (int r = 0; r < rows; ++r) yc[r] = buf[r * NR + c];
        }
        if (e->act > MNN_ACT_CLIP || (late_act && e->act != MNN_ACT_NONE))
            FN(act_row)(e->act, e->act_alpha, e->act_beta, yc, yc, rows);
    }
#endif
}

static void FN(pw_tile_any)(int rows, int nv, const FN(pw_job) *J, int64_t p0, int64_t q) {
    const int has_res = J->res != NULL;
    switch (rows) { /* each case inlines pw_tile with constant rows, vectors and residual or not */
#define PW_CASE(R)                                                          \
    case R:                                                                 \
        if (nv < GEMM_NV && has_res) FN(pw_tile)(R, 1, 1, J, p0, q);        \
        else if (nv < GEMM_NV) FN(pw_tile)(R, 1, 0, J, p0, q);              \
        else if (has_res) FN(pw_tile)(R, GEMM_NV, 1, J, p0, q);             \
        else FN(pw_tile)(R, GEMM_NV, 0, J, p0, q);                          \
        break;
    PW_CASE(1)
#if MR > 1
    PW_CASE(2)
#endif
#if MR > 2
    PW_CASE(3)
#endif
#if MR > 3
    PW_CASE(4)
#endif
#if MR > 4
    PW_CASE(5)
#endif
#if MR > 5
    PW_CASE(6)
#endif
#if MR > 6
    PW_CASE(7)
#endif
#if MR > 7
    PW_CASE(8)
#endif
#if MR > 8
    PW_CASE(9)
#endif
#if MR > 9
    PW_CASE(10)
#endif
#if MR > 10
    PW_CASE(11)
#endif
#if MR > 11
    PW_CASE(12)
#endif
#if MR > 12
    PW_CASE(13)
#endif
#if MR > 13
    PW_CASE(14)
#endif
#undef PW_CASE
    default: break;
    }
}

/* item = (pixel range of tiles_per_item tiles, range of panels_per_item column panels), the pixel
 * range outer: x86_parallel gives each thread a contiguous run of items first, so a thread takes the
 * same pixels of every output block, which is how the layers before and after it divide the work
 * (depthwise_cl): each reads mostly what its own core wrote. With the panel range outer, MobileNetV2's
 * 14x14 1x1s took 0.048 ms at two threads instead of 0.041. Within an item the panels are outer, so
 * one B panel stays in L1/L2 while the item's pixel tiles use it. */
static void FN(pw_item)(void *ctx, int64_t item, int worker) {
    const FN(pw_job) *J = (const FN(pw_job) *)ctx;
    const int64_t pi = item / J->panel_items, qi = item % J->panel_items;
    const int64_t q1 = (qi + 1) * J->panels_per_item < J->panels ? (qi + 1) * J->panels_per_item : J->panels;
    /* the item's pixels: tiles_per_item tiles, or with parts, its share of its part's tiles counted
     * from the part's first pixel (at one thread the shares ran MobileNetV2's 32 -> 16 layer 7 %
     * slower than whole items of tiles_per_item, for reasons not found) */
    int64_t p_lo = pi * J->tiles_per_item * MR, p_end = p_lo + J->tiles_per_item * MR, b = J->P;
    if (J->parts > 1) {
        const int64_t part = pi / J->px_per_part, i = pi % J->px_per_part, a = J->P * part / J->parts;
        b = J->P * (part + 1) / J->parts;
        const int64_t tiles = (b - a + MR - 1) / MR;
        p_lo = a + tiles * i / J->px_per_part * MR;
        p_end = a + tiles * (i + 1) / J->px_per_part * MR;
    }
    if (p_end > b) p_end = b;
    (void)worker;
    for (int64_t q = qi * J->panels_per_item; q < q1; ++q) {
        const int nv = J->O - q * NR <= VLEN ? 1 : GEMM_NV; /* a last panel of one vector's channels */
        for (int64_t p0 = p_lo; p0 < p_end; p0 += MR) {
            const int rows = (int)(p_end - p0 < MR ? p_end - p0 : MR);
            if (rows == MR && nv == GEMM_NV && !J->res) FN(pw_tile)(MR, GEMM_NV, 0, J, p0, q);
            else if (rows == MR && nv == GEMM_NV) FN(pw_tile)(MR, GEMM_NV, 1, J, p0, q);
            else FN(pw_tile_any)(rows, nv, J, p0, q);
        }
    }
    if (J->stream) vf_stream_fence(); /* the streamed stores reach memory before the job ends */
}

#if VLEN == X86_NC16 && MR <= VLEN
#include "pointwise_dense_impl.h" /* an NC16 input to a dense output, on big planes */
#endif

static void FN(pointwise)(const float *x, const float *wt, const float *bias, const float *res, float *y, int64_t K,
                          int64_t O, int64_t P, const x86_conv_geom *g, const x86_epilogue *e, int threads) {
    FN(pw_job) J;
    x86_epilogue eb = *e;
    eb.bias = bias;
#if VLEN == X86_NC16 && MR <= VLEN
    if (g->in_nc16 && !g->out_nc16 && P >= PWD_MIN_PIXELS && !FN(pwd_pointwise)(x, wt, bias, res, y, K, O, P, &eb, threads))
        return;
#endif
    J.x = x, J.wt = wt, J.bias = bias, J.res = res, J.y = y, J.K = K, J.O = O, J.P = P, J.g = g, J.e = &eb;
    J.yP = P, J.y_p0 = 0;
    J.Op = g->out_nc16 ? x86_nc16_channels(O) : O;
    J.stream = g->out_nc16 && g->out_stream && (uintptr_t)y % (VLEN * sizeof(float)) == 0;
    J.a_ps = g->in_nc16 ? X86_NC16 : 1;
    J.a_ks = g->in_nc16 ? 1 : P;
    J.panels = (O + NR - 1) / NR;
    const int64_t tiles = (P + MR - 1) / MR;
    /* threads share about 8 items each on big planes: items of PW_TILES tiles (224 on a 112x112
     * plane) cost a claim each, which ran MobileNetV2's 112x112 layers 1.2x slower than the dense
     * GEMM at 2 threads (an item's A, its pixels x K, stays in L2 as the panels walk over it) */
    int64_t per = threads > 1 ? (tiles + 8 * threads - 1) / (8 * threads) : PW_TILES;
    if (per < PW_TILES) per = PW_TILES;
    J.tiles_per_item = tiles < per ? tiles : per;
    J.panels_per_item = J.panels;
    /* enough items for every thread (4 each, claimed one at a time): fewer panels per item first,
     * then fewer pixel tiles */
    for (;;) {
        J.px_items = (tiles + J.tiles_per_item - 1) / J.tiles_per_item;
        J.panel_items = (J.panels + J.panels_per_item - 1) / J.panels_per_item;
        if (threads <= 1 || J.px_items * J.panel_items >= X86_ITEMS_PER_THREAD * threads) break;
        if (J.panels_per_item > 1) J.panels_per_item = (J.panels_per_item + 1) / 2;
        else if (J.tiles_per_item > 1) J.tiles_per_item = (J.tiles_per_item + 1) / 2;
        else break;
    }
    /* Where the threads split the pixels, each one's items (x86_parallel gives it a contiguous run)
     * cover 1/threads of them, to within a tile: with whole tiles per item, MobileNetV2's 14x14
     * projections (14 tiles of 14 in 4 pixel items: 4, 4, 4, 2) gave one thread 8 tiles and the other
     * 6. Where they split the panels (fewer pixel items than threads) each reads only its panels'
     * weights: splitting the 7x7 320 -> 1280 layer's 49 pixels too had both read all 1.6 MB. */
    J.parts = J.px_items >= threads ? threads : 1;
    J.px_per_part = (J.px_items + J.parts - 1) / J.parts;
    J.px_items = J.px_per_part * J.parts;
    const int64_t items = J.px_items * J.panel_items;
    if (threads > 1 && items > 1) x86_parallel(threads, items, FN(pw_item), &J);
    else
        for (int64_t i = 0; i < items; ++i) FN(pw_item)(&J, i, 0);
}

#endif
