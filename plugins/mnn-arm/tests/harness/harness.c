/* C test harness for the mnn-arm kernels: cross-compiled for aarch64 and run
 * under qemu-aarch64 with several -cpu models (tests/test_harness.py drives it).
 *
 *   harness [--expect-fp16 0|1] [--expect-dot 0|1]
 *
 * Checks that the dispatcher offers exactly the paths the emulated CPU has
 * (getauxval(AT_HWCAP)), then runs every kernel of every runnable path on
 * random inputs of several shapes (odd sizes, tails, K beyond one cache block)
 * against plain double-precision references:
 *   fp32 within 1e-4 relative, fp16 within 1e-2 relative (relative to the
 *   magnitude of the summed terms, so a result that cancels to ~0 is judged
 *   by the size of what was summed), int8 bit-exact (ONNX QLinearConv /
 *   ConvInteger / QLinearMatMul semantics as mnn_core/ops/quant.py: exact sums, multiplier
 *   float32(float32(sx * sw) / sy), y = rint(float32(acc) * multiplier) in float32, halves to even).
 * A path the CPU lacks is never called: calling it would die with SIGILL.
 * Prints one line per check and "harness: N checks, F failed"; exits 1 on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* -- float paths ------------------------------------------------------------------------ */

/* Activations in the path's own type: fp32 buffers as they are, or (fp16h: io_bytes 2) a fp16 copy. */
static void *to_io(const arm_fkernels *k, const float *x, int64_t n) {
    void *p = xalloc(n * k->io_bytes);
    if (k->io_bytes == 2) arm_f32_to_f16(x, p, n);
    else memcpy(p, x, n * 4);
    return p;
}
static void from_io(const arm_fkernels *k, const void *p, float *y, int64_t n) {
    if (k->io_bytes == 2) arm_f16_to_f32(p, y, n);
    else memcpy(y, p, n * 4);
}

static void test_gemm(const arm_fkernels *k, double rtol, int64_t M, int64_t N, int64_t K, int col_bias) {
    float *a = xalloc(M * K * 4), *b = xalloc(K * N * 4), *bias = xalloc((M > N ? M : N) * 4), *c = xalloc(M * N * 4);
    double *want = xalloc(M * N * 8), *mag = xalloc(M * N * 8);
    for (int64_t i = 0; i < M * K; ++i) a[i] = frand();
    for (int64_t i = 0; i < K * N; ++i) b[i] = frand();
    for (int64_t i = 0; i < (M > N ? M : N); ++i) bias[i] = frand();
    void *ap = xalloc(arm_packed_a_elems(k->mr, M, K) * k->elem_bytes);
    void *bp = xalloc(arm_packed_a_elems(k->nr, N, K) * k->elem_bytes);
    void *aio = to_io(k, a, M * K), *bio = to_io(k, b, K * N), *cio = xalloc(M * N * k->io_bytes);
    k->pack_a(aio, K, 1, M, K, ap);
    k->pack_b(bio, N, 1, K, N, bp);
    arm_epilogue e = {1.0f, 1.0f, bias, col_bias ? 0 : 1, col_bias ? 1 : 0, col_bias ? MNN_ACT_SIGMOID : MNN_ACT_RELU,
                      0, 0};
    if (col_bias) e.alpha = 2.0f, e.beta = 0.5f;
    k->gemm(M, N, K, ap, bp, cio, N, &e);
    from_io(k, cio, c, M * N);
    free(aio), free(bio), free(cio);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double s = 0, sa = 0;
            for (int64_t kk = 0; kk < K; ++kk) s += (double)a[m * K + kk] * b[kk * N + n], sa += fabs((double)a[m * K + kk] * b[kk * N + n]);
            const double bb = col_bias ? bias[n] : bias[m];
            want[m * N + n] = act_ref(e.act, e.alpha * s + e.beta * bb, 0, 0);
            mag[m * N + n] = (e.alpha * sa + fabs(e.beta * bb)) * (col_bias ? 0.25 : 1.0); /* sigmoid' <= 1/4 */
        }
    char what[96];
    snprintf(what, sizeof what, "%s gemm M=%ld N=%ld K=%ld %s", k->name, (long)M, (long)N, (long)K,
             col_bias ? "alpha/beta col-bias sigmoid" : "row-bias relu");
    compare(what, c, want, mag, M * N, rtol);
    free(a), free(b), free(bias), free(c), free(want), free(mag), free(ap), free(bp);
}

