/* The int8 path's common part (armv8-a): packing into the 4-deep layout the
 * sdot kernel reads, im2col with the zero point as padding, the column and
 * row sums that undo the zero points, requantization (bit-exact with the
 * reference: float64, round half to even), depthwise int8 convolution, and
 * the int8 GEMM for CPUs without sdot.
 *
 * uint8 data is shifted to int8 (x - 128) so one signed kernel serves both;
 * with a = as + da and b = bs + db the true sum over k is
 *   sum(as*bs) + db*sum(as) + da*sum(bs) + K*da*db,
 * which arm_q_finish adds to the kernel's sum(as*bs). */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"

#define QMR ARM_Q_MR
#define QNR ARM_Q_NR

int64_t arm_k4(int64_t K) { return (K + 3) / 4 * 4; }

static inline int32_t qval(const void *p, int is_uint8, int64_t i) {
    return is_uint8 ? (int32_t)((const uint8_t *)p)[i] - 128 : (int32_t)((const int8_t *)p)[i];
}

/* 8 whole rows of A (contiguous k) into one panel, 16 k-values a step: each row's 16 bytes are four k-groups,
 * i.e. four int32 lanes, and a 4x4 transpose of those lanes over rows 0-3 (then 4-7) gives the panel's
 * groups, 32 bytes each (rows 0-3, then 4-7). The row sums come from pairwise widening adds. k from K16
 * on (the last k-values and the zero padding to K4) by bytes. */
static void pack_a_panel(const uint8_t *const *src, uint8x16_t flip, int is_uint8, int64_t K, int8_t *dst,
                         int32_t *rowsum) {
    const int64_t K4 = arm_k4(K), K16 = K / 16 * 16;
    int32x4_t sum[QMR];
    for (int r = 0; r < QMR; ++r) sum[r] = vdupq_n_s32(0);
    for (int64_t k = 0; k < K16; k += 16) {
        int32x4_t v[QMR];
        for (int r = 0; r < QMR; ++r) {
            const int8x16_t x = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(src[r] + k), flip));
            sum[r] = vpadalq_s16(sum[r], vpaddlq_s8(x));
            v[r] = vreinterpretq_s32_s8(x);
        }
        for (int h = 0; h < 2; ++h) {
            const int32x4_t *q = v + 4 * h;
            const int64x2_t t0 = vreinterpretq_s64_s32(vzip1q_s32(q[0], q[1]));
            const int64x2_t t1 = vreinterpretq_s64_s32(vzip2q_s32(q[0], q[1]));
            const int64x2_t t2 = vreinterpretq_s64_s32(vzip1q_s32(q[2], q[3]));
            const int64x2_t t3 = vreinterpretq_s64_s32(vzip2q_s32(q[2], q[3]));
            int8_t *d = dst + k * QMR + h * 16; /* group k/4 starts at (k/4) * QMR * 4 */
            vst1q_s8(d, vreinterpretq_s8_s64(vzip1q_s64(t0, t2)));
            vst1q_s8(d + 32, vreinterpretq_s8_s64(vzip2q_s64(t0, t2)));
            vst1q_s8(d + 64, vreinterpretq_s8_s64(vzip1q_s64(t1, t3)));
            vst1q_s8(d + 96, vreinterpretq_s8_s64(vzip2q_s64(t1, t3)));
        }
    }
    for (int r = 0; r < QMR; ++r) {
        int32_t s = vaddvq_s32(sum[r]);
        for (int64_t k = K16; k < K4; ++k) {
            const int32_t v = k < K ? qval(src[r], is_uint8, k) : 0;
            dst[(k / 4) * QMR * 4 + r * 4 + (k % 4)] = (int8_t)v;
            s += v;
        }
        if (rowsum) rowsum[r] = s;
    }
}

void arm_q_pack_a(const void *a, int is_uint8, int64_t rs, int64_t cs, int64_t M, int64_t K, int8_t *ap,
                  int32_t *rowsum) {
    const int64_t K4 = arm_k4(K);
    int64_t m = 0;
    if (cs == 1) { /* whole panels of rows with contiguous k (a QLinearMatMul's A): by vectors */
        const uint8x16_t flip = vdupq_n_u8(is_uint8 ? 0x80 : 0);
        for (; m + QMR <= M; m += QMR) {
            const uint8_t *src[QMR];
            for (int r = 0; r < QMR; ++r) src[r] = (const uint8_t *)a + (m + r) * rs;
            pack_a_panel(src, flip, is_uint8, K, ap + m * K4, rowsum ? rowsum + m : NULL);
        }
    }
    for (; m < (M + QMR - 1) / QMR * QMR; ++m) {
        int8_t *dst = ap + (m / QMR) * QMR * K4 + (m % QMR) * 4;
        int32_t s = 0;
        for (int64_t k = 0; k < K4; ++k) {
            const int32_t v = m < M && k < K ? qval(a, is_uint8, m * rs + k * cs) : 0;
            dst[(k / 4) * QMR * 4 + (k % 4)] = (int8_t)v;
            s += v;
        }
        if (m < M && rowsum) rowsum[m] = s;
    }
}

