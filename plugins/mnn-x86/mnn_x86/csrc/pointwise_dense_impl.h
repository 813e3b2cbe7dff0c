/* inference (x86infer): a 1x1 convolution from an NC16 input to a dense NCHW output, as C = W X
 * (register tile: MR output channels x NR pixels). Generic over `vf`, for VLEN = X86_NC16 (AVX-512);
 * included by pointwise_impl.h, whose pointwise() hands it such layers on planes of at least
 * PWD_MIN_PIXELS.
 *
 * Why not pointwise_impl.h's orientation (pixels as rows): there each tile's columns are output
 * channels, so a dense output takes a transpose per vector of channels and a masked store of MR
 * pixels per channel, which cost as much as the FMAs where K is short (ResNet-50's 32 -> 128 and
 * 64 -> 256 1x1s with their residual). Here a tile's vectors are runs of one channel's pixels: whole
 * stores along the output's rows, the residual (x86.ConvAdd) added along them. The price: X's
 * pixels packed into NR-column panels per item (a 16 x 16 transpose per block of channels and 16
 * pixels), and W repacked from its W^T panels into MR-row panels once per call (O x K floats). */
#ifndef MNN_X86_POINTWISE_DENSE_IMPL_H
#define MNN_X86_POINTWISE_DENSE_IMPL_H

#define PWD_MIN_PIXELS 512 /* below, W's repacking per call is no longer small beside the GEMM */
/* An item's packed pixels (K x its panels' NR floats) fill up to GEMM_L2_B_BYTES, as the dense GEMM's
 * B slice does, so that each W panel writes, and reads the residual along, long runs of its rows
 * (1024 pixels at K = 64, 4096 at K = 16): at batch > 1 these no longer sit in a cache, and short
 * runs are too short for the hardware prefetchers to follow. */
#define PWD_PF_AHEAD 2 /* tiles ahead whose output lines are prefetched */

typedef struct {
    const float *x, *a, *bias, *res; /* a: W in MR-row panels */
    float *y, *xp;                   /* xp: each worker's X panels, per_item * NR * K floats apart */
    int64_t K, O, P, per_item, items; /* per_item: pixel panels per item */
    const x86_epilogue *e;
} FN(pwd_job);

/* W (O x K) in MR-row panels from its W^T in NR-column panels (W^T[k][o] at wt + (o/NR)*NR*K +
 * k*NR + o%NR): for each k, a panel's MR weights are at most two runs of one W^T row. */
static void FN(pwd_pack_w)(const float *wt, int64_t O, int64_t K, float *a) {
    for (int64_t o0 = 0; o0 < O; o0 += MR) {
        const int64_t rows = O - o0 < MR ? O - o0 : MR;
        float *dst = a + o0 * K; /* panel o0 / MR */
        for (int64_t k = 0; k < K; ++k) {
            float *d = dst + k * MR;
            for (int64_t o = o0; o < o0 + rows;) {
                const int64_t q = o / NR, j = o % NR, n = NR - j < o0 + rows - o ? NR - j : o0 + rows - o;
                FN(copy_n)(d + (o - o0), wt + q * NR * K + k * NR + j, n);
                o += n;
            }
            if (rows < MR) FN(zero_short)(d + rows, MR - rows);
        }
    }
}

/* pixels [p0, p0 + cols) of an NC16 X (K channels of P pixels) as one NR-column panel: row k at
 * dst + k*NR; columns past cols 0. Each 16 pixels x 16 channels block is transposed in registers;
 * the padding lanes of a last partial channel block land in rows that are not stored. */
static void FN(pwd_pack_x)(const float *x, int64_t K, int64_t P, int64_t p0, int cols, float *dst) {
    for (int64_t k0 = 0; k0 < K; k0 += X86_NC16) {
        const int kn = (int)(K - k0 < X86_NC16 ? K - k0 : X86_NC16);
        const float *blk = x + k0 * P; /* block k0 / 16: pixel p's channels at + p * 16 */
        for (int h = 0; h < NR; h += VLEN) {
            const int n = cols - h < 0 ? 0 : cols - h < VLEN ? cols - h : VLEN;
            vf t[VLEN];
            for (int i = 0; i < VLEN; ++i) t[i] = i < n ? vf_load(blk + (p0 + h + i) * X86_NC16) : vf_zero();
            vf_transpose(t); /* t[j]: channel k0 + j of the 16 pixels */
            for (int j = 0; j < kn; ++j) vf_store(dst + (k0 + j) * NR + h, t[j]);
        }
    }
}

/* One tile: output channels [o0, o0 + rows) x pixels [p0, p0 + cols) over all of K; `rows` and
 * `has_res` compile-time constants at each call (pwd_tile_any), so the accumulators stay in
 * registers. Bias and alpha in registers; the activation too where there is no residual (else
 * pwd_add_rows adds it first). */