static void conv_ref(const float *x, const float *w, const float *bias, int64_t N, int64_t C, int64_t H, int64_t W,
                     int64_t O, int64_t group, const arm_conv_geom *g, int act, double *want, double *mag) {
    const int64_t cg = C / group, og = O / group;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t oh = 0; oh < g->OH; ++oh)
                for (int64_t ow = 0; ow < g->OW; ++ow) {
                    double s = bias ? bias[o] : 0, sa = bias ? fabs(bias[o]) : 0;
                    const int64_t gi = o / og;
                    for (int64_t c = 0; c < cg; ++c)
                        for (int64_t i = 0; i < g->kh; ++i)
                            for (int64_t j = 0; j < g->kw; ++j) {
                                const int64_t ih = oh * g->sh + i * g->dh - g->pt, iw = ow * g->sw + j * g->dw - g->pl;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                const double p = (double)x[((n * C + gi * cg + c) * H + ih) * W + iw] *
                                                 w[((o * cg + c) * g->kh + i) * g->kw + j];
                                s += p, sa += fabs(p);
                            }
                    const int64_t idx = ((n * O + o) * g->OH + oh) * g->OW + ow;
                    want[idx] = act_ref(act, s, 0.0, 6.0);
                    mag[idx] = sa;
                }
}

/* a convolution of geometry g (C: one group's channels; W = g.W) against the double reference */
static void test_conv_g(const arm_fkernels *k, double rtol, int64_t N, int64_t C, int64_t H, int64_t O,
                        int64_t group, arm_conv_geom g) {
    const int64_t W = g.W, cg = C / group, og = O / group, ks = g.kh, s = g.sh, d = g.dh, p = g.pt;
    const int64_t out = N * O * g.OH * g.OW, Kg = cg * ks * ks;
    float *x = xalloc(N * C * H * W * 4), *w = xalloc(O * Kg * 4), *bias = xalloc(O * 4), *y = xalloc(out * 4);
    double *want = xalloc(out * 8), *mag = xalloc(out * 8);
    for (int64_t i = 0; i < N * C * H * W; ++i) x[i] = frand();
    for (int64_t i = 0; i < O * Kg; ++i) w[i] = frand();
    for (int64_t i = 0; i < O; ++i) bias[i] = frand();
    arm_epilogue e = {1.0f, 1.0f, NULL, 1, 0, MNN_ACT_CLIP, 0.0f, 6.0f};
    const int depthwise = group == C && O == C;
    const int64_t eb = k->io_bytes;
    char *xio = to_io(k, x, N * C * H * W), *yio = xalloc(out * eb);
    if (depthwise) {
        g.C = C;
        void *work = xalloc(arm_depthwise_work_bytes(&g));
        k->depthwise(xio, w, bias, yio, N * C, &g, &e, work); /* depthwise weights stay fp32 */
        free(work);
    } else {
        const int64_t stride = arm_packed_a_elems(k->mr, og, Kg);
        char *wp = xalloc(group * stride * k->elem_bytes), *wio = to_io(k, w, O * Kg);
        for (int64_t gi = 0; gi < group; ++gi)
            k->pack_a(wio + gi * og * Kg * eb, Kg, 1, og, Kg, wp + gi * stride * k->elem_bytes);
        const int64_t cols = arm_conv_chunk_cols(k, &g);
        void *work = xalloc(cols * Kg * k->elem_bytes + 64);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t gi = 0; gi < group; ++gi) {
                e.bias = bias + gi * og;
                arm_conv_gemm(k, &g, og, wp + gi * stride * k->elem_bytes, xio + (n * C + gi * cg) * H * W * eb,
                              yio + (n * O + gi * og) * g.OH * g.OW * eb, &e, cols, work);
            }
        free(wp), free(wio), free(work);
    }
    from_io(k, yio, y, out);
    free(xio), free(yio);
    conv_ref(x, w, bias, N, C, H, W, O, group, &g, MNN_ACT_CLIP, want, mag);
    char what[96];
    snprintf(what, sizeof what, "%s %s conv N=%ld C=%ld H=%ld W=%ld O=%ld k=%ld s=%ld,%ld d=%ld p=%ld g=%ld",
             k->name, depthwise ? "depthwise" : "gemm", (long)N, (long)C, (long)H, (long)W, (long)O, (long)ks,
             (long)s, (long)g.sw, (long)d, (long)p, (long)group);
    compare(what, y, want, mag, out, rtol);
    free(x), free(w), free(bias), free(y), free(want), free(mag);
}

