/* Operand packing for the packed GEMM: A and B in MR-row and NR-column panels, im2col of a
 * convolution straight into those panels, and the transposed write-back of a C^T. Generic over
 * `vf`; included by gemm_impl.h (MR, NR and its helpers defined there). */
#ifndef MNN_X86_GEMM_PACK_IMPL_H
#define MNN_X86_GEMM_PACK_IMPL_H

/* what pack_a and pack_b hand their panels: the source, its strides and the packed destination */
typedef struct {
    const float *src;
    int64_t rs, cs, rows, cols; /* pack_a: M x K; pack_b: K x N */
    float *dst;
} FN(pack_args);

/* panel p of A[i][k] = a[i*rs + k*cs] in MR-row panels */
static void FN(pack_a_panel)(void *ctx, int64_t p) {
    const FN(pack_args) *g = (const FN(pack_args) *)ctx;
    const float *a = g->src;
    const int64_t rs = g->rs, cs = g->cs, M = g->rows, K = g->cols;
    float *dst = g->dst + p * MR * K;
    const int64_t r0 = p * MR, rows = M - r0 < MR ? M - r0 : MR;
    if (rs == 1) { /* transposed source: each k is `rows` contiguous floats, the panel's other rows 0 */
        /* the last panel too: Winograd's V^T of 16 tiles is a 14-row panel and a 2-row one;
         * packed element by element, SqueezeNet's 13x13 64->256 took 0.264 ms, now 0.258 */
        for (int64_t k = 0; k < K; ++k) {
            FN(copy_n)(dst + k * MR, a + r0 + k * cs, rows);
            if (rows < MR) FN(zero_short)(dst + k * MR + rows, MR - rows);
        }
        return;
    }
#if VLEN > 1 && MR <= VLEN
    if (cs == 1) { /* rows of A in place (a MatMul's activations): VLEN x VLEN blocks transposed in registers */
        for (int64_t k = 0; k < K; k += VLEN) {
            const int n = (int)(K - k < VLEN ? K - k : VLEN);
            vf t[VLEN];
            for (int r = 0; r < VLEN; ++r) t[r] = r < rows ? vf_load_n(a + (r0 + r) * rs + k, n) : vf_zero();
            vf_transpose(t); /* t[j]: column k + j, its MR rows in the first lanes (0 past `rows`) */
            for (int j = 0; j < n; ++j) vf_store_n(dst + (k + j) * MR, t[j], MR);
        }
        return;
    }
#endif
    for (int64_t k0 = 0; k0 < K; k0 += 64) { /* 64-column strips keep the writes in cache */
        const int64_t k1 = k0 + 64 < K ? k0 + 64 : K;
        for (int64_t r = 0; r < MR; ++r) {
            if (r < rows) {
                const float *src = a + (r0 + r) * rs;
                for (int64_t k = k0; k < k1; ++k) dst[k * MR + r] = src[k * cs];
            } else {
                for (int64_t k = k0; k < k1; ++k) dst[k * MR + r] = 0.0f;
            }
        }
    }
}

/* A[i][k] = a[i*rs + k*cs] into MR-row panels */
static void FN(pack_a)(const float *a, int64_t rs, int64_t cs, int64_t M, int64_t K, float *ap, int threads) {
    FN(pack_args) g = {a, rs, cs, M, K, ap};
    x86_for_each(M * K > 32768, threads, FN(ceil_div)(M, MR), FN(pack_a_panel), &g);
}