void arm_q_pack_b(const void *b, int is_uint8, int64_t rs, int64_t cs, int64_t K, int64_t N, int8_t *bp,
                  int32_t *colsum) {
    const int64_t K4 = arm_k4(K);
    for (int64_t n = 0; n < (N + QNR - 1) / QNR * QNR; ++n) {
        int8_t *dst = bp + (n / QNR) * QNR * K4 + (n % QNR) * 4;
        int32_t s = 0;
        for (int64_t k = 0; k < K4; ++k) {
            const int32_t v = n < N && k < K ? qval(b, is_uint8, k * rs + n * cs) : 0;
            dst[(k / 4) * QNR * 4 + (k % 4)] = (int8_t)v;
            s += v;
        }
        if (n < N && colsum) colsum[n] = s;
    }
}

/* im2col in two steps: 4 k-rows at a time are laid out whole over a span of output columns (runs of an
 * input row by vector copies; the span's first output pixel found once, the k-row's channel and tap counted
 * along), then interleaved into the sdot layout 12 columns (one panel) at a time. Where a stride-1 row is a
 * slice of its input plane (im2col_row_flat's case, away from the padding rows), the interleave reads the
 * input in place and the taps beyond a row end are patched in the panels afterwards. */
#define QSPAN 240 /* output columns per span: 20 panels; 4 rows of it sit on the stack */
/* padding stored by the loops themselves, not by calls to memset (they would run outside the counted code) */
#define NO_MEMSET __attribute__((optimize("no-tree-loop-distribute-patterns")))

/* Vector copy of x[lo, hi) ^ flip to d[lo, hi) (a short tail by bytes); nothing outside is read or written */
static inline void copy_flip(int8_t *d, const uint8_t *x, int64_t lo, int64_t hi, uint8x16_t fv) {
    int64_t r = lo;
    for (; r + 16 <= hi; r += 16) vst1q_s8(d + r, vreinterpretq_s8_u8(veorq_u8(vld1q_u8(x + r), fv)));
    if (r < hi && hi - lo >= 16) { /* the last vector overlapping the one before */
        vst1q_s8(d + hi - 16, vreinterpretq_s8_u8(veorq_u8(vld1q_u8(x + hi - 16), fv)));
        return;
    }
    if (r + 8 <= hi) {
        vst1_s8(d + r, vreinterpret_s8_u8(veor_u8(vld1_u8(x + r), vget_low_u8(fv))));
        r += 8;
    }
    for (; r < hi; ++r) d[r] = (int8_t)(x[r] ^ vgetq_lane_u8(fv, 0));
}

/* The k-row of tap (i, j) for stride 1 and OW == W: output column c reads input c + off of the plane, across
 * output rows too, so the whole span is one copy; then the columns whose tap falls beyond a row end, and
 * the rows above and below the input, are set to the padding. May write up to 16 bytes past out[nc]. */
NO_MEMSET static void im2col_row_flat(const uint8_t *plane, uint8x16_t fv, int8_t padv, const arm_conv_geom *g, int64_t i,
                            int64_t j, int64_t c0, int64_t ow0, int64_t nc, int8_t *out) {
    const int64_t W = g->W, HW = g->H * W, dy = i * g->dh - g->pt, dx = j * g->dw - g->pl, off = dy * W + dx;
    /* [lo, hi): columns whose input row exists and whose input index lies in the plane (of the others in
     * the row range, all are beyond a row end: padding either way) */
    int64_t lo = -dy * W > -off ? -dy * W : -off, hi = (g->H - dy) * W < HW - off ? (g->H - dy) * W : HW - off;
    lo = lo - c0 < 0 ? 0 : (lo - c0 > nc ? nc : lo - c0);
    hi = hi - c0 > nc ? nc : (hi - c0 < lo ? lo : hi - c0);
    const int8x16_t pv = vdupq_n_s8(padv);
    for (int64_t r = 0; r < lo; r += 16) vst1q_s8(out + r, pv); /* overwritten from lo on */
    copy_flip(out, plane + c0 + off, lo, hi, fv);
    for (int64_t r = hi; r < nc; r += 16) vst1q_s8(out + r, pv);
    if (dx == 0) return;
    /* the row ends: ow < -dx (left) or ow >= W - dx (right), in each output row */
    const int64_t a = dx < 0 ? 0 : (W - dx > 0 ? W - dx : 0), b = dx < 0 ? (-dx < W ? -dx : W) : W;
    for (int64_t base = -ow0; base < hi; base += W)
        for (int64_t t = base + a; t < base + b; ++t)
            if (t >= lo && t < hi) out[t] = padv;
}