static void test_conv(const arm_fkernels *k, double rtol, int64_t N, int64_t C, int64_t H, int64_t O, int64_t ks,
                      int64_t s, int64_t d, int64_t p, int64_t group) {
    test_conv_g(k, rtol, N, C, H, O, group, geom(C / group, H, H + 1, ks, s, d, p));
}

/* depthwise of a k x k window, strides (sh, sw), padding p on every side, no dilation */
static void test_dw(const arm_fkernels *k, double rtol, int64_t N, int64_t C, int64_t H, int64_t W, int64_t ks,
                    int64_t sh, int64_t sw, int64_t p) {
    arm_conv_geom g = geom(1, H, W, ks, 1, 1, p);
    g.sh = sh, g.sw = sw;
    g.OH = (H + 2 * p - ks) / sh + 1, g.OW = (W + 2 * p - ks) / sw + 1;
    test_conv_g(k, rtol, N, C, H, C, C, g);
}

static void test_float_path(const arm_fkernels *k, double rtol) {
    /* K 700 / 1100: K blocks of 512 (the fp16 paths carry their sums into fp32 every 256 steps inside one) */
    /* M = 1: the matrix-vector products (full and partial panels, K not a multiple of 4 or 8, fp16 sums
     * carried past 256 steps) */
    /* 24 x 72, K 129: whole tiles of one span (the fp16h tile's epilogue in its assembly) */
    const int64_t shapes[][3] = {{1, 1, 1},     {7, 13, 5},    {8, 12, 64}, {8, 24, 17},  {33, 50, 700},
                                 {20, 7, 300}, {9, 30, 1100}, {1, 37, 301}, {1, 24, 8}, {1, 5, 3}, {1, 50, 700},
                                 {24, 72, 129}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        test_gemm(k, rtol, shapes[i][0], shapes[i][1], shapes[i][2], 0);
        test_gemm(k, rtol, shapes[i][0], shapes[i][1], shapes[i][2], 1);
    }
    test_conv(k, rtol, 1, 16, 9, 24, 1, 1, 1, 0, 1);  /* pointwise */
    test_conv(k, rtol, 2, 3, 13, 10, 3, 1, 1, 1, 1);  /* 3x3, batch 2 */
    test_conv(k, rtol, 1, 8, 15, 16, 3, 2, 1, 1, 1);  /* 3x3 stride 2 */
    test_conv(k, rtol, 1, 40, 6, 24, 3, 1, 1, 1, 1);  /* 3x3, K = 360: sums carried in fp32 on the fp16 paths */
    test_conv(k, rtol, 1, 4, 11, 5, 5, 1, 2, 2, 1);   /* 5x5 dilation 2 */
    test_conv(k, rtol, 1, 6, 9, 4, 3, 1, 1, 1, 2);    /* grouped */
    test_conv(k, rtol, 1, 7, 13, 7, 3, 1, 1, 1, 7);   /* depthwise */
    test_conv(k, rtol, 2, 5, 17, 5, 3, 2, 1, 1, 5);   /* depthwise stride 2 */
    test_conv(k, rtol, 1, 3, 20, 3, 5, 1, 1, 2, 3);   /* depthwise 5x5 */
    test_conv(k, rtol, 1, 4, 9, 4, 3, 3, 1, 0, 4);    /* depthwise stride 3 */
    /* the 3x3 kernels: rows of 34 / 35 outputs (whole vectors and a tail), even and odd widths at stride 2,
     * no padding, 1-wide outputs */
    test_conv(k, rtol, 1, 3, 33, 3, 3, 1, 1, 1, 3);
    test_conv(k, rtol, 1, 4, 34, 4, 3, 1, 1, 0, 4);
    test_conv(k, rtol, 2, 3, 28, 3, 3, 2, 1, 1, 3);
    test_conv(k, rtol, 1, 5, 23, 5, 3, 2, 1, 1, 5);
    test_conv(k, rtol, 1, 6, 2, 6, 3, 2, 1, 1, 6);
    test_conv(k, rtol, 1, 2, 3, 2, 3, 1, 1, 0, 2);
    /* 3x3 and 5x5 at strides (1, 1), (2, 1), (1, 2), (2, 2), (3, 1): rows of 2 and 3 under padding 2
     * (every window row reaches into the padding), whole vectors and tails of 4 and 8 */
    test_dw(k, rtol, 1, 5, 3, 37, 5, 1, 1, 2);
    test_dw(k, rtol, 2, 3, 2, 17, 5, 1, 1, 2);
    test_dw(k, rtol, 1, 4, 12, 19, 5, 2, 1, 2);
    test_dw(k, rtol, 1, 3, 9, 40, 5, 1, 2, 2);
    test_dw(k, rtol, 1, 3, 11, 21, 5, 2, 2, 2);
    test_dw(k, rtol, 1, 2, 13, 9, 5, 3, 1, 1);
    test_dw(k, rtol, 1, 6, 3, 5, 5, 1, 1, 2);
    test_dw(k, rtol, 1, 4, 24, 23, 3, 2, 1, 1);
    test_dw(k, rtol, 1, 4, 12, 35, 3, 1, 2, 1);
    test_dw(k, rtol, 2, 3, 7, 16, 3, 3, 1, 0);
}