/* panel q of B[k][j] = b[k*rs + j*cs] in NR-column panels */
static void FN(pack_b_panel)(void *ctx, int64_t q) {
    const FN(pack_args) *g = (const FN(pack_args) *)ctx;
    const float *b = g->src;
    const int64_t rs = g->rs, cs = g->cs, K = g->rows, N = g->cols;
    float *dst = g->dst + q * NR * K;
    const int64_t c0 = q * NR, cols = N - c0 < NR ? N - c0 : NR;
    if (cs == 1) {
        for (int64_t k = 0; k < K; ++k) {
            FN(copy_n)(dst + k * NR, b + k * rs + c0, cols);
            if (cols < NR) FN(zero_n)(dst + k * NR + cols, NR - cols);
        }
        return;
    }
#if VLEN > 1
    if (rs == 1) { /* B's columns in place (x86.Attention's K, a transposed weight): VLEN x VLEN blocks
                    * transposed in registers, not element by element */
        for (int64_t j0 = 0; j0 < NR; j0 += VLEN) {
            const int n = (int)(cols - j0 < VLEN ? cols - j0 : VLEN); /* 0 or less: a zero strip */
            for (int64_t k = 0; k < K; k += VLEN) {
                const int kn = (int)(K - k < VLEN ? K - k : VLEN);
                vf t[VLEN];
                for (int c = 0; c < VLEN; ++c) t[c] = c < n ? vf_load_n(b + (c0 + j0 + c) * cs + k, kn) : vf_zero();
                vf_transpose(t); /* t[j]: row k + j, the strip's columns in the first lanes (0 past them) */
                for (int j = 0; j < kn; ++j) vf_store(dst + (k + j) * NR + j0, t[j]);
            }
        }
        return;
    }
#endif
    for (int64_t k0 = 0; k0 < K; k0 += 64) {
        const int64_t k1 = k0 + 64 < K ? k0 + 64 : K;
        for (int64_t c = 0; c < NR; ++c) {
            if (c < cols) {
                const float *src = b + (c0 + c) * cs;
                for (int64_t k = k0; k < k1; ++k) dst[k * NR + c] = src[k * rs];
            } else {
                for (int64_t k = k0; k < k1; ++k) dst[k * NR + c] = 0.0f;
            }
        }
    }
}

/* B[k][j] = b[k*rs + j*cs] into NR-column panels */
static void FN(pack_b)(const float *b, int64_t rs, int64_t cs, int64_t K, int64_t N, float *bp, int threads) {
    FN(pack_args) g = {b, rs, cs, K, N, bp};
    x86_for_each(K * N > 32768, threads, FN(ceil_div)(N, NR), FN(pack_b_panel), &g);
}

/* im2col of one convolution group, output columns [n0, n0 + ncols), written
 * straight into NR-column panels: row kk = (c, i, j) of B holds
 * x[c][oh*sh - pt + i*dh][ow*sw - pl + j*dw] for output position n = oh*OW + ow
 * (zero outside the input). */
/* inference (x86infer): rows [kk0, kk1) of the im2col panels */
static void FN(im2col_rows)(const float *x, const x86_conv_geom *g, int64_t n0, int64_t ncols, float *bp, int64_t kk0,
                            int64_t kk1) {
    const int64_t khw = g->kh * g->kw, K = g->C * khw, n1 = n0 + ncols;
    const int64_t panels = FN(ceil_div)(ncols, NR), tail = panels * NR - ncols;
    for (int64_t kk = kk0; kk < kk1; ++kk) {
        const int64_t c = kk / khw, i = (kk / g->kw) % g->kh, j = kk % g->kw;
        const float *plane = x + c * g->H * g->W;
        const int64_t xoff = j * g->dw - g->pl; /* ix = ow*sw + xoff */
        /* output columns whose ix lands inside the row */
        int64_t lo = xoff >= 0 ? 0 : FN(ceil_div)(-xoff, g->sw);
        int64_t hi = g->W - 1 - xoff < 0 ? 0 : (g->W - 1 - xoff) / g->sw + 1;
        if (hi > g->OW) hi = g->OW;
        if (lo > hi) lo = hi;
        /* one segment at a time: up to the end of a panel, of an output row or of the range; the
         * position (oh, ow) and the panel column advance with it (no division per segment) */
        int64_t n = n0, oh = n0 / g->OW, ow = n0 % g->OW, col = 0;
        float *panel = bp + kk * NR;
        while (n < n1) {
            int64_t len = NR - col;
            if (len > g->OW - ow) len = g->OW - ow;
            if (len > n1 - n) len = n1 - n;
            float *dst = panel + col;
            const int64_t iy = oh * g->sh - g->pt + i * g->dh;
            const int64_t a = ow < lo ? lo : ow, b = ow + len < hi ? ow + len : hi;
            if (iy < 0 || iy >= g->H || a >= b) {
                FN(zero_short)(dst, len);
            } else {
                const float *row = plane + iy * g->W + xoff;
                if (a > ow) FN(zero_short)(dst, a - ow);
                if (g->sw == 1) {
                    FN(copy_n)(dst + (a - ow), row + a, b - a);
                } else {
                    int64_t o = a;
                    if (g->sw == 2) { /* deinterleaving loads while 2*VLEN reads stay in the row */
                        for (; o + VLEN <= b && (o + VLEN) * 2 + xoff <= g->W; o += VLEN)
                            vf_store(dst + (o - ow), vf_load_stride(row + 2 * o, 2));
                        for (; o < b; o += VLEN) { /* the rest by masked loads, never past x[.., ix = 2(b-1)] */
                            const int n = (int)(b - o < VLEN ? b - o : VLEN);
                            vf_store_n(dst + (o - ow), vf_load_even_n(row + 2 * o, 2 * n - 1), n);
                        }
                    }
                    for (; o < b; ++o) dst[o - ow] = row[o * g->sw];
                }
                if (ow + len > b) FN(zero_short)(dst + (b - ow), ow + len - b);
            }
            n += len, ow += len, col += len;
            if (ow == g->OW) ow = 0, ++oh;
            if (col == NR) col = 0, panel += NR * K;
        }
        if (tail) FN(zero_n)(bp + (panels - 1) * NR * K + kk * NR + (NR - tail), tail);
    }
}

