/* The harness's int8 checks: QLinearConv, ConvInteger and QLinearMatMul semantics, bit-exact
 * (see harness.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* -- int8 ------------------------------------------------------------------------------- */

/* the reference's multiplier: float32(float32(sx * sw) / sy), held in a double */
static double qmult(float sx, float sw, float sy) { return (double)((float)(sx * sw) / sy); }

static int32_t requant_ref(double acc, double mult, double zy, int kind) {
    double v = (double)rintf((float)acc * (float)mult) + zy;
    const double lo = kind == 1 ? 0 : -128, hi = kind == 1 ? 255 : 127;
    return (int32_t)(v < lo ? lo : (v > hi ? hi : v));
}

static int32_t qget(const void *p, int is_u8, int64_t i) {
    return is_u8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* QLinearConv (out_kind 1/2) or ConvInteger (out_kind 0), groups of one image, against the ONNX semantics */
static void test_qconv_d(const arm_qkernels *k, int is_u8, int out_kind, int64_t C, int64_t H, int64_t O, int64_t ks,
                         int64_t s, int64_t p, int64_t group, int per_channel, int64_t d) {
    const int64_t W = H + 2, cg = C / group, og = O / group, Kg = cg * ks * ks;
    arm_conv_geom g = geom(cg, H, W, ks, s, d, p);
    const int64_t npix = g.OH * g.OW, nx = C * H * W, nw = O * Kg;
    uint8_t *x = xalloc(nx), *w = xalloc(nw);
    for (int64_t i = 0; i < nx; ++i) x[i] = (uint8_t)(is_u8 ? irand(0, 255) : irand(-128, 127));
    for (int64_t i = 0; i < nw; ++i) w[i] = (uint8_t)(is_u8 ? irand(0, 255) : irand(-128, 127));
    const int32_t zx = is_u8 ? irand(90, 140) : irand(-20, 20);
    int32_t *zw = xalloc(O * 4), *bias = xalloc(O * 4), *da = xalloc(O * 4), *rowsum = xalloc(O * 4);
    double *mult = xalloc(O * 8);
    const float sx = 0.02f, sy = 0.4f + (out_kind ? 0.0f : 0.0f);
    for (int64_t o = 0; o < O; ++o) {
        zw[o] = per_channel ? (is_u8 ? irand(100, 150) : irand(-10, 10)) : (is_u8 ? 128 : 0);
        bias[o] = out_kind ? irand(-2000, 2000) : 0;
        const float sw = per_channel ? 0.001f * (float)irand(5, 30) : 0.01f;
        mult[o] = qmult(sx, sw, sy);
        da[o] = (is_u8 ? 128 : 0) - zw[o];
    }
    const int32_t db = (is_u8 ? 128 : 0) - zx;
    const int out_bytes = out_kind == 0 ? 4 : 1;
    void *y = xalloc(O * npix * out_bytes);
    const int64_t K4 = arm_k4(Kg), astride = (og + ARM_Q_MR - 1) / ARM_Q_MR * ARM_Q_MR * K4;
    if (group == C && O == C) { /* depthwise: int16 weights minus their zero point, int32 sums, then requantize */
        g.C = C;
        int16_t *w16 = xalloc(O * Kg * 2), *work = xalloc(arm_q_depthwise_work_elems(&g) * 2);
        int32_t *acc = xalloc(O * npix * 4);
        for (int64_t o = 0; o < O; ++o)
            for (int64_t t = 0; t < Kg; ++t) w16[o * Kg + t] = (int16_t)(qget(w, is_u8, o * Kg + t) - zw[o]);
        k->depthwise(x, is_u8, zx, w16, out_kind ? bias : NULL, acc, C, &g, work);
        const int32_t zero = 0;
        arm_qepilogue e = {0, &zero, &zero, 0, 0, NULL, NULL, NULL, out_kind, mult, 1, 0, 0.0};
        e.zy = out_kind == 1 ? 117 : -3;
        for (int64_t o = 0; o < O; ++o) {
            arm_qepilogue eo = e;
            eo.mult = mult + o;
            eo.mult_rs = 0;
            arm_q_finish(acc + o * npix, npix, (char *)y + o * npix * out_bytes, npix, 0, 0, 1, npix, &eo);
        }
        if (k->depthwise_q && out_kind) { /* requantized in the tiles: the same bytes, checked below through y */
            uint8_t *yq = xalloc(O * npix);
            memset(yq, 0x5a, O * npix);
            k->depthwise_q(x, is_u8, zx, w16, bias, mult, 1, (int32_t)e.zy, out_kind, yq, acc, C, &g, work);
            int64_t diff = 0;
            for (int64_t i = 0; i < O * npix; ++i) diff += yq[i] != ((uint8_t *)y)[i];
            char what[96];
            snprintf(what, sizeof what, "%s depthwise_q C=%ld H=%ld k=%ld s=%ld == sums then arm_q_finish", k->name,
                     (long)C, (long)H, (long)ks, (long)s);
            report(what, (double)diff, diff == 0);
            memcpy(y, yq, O * npix);
            free(yq);
        }
        free(w16), free(work), free(acc);
    } else {
        int8_t *wp = xalloc(group * astride);
        for (int64_t gi = 0; gi < group; ++gi)
            arm_q_pack_a(w + gi * og * Kg, is_u8, Kg, 1, og, Kg, wp + gi * astride, rowsum + gi * og);
        const int64_t cols = arm_qconv_chunk_cols(&g);
        int8_t *bwork = xalloc(cols * K4);
        int32_t *colsum = xalloc(cols * 4), *acc = xalloc(og * cols * 4);
        for (int64_t gi = 0; gi < group; ++gi) {
            arm_qepilogue e = {Kg, da + gi * og, &db, 1, 0, rowsum + gi * og, NULL, out_kind ? bias + gi * og : NULL,
                               out_kind, mult + gi * og, 1, 0, out_kind == 1 ? 117.0 : -3.0};
            arm_qconv_gemm(k, &g, og, wp + gi * astride, x + gi * cg * H * W, is_u8, zx,
                           (char *)y + gi * og * npix * out_bytes, out_bytes, &e, cols, bwork, colsum, acc);
        }
        free(wp), free(bwork), free(colsum), free(acc);
    }
    int64_t bad = 0;
    for (int64_t o = 0; o < O; ++o)
        for (int64_t oh = 0; oh < g.OH; ++oh)
            for (int64_t ow = 0; ow < g.OW; ++ow) {
                const int64_t gi = o / og;
                double acc = out_kind ? bias[o] : 0;
                for (int64_t c = 0; c < cg; ++c)
                    for (int64_t i = 0; i < ks; ++i)
                        for (int64_t j = 0; j < ks; ++j) {
                            const int64_t ih = oh * s + i * d - p, iw = ow * s + j * d - p;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue; /* x - zx pads as 0 */
                            acc += (double)(qget(x, is_u8, ((gi * cg + c) * H + ih) * W + iw) - zx) *
                                   (double)(qget(w, is_u8, ((o * cg + c) * ks + i) * ks + j) - zw[o]);
                        }
                const int64_t idx = o * npix + oh * g.OW + ow;
                int32_t want, got;
                if (out_kind == 0) want = (int32_t)rint(acc), got = ((int32_t *)y)[idx];
                else want = requant_ref(acc, mult[o], out_kind == 1 ? 117 : -3, out_kind),
                     got = out_kind == 1 ? ((uint8_t *)y)[idx] : ((int8_t *)y)[idx];
                bad += got != want;
            }
    char what[120];
    snprintf(what, sizeof what, "%s %s %s->%s C=%ld H=%ld O=%ld k=%ld s=%ld d=%ld p=%ld g=%ld%s", k->name,
             out_kind ? "QLinearConv" : "ConvInteger", is_u8 ? "u8" : "s8",
             out_kind == 0 ? "s32" : out_kind == 1 ? "u8" : "s8", (long)C, (long)H, (long)O, (long)ks, (long)s,
             (long)d, (long)p, (long)group, per_channel ? " per-channel" : "");
    report(what, (double)bad, bad == 0);
    free(x), free(w), free(zw), free(bias), free(da), free(rowsum), free(mult), free(y);
    (void)0;
}

static void test_qconv(const arm_qkernels *k, int is_u8, int out_kind, int64_t C, int64_t H, int64_t O, int64_t ks,
                       int64_t s, int64_t p, int64_t group, int per_channel) {
    test_qconv_d(k, is_u8, out_kind, C, H, O, ks, s, p, group, per_channel, 1);
}

/* QLinearMatMul: A [M][K] u8 runtime, B [K][N] u8 with per-column zero point and scale */
static void test_qmatmul(const arm_qkernels *k, int64_t M, int64_t K, int64_t N) {
    uint8_t *a = xalloc(M * K), *b = xalloc(K * N), *y = xalloc(M * N);
    for (int64_t i = 0; i < M * K; ++i) a[i] = (uint8_t)irand(0, 255);
    for (int64_t i = 0; i < K * N; ++i) b[i] = (uint8_t)irand(0, 255);
    const int32_t za = 113, zy = 118;
    int32_t *zb = xalloc(N * 4), *db = xalloc(N * 4), *rowsum = xalloc(M * 4), *colsum = xalloc(N * 4);
    double *mult = xalloc(N * 8);
    for (int64_t n = 0; n < N; ++n) {
        zb[n] = irand(100, 130), db[n] = 128 - zb[n];
        mult[n] = qmult(0.02f, 0.001f * irand(5, 20), 0.05f);
    }
    const int32_t da = 128 - za;
    const int64_t K4 = arm_k4(K);
    int8_t *ap = xalloc((M + 7) / 8 * 8 * K4), *bp = xalloc((N + 11) / 12 * 12 * K4);
    int32_t *acc = xalloc(M * N * 4);
    arm_q_pack_a(a, 1, K, 1, M, K, ap, rowsum);
    arm_q_pack_b(b, 1, N, 1, K, N, bp, colsum);
    k->gemm(M, N, K4, ap, bp, acc, N);
    arm_qepilogue e = {K, &da, db, 0, 1, rowsum, colsum, NULL, 1, mult, 0, 1, (double)zy};
    arm_q_finish(acc, N, y, N, 0, 0, M, N, &e);
    int64_t bad = 0;
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double s = 0;
            for (int64_t kk = 0; kk < K; ++kk) s += (double)(a[m * K + kk] - za) * (double)(b[kk * N + n] - zb[n]);
            bad += y[m * N + n] != requant_ref(s, mult[n], zy, 1);
        }
    char what[96];
    snprintf(what, sizeof what, "%s QLinearMatMul u8 M=%ld K=%ld N=%ld per-column zp", k->name, (long)M, (long)K,
             (long)N);
    report(what, (double)bad, bad == 0);
    free(a), free(b), free(y), free(zb), free(db), free(rowsum), free(colsum), free(mult), free(ap), free(bp),
        free(acc);
}