/* Winograd F(2x2, 3x3) (fp32 path): 3x3 stride 1 against the double reference, through the weight
 * transform and packing of prepare; bias per channel and an activation (clip fused, sigmoid after) */
static void test_winograd(const arm_fkernels *k, double rtol, int64_t N, int64_t C, int64_t H, int64_t W, int64_t O,
                          int64_t p, int act) {
    arm_conv_geom g = {C, H, W, H + 2 * p - 2, W + 2 * p - 2, 3, 3, 1, 1, 1, 1, p, p};
    const int64_t out = N * O * g.OH * g.OW, in = N * C * H * W;
    float *x = xalloc(in * 4), *w = xalloc(O * C * 9 * 4), *bias = xalloc(O * 4), *y = xalloc(out * 4);
    double *want = xalloc(out * 8), *mag = xalloc(out * 8);
    for (int64_t i = 0; i < in; ++i) x[i] = frand();
    for (int64_t i = 0; i < O * C * 9; ++i) w[i] = frand();
    for (int64_t i = 0; i < O; ++i) bias[i] = frand();
    float *wp = xalloc(arm_wino_weight_elems(k, O, C) * 4), *tmp = xalloc(16 * O * C * 4);
    arm_wino_pack_weights(k, w, O, C, wp, tmp);
    const int64_t chunk = arm_wino_chunk_tiles(k, &g);
    void *work = xalloc(arm_wino_work_bytes(k, &g, O, chunk));
    arm_epilogue e = {1.0f, 1.0f, bias, 1, 0, act, 0.0f, 6.0f};
    for (int64_t n = 0; n < N; ++n)
        arm_wino_conv(k, &g, O, wp, x + n * C * H * W, y + n * O * g.OH * g.OW, &e, chunk, work);
    conv_ref(x, w, bias, N, C, H, W, O, 1, &g, act, want, mag);
    if (act == MNN_ACT_SIGMOID)
        for (int64_t i = 0; i < out; ++i) mag[i] *= 0.25; /* sigmoid' <= 1/4 */
    char what[96];
    snprintf(what, sizeof what, "%s winograd conv N=%ld C=%ld %ldx%ld O=%ld p=%ld %s", k->name, (long)N, (long)C,
             (long)H, (long)W, (long)O, (long)p, act == MNN_ACT_CLIP ? "clip" : "sigmoid");
    compare(what, y, want, mag, out, rtol);
    free(x), free(w), free(bias), free(y), free(want), free(mag), free(wp), free(tmp), free(work);
}