#define IM2COL_ROWS 16 /* rows per x86_parallel item */
typedef struct {
    const float *x;
    const x86_conv_geom *g;
    int64_t n0, ncols, K;
    float *bp;
} FN(im2col_job);

static void FN(im2col_task)(void *ctx, int64_t item, int worker) {
    const FN(im2col_job) *J = (const FN(im2col_job) *)ctx;
    const int64_t kk0 = item * IM2COL_ROWS, kk1 = kk0 + IM2COL_ROWS < J->K ? kk0 + IM2COL_ROWS : J->K;
    (void)worker;
    FN(im2col_rows)(J->x, J->g, J->n0, J->ncols, J->bp, kk0, kk1);
}

/* im2col of one convolution group, output columns [n0, n0 + ncols), written
 * straight into NR-column panels: row kk = (c, i, j) of B holds
 * x[c][oh*sh - pt + i*dh][ow*sw - pl + j*dw] for output position n = oh*OW + ow
 * (zero outside the input). */
static void FN(im2col_b)(const float *x, const x86_conv_geom *g, int64_t n0, int64_t ncols, float *bp, int threads) {
    const int64_t K = g->C * g->kh * g->kw;
    if (threads > 1 && K * ncols > 32768) {
        FN(im2col_job) J = {x, g, n0, ncols, K, bp};
        x86_parallel(threads, FN(ceil_div)(K, IM2COL_ROWS), FN(im2col_task), &J);
    } else {
        FN(im2col_rows)(x, g, n0, ncols, bp, 0, K);
    }
}

/* im2col_a (below) at stride 2 across where every panel's MR pixels lie in one output row (OW a multiple of
 * MR): panel by panel, each tap one masked load of the even columns and one store, the panel's
 * place worked out once instead of per tap and segment. The per-segment walk above spent about 20 %
 * of ResNet-18's 64 -> 128 3x3 stride-2 convolution on it (28x28 output, 56 segments a tap). */
static void FN(im2col_a_panels)(const float *xp, const x86_conv_geom *g, int64_t PH, int64_t PW, float *ap,
                                int64_t kk0, int64_t kk1, int64_t p0, int64_t P) {
    const int64_t K = g->C * g->kh * g->kw, khw = g->kh * g->kw;
    for (int64_t n = 0; n < P; n += MR) {
        const int64_t oh = (p0 + n) / g->OW, ow = (p0 + n) % g->OW;
        const int len = (int)(P - n < MR ? P - n : MR);
        const float *src = xp + oh * g->sh * PW + ow * 2;
        float *dst = ap + n * K; /* panel n / MR: its rows kk at + kk * MR */
        int64_t c = kk0 / khw, i = (kk0 / g->kw) % g->kh, j = kk0 % g->kw; /* tap kk = (c, i, j) */
        for (int64_t kk = kk0; kk < kk1; ++kk) {
            const vf v = vf_load_even_n(src + c * PH * PW + i * g->dh * PW + j * g->dw, 2 * len - 1);
            vf_store_n(dst + kk * MR, v, MR); /* lanes past len: zeros (padding rows of a last panel) */
            if (++j == g->kw) {
                j = 0;
                if (++i == g->kh) i = 0, ++c;
            }
        }
    }
}