/* the vector requantization against the float32 rule on sums in a band wider than the outputs (exact ties
 * included: power-of-two multipliers; sums beyond 2^24, where float32(acc) rounds: 1.3e-5) */
void test_requant(void) {
    const double mults[] = {0.25, 0.125, 1.0 / 3.0, 0.0009765625, 0.00123456789, 0.0371, 0.4999, 0.000013};
    const int kinds[] = {1, 2};
    for (size_t i = 0; i < sizeof mults / sizeof mults[0]; ++i)
        for (size_t kk = 0; kk < 2; ++kk) {
            const int kind = kinds[kk];
            const double m = (double)(float)mults[i]; /* multipliers are float32 values */
            const double zy = kind == 1 ? 117.0 : -3.0;
            const int64_t span = (int64_t)(300.0 / m), n = 2 * span + 17 < 400000 ? 2 * span + 17 : 400001;
            const int64_t step = (2 * span + 17) / n + 1;
            int32_t *acc = xalloc(n * 4);
            uint8_t *y = xalloc(n);
            for (int64_t j = 0; j < n; ++j) acc[j] = (int32_t)(-span + j * step);
            const int32_t zero = 0;
            arm_qepilogue e = {0, &zero, &zero, 0, 0, NULL, NULL, NULL, kind, &m, 0, 0, zy};
            arm_q_finish(acc, n, y, n, 0, 0, 1, n, &e);
            int64_t bad = 0;
            for (int64_t j = 0; j < n; ++j) {
                const int32_t want = requant_ref((double)acc[j], m, (int32_t)zy, kind);
                bad += (kind == 1 ? (int32_t)y[j] : (int32_t)(int8_t)y[j]) != want;
            }
            char what[96];
            snprintf(what, sizeof what, "requant %s mult=%.9g zy=%g", kind == 1 ? "u8" : "s8", m, zy);
            report(what, (double)bad, bad == 0);
            free(acc), free(y);
        }
}