/* out[0..nc) = the k-row of channel ch, tap (i, j) of the im2col matrix for output columns [c0, c0 + nc)
 * (c0 = oh0 * OW + ow0), shifted to int8: by runs of output rows. May write up to 16 bytes past out[nc]. */
NO_MEMSET static void im2col_row(const uint8_t *plane, uint8x16_t fv, int8_t padv, const arm_conv_geom *g, int64_t i,
                       int64_t j, int64_t oh0, int64_t ow0, int64_t nc, int8_t *out) {
    const int8x16_t pv = vdupq_n_s8(padv);
    const uint8_t flip = vgetq_lane_u8(fv, 0);
    const int64_t W = g->W, sw = g->sw;
    int64_t oh = oh0, ow = ow0, col = 0;
    while (col < nc) {
        const int64_t run = g->OW - ow < nc - col ? g->OW - ow : nc - col;
        const int64_t ih = oh * g->sh + i * g->dh - g->pt, iw0 = ow * sw + j * g->dw - g->pl;
        int8_t *d = out + col;
        if (ih < 0 || ih >= g->H) {
            for (int64_t r = 0; r < run; r += 16) vst1q_s8(d + r, pv);
        } else {
            const uint8_t *row = plane + ih * W;
            /* [r0, r1): the columns whose input lies inside the row */
            int64_t r0 = 0, r1 = 0;
            if (iw0 < W) {
                r0 = iw0 < 0 ? (-iw0 + sw - 1) / sw : 0;
                r1 = iw0 + (run - 1) * sw < W ? run : (W - 1 - iw0) / sw + 1;
            }
            if (r0 > run) r0 = run;
            if (r1 < r0) r1 = r0;
            for (int64_t r = 0; r < r0; ++r) d[r] = padv;
            int64_t r = r0;
            if (sw == 1) {
                copy_flip(d, row + iw0, r0, r1, fv);
                r = r1;
            } else if (sw == 2) {
                for (; r + 16 <= r1 && iw0 + 2 * r + 32 <= W; r += 16)
                    vst1q_s8(d + r, vreinterpretq_s8_u8(veorq_u8(vld2q_u8(row + iw0 + 2 * r).val[0], fv)));
            }
            for (; r < r1; ++r) d[r] = (int8_t)(row[iw0 + r * sw] ^ flip);
            for (r = r1; r < run; ++r) d[r] = padv;
        }
        col += run;
        ow = 0;
        ++oh;
    }
}