static inline __attribute__((always_inline)) void FN(pwd_tile)(const int rows, const int has_res,
                                                               const FN(pwd_job) *J, const float *a,
                                                               const float *b, int64_t o0, int64_t p0,
                                                               int cols) {
    const x86_epilogue *e = J->e;
    vf acc[MR][GEMM_NV];
    for (int r = 0; r < rows; ++r)
        for (int v = 0; v < GEMM_NV; ++v) acc[r][v] = vf_zero();
#pragma GCC unroll 4
    for (int64_t k = 0; k < J->K; ++k) {
        vf bv[GEMM_NV];
        for (int v = 0; v < GEMM_NV; ++v) bv[v] = vf_load(b + k * NR + v * VLEN);
        for (int r = 0; r < rows; ++r) {
            const vf av = vf_set1(a[k * MR + r]);
            for (int v = 0; v < GEMM_NV; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);
        }
    }
    const int full = cols == NR;
    for (int r = 0; r < rows; ++r) {
        const int64_t o = o0 + r;
        const vf bias = vf_set1(J->bias ? e->beta * J->bias[o] : 0.0f);
        float *yr = J->y + o * J->P + p0;
        for (int v = 0; v < GEMM_NV; ++v) {
            const int n = cols - v * VLEN;
            if (!full && n <= 0) break;
            vf t = vf_add(e->alpha != 1.0f ? vf_mul(acc[r][v], vf_set1(e->alpha)) : acc[r][v], bias);
            if (!has_res) t = vf_activate(t, e->act, e->act_alpha, e->act_beta); /* else pwd_add_rows' */
            if (full) vf_store(yr + v * VLEN, t);
            else vf_store_n(yr + v * VLEN, t, n);
        }
    }
}

static void FN(pwd_tile_any)(int rows, const FN(pwd_job) *J, const float *a, const float *b, int64_t o0,
                             int64_t p0, int cols) {
    const int has_res = J->res != NULL;
    switch (rows) { /* each case inlines pwd_tile with constant rows and residual or not */
#define PWD_CASE(R)                                                  \
    case R:                                                          \
        if (has_res) FN(pwd_tile)(R, 1, J, a, b, o0, p0, cols);      \
        else FN(pwd_tile)(R, 0, J, a, b, o0, p0, cols);              \
        break;
    PWD_CASE(1)
#if MR > 1
    PWD_CASE(2)
#endif
#if MR > 2
    PWD_CASE(3)
#endif
#if MR > 3
    PWD_CASE(4)
#endif
#if MR > 4
    PWD_CASE(5)
#endif
#if MR > 5
    PWD_CASE(6)
#endif
#if MR > 6
    PWD_CASE(7)
#endif
#if MR > 7
    PWD_CASE(8)
#endif
#if MR > 8
    PWD_CASE(9)
#endif
#if MR > 9
    PWD_CASE(10)
#endif
#if MR > 10
    PWD_CASE(11)
#endif
#if MR > 11
    PWD_CASE(12)
#endif
#if MR > 12
    PWD_CASE(13)
#endif
#if MR > 13
    PWD_CASE(14)
#endif
#undef PWD_CASE
    default: break;
    }
}

/* The output's lines of tile t of an item (t = W panel * panels + pixel panel), to be written: each
 * tile stores into MR rows far apart, which the hardware prefetchers pick up late. */
static inline void FN(pwd_prefetch)(const FN(pwd_job) *J, int64_t t, int64_t panels, int64_t c0, int64_t c1) {
    const int64_t o0 = t / panels * MR, p0 = c0 + t % panels * NR;
    if (o0 >= J->O) return;
    const int rows = (int)(J->O - o0 < MR ? J->O - o0 : MR);
    const int64_t bytes = (c1 - p0 < NR ? c1 - p0 : NR) * (int64_t)sizeof(float);
    for (int r = 0; r < rows; ++r)
        for (int64_t l = 0; l < bytes; l += 64) __builtin_prefetch((const char *)(J->y + (o0 + r) * J->P + p0) + l, 1, 3);
}

/* The residual added to output rows [o0, o0 + rows) over pixels [c0, c1), which a W panel's tiles
 * have just written (in L1/L2), then the activation: the residual is read one row run at a time,
 * which the hardware prefetchers follow. Added in the tiles, its MR rows were MR streams at once, and
 * at batch 8 (the residual no longer in a cache) its loads were a third of the layer's time. */