static void test_winograd_fp32(const arm_fkernels *k) {
    /* N, C, H, W, O, pad: odd planes (5x7, 13x13), 1x1 and 2x2 outputs, channels not multiples of 4,
     * more tiles than one chunk (C=64: 192 tiles; 45x47: 552 tiles), K beyond one GEMM K block (C=600) */
    const int64_t cases[][6] = {{1, 8, 5, 7, 8, 1},    {1, 8, 5, 7, 8, 0},   {2, 5, 13, 13, 7, 1},
                                {1, 3, 13, 13, 9, 0},  {1, 9, 1, 1, 5, 1},   {1, 6, 3, 3, 10, 0},
                                {1, 7, 4, 4, 3, 0},    {1, 64, 24, 32, 17, 1}, {1, 16, 45, 47, 12, 1},
                                {1, 600, 6, 5, 9, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        test_winograd(k, 1e-4, cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], cases[i][5],
                      i % 3 == 2 ? MNN_ACT_SIGMOID : MNN_ACT_CLIP);
    report("winograd applies to 3x3 stride 1 dilation 1 only", 0,
           arm_wino_applies(&(arm_conv_geom){4, 8, 8, 6, 6, 3, 3, 1, 1, 1, 1, 0, 0}) &&
               !arm_wino_applies(&(arm_conv_geom){4, 8, 8, 3, 3, 3, 3, 2, 2, 1, 1, 0, 0}) &&
               !arm_wino_applies(&(arm_conv_geom){4, 8, 8, 4, 4, 3, 3, 1, 1, 2, 2, 0, 0}) &&
               !arm_wino_applies(&(arm_conv_geom){4, 8, 8, 8, 8, 1, 1, 1, 1, 1, 1, 0, 0}));
}

/* -- fp16h element-wise (fp16 tensors) and the fp32 <-> fp16 conversions ----------------- */

static void test_conversions(void) {
    const int64_t n = 37;
    float x[37], back[37];
    __fp16 h[37];
    int ok = 1;
    for (int64_t i = 0; i < n; ++i) x[i] = frand() * 1000.0f;
    x[3] = 65504.0f, x[4] = 1e-7f, x[5] = -0.0f, x[6] = 70000.0f; /* largest half, subnormal, -0, overflow */
    arm_f32_to_f16(x, h, n);
    arm_f16_to_f32(h, back, n);
    for (int64_t i = 0; i < n; ++i) ok &= memcmp(&back[i], &(float){(float)(__fp16)x[i]}, 4) == 0;
    report("conversions: fp32 -> fp16 -> fp32 as C's (__fp16) casts (37 values)", 0, ok);
}

static double binop_ref(int op, double a, double b) {
    switch (op) {
    case ARM_ADD: return a + b;
    case ARM_SUB: return a - b;
    case ARM_MUL: return a * b;
    case ARM_DIV: return a / b;
    case ARM_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

static void test_half_eltwise(void) {
    /* a [3][5][17] with b broadcast over the middle axis ([3][1][17]) and, second, b one value */
    const int64_t dims[3] = {3, 5, 17}, sa[3] = {85, 17, 1}, n = 3 * 5 * 17;
    const int64_t sbs[2][3] = {{17, 0, 1}, {0, 0, 0}};
    float a[255], b[51], y[255];
    double want[255], mag[255];
    __fp16 ah[255], bh[51], yh[255];
    for (int64_t i = 0; i < n; ++i) a[i] = frand() * 4.0f;
    for (int64_t i = 0; i < 51; ++i) b[i] = 0.5f + (float)urand(); /* away from 0 for Div */
    arm_f32_to_f16(a, ah, n);
    arm_f32_to_f16(b, bh, 51);
    static const char *names[] = {"add", "sub", "mul", "div", "max", "min"};
    for (int bc = 0; bc < 2; ++bc)
        for (int op = ARM_ADD; op <= ARM_MIN; ++op) {
            arm_binary_h(op, ah, bh, yh, 3, dims, sa, sbs[bc]);
            arm_f16_to_f32(yh, y, n);
            for (int64_t i0 = 0; i0 < 3; ++i0)
                for (int64_t i1 = 0; i1 < 5; ++i1)
                    for (int64_t i2 = 0; i2 < 17; ++i2) {
                        const int64_t i = i0 * 85 + i1 * 17 + i2;
                        const double av = a[i], bv = b[i0 * sbs[bc][0] + i2 * sbs[bc][2]];
                        want[i] = binop_ref(op, av, bv);
                        mag[i] = op == ARM_MUL || op == ARM_DIV ? fabs(want[i]) : fabs(av) + fabs(bv);
                    }
            char what[96];
            snprintf(what, sizeof what, "fp16h %s [3][5][17] with %s", names[op], bc ? "one value" : "[3][1][17]");
            compare(what, y, want, mag, n, 1e-2);
        }
    const int acts[] = {MNN_ACT_RELU, MNN_ACT_CLIP, MNN_ACT_SIGMOID, MNN_ACT_HARD_SWISH, MNN_ACT_SILU};
    static const char *act_names[] = {"relu", "clip(0, 6)", "sigmoid", "hard_swish", "silu"};
    /* values as drawn, and 16x them: the fp16 sigmoid's clamped exponents (|x| past 10) */
    for (int scale = 1; scale <= 16; scale += 15) {
        float sx[37];
        for (int64_t j = 0; j < 37; ++j) sx[j] = a[j] * scale;
        arm_f32_to_f16(sx, ah, 37);
        for (int i = 0; i < 5; ++i) {
            arm_epilogue e = {1.0f, 1.0f, NULL, 0, 0, acts[i], 0.0f, 6.0f};
            arm_activation_h(&e, ah, yh, 37);
            arm_f16_to_f32(yh, y, 37);
            for (int64_t j = 0; j < 37; ++j) {
                const double x = (double)(__fp16)sx[j]; /* the stored input */
                want[j] = act_ref(acts[i], x, 0.0, 6.0), mag[j] = fabs(x) + 1e-3;
            }
            char what[96];
            snprintf(what, sizeof what, "fp16h activation %s (37 values, x%d)", act_names[i], scale);
            compare(what, y, want, mag, 37, 1e-2);
        }
    }
}

/* -- fp32-only kernels: pooling, element-wise, softmax, norms --------------------------- */

/* softmax of scale * x over one row in double; mag: 1 / len (what a score of the row is measured against) */
static void softmax_row_ref(const float *x, double *want, double *mag, int64_t len, float scale) {
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < len; ++i)
        if ((double)(x[i] * scale) > m) m = (double)(x[i] * scale);
    for (int64_t i = 0; i < len; ++i) sum += exp(x[i] * scale - m);
    for (int64_t i = 0; i < len; ++i) want[i] = exp(x[i] * scale - m) / sum, mag[i] = 1.0 / len;
}

static void test_fp32_misc(void) {
    /* max and average pooling 3x3 stride 2 pad 1 (average counts only real taps) */
    for (int kind = 0; kind < 2; ++kind) {
        const int64_t P = 3, H = 11, W = 12, k = 3, s = 2, pd = 1, OH = (H + 2 * pd - k) / s + 1, OW = (W + 2 * pd - k) / s + 1;
        float *x = xalloc(P * H * W * 4), *y = xalloc(P * OH * OW * 4), *ir = xalloc(OH * 4), *ic = xalloc(OW * 4);
        double *want = xalloc(P * OH * OW * 8), *mag = xalloc(P * OH * OW * 8);
        for (int64_t i = 0; i < P * H * W; ++i) x[i] = frand();
        for (int64_t o = 0; o < OH; ++o) {
            int cnt = 0;
            for (int64_t i = 0; i < k; ++i) cnt += o * s + i - pd >= 0 && o * s + i - pd < H;
            ir[o] = 1.0f / cnt;
        }
        for (int64_t o = 0; o < OW; ++o) {
            int cnt = 0;
            for (int64_t i = 0; i < k; ++i) cnt += o * s + i - pd >= 0 && o * s + i - pd < W;
            ic[o] = 1.0f / cnt;
        }
        arm_pool_geom g = {H, W, OH, OW, k, k, s, s, 1, 1, pd, pd, kind, 0, ir, ic};
        float *work = xalloc(arm_pool_work_floats(&g) * 4);
        arm_pool(x, y, P, &g, work);
        for (int64_t p = 0; p < P; ++p)
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                    double m = -INFINITY, sum = 0, sa = 0;
                    int cnt = 0;
                    for (int64_t i = 0; i < k; ++i)
                        for (int64_t j = 0; j < k; ++j) {
                            const int64_t ih = oh * s + i - pd, iw = ow * s + j - pd;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            const double v = x[(p * H + ih) * W + iw];
                            m = v > m ? v : m, sum += v, sa += fabs(v), ++cnt;
                        }
                    const int64_t idx = (p * OH + oh) * OW + ow;
                    want[idx] = kind == 0 ? m : sum / cnt;
                    mag[idx] = kind == 0 ? fabs(m) : sa / cnt;
                }
        compare(kind == 0 ? "fp32 maxpool 3x3 s2 p1" : "fp32 avgpool 3x3 s2 p1", y, want, mag, P * OH * OW, 1e-4);
        free(x), free(y), free(ir), free(ic), free(want), free(mag), free(work);
    }
    /* binary ops: [2][3][13] op [3][1] (channel broadcast) and same-shape */
    for (int op = ARM_ADD; op <= ARM_MIN; ++op) {
        const int64_t n = 2 * 3 * 13;
        float *a = xalloc(n * 4), *b = xalloc(3 * 4), *y = xalloc(n * 4);
        double *want = xalloc(n * 8), *mag = xalloc(n * 8);
        for (int64_t i = 0; i < n; ++i) a[i] = frand();
        for (int i = 0; i < 3; ++i) b[i] = frand() + 2.0f;
        const int64_t dims[3] = {2, 3, 13}, sa[3] = {39, 13, 1}, sb[3] = {0, 1, 0};
        arm_binary(op, a, b, y, 3, dims, sa, sb);
        for (int64_t i = 0; i < n; ++i) {
            const double x = a[i], z = b[(i / 13) % 3];
            want[i] = op == ARM_ADD ? x + z : op == ARM_SUB ? x - z : op == ARM_MUL ? x * z : op == ARM_DIV ? x / z
                    : op == ARM_MAX ? fmax(x, z) : fmin(x, z);
            mag[i] = fabs(want[i]) + 1e-6;
        }
        char what[64];
        snprintf(what, sizeof what, "fp32 binary op %d, channel broadcast", op);
        compare(what, y, want, mag, n, 1e-6);
        free(a), free(b), free(y), free(want), free(mag);
    }
    /* activations, softmax over the middle axis, layer norm rows */
    {
        const int64_t n = 103;
        float *x = xalloc(n * 4), *y = xalloc(n * 4);
        double *want = xalloc(n * 8), *mag = xalloc(n * 8);
        for (int64_t i = 0; i < n; ++i) x[i] = 4 * frand();
        const int acts[] = {MNN_ACT_RELU, MNN_ACT_CLIP, MNN_ACT_SIGMOID, MNN_ACT_HARD_SWISH};
        for (int t = 0; t < 4; ++t) {
            arm_epilogue e = {1, 1, NULL, 0, 0, acts[t], 0.0f, 6.0f};
            arm_activation(&e, x, y, n);
            for (int64_t i = 0; i < n; ++i) want[i] = act_ref(acts[t], x[i], 0, 6), mag[i] = fabs(x[i]) + 1e-3;
            char what[48];
            snprintf(what, sizeof what, "fp32 activation %d", acts[t]);
            compare(what, y, want, mag, n, 1e-5);
        }
        free(x), free(y), free(want), free(mag);
    }
    { /* GELU (erf) over [-12, 12]: the 16- and 4-lane loops, the scalar tail, both signs' branches */
        const int64_t n = 103;
        float *x = xalloc(n * 4), *y = xalloc(n * 4);
        double *want = xalloc(n * 8), *mag = xalloc(n * 8);
        for (int64_t i = 0; i < n; ++i) x[i] = i < 40 ? 12 * frand() : 3 * frand();
        arm_epilogue e = {1, 1, NULL, 0, 0, MNN_ACT_GELU, 0.0f, 0.0f};
        arm_activation(&e, x, y, n);
        for (int64_t i = 0; i < n; ++i) want[i] = 0.5 * x[i] * erfc(-x[i] / sqrt(2.0)), mag[i] = fabs(x[i]) + 1e-3;
        compare("fp32 activation gelu", y, want, mag, n, 1e-5);
        free(x), free(y), free(want), free(mag);
    }
    {
        const int64_t outer = 3, axis = 10, inner = 7, n = outer * axis * inner;
        float *x = xalloc(n * 4), *y = xalloc(n * 4);
        double *want = xalloc(n * 8), *mag = xalloc(n * 8);
        for (int64_t i = 0; i < n; ++i) x[i] = 5 * frand();
        for (int lg = 0; lg < 2; ++lg) {
            arm_softmax(x, y, outer, axis, inner, lg, 1.0f);
            for (int64_t o = 0; o < outer; ++o)
                for (int64_t in = 0; in < inner; ++in) {
                    double m = -INFINITY, s = 0;
                    for (int64_t a = 0; a < axis; ++a) m = fmax(m, x[(o * axis + a) * inner + in]);
                    for (int64_t a = 0; a < axis; ++a) s += exp(x[(o * axis + a) * inner + in] - m);
                    for (int64_t a = 0; a < axis; ++a) {
                        const int64_t i = (o * axis + a) * inner + in;
                        want[i] = lg ? x[i] - m - log(s) : exp(x[i] - m) / s;
                        mag[i] = lg ? fabs(x[i]) + fabs(m) + log(s) : want[i];
                    }
                }
            compare(lg ? "fp32 log-softmax axis 1" : "fp32 softmax axis 1", y, want, mag, n, 1e-5);
        }
        free(x), free(y), free(want), free(mag);
    }
    { /* softmax of rows (the last axis) of scale * x: lengths around the 16- and 4-lane loops, masked scores */
        const int64_t lens[] = {1, 3, 4, 15, 16, 17, 35, 100, 1501};
        const float scales[] = {1.0f, 0.125f, 3.0f};
        for (int li = 0; li < 9; ++li)
            for (int si = 0; si < 3; ++si) {
                const int64_t rows = 3, len = lens[li], n = rows * len;
                float *x = xalloc(n * 4), *y = xalloc(n * 4);
                double *want = xalloc(n * 8), *mag = xalloc(n * 8);
                for (int64_t i = 0; i < n; ++i) x[i] = 12 * frand() - 6;
                if (len > 4) x[len + 2] = -INFINITY, x[2 * len + 1] = -1e30f; /* masked scores */
                arm_softmax(x, y, rows, len, 1, 0, scales[si]);
                for (int64_t r = 0; r < rows; ++r) softmax_row_ref(x + r * len, want + r * len, mag + r * len, len, scales[si]);
                char what[64];
                snprintf(what, sizeof what, "fp32 softmax rows of %d, scale %g", (int)len, scales[si]);
                compare(what, y, want, mag, n, 1e-5);
                free(x), free(y), free(want), free(mag);
            }
    }
    {
        const int64_t outer = 3, axis = 10, inner = 7, n = outer * axis * inner;
        float *x = xalloc(n * 4), *y = xalloc(n * 4);
        double *want = xalloc(n * 8), *mag = xalloc(n * 8);
        for (int64_t i = 0; i < n; ++i) x[i] = 5 * frand();
        float *sc = xalloc(inner * axis * 4), *sh = xalloc(inner * axis * 4);
        for (int64_t i = 0; i < axis * inner; ++i) sc[i] = frand(), sh[i] = frand();
        arm_normalize_rows(x, y, outer, axis * inner, 1e-5f, sc, sh, 0);
        for (int64_t r = 0; r < outer; ++r) {
            double mu = 0, var = 0;
            const int64_t len = axis * inner;
            for (int64_t i = 0; i < len; ++i) mu += x[r * len + i];
            mu /= len;
            for (int64_t i = 0; i < len; ++i) var += (x[r * len + i] - mu) * (x[r * len + i] - mu);
            var /= len;
            for (int64_t i = 0; i < len; ++i) {
                want[r * len + i] = (x[r * len + i] - mu) / sqrt(var + 1e-5) * sc[i] + sh[i];
                mag[r * len + i] = fabs((x[r * len + i] - mu) / sqrt(var + 1e-5) * sc[i]) + fabs(sh[i]);
            }
        }
        compare("fp32 layer norm rows", y, want, mag, n, 1e-4);
        free(x), free(y), free(want), free(mag), free(sc), free(sh);
    }
}

int main(int argc, char **argv) {
    int expect_fp16 = -1, expect_dot = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--expect-fp16")) expect_fp16 = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--expect-dot")) expect_dot = atoi(argv[i + 1]);
    }
    const int fp16 = arm_path_runnable(ARM_PATH_FP16), dot = arm_path_runnable(ARM_PATH_INT8_DOT);
    printf("hwcap 0x%llx: fp32 yes, fp16 %s, int8 yes, int8_dot %s\n", (unsigned long long)arm_hwcap(),
           fp16 ? "yes" : "no", dot ? "yes" : "no");
    if (expect_fp16 >= 0) report("dispatch: offers fp16 exactly when the CPU has asimdhp", 0, fp16 == expect_fp16);
    if (expect_dot >= 0) report("dispatch: offers int8_dot exactly when the CPU has asimddp", 0, dot == expect_dot);
    report("dispatch: fp16 table withheld unless runnable", 0, (arm_fkernels_for(ARM_PATH_FP16) != NULL) == fp16);
    report("dispatch: int8_dot table withheld unless runnable", 0, (arm_qkernels_for(ARM_PATH_INT8_DOT) != NULL) == dot);
    report("dispatch: fp16h table withheld unless runnable", 0, (arm_fkernels_for(ARM_PATH_FP16H) != NULL) == fp16);
    test_conversions();

    test_float_path(arm_fkernels_for(ARM_PATH_FP32), 1e-4);
    test_winograd_fp32(arm_fkernels_for(ARM_PATH_FP32));
    test_fp32_misc();
    test_requant();
    test_int8_path(arm_qkernels_for(ARM_PATH_INT8));
    if (fp16) {
        test_float_path(arm_fkernels_for(ARM_PATH_FP16), 1e-2);
        test_float_path(arm_fkernels_for(ARM_PATH_FP16H), 1e-2);
        test_half_eltwise();
    } else {
        printf("skip fp16 and fp16h paths: this CPU lacks asimdhp (never called)\n");
    }
    if (dot) test_int8_path(arm_qkernels_for(ARM_PATH_INT8_DOT));
    else printf("skip int8_dot path: this CPU lacks asimddp (never called)\n");
    printf("harness: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