NO_MEMSET void arm_q_im2col_b(const void *xv, int is_uint8, int32_t zx, const arm_conv_geom *g, int64_t n0, int64_t ncols,
                    int8_t *bp, int32_t *colsum) {
    const uint8_t *x = (const uint8_t *)xv;
    const int64_t K = g->C * g->kh * g->kw, K4 = arm_k4(K);
    const int8_t padv = (int8_t)(is_uint8 ? zx - 128 : zx);
    const uint8_t flip = is_uint8 ? 0x80 : 0; /* u8 - 128 == u8 ^ 0x80 reinterpreted as s8 */
    const int plain = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
                      g->OH == g->H && g->OW == g->W;
    const int flat = g->sh == 1 && g->sw == 1 && g->OW == g->W; /* im2col_row_flat's case */
    const int64_t plane = g->H * g->W;
    const uint8x16_t fv = vdupq_n_u8(flip);
    int8_t rows[4][QSPAN + 16] __attribute__((aligned(16)));
    for (int64_t s0 = 0; s0 < ncols; s0 += QSPAN) {
        const int64_t ns = ncols - s0 < QSPAN ? ncols - s0 : QSPAN, panels = (ns + QNR - 1) / QNR;
        const int64_t c0 = n0 + s0, oh0 = c0 / g->OW, ow0 = c0 % g->OW;
        int8_t *dst0 = bp + s0 * K4; /* s0 is a multiple of QNR: panel s0 / QNR */
        int32_t at[QSPAN]; /* where column t's 4 bytes of a k-group sit in the packed panels */
        if (flat && !colsum)
            for (int64_t t = 0; t < ns; ++t) at[t] = (int32_t)(t / QNR * QNR * K4 + t % QNR * 4);
        int64_t ch = 0, i = 0, j = 0; /* the channel and tap of k-row k0 + r, counted along */
        for (int64_t k0 = 0; k0 < K4; k0 += 4) {
            const int8_t *src[4];
            uint8x16_t fr[4]; /* what a row still needs xor'ed: the input's rows read in place are not shifted */
            int64_t dxr[4] = {0, 0, 0, 0};
            for (int r = 0; r < 4; ++r, ++j) {
                if (j == g->kw) j = 0, ++i;
                if (i == g->kh) i = 0, ++ch;
                const int64_t k = k0 + r;
                const uint8_t *in = x + ch * plane;
                src[r] = rows[r];
                fr[r] = vdupq_n_u8(0);
                if (k >= K) { /* the zero rows that pad K to K4 */
                    for (int64_t c = 0; c < ns; c += 16) vst1q_s8(rows[r] + c, vdupq_n_s8(0));
                } else if (plain) {
                    copy_flip(rows[r], in + c0, 0, ns, fv);
                } else if (flat) {
                    const int64_t dy = i * g->dh - g->pt, dx = j * g->dw - g->pl, off = dy * g->W + dx;
                    const int64_t oh1 = (c0 + ns - 1) / g->W;
                    /* read in place: every output row of the span has its input row, every 16-byte load of
                     * the panels below stays in the plane, and no column sums are taken (the taps beyond a
                     * row end are set in the packed panels afterwards) */
                    if (!colsum && oh0 + dy >= 0 && oh1 + dy < g->H && c0 + off >= 0 &&
                        c0 + off + panels * QNR + 4 <= plane) {
                        src[r] = (const int8_t *)in + c0 + off;
                        fr[r] = fv;
                        dxr[r] = dx;
                    } else {
                        im2col_row_flat(in, fv, padv, g, i, j, c0, ow0, ns, rows[r]);
                    }
                } else {
                    im2col_row(in, fv, padv, g, i, j, oh0, ow0, ns, rows[r]);
                }
            }
            /* 16 bytes of each row, of which the panel's 12 are used; past ns (a partial last panel) the
             * bytes land in columns that are never stored */
            for (int64_t q = 0; q < panels; ++q) {
                const int64_t c = q * QNR;
                const int8x16_t r0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8((const uint8_t *)src[0] + c), fr[0]));
                const int8x16_t r1 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8((const uint8_t *)src[1] + c), fr[1]));
                const int8x16_t r2 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8((const uint8_t *)src[2] + c), fr[2]));
                const int8x16_t r3 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8((const uint8_t *)src[3] + c), fr[3]));
                /* interleave 4 rows so each column's 4 k-values are adjacent */
                const int16x8_t z01l = vreinterpretq_s16_s8(vzip1q_s8(r0, r1));
                const int16x8_t z01h = vreinterpretq_s16_s8(vzip2q_s8(r0, r1));
                const int16x8_t z23l = vreinterpretq_s16_s8(vzip1q_s8(r2, r3));
                const int16x8_t z23h = vreinterpretq_s16_s8(vzip2q_s8(r2, r3));
                int8_t *d = dst0 + q * QNR * K4 + k0 * QNR;
                vst1q_s8(d, vreinterpretq_s8_s16(vzip1q_s16(z01l, z23l)));
                vst1q_s8(d + 16, vreinterpretq_s8_s16(vzip2q_s16(z01l, z23l)));
                vst1q_s8(d + 32, vreinterpretq_s8_s16(vzip1q_s16(z01h, z23h)));
            }
            for (int r = 0; r < 4; ++r) { /* rows read in place: their taps beyond a row end */
                const int64_t dx = dxr[r], W = g->W;
                if (dx == 0) continue;
                const int64_t a = dx < 0 ? 0 : (W - dx > 0 ? W - dx : 0), b = dx < 0 ? (-dx < W ? -dx : W) : W;
                int8_t *d = dst0 + k0 * QNR + r;
                for (int64_t base = -ow0; base < ns; base += W)
                    for (int64_t t = base + a < 0 ? 0 : base + a; t < base + b && t < ns; ++t) d[at[t]] = padv;
            }
            if (colsum) { /* column sums of the 4 rows, added to the span's running sums */
                int32_t *cs = colsum + s0;
                int64_t c = 0;
                for (; c + 8 <= ns; c += 8) {
                    int16x8_t t = vaddl_s8(vld1_s8(rows[0] + c), vld1_s8(rows[1] + c));
                    t = vaddw_s8(vaddw_s8(t, vld1_s8(rows[2] + c)), vld1_s8(rows[3] + c));
                    const int32x4_t lo = vmovl_s16(vget_low_s16(t)), hi = vmovl_high_s16(t);
                    if (k0 == 0) {
                        vst1q_s32(cs + c, lo);
                        vst1q_s32(cs + c + 4, hi);
                    } else {
                        vst1q_s32(cs + c, vaddq_s32(vld1q_s32(cs + c), lo));
                        vst1q_s32(cs + c + 4, vaddq_s32(vld1q_s32(cs + c + 4), hi));
                    }
                }
                for (; c < ns; ++c) cs[c] = (k0 ? cs[c] : 0) + rows[0][c] + rows[1][c] + rows[2][c] + rows[3][c];
            }
        }
    }
}

