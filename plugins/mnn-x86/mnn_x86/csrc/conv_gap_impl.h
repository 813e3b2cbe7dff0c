/* inference (x86infer): x86.ConvGlobalAvgPool with the pixels as a register tile's rows.
 *
 * y[o] = mean over the P pixels of act(bias[o] + sum_c W[o][c] x[c][p]), for one image and NR output
 * channels at a time. The tile broadcasts MR pixels of an input row (x[c][p0 .. p0 + MR), side by
 * side in the NCHW input, so it is read in place) against NR channels of W^T (pack_b panels), then
 * activates and adds its rows into NR running sums: the convolution's output never exists, not
 * even in scratch. Against this op's first kernel, the usual orientation (output channels as rows,
 * the pixels as 32-column panels, a block of output stored in scratch and averaged after), the
 * tail is a few pixels of one tile, not a 9-of-32 column panel, and no block is stored and read
 * back. */
#ifndef MNN_X86_CONV_GAP_IMPL_H
#define MNN_X86_CONV_GAP_IMPL_H

/* k steps of a tile per line of the next panel it prefetches */
#define GAP_PF_STEPS 4

/* the activations other than relu and clip, out of line: the tile tests e->act once per vector of its
 * result, and inlined they would crowd its accumulators out of the registers */
static __attribute__((noinline)) vf FN(gap_activate)(vf z, const x86_epilogue *e) {
    return vf_activate(z, e->act, e->act_alpha, e->act_beta);
}

/* `rows` pixels' activated sums for one panel, added into sum; rows and nc16 are compile-time constants
 * at every call (gap_panel_in's switch), so the accumulators stay in registers */
static inline __attribute__((always_inline)) void FN(gap_tile)(const int rows, const int nc16, const float *x,
                                                               int64_t P, int64_t C, const float *wp, const float *pf,
                                                               const vf *bias, const x86_epilogue *e, vf *sum) {
    vf acc[MR][GEMM_NV];
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < GEMM_NV; ++v) acc[r][v] = vf_zero();
    if (nc16) { /* block by block: channel b + j of the tile's pixel r at b * P + r * 16 + j */
        for (int64_t b = 0; b < C; b += X86_NC16) {
            const float *xb = x + b * P;
            /* the tile's rows are a line each of a block, all missed at once at its start: this block's
             * first steps prefetch the next block's lines (SqueezeNet's classifier ran 25 % slower on an
             * NC16 input than on NCHW without) */
            for (int r = 0; r < rows && b + X86_NC16 < C; ++r) __builtin_prefetch(xb + X86_NC16 * P + r * X86_NC16, 0, 3);
            const int n = C - b < X86_NC16 ? (int)(C - b) : X86_NC16;
#pragma GCC unroll 4
            for (int j = 0; j < n; ++j) {
                if (pf && j % GAP_PF_STEPS == 0) __builtin_prefetch(pf + (b + j) / GAP_PF_STEPS * 16, 0, 2);
                vf bv[GEMM_NV];
                for (int v = 0; v < GEMM_NV; ++v) bv[v] = vf_load(wp + (b + j) * NR + v * VLEN);
                for (int r = 0; r < rows; ++r) {
                    const vf av = vf_set1(xb[r * X86_NC16 + j]);
                    for (int v = 0; v < GEMM_NV; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);
                }
            }
        }
    } else {
        for (int64_t c0 = 0; c0 < C; c0 += GAP_PF_STEPS) {
            if (pf) __builtin_prefetch(pf + c0 / GAP_PF_STEPS * 16, 0, 2); /* a line (16 floats) of the next panel, to L2 */
            const int64_t c1 = c0 + GAP_PF_STEPS < C ? c0 + GAP_PF_STEPS : C;
#pragma GCC unroll 4
            for (int64_t c = c0; c < c1; ++c) {
                vf bv[GEMM_NV];
                for (int v = 0; v < GEMM_NV; ++v) bv[v] = vf_load(wp + c * NR + v * VLEN);
                const float *xc = x + c * P; /* channel c of the tile's first pixel */
                for (int r = 0; r < rows; ++r) {
                    const vf av = vf_set1(xc[r]);
                    for (int v = 0; v < GEMM_NV; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);
                }
            }
        }
    }
    const vf alpha = vf_set1(e->alpha);
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < GEMM_NV; ++v) {
            vf z = vf_fma(acc[r][v], alpha, bias[v]);
            if (e->act == MNN_ACT_RELU)
                z = vf_relu(z);
            else if (e->act == MNN_ACT_CLIP)
                z = vf_clamp(z, vf_set1(e->act_alpha), vf_set1(e->act_beta));
            else if (e->act != MNN_ACT_NONE)
                z = FN(gap_activate)(z, e);
            sum[v] = vf_add(sum[v], z);
        }
}