static void FN(pwd_add_rows)(const FN(pwd_job) *J, int64_t o0, int rows, int64_t c0, int64_t c1) {
    const x86_epilogue *e = J->e;
    for (int r = 0; r < rows; ++r) {
        float *y = J->y + (o0 + r) * J->P;
        const float *res = J->res + (o0 + r) * J->P;
        int64_t p = c0;
        for (; p + VLEN <= c1; p += VLEN)
            vf_store(y + p, vf_activate(vf_add(vf_load(y + p), vf_load(res + p)), e->act, e->act_alpha, e->act_beta));
        if (p < c1) {
            const int n = (int)(c1 - p);
            vf_store_n(y + p, vf_activate(vf_add(vf_load_n(y + p, n), vf_load_n(res + p, n)), e->act, e->act_alpha,
                                          e->act_beta), n);
        }
    }
}

/* item: per_item pixel panels, packed into the worker's buffer, then every W panel over them (one
 * W panel stays in L1 while it walks the item's pixels; the packed pixels stay in L2) */
static void FN(pwd_item)(void *ctx, int64_t item, int worker) {
    const FN(pwd_job) *J = (const FN(pwd_job) *)ctx;
    const int64_t K = J->K, c0 = item * J->per_item * NR;
    const int64_t c1 = c0 + J->per_item * NR < J->P ? c0 + J->per_item * NR : J->P;
    const int64_t panels = (c1 - c0 + NR - 1) / NR;
    float *bp = J->xp + worker * J->per_item * NR * K;
    for (int64_t t = 0; t < PWD_PF_AHEAD; ++t) FN(pwd_prefetch)(J, t, panels, c0, c1);
    for (int64_t q = 0; q < panels; ++q) {
        const int cols = (int)(c1 - c0 - q * NR < NR ? c1 - c0 - q * NR : NR);
        FN(pwd_pack_x)(J->x, K, J->P, c0 + q * NR, cols, bp + q * K * NR);
    }
    for (int64_t o0 = 0, t = 0; o0 < J->O; o0 += MR) {
        const float *a = J->a + o0 * K;
        const int rows = (int)(J->O - o0 < MR ? J->O - o0 : MR);
        for (int64_t q = 0; q < panels; ++q, ++t) {
            const int cols = (int)(c1 - c0 - q * NR < NR ? c1 - c0 - q * NR : NR);
            const float *b = bp + q * K * NR;
            FN(pwd_prefetch)(J, t + PWD_PF_AHEAD, panels, c0, c1);
            if (rows == MR && J->res) FN(pwd_tile)(MR, 1, J, a, b, o0, c0 + q * NR, cols);
            else if (rows == MR) FN(pwd_tile)(MR, 0, J, a, b, o0, c0 + q * NR, cols);
            else FN(pwd_tile_any)(rows, J, a, b, o0, c0 + q * NR, cols);
        }
        if (J->res) FN(pwd_add_rows)(J, o0, rows, c0, c1);
    }
}

/* 0 when done; 1 when a buffer could not be had (the caller then takes the other orientation) */
static int FN(pwd_pointwise)(const float *x, const float *wt, const float *bias, const float *res, float *y,
                             int64_t K, int64_t O, int64_t P, const x86_epilogue *e, int threads) {
    if (threads < 1) threads = 1;
    const int64_t a_floats = ((O + MR - 1) / MR * MR * K + VLEN - 1) / VLEN * VLEN; /* X panels on a vector */
    /* items of up to GEMM_L2_B_BYTES of packed pixels, or fewer panels where that leaves a thread
     * fewer than X86_ITEMS_PER_THREAD (claimed one at a time, they even out: 784 pixels in items of
     * 8 panels were 3 full and one of a half panel, 2 items against 1.06 at two threads) */
    const int64_t panels = (P + NR - 1) / NR;
    int64_t most = GEMM_L2_B_BYTES / (int64_t)sizeof(float) / (K * NR);
    if (most < 1) most = 1;
    int64_t per = threads > 1 ? (panels + X86_ITEMS_PER_THREAD * threads - 1) / (X86_ITEMS_PER_THREAD * threads) : most;
    if (per > most) per = most;
    if (per > panels) per = panels;
    /* W's panels, then every worker's X panels, in the calling thread's buffer that gemm_impl.h's
     * tiles pack B into (no GEMM of this thread holds it while this layer runs) */
    float *a = FN(b_scratch)(a_floats + threads * per * NR * K);
    if (!a) return 1;
    FN(pwd_pack_w)(wt, O, K, a);
    FN(pwd_job) J = {x, a, bias, res, y, a + a_floats, K, O, P, per, (panels + per - 1) / per, e};
    if (threads > 1 && J.items > 1) x86_parallel(threads, J.items, FN(pwd_item), &J);
    else
        for (int64_t i = 0; i < J.items; ++i) FN(pwd_item)(&J, i, 0);
    return 0;
}

#endif