/* The input of arm_q_conv3x3_tiles: channels in quads, each quad a padded plane of 4-byte pixels
 * (xq[q][plane][4], rows of Wp = W + 2 pixels, one padding row above and below, the rest of the plane padding
 * too: the last tile reads up to 13 pixels past the grid). Padding is the shifted zero point, as im2col's;
 * the channels past C are 0 (their weights are 0). Four channel rows interleaved 16 pixels at a time (st4). */
NO_MEMSET void arm_q_pad_quads(const void *x, int is_uint8, int32_t zx, int64_t C, int64_t H, int64_t W, int8_t *xq,
                               int64_t plane) {
    const int64_t Wp = W + 2;
    const uint8_t fb = is_uint8 ? 0x80 : 0;
    const uint8x16_t flip = vdupq_n_u8(fb);
    for (int64_t q = 0; q < (C + 3) / 4; ++q) {
        int8_t *d = xq + q * plane * 4, pw[4];
        for (int i = 0; i < 4; ++i) pw[i] = 4 * q + i < C ? (int8_t)(is_uint8 ? zx - 128 : zx) : 0;
        for (int64_t p = 0; p <= Wp; ++p) memcpy(d + p * 4, pw, 4); /* the top row, the first row's left pad */
        for (int64_t y = 0; y < H; ++y) {
            const uint8_t *src[4];
            for (int i = 0; i < 4; ++i) src[i] = 4 * q + i < C ? (const uint8_t *)x + ((4 * q + i) * H + y) * W : NULL;
            int8_t *o = d + ((y + 1) * Wp + 1) * 4;
            int64_t px = 0;
            if (src[3]) /* a whole quad */
                for (; px + 16 <= W; px += 16) {
                    int8x16x4_t v;
                    for (int i = 0; i < 4; ++i) v.val[i] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(src[i] + px), flip));
                    vst4q_s8(o + px * 4, v);
                }
            for (; px < W; ++px)
                for (int i = 0; i < 4; ++i) o[px * 4 + i] = src[i] ? (int8_t)(src[i][px] ^ fb) : 0;
            memcpy(o + W * 4, pw, 4);  /* this row's right pad */
            memcpy(o + W * 4 + 4, pw, 4); /* the next row's left pad */
        }
        for (int64_t p = (H + 1) * Wp + 1; p < plane; ++p) memcpy(d + p * 4, pw, 4);
    }
}

int arm_q_needs_colsum(const arm_qepilogue *e, int64_t rows) {
    for (int64_t r = 0; r < rows; ++r)
        if (e->da[r * e->da_rs]) return 1;
    return 0;
}

static inline int32_t store_q(double v, int kind) {
    const double lo = kind == 1 ? 0.0 : -128.0, hi = kind == 1 ? 255.0 : 127.0;
    return (int32_t)(v < lo ? lo : (v > hi ? hi : v));
}

static const int32_t zeros4[4] = {0, 0, 0, 0};

/* the rounding rule of mnn_core/ops/quant.py (docs/QUANT.md): rint(float32(acc) * M) in float32, M a float32
 * held in a double (exact), halves to even */
static inline double requant1(int64_t acc, double mult) { return (double)rintf((float)acc * (float)mult); }