void test_int8_path(const arm_qkernels *k) {
    test_qconv(k, 1, 1, 16, 9, 24, 1, 1, 0, 1, 1);  /* pointwise, u8, per-channel */
    test_qconv(k, 0, 2, 13, 7, 20, 1, 1, 0, 1, 0);  /* pointwise, s8, per-tensor, odd C */
    test_qconv(k, 1, 1, 3, 13, 10, 3, 2, 1, 1, 1);  /* 3x3 stride 2, zero point padding */
    test_qconv(k, 0, 1, 3, 45, 8, 3, 2, 1, 1, 1);   /* the same on rows of 46: whole ld2 runs of the im2col */
    test_qconv(k, 1, 2, 2, 41, 5, 5, 3, 2, 1, 0);   /* 5x5 stride 3: the columns between the pads */
    test_qconv(k, 1, 0, 6, 8, 8, 3, 1, 1, 2, 1);    /* ConvInteger, grouped */
    test_qconv(k, 0, 0, 200, 5, 17, 3, 1, 1, 1, 1); /* K = 1800 */
    test_qconv(k, 1, 1, 9, 13, 9, 3, 1, 1, 9, 1);   /* depthwise */
    test_qconv(k, 0, 2, 6, 15, 6, 3, 2, 1, 6, 1);   /* depthwise stride 2 */
    /* the 3x3 kernels: 16-wide vectors and 4-wide tails, both strides, no padding, per-tensor weights
     * (u8 weights minus 128 fit int8), weights whose zero point pushes w - zw out of int8 (generic plane) */
    test_qconv(k, 1, 1, 5, 35, 5, 3, 1, 1, 5, 0);
    test_qconv(k, 0, 2, 4, 33, 4, 3, 2, 1, 4, 0);
    test_qconv(k, 1, 0, 3, 30, 3, 3, 2, 0, 3, 1);
    test_qconv(k, 0, 1, 7, 4, 7, 3, 1, 1, 7, 1);
    test_qconv(k, 1, 1, 6, 3, 6, 3, 1, 0, 6, 1);
    /* 5x5 and 7x7 (two sdot words a row of taps): planes of 7x7 outputs (4-wide tails spilling into the
     * next plane, the last plane lane by lane), 16-wide vectors, both strides, no padding, one output column */
    test_qconv(k, 1, 1, 6, 7, 6, 5, 1, 2, 6, 1);
    test_qconv(k, 0, 2, 5, 14, 5, 5, 2, 2, 5, 0);
    test_qconv(k, 1, 2, 3, 35, 3, 5, 1, 2, 3, 0);
    test_qconv(k, 0, 1, 4, 20, 4, 7, 1, 3, 4, 1);
    test_qconv(k, 1, 1, 3, 23, 3, 7, 2, 3, 3, 0);
    test_qconv(k, 0, 0, 4, 5, 4, 5, 1, 0, 4, 1);
    test_qconv(k, 1, 1, 2, 9, 2, 7, 1, 0, 2, 1);
    /* im2col's rows over spans of output columns: more than one span (240 columns), runs that start and
     * end in the padding, rows narrower than a vector, K not a multiple of 4, column sums with and
     * without weight zero points, the 1x1 input rows read up to their end */
    test_qconv(k, 1, 1, 5, 19, 11, 3, 1, 1, 1, 1);
    test_qconv(k, 0, 2, 5, 19, 11, 3, 1, 1, 1, 0);
    test_qconv(k, 0, 1, 3, 1, 9, 3, 1, 1, 1, 1);
    test_qconv(k, 1, 0, 7, 3, 10, 3, 1, 0, 1, 1);
    test_qconv(k, 0, 2, 13, 17, 9, 1, 1, 0, 1, 0);
    test_qconv(k, 1, 1, 13, 17, 9, 1, 1, 0, 1, 1);
    test_qconv(k, 1, 2, 4, 20, 6, 5, 1, 2, 1, 1);
    test_qconv(k, 0, 1, 4, 40, 10, 3, 2, 1, 1, 1);
    test_qconv(k, 1, 1, 2, 2, 3, 5, 2, 2, 1, 0);
    test_qconv(k, 0, 0, 64, 14, 20, 3, 1, 1, 1, 1);
    test_qconv(k, 1, 1, 16, 30, 12, 3, 1, 1, 1, 0); /* u8 rows read in place, many chunks */
    test_qconv(k, 0, 1, 4, 20, 6, 5, 1, 2, 1, 0);
    test_qconv(k, 1, 2, 200, 7, 10, 3, 1, 1, 1, 0); /* two chunks of 36 columns */
    test_qconv_d(k, 1, 1, 3, 16, 5, 3, 1, 2, 1, 1, 2);
    test_qconv_d(k, 0, 2, 3, 15, 5, 3, 2, 2, 1, 0, 2);
    test_qmatmul(k, 2, 4, 3);
    test_qmatmul(k, 17, 129, 30);
}