/* y[0 .. cols) = the means over P > 0 pixels for one image's NR-channel panel: x the image (C rows of
 * P pixels, or NC16 blocks), wp the panel of W^T (C rows of NR, zero past cols), bias its cols values
 * or NULL */
static inline __attribute__((always_inline)) void FN(gap_panel_in)(const int nc16, const float *x, int64_t P,
                                                                   int64_t C, const float *wp, const float *next,
                                                                   const float *bias, int cols,
                                                                   const x86_epilogue *e, float *y) {
    vf b[GEMM_NV], sum[GEMM_NV];
    for (int v = 0; v < GEMM_NV; ++v) {
        b[v] = bias ? vf_mul(vf_set1(e->beta), vf_load_n(bias + v * VLEN, cols - v * VLEN)) : vf_zero();
        sum[v] = vf_zero();
    }
    /* tiles of nearly equal rows (169 pixels: 13 of 13, not 12 of 14 and a tile of one row, which loads
     * as much of W^T as a full one for a fourteenth of its FMAs) */
    const int64_t tiles = (P + MR - 1) / MR, base = P / tiles, extra = P % tiles;
    for (int64_t t = 0, p = 0; t < tiles; ++t) {
        const int rows = (int)(base + (t < extra));
        /* the next panel's weights come from memory (SqueezeNet's 2 MB are cold at every run): the first
         * tiles prefetch them into L2, a line each GAP_PF_STEPS k steps, while this panel computes */
        const int64_t pf_at = t * ((C + GAP_PF_STEPS - 1) / GAP_PF_STEPS) * 16;
        const float *pf = next && pf_at < C * NR ? next + pf_at : NULL;
        switch (rows) {
#define GAP_ROWS_CASE(R)                                 \
    case R:                                              \
        FN(gap_tile)(R, nc16, x + p * (nc16 ? X86_NC16 : 1), P, C, wp, pf, b, e, sum); \
        break;
            GAP_ROWS_CASE(1)
#if MR > 1
            GAP_ROWS_CASE(2)
#endif
#if MR > 2
            GAP_ROWS_CASE(3)
#endif
#if MR > 3
            GAP_ROWS_CASE(4)
#endif
#if MR > 4
            GAP_ROWS_CASE(5)
#endif
#if MR > 5
            GAP_ROWS_CASE(6)
#endif
#if MR > 6
            GAP_ROWS_CASE(7)
#endif
#if MR > 7
            GAP_ROWS_CASE(8)
#endif
#if MR > 8
            GAP_ROWS_CASE(9)
#endif
#if MR > 9
            GAP_ROWS_CASE(10)
#endif
#if MR > 10
            GAP_ROWS_CASE(11)
#endif
#if MR > 11
            GAP_ROWS_CASE(12)
#endif
#if MR > 12
            GAP_ROWS_CASE(13)
#endif
#if MR > 13
            GAP_ROWS_CASE(14)
#endif
#undef GAP_ROWS_CASE
        default: break;
        }
        p += rows;
    }
    const vf scale = vf_set1(1.0f / (float)P);
    for (int v = 0; v < GEMM_NV && v * VLEN < cols; ++v) vf_store_n(y + v * VLEN, vf_mul(sum[v], scale), cols - v * VLEN);
}

static void FN(gap_panel)(const float *x, int nc16, int64_t P, int64_t C, const float *wp, const float *next,
                          const float *bias, int cols, const x86_epilogue *e, float *y) {
    if (nc16)
        FN(gap_panel_in)(1, x, P, C, wp, next, bias, cols, e, y);
    else
        FN(gap_panel_in)(0, x, P, C, wp, next, bias, cols, e, y);
}

#endif