/* One output of the general case, by the scalar rule (the columns after the last whole block of 16) */
static void finish_one(const int32_t *a, void *out, int64_t at, int64_t m, int64_t n, const arm_qepilogue *e) {
    const int32_t da = e->da[m * e->da_rs], db = e->db[n * e->db_cs];
    const int32_t v = *a + db * e->rowsum[m] + da * (e->colsum ? e->colsum[n] : 0) + (int32_t)e->K * da * db +
                      (e->bias ? e->bias[m] : 0) + (e->bias_col ? e->bias_col[n] : 0);
    if (e->out_kind == 0) {
        ((int32_t *)out)[at] = v;
        return;
    }
    const int32_t q = store_q(requant1(v, e->mult[m * e->mult_rs + n * e->mult_cs]) + e->zy, e->out_kind);
    if (e->out_kind == 1) ((uint8_t *)out)[at] = (uint8_t)q;
    else ((int8_t *)out)[at] = (int8_t)q;
}

/* The general case (db per column: a QLinearMatMul's or MatMulInteger's B, or a multiplier per column):
 * v = acc + db[n] rowsum[m] + da[m] (colsum[n] + K db[n]) + bias[m] + bias_col[n], the scalar rule's terms
 * regrouped (int32 sums wrap alike in any order), then requantized like the row case. Blocks of 16
 * columns, their per-column terms held in registers while the rows go by. */
static void finish_general(const int32_t *acc, int64_t ldacc, void *out, int64_t ldo, int64_t m0, int64_t n0,
                           int64_t M, int64_t N, const arm_qepilogue *e) {
    const int64_t N16 = N / 16 * 16;
    const int u8 = e->out_kind == 1;
    const int16x8_t zy = vdupq_n_s16((int16_t)e->zy);
    for (int64_t c = 0; c < N16; c += 16) {
        const int64_t n = n0 + c;
        int32x4_t db[4], colk[4], bcol[4];
        float32x4_t multc[4];
        for (int j = 0; j < 4; ++j) {
            db[j] = e->db_cs ? vld1q_s32(e->db + n + 4 * j) : vdupq_n_s32(e->db[0]);
            const int32x4_t cs = e->colsum ? vld1q_s32(e->colsum + n + 4 * j) : vdupq_n_s32(0);
            colk[j] = vmlaq_n_s32(cs, db[j], (int32_t)e->K);
            bcol[j] = e->bias_col ? vld1q_s32(e->bias_col + n + 4 * j) : vdupq_n_s32(0);
            if (e->out_kind && e->mult_cs) { /* the float32 multipliers, held as doubles */
                const double *mp = e->mult + (n + 4 * j) * e->mult_cs;
                multc[j] = vcvt_high_f32_f64(vcvt_f32_f64(vld1q_f64(mp)), vld1q_f64(mp + 2));
            }
        }
        for (int64_t r = 0; r < M; ++r) {
            const int64_t m = m0 + r;
            const int32_t da = e->da[m * e->da_rs], rsum = e->rowsum[m];
            const int32x4_t vb = vdupq_n_s32(e->bias ? e->bias[m] : 0);
            const int32_t *a = acc + r * ldacc + c;
            int32x4_t v[4];
            for (int j = 0; j < 4; ++j) {
                v[j] = vaddq_s32(vaddq_s32(vld1q_s32(a + 4 * j), bcol[j]), vb);
                v[j] = vmlaq_n_s32(vmlaq_n_s32(v[j], db[j], rsum), colk[j], da);
            }
            if (e->out_kind == 0) {
                for (int j = 0; j < 4; ++j) vst1q_s32((int32_t *)out + r * ldo + c + 4 * j, v[j]);
                continue;
            }
            const float32x4_t mr = vdupq_n_f32((float)e->mult[m * e->mult_rs]);
            for (int j = 0; j < 4; ++j)
                v[j] = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(v[j]), e->mult_cs ? multc[j] : mr));
            const int16x8_t h0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[0]), v[1]), zy);
            const int16x8_t h1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[2]), v[3]), zy);
            if (u8) vst1q_u8((uint8_t *)out + r * ldo + c, vqmovun_high_s16(vqmovun_s16(h0), h1));
            else vst1q_s8((int8_t *)out + r * ldo + c, vqmovn_high_s16(vqmovn_s16(h0), h1));
        }
    }
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = N16; c < N; ++c) finish_one(acc + r * ldacc + c, out, r * ldo + c, m0 + r, n0 + c, e);
}