/* inference (x86infer): rows [kk0, kk1) of a transposed convolution's X^T for the np pixels from
 * p0 (np x K taps), written straight into the MR-row panels of the GEMM's packed A:
 * ap[(p/MR)*MR*K + kk*MR + p%MR] is tap kk = (c, i, j) of pixel p0 + p. xp is the input with its padding written out (C planes of PH x PW,
 * op_conv.c), so every tap is inside it. Copied in segments (an output row's run of pixels, cut
 * where a panel ends) by vector loads; at most MR pixels each (padding rows of a last panel: 0). */
static void FN(im2col_a)(const float *xp, const x86_conv_geom *g, int64_t PH, int64_t PW, float *ap, int64_t kk0,
                         int64_t kk1, int64_t p0, int64_t P) {
    const int64_t K = g->C * g->kh * g->kw, khw = g->kh * g->kw;
    const int64_t tail = (P + MR - 1) / MR * MR - P;
    if (VLEN > 1 && MR <= VLEN && g->sw == 2 && g->OW % MR == 0 && p0 % MR == 0) {
        FN(im2col_a_panels)(xp, g, PH, PW, ap, kk0, kk1, p0, P);
        return;
    }
    for (int64_t kk = kk0; kk < kk1; ++kk) {
        const int64_t c = kk / khw, i = (kk / g->kw) % g->kh, j = kk % g->kw;
        const float *base = xp + c * PH * PW + i * g->dh * PW + j * g->dw;
        int64_t oh = p0 / g->OW, ow = p0 % g->OW, col = 0; /* pixel p0 + n = oh*OW + ow, column col of panel n / MR */
        float *panel = ap + kk * MR;
        for (int64_t n = 0; n < P;) {
            int64_t len = MR - col;
            if (len > g->OW - ow) len = g->OW - ow;
            const float *src = base + oh * g->sh * PW + ow * g->sw;
            float *dst = panel + col;
            if (g->sw == 1) {
                FN(copy_n)(dst, src, len);
            } else if (g->sw == 2) { /* never reads past src[2 * (len - 1)]: the row's last tap */
                for (int64_t o = 0; o < len; o += VLEN) {
                    const int m = (int)(len - o < VLEN ? len - o : VLEN);
                    vf_store_n(dst + o, vf_load_even_n(src + 2 * o, 2 * m - 1), m);
                }
            } else {
                for (int64_t o = 0; o < len; ++o) dst[o] = src[o * g->sw];
            }
            n += len, ow += len, col += len;
            if (ow == g->OW) ow = 0, ++oh;
            if (col == MR) col = 0, panel += MR * K;
        }
        if (tail) FN(zero_n)(ap + (P / MR) * MR * K + kk * MR + (MR - tail), tail);
    }
}

/* dst[c * ld_dst + r] = src[r * ld_src + c] for a VLEN x VLEN block, transposed in registers */
static inline void FN(transpose_block)(const float *src, int64_t ld_src, float *dst, int64_t ld_dst) {
    vf r[VLEN];
    for (int i = 0; i < VLEN; ++i) r[i] = vf_load(src + i * ld_src);
    vf_transpose(r);
    for (int i = 0; i < VLEN; ++i) vf_store(dst + i * ld_dst, r[i]);
}

/* inference (x86infer): y[o * ldy + p] = ct[p*O + o] for output channels [o0, o1) and pixels
 * p < P: the NCHW output of a transposed convolution from its C^T (P x O, bias and activation
 * already applied), in VLEN x VLEN blocks transposed in registers (transpose_block); the edges
 * of fewer than VLEN one by one. */
static void FN(transpose_out)(const float *ct, int64_t P, int64_t O, float *y, int64_t ldy, int64_t o0, int64_t o1) {
    const int64_t pv = P / VLEN * VLEN, ov = o0 + (o1 - o0) / VLEN * VLEN;
    for (int64_t o = o0; o < ov; o += VLEN)
        for (int64_t p = 0; p < pv; p += VLEN) FN(transpose_block)(ct + p * O + o, O, y + o * ldy + p, ldy);
    for (int64_t p = pv; p < P; ++p)
        for (int64_t o = o0; o < o1; ++o) y[o * ldy + p] = ct[p * O + o];
    for (int64_t o = ov; o < o1; ++o)
        for (int64_t p = 0; p < pv; ++p) y[o * ldy + p] = ct[p * O + o];
}

#endif