void arm_q_finish(const int32_t *acc, int64_t ldacc, void *out, int64_t ldo, int64_t m0, int64_t n0, int64_t M,
                  int64_t N, const arm_qepilogue *e) {
    if (e->db_cs || (e->out_kind && e->mult_cs)) {
        finish_general(acc, ldacc, out, ldo, m0, n0, M, N, e);
        return;
    }
    for (int64_t r = 0; r < M; ++r) {
        const int64_t m = m0 + r;
        const int32_t da = e->da[m * e->da_rs];
        const int32_t db0 = e->db_cs ? 0 : e->db[0];
        const int32_t row_base = da * db0 * (int32_t)e->K + (e->bias ? e->bias[m] : 0) +
                                 (db0 && e->rowsum ? db0 * e->rowsum[m] : 0);
        const int32_t *colsum = e->colsum ? e->colsum + n0 : zeros4;
        const int32_t *a = acc + r * ldacc;
        if (!e->db_cs && e->out_kind == 0) { /* ConvInteger: int32 out, vectorized */
            int32_t *o = (int32_t *)out + r * ldo;
            int64_t c = 0;
            for (; c + 4 <= N; c += 4) {
                int32x4_t v = vaddq_s32(vld1q_s32(a + c), vdupq_n_s32(row_base));
                vst1q_s32(o + c, vmlaq_n_s32(v, vld1q_s32(colsum + (e->colsum ? c : 0)), da));
            }
            for (; c < N; ++c) o[c] = a[c] + row_base + da * colsum[e->colsum ? c : 0];
            continue;
        }
        if (!e->db_cs && e->mult_cs == 0) { /* QLinearConv: one multiplier per row, 16 outputs at a time */
            /* rint(float32(v) * M) + zy clamped, exactly the reference's float32 rule: scvtf and fmul round
             * to nearest even like its float32 conversion and product, fcvtns rounds half to even like rint
             * (saturating: a product beyond int32 is beyond every output anyway); zy is added after the
             * saturating narrow to int16 and the result clamped by the final saturating narrow */
            const float32x4_t mult = vdupq_n_f32((float)e->mult[m * e->mult_rs]);
            const int32x4_t vrb = vdupq_n_s32(row_base);
            const int16x8_t zy = vdupq_n_s16((int16_t)e->zy);
            /* NULL: nothing per column (depthwise sums are exact; symmetric weights have da 0) */
            const int32_t *cs = da && e->colsum ? colsum : NULL;
            const int u8 = e->out_kind == 1;
            int8_t *o = (int8_t *)out + r * ldo;
            int64_t c = 0;
            for (; c + 16 <= N; c += 16) {
                int32x4_t v[4];
                for (int j = 0; j < 4; ++j) {
                    v[j] = vaddq_s32(vld1q_s32(a + c + 4 * j), vrb);
                    if (cs) v[j] = vmlaq_n_s32(v[j], vld1q_s32(cs + c + 4 * j), da);
                    v[j] = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(v[j]), mult));
                }
                const int16x8_t h0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[0]), v[1]), zy);
                const int16x8_t h1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(v[2]), v[3]), zy);
                if (u8) vst1q_u8((uint8_t *)o + c, vqmovun_high_s16(vqmovun_s16(h0), h1));
                else vst1q_s8(o + c, vqmovn_high_s16(vqmovn_s16(h0), h1));
            }
            for (; c + 4 <= N; c += 4) {
                int32x4_t v = vaddq_s32(vld1q_s32(a + c), vrb);
                if (cs) v = vmlaq_n_s32(v, vld1q_s32(cs + c), da);
                v = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(v), mult));
                const int16x8_t h = vqaddq_s16(vcombine_s16(vqmovn_s32(v), vdup_n_s16(0)), zy);
                if (u8) vst1_lane_u32((uint32_t *)(o + c), vreinterpret_u32_u8(vqmovun_s16(h)), 0);
                else vst1_lane_u32((uint32_t *)(o + c), vreinterpret_u32_s8(vqmovn_s16(h)), 0);
            }
            for (; c < N; ++c) {
                const int32_t q = store_q(requant1(a[c] + row_base + (cs ? da * cs[c] : 0), e->mult[m * e->mult_rs]) + e->zy,
                                          e->out_kind);
                o[c] = (int8_t)q;
            }
            continue;
        }
    }
}

/* The int8 GEMM without sdot: each column's 4 k-values are broadcast against 4
 * rows' (smull + two pairwise widening adds per 4 rows x 1 column). */
static void gemm_int8_plain(int64_t M, int64_t N, int64_t K4, const int8_t *ap, const int8_t *bp, int32_t *c,
                            int64_t ldc) {
    for (int64_t n = 0; n < N; n += QNR) {
        const int64_t nc = N - n < QNR ? N - n : QNR;
        for (int64_t m = 0; m < M; m += QMR) {
            const int64_t mr = M - m < QMR ? M - m : QMR;
            const int8_t *a = ap + (m / QMR) * QMR * K4, *b = bp + (n / QNR) * QNR * K4;
            int32x4_t acc[2][QNR];
            for (int h = 0; h < 2; ++h)
                for (int j = 0; j < QNR; ++j) acc[h][j] = vdupq_n_s32(0);
            for (int64_t g = 0; g < K4 / 4; ++g) {
                const int8x16_t a0 = vld1q_s8(a + g * 32), a1 = vld1q_s8(a + g * 32 + 16);
                for (int j = 0; j < nc; ++j) {
                    int32_t word;
                    memcpy(&word, b + g * 48 + 4 * j, 4);
                    const int8x16_t bj = vreinterpretq_s8_s32(vdupq_n_s32(word));
                    const int16x8_t p0l = vmull_s8(vget_low_s8(a0), vget_low_s8(bj));
                    const int16x8_t p0h = vmull_high_s8(a0, bj);
                    const int16x8_t p1l = vmull_s8(vget_low_s8(a1), vget_low_s8(bj));
                    const int16x8_t p1h = vmull_high_s8(a1, bj);
                    acc[0][j] = vaddq_s32(acc[0][j], vpaddq_s32(vpaddlq_s16(p0l), vpaddlq_s16(p0h)));
                    acc[1][j] = vaddq_s32(acc[1][j], vpaddq_s32(vpaddlq_s16(p1l), vpaddlq_s16(p1h)));
                }
            }
            int32_t tile[QNR][QMR];
            for (int j = 0; j < QNR; ++j) {
                vst1q_s32(tile[j], acc[0][j]);
                vst1q_s32(tile[j] + 4, acc[1][j]);
            }
            for (int64_t r = 0; r < mr; ++r)
                for (int64_t j = 0; j < nc; ++j) c[(m + r) * ldc + n + j] = tile[j][r];
        }
    }
}

void arm_q_depthwise(const void *xv, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias, int32_t *acc,
                     int64_t planes, const arm_conv_geom *g, int16_t *pad);
const arm_qkernels arm_qkernels_int8 = {"int8", QMR, QNR, gemm_int8_plain, arm_q_depthwise, NULL};

/* -- depthwise: int16 products widened into int32 (smlal), 8 outputs per step ---------- */

int64_t arm_q_depthwise_work_elems(const arm_conv_geom *g) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1, R = arm_dw_row(g);
    return PH * (PW > R ? PW : R) + 64; /* R: the sdot 3x3 kernel's byte rows */
}

void arm_q_depthwise(const void *xv, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias, int32_t *acc,
                     int64_t planes, const arm_conv_geom *g, int16_t *pad) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t taps = g->kh * g->kw;
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const int16_t *wk = w + c * taps;
        const int32_t b = bias ? bias[c] : 0;
        for (int64_t ph = 0; ph < PH; ++ph) /* x - zx; padding is 0 after the subtraction */
            for (int64_t pw = 0; pw < PW; ++pw) {
                const int64_t ih = ph - g->pt, iw = pw - g->pl;
                const int64_t i = p * g->H * g->W + ih * g->W + iw;
                pad[ph * PW + pw] = ih >= 0 && ih < g->H && iw >= 0 && iw < g->W
                    ? (int16_t)((is_uint8 ? (int32_t)((const uint8_t *)xv)[i] : (int32_t)((const int8_t *)xv)[i]) - zx)
                    : 0;
            }
        int32_t *yp = acc + p * g->OH * g->OW;
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            int64_t ow = 0;
            if (g->sw <= 2) {
                for (; ow + 8 <= g->OW; ow += 8) {
                    int32x4_t lo = vdupq_n_s32(b), hi = lo;
                    for (int64_t i = 0; i < g->kh; ++i) {
                        const int16_t *src = pad + (oh * g->sh + i * g->dh) * PW + ow * g->sw;
                        for (int64_t j = 0; j < g->kw; ++j) {
                            const int16x8_t v = g->sw == 1 ? vld1q_s16(src + j * g->dw) : vld2q_s16(src + j * g->dw).val[0];
                            lo = vmlal_n_s16(lo, vget_low_s16(v), wk[i * g->kw + j]);
                            hi = vmlal_high_n_s16(hi, v, wk[i * g->kw + j]);
                        }
                    }
                    vst1q_s32(yp + oh * g->OW + ow, lo);
                    vst1q_s32(yp + oh * g->OW + ow + 4, hi);
                }
            }
            for (; ow < g->OW; ++ow) {
                int32_t s = b;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j)
                        s += pad[(oh * g->sh + i * g->dh) * PW + ow * g->sw + j * g->dw] * wk[i * g->kw + j];
                yp[oh * g->OW + ow] = s;
            }
        }
    }
}
