/* The int8 sdot path (compiled -march=armv8.2-a+dotprod; run only where the
 * CPU reports asimddp). One vdotq_laneq_s32 multiplies 4 rows x 4 k of A by
 * one column's 4 k of B and accumulates 4 int32: 16 multiply-adds per
 * instruction, against 4 for an fp32 fmla. Register tile 8 x 12: 24
 * accumulators (2 row quads x 12 columns), 2 A and 3 B vectors per k-group. */
#include <arm_neon.h>

#include "arm.h"

#define QMR ARM_Q_MR
#define QNR ARM_Q_NR

#define DOT_COLS(v)                                                          \
    do {                                                                     \
        acc[0][4 * v + 0] = vdotq_laneq_s32(acc[0][4 * v + 0], a0, bv[v], 0); \
        acc[0][4 * v + 1] = vdotq_laneq_s32(acc[0][4 * v + 1], a0, bv[v], 1); \
        acc[0][4 * v + 2] = vdotq_laneq_s32(acc[0][4 * v + 2], a0, bv[v], 2); \
        acc[0][4 * v + 3] = vdotq_laneq_s32(acc[0][4 * v + 3], a0, bv[v], 3); \
        acc[1][4 * v + 0] = vdotq_laneq_s32(acc[1][4 * v + 0], a1, bv[v], 0); \
        acc[1][4 * v + 1] = vdotq_laneq_s32(acc[1][4 * v + 1], a1, bv[v], 1); \
        acc[1][4 * v + 2] = vdotq_laneq_s32(acc[1][4 * v + 2], a1, bv[v], 2); \
        acc[1][4 * v + 3] = vdotq_laneq_s32(acc[1][4 * v + 3], a1, bv[v], 3); \
    } while (0)

/* one k-group's 24 sdot: rows 0-3 (v0) and 4-7 (v1) of A by the 12 columns of B in v2-v4 */
#define SDOT_8X12_ASM \
    "sdot v8.4s, v0.16b, v2.4b[0]\n" \
    "sdot v9.4s, v0.16b, v2.4b[1]\n" \
    "sdot v10.4s, v0.16b, v2.4b[2]\n" \
    "sdot v11.4s, v0.16b, v2.4b[3]\n" \
    "sdot v12.4s, v0.16b, v3.4b[0]\n" \
    "sdot v13.4s, v0.16b, v3.4b[1]\n" \
    "sdot v14.4s, v0.16b, v3.4b[2]\n" \
    "sdot v15.4s, v0.16b, v3.4b[3]\n" \
    "sdot v16.4s, v0.16b, v4.4b[0]\n" \
    "sdot v17.4s, v0.16b, v4.4b[1]\n" \
    "sdot v18.4s, v0.16b, v4.4b[2]\n" \
    "sdot v19.4s, v0.16b, v4.4b[3]\n" \
    "sdot v20.4s, v1.16b, v2.4b[0]\n" \
    "sdot v21.4s, v1.16b, v2.4b[1]\n" \
    "sdot v22.4s, v1.16b, v2.4b[2]\n" \
    "sdot v23.4s, v1.16b, v2.4b[3]\n" \
    "sdot v24.4s, v1.16b, v3.4b[0]\n" \
    "sdot v25.4s, v1.16b, v3.4b[1]\n" \
    "sdot v26.4s, v1.16b, v3.4b[2]\n" \
    "sdot v27.4s, v1.16b, v3.4b[3]\n" \
    "sdot v28.4s, v1.16b, v4.4b[0]\n" \
    "sdot v29.4s, v1.16b, v4.4b[1]\n" \
    "sdot v30.4s, v1.16b, v4.4b[2]\n" \
    "sdot v31.4s, v1.16b, v4.4b[3]\n"
/* The full tile's k-loop in assembly (accumulators v8-v31: column j of rows 0-3 in v8+j, of rows 4-7 in
 * v20+j), 4 k-groups per iteration: each one ldp of A's 32 bytes and one ld1 of B's 48, post-indexed, for
 * 24 sdot; the prefetches once per 4 groups (the C loop below tests every other group and adds an address
 * increment per load). The sums go to acc[2][12][4] in that order for the C epilogue. */
#define KGROUP_ASM                                     \
    "ldp q0, q1, [%[a]], #32\n"                       \
    "ld1 {v2.16b-v4.16b}, [%[b]], #48\n"              \
    SDOT_8X12_ASM
#define STORE_ACC_8X12_ASM                         \
    "st1 {v8.4s-v11.4s}, [%[acc]], #64\n"  \
    "st1 {v12.4s-v15.4s}, [%[acc]], #64\n" \
    "st1 {v16.4s-v19.4s}, [%[acc]], #64\n" \
    "st1 {v20.4s-v23.4s}, [%[acc]], #64\n" \
    "st1 {v24.4s-v27.4s}, [%[acc]], #64\n" \
    "st1 {v28.4s-v31.4s}, [%[acc]], #64\n"
#define ZERO4_ASM(a, b, c, d) "movi " a ".16b, #0\nmovi " b ".16b, #0\nmovi " c ".16b, #0\nmovi " d ".16b, #0\n"
#define ZERO_ACC_8X12_ASM                                                                                 \
    ZERO4_ASM("v8", "v9", "v10", "v11") ZERO4_ASM("v12", "v13", "v14", "v15") ZERO4_ASM("v16", "v17", "v18", "v19") \
        ZERO4_ASM("v20", "v21", "v22", "v23") ZERO4_ASM("v24", "v25", "v26", "v27") ZERO4_ASM("v28", "v29", "v30", "v31")
/* inlined: as a call (two callers) it cost about 10 instructions a tile, 8% of a 1x1 layer of 16 channels */
static inline __attribute__((always_inline)) void kloop_dot_8x12(int64_t groups, const int8_t *a, const int8_t *b,
                                                                 int32_t *acc) {
    int64_t n4 = groups >> 2, n1 = groups & 3;
    __asm__ volatile(ZERO_ACC_8X12_ASM
                     "cbz %[n4], 2f\n"
                     "1:\n"
                     "prfm pldl1keep, [%[a], #256]\n"
                     "prfm pldl1keep, [%[a], #320]\n"
                     "prfm pldl1keep, [%[b], #384]\n"
                     "prfm pldl1keep, [%[b], #448]\n"
                     "prfm pldl1keep, [%[b], #512]\n" KGROUP_ASM KGROUP_ASM KGROUP_ASM KGROUP_ASM
                     "subs %[n4], %[n4], #1\n"
                     "b.ne 1b\n"
                     "2:\n"
                     "cbz %[n1], 4f\n"
                     "3:\n" KGROUP_ASM
                     "subs %[n1], %[n1], #1\n"
                     "b.ne 3b\n"
                     "4:\n"
                     STORE_ACC_8X12_ASM
                     : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [n1] "+r"(n1), [acc] "+r"(acc)
                     :
                     : "v0", "v1", "v2", "v3", "v4", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16",
                       "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29",
                       "v30", "v31", "cc", "memory");
}

/* The same tile with B read in place (arm_q_conv3x3_tiles): for each of the 9 taps, its channel quads' k-groups
 * at b + off[tap] + q * off[10] (off[9] quads), one load of A and one post-indexed load of B per group as in
 * the packed loop, the tap's base once per tap. */
static inline __attribute__((always_inline)) void kloop_dot_8x12_at(const int8_t *a, const int8_t *b, const int64_t *off,
                                                                    int32_t *acc) {
    int64_t taps = 9;
    const int64_t nq = off[9], step = off[10];
    __asm__ volatile(ZERO_ACC_8X12_ASM
                     "0:\n"
                     "ldr x9, [%[off]], #8\n"
                     "mov x10, %[nq]\n"
                     "add x9, %[b], x9\n"
                     "1:\n"
                     "ldp q0, q1, [%[a]], #32\n"
                     "ld1 {v2.16b-v4.16b}, [x9], %[step]\n"
                     SDOT_8X12_ASM
                     "subs x10, x10, #1\n"
                     "b.ne 1b\n"
                     "subs %[taps], %[taps], #1\n"
                     "b.ne 0b\n"
                     STORE_ACC_8X12_ASM
                     : [a] "+r"(a), [off] "+r"(off), [taps] "+r"(taps), [acc] "+r"(acc)
                     : [b] "r"(b), [nq] "r"(nq), [step] "r"(step)
                     : "x9", "x10", "v0", "v1", "v2", "v3", "v4", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
                       "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
                       "v29", "v30", "v31", "cc", "memory");
}

static inline __attribute__((always_inline)) void tile_dot(int64_t K4, const int8_t *a, const int8_t *b, int32_t *c,
                                                           int64_t ldc, int64_t mr, int64_t nc, const int nv,
                                                           const int64_t *off) {
    int32x4_t acc[2][QNR];
    if (nv == 3) { /* sums through the stack: an array of vectors would not stay in registers anyway */
        int32_t sums[2 * QNR * 4] __attribute__((aligned(16)));
        if (off) kloop_dot_8x12_at(a, b, off, sums);
        else kloop_dot_8x12(K4 / 4, a, b, sums);
        for (int h = 0; h < 2; ++h)
            for (int j = 0; j < QNR; ++j) acc[h][j] = vld1q_s32(sums + (h * QNR + j) * 4);
    } else {
        for (int h = 0; h < 2; ++h)
            for (int j = 0; j < QNR; ++j) acc[h][j] = vdupq_n_s32(0);
    }
    for (int64_t g = 0; nv < 3 && g < K4 / 4; ++g) {
        if ((g & 1) == 0) { /* 2 k-groups = 1 line of A, 1.5 of B: fetch 8 groups ahead */
            __builtin_prefetch(a + 8 * 32);
            __builtin_prefetch(b + 8 * 48);
            __builtin_prefetch(b + 8 * 48 + 64);
        }
        const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
        int8x16_t bv[3];
        for (int v = 0; v < nv; ++v) bv[v] = vld1q_s8(b + 16 * v);
        DOT_COLS(0);
        if (nv > 1) DOT_COLS(1);
        if (nv > 2) DOT_COLS(2);
        a += 32;
        b += 48;
    }
    /* acc[h][j] holds rows 4h..4h+3 of column j: transpose 4x4 blocks into rows */
    if (mr == QMR && nc == 4 * nv) { /* a whole tile: every store unconditional (no branches, no stack copy) */
        for (int h = 0; h < 2; ++h)
            for (int v = 0; v < nv; ++v) {
                const int32x4_t c0 = acc[h][4 * v], c1 = acc[h][4 * v + 1], c2 = acc[h][4 * v + 2],
                                c3 = acc[h][4 * v + 3];
                const int64x2_t t0 = vreinterpretq_s64_s32(vtrn1q_s32(c0, c1)),
                                t1 = vreinterpretq_s64_s32(vtrn2q_s32(c0, c1)),
                                t2 = vreinterpretq_s64_s32(vtrn1q_s32(c2, c3)),
                                t3 = vreinterpretq_s64_s32(vtrn2q_s32(c2, c3));
                int32_t *d = c + 4 * h * ldc + 4 * v;
                vst1q_s32(d, vreinterpretq_s32_s64(vtrn1q_s64(t0, t2)));
                vst1q_s32(d + ldc, vreinterpretq_s32_s64(vtrn1q_s64(t1, t3)));
                vst1q_s32(d + 2 * ldc, vreinterpretq_s32_s64(vtrn2q_s64(t0, t2)));
                vst1q_s32(d + 3 * ldc, vreinterpretq_s32_s64(vtrn2q_s64(t1, t3)));
            }
        return;
    }
    for (int h = 0; h < 2; ++h)
        for (int v = 0; v < nv; ++v) {
            const int32x4_t c0 = acc[h][4 * v], c1 = acc[h][4 * v + 1], c2 = acc[h][4 * v + 2], c3 = acc[h][4 * v + 3];
            const int32x4_t t0 = vtrn1q_s32(c0, c1), t1 = vtrn2q_s32(c0, c1), t2 = vtrn1q_s32(c2, c3),
                            t3 = vtrn2q_s32(c2, c3);
            int32x4_t rows[4];
            rows[0] = vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
            rows[1] = vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
            rows[2] = vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
            rows[3] = vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
            for (int r = 0; r < 4; ++r) {
                const int64_t row = 4 * h + r, col = 4 * v;
                if (row >= mr) break;
                if (col + 4 <= nc) {
                    vst1q_s32(c + row * ldc + col, rows[r]);
                } else {
                    int32_t tmp[4];
                    vst1q_s32(tmp, rows[r]);
                    for (int64_t j = col; j < nc; ++j) c[row * ldc + j] = tmp[j - col];
                }
            }
        }
}

static void gemm_int8_dot(int64_t M, int64_t N, int64_t K4, const int8_t *ap, const int8_t *bp, int32_t *c,
                          int64_t ldc) {
    for (int64_t n = 0; n < N; n += QNR) {
        const int64_t nc = N - n < QNR ? N - n : QNR;
        const int nv = (int)((nc + 3) / 4);
        const int8_t *b = bp + (n / QNR) * QNR * K4;
        for (int64_t m = 0; m < M; m += QMR) {
            const int64_t mr = M - m < QMR ? M - m : QMR;
            const int8_t *a = ap + (m / QMR) * QMR * K4;
            if (nv == 3) tile_dot(K4, a, b, c + m * ldc + n, ldc, mr, nc, 3, NULL);
            else if (nv == 2) tile_dot(K4, a, b, c + m * ldc + n, ldc, mr, nc, 2, NULL);
            else tile_dot(K4, a, b, c + m * ldc + n, ldc, mr, nc, 1, NULL);
        }
    }
}

/* 3x3 stride-1 convolution read in place (no im2col): xq is the input padded and interleaved by channel quads
 * (arm_q_pad_quads), so output pixel p of the padded grid (p = y * Wp + x) meets tap (ky, kx) of quad q at
 * pixel q * plane + p + ky * Wp + kx: 12 consecutive pixels are 48 consecutive bytes, the tile's B operand
 * as a packed panel would hold it. The weights are packed in the k order (tap, quad, channel of the quad);
 * off[t] = 4 * (ky * Wp + kx) bytes past the tile's first pixel, off[9] the quads, off[10] = 4 * plane
 * bytes from one quad to the next. Columns [p0, p0 + ncols) (ncols a multiple of 12) into acc (og rows,
 * ldacc); the grid's two columns past each row's end are computed too, and dropped by the caller. */
void arm_q_conv3x3_tiles(int64_t og, const int8_t *wp, int64_t groups, const int8_t *xq, const int64_t *off,
                         int64_t p0, int64_t ncols, int32_t *acc, int64_t ldacc) {
    for (int64_t c = 0; c < ncols; c += QNR)
        for (int64_t m = 0; m < og; m += QMR) {
            const int64_t mr = og - m < QMR ? og - m : QMR;
            tile_dot(groups * 4, wp + m * groups * 4, xq + (p0 + c) * 4, acc + m * ldacc + c, ldacc, mr, QNR, 3, off);
        }
}

/* -- depthwise k x k (3, 5, 7) with sdot ------------------------------------------------
 * One 32-bit lane of sdot adds 4 byte products: for output column o, the
 * bytes x[o*s + 4q .. o*s + 4q + 3] of one input row against 4 of the row's
 * taps (w[4q] .. w[4q + 3], zeros past the row's k), so a row of k taps is
 * ceil(k / 4) sdots per 4 outputs. A table lookup (tbl) lays 4 outputs'
 * overlapping 4-byte windows side by side from the row's bytes. The plane is
 * copied shifted to int8 (uint8 ^ 0x80) and padded with the shifted zero
 * point zs, so that sum((xs - zs) * w) = sum(xs * w) - zs * sum(w): the
 * second term is folded into the starting value. Needs every w - zw of the
 * channel in int8 (true for symmetric int8 weights and uint8 weights with
 * zero point 128); other channels go through the generic kernel. */

/* no memset/memcpy calls for the zero stores (they would run outside the counted code) */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void pad_plane_s8(const uint8_t *x, int is_uint8, int8_t zs, const arm_conv_geom *g, int8_t *pad,
                          int64_t PH, int64_t R, int fresh) {
    const int64_t W = g->W, pl = g->pl, need = (g->OW - 1) * g->sw + g->kw;
    const uint8x16_t flip = vdupq_n_u8(is_uint8 ? 0x80 : 0);
    const int8x16_t vz = vdupq_n_s8(zs);
    /* as in fp32.c: the padding (the zero point) is stored for a fresh plane only, later planes copy their rows */
    const int64_t ph0 = fresh ? 0 : g->pt, ph1 = fresh || g->pt + g->H > PH ? PH : g->pt + g->H;
    for (int64_t ph = ph0; ph < ph1; ++ph) {
        const int64_t ih = ph - g->pt;
        int8_t *d = pad + ph * R;
        if (ih < 0 || ih >= g->H) {
            if (fresh)
                for (int64_t pw = 0; pw < need; pw += 16) vst1q_s8(d + pw, vz); /* R leaves room for the last vector */
            continue;
        }
        /* as in fp32.c: zero point vectors around the row, its last vector overlapping the one before */
        const uint8_t *row = x + ih * W;
        if (fresh)
            for (int64_t pw = 0; pw < pl; pw += 16) vst1q_s8(d + pw, vz);
        if (W >= 16) {
            for (int64_t iw = 0; iw + 16 < W; iw += 16)
                vst1q_s8(d + pl + iw, vreinterpretq_s8_u8(veorq_u8(vld1q_u8(row + iw), flip)));
            vst1q_s8(d + pl + W - 16, vreinterpretq_s8_u8(veorq_u8(vld1q_u8(row + W - 16), flip)));
        } else if (W >= 8) {
            vst1_s8(d + pl, vreinterpret_s8_u8(veor_u8(vld1_u8(row), vget_low_u8(flip))));
            vst1_s8(d + pl + W - 8, vreinterpret_s8_u8(veor_u8(vld1_u8(row + W - 8), vget_low_u8(flip))));
        } else {
            for (int64_t iw = 0; iw < W; ++iw) d[pl + iw] = (int8_t)(row[iw] ^ (is_uint8 ? 0x80 : 0));
        }
        if (fresh)
            for (int64_t pw = pl + W; pw < need; pw += 16) vst1q_s8(d + pw, vz);
    }
}

static const uint8_t win_s1[16] = {0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6};
static const uint8_t win_s2[16] = {0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9};

/* k rows of ceil(k / 4) words of taps (wr[i * G + q]), stride s: constants where inlined, so the
 * weights stay in registers */
/* requantization in the tile (arm_q_finish's rule and instructions): the multiplier, zy, uint8 or int8 */
typedef struct dw_requant {
    float32x4_t m;
    int16x8_t zy;
    int u8;
} dw_requant;

/* 8 sums -> 8 int16 (rint(float32(sum) * m) + zy, saturating) */
static inline int16x8_t requant8(int32x4_t a, int32x4_t b, const dw_requant *q) {
    const int32x4_t qa = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(a), q->m));
    const int32x4_t qb = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(b), q->m));
    return vqaddq_s16(vqmovn_high_s32(vqmovn_s32(qa), qb), q->zy);
}

static inline uint8x8_t narrow8(int16x8_t h, const dw_requant *q) {
    return q->u8 ? vqmovun_s16(h) : vreinterpret_u8_s8(vqmovn_s16(h));
}

/* rq: int32 sums to yp (NULL q), or bytes to yq requantized by q */
static inline __attribute__((always_inline)) void dw_rows_dot(const int8_t *pad, int64_t R, int32_t *yp,
                                                              const arm_conv_geom *g, const int8x16_t *wr,
                                                              int32x4_t vb, const int k, const int s,
                                                              const int64_t room, const int rq, uint8_t *yq,
                                                              const dw_requant *q) {
    /* single-register lookups: a pair of table registers makes GCC shuffle them with moves */
    const uint8x16_t idx = vld1q_u8(s == 1 ? win_s1 : win_s2);
    const int G = (k + 3) / 4;
    const int64_t OH = g->OH, OW = g->OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
        const int8_t *top = pad + oh * s * R;
        int32_t *yo = yp + oh * OW;
        int64_t ow = 0;
        for (; ow + 16 <= OW; ow += 16) { /* 16 outputs: per row and word 4 groups of 4 windows, one sdot each */
            int32x4_t a0 = vb, a1 = vb, a2 = vb, a3 = vb;
            for (int i = 0; i < k; ++i)
                for (int q = 0; q < G; ++q) {
                    const int8_t *r = top + i * R + ow * s + 4 * q;
                    const int8x16_t w = wr[i * G + q];
                    a0 = vdotq_s32(a0, vqtbl1q_s8(vld1q_s8(r), idx), w);
                    a1 = vdotq_s32(a1, vqtbl1q_s8(vld1q_s8(r + 4 * s), idx), w);
                    a2 = vdotq_s32(a2, vqtbl1q_s8(vld1q_s8(r + 8 * s), idx), w);
                    a3 = vdotq_s32(a3, vqtbl1q_s8(vld1q_s8(r + 12 * s), idx), w);
                }
            if (rq) {
                const int16x8_t h0 = requant8(a0, a1, q), h1 = requant8(a2, a3, q);
                vst1q_u8(yq + oh * OW + ow, vcombine_u8(narrow8(h0, q), narrow8(h1, q)));
                continue;
            }
            vst1q_s32(yo + ow, a0);
            vst1q_s32(yo + ow + 4, a1);
            vst1q_s32(yo + ow + 8, a2);
            vst1q_s32(yo + ow + 12, a3);
        }
        for (; ow < OW; ow += 4) { /* the rest, 4 outputs at a time (the last stored lane by lane) */
            int32x4_t a = vb;
            for (int i = 0; i < k; ++i)
                for (int q = 0; q < G; ++q)
                    a = vdotq_s32(a, vqtbl1q_s8(vld1q_s8(top + i * R + ow * s + 4 * q), idx), wr[i * G + q]);
            if (rq) {
                const uint8x8_t b = narrow8(requant8(a, a, q), q);
                uint8_t *d = yq + oh * OW + ow;
                if (ow + 4 <= OW || oh * OW + ow + 4 <= room) { /* spilling into the next rows, as below */
                    vst1_lane_u32((uint32_t *)d, vreinterpret_u32_u8(b), 0);
                } else {
                    vst1_lane_u8(d, b, 0);
                    if (ow + 1 < OW) vst1_lane_u8(d + 1, b, 1);
                    if (ow + 2 < OW) vst1_lane_u8(d + 2, b, 2);
                }
                continue;
            }
            if (ow + 4 <= OW || oh * OW + ow + 4 <= room) { /* as in fp32.c: spilling into the next rows */
                vst1q_s32(yo + ow, a);
            } else { /* lane stores: a loop would become a call to memcpy */
                vst1q_lane_s32(yo + ow, a, 0);
                if (ow + 1 < OW) vst1q_lane_s32(yo + ow + 1, a, 1);
                if (ow + 2 < OW) vst1q_lane_s32(yo + ow + 2, a, 2);
            }
        }
    }
}

/* 3, 5 or 7 for a square kernel of that size without dilation, strides (1, 1) or (2, 2); else 0 */
static int dw_dot_k(const arm_conv_geom *g) {
    const int k = g->kh == g->kw && (g->kh == 3 || g->kh == 5 || g->kh == 7) ? (int)g->kh : 0;
    return k && g->dh == 1 && g->dw == 1 && (g->sh == 1 || g->sh == 2) && g->sw == g->sh ? k : 0;
}

/* the planes' int32 sums to acc (yq NULL), or their bytes to yq requantized by mult / zy (depthwise_q) */
static void depthwise_dot_planes(const void *xv, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias,
                                 int32_t *acc, int64_t planes, const arm_conv_geom *g, int16_t *work, uint8_t *yq,
                                 const double *mult, int64_t mult_rs, int32_t zy, int out_kind) {
    const int k = dw_dot_k(g), G = (k + 3) / 4, taps = (int)(g->kh * g->kw);
    const int64_t npix = g->OH * g->OW, PH = (g->OH - 1) * g->sh + k, R = arm_dw_row(g);
    const int8_t zs = (int8_t)(is_uint8 ? zx - 128 : zx);
    int8_t *pad = (int8_t *)work;
    int fresh = 1; /* the padding in work is not (or no longer) there */
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const int16_t *wk = w + c * taps;
        int fits = k != 0;
        int32_t wsum = 0;
        for (int t = 0; t < taps; ++t) {
            fits &= wk[t] >= -128 && wk[t] <= 127;
            wsum += wk[t];
        }
        const uint8_t *xp = (const uint8_t *)xv + p * g->H * g->W;
        int32_t *yp = yq ? acc : acc + p * npix;
        if (!fits) { /* one plane through the generic kernel */
            arm_conv_geom one = *g;
            one.C = 1;
            arm_q_depthwise(xp, is_uint8, zx, wk, bias ? bias + c : NULL, yp, 1, &one, work);
            fresh = 1; /* it used work for its own plane */
            if (yq) {
                const int32_t zero = 0;
                const arm_qepilogue e = {0, &zero, &zero, 0, 0, NULL, NULL, NULL, out_kind, mult + c * mult_rs, 0, 0, zy};
                arm_q_finish(yp, npix, yq + p * npix, npix, 0, 0, 1, npix, &e);
            }
            continue;
        }
        int8x16_t wr[14];
        for (int i = 0; i < k; ++i)
            for (int q = 0; q < G; ++q) {
                uint32_t word = 0;
                for (int b = 0; b < 4 && 4 * q + b < k; ++b) word |= (uint32_t)(uint8_t)wk[i * k + 4 * q + b] << (8 * b);
                wr[i * G + q] = vreinterpretq_s8_u32(vdupq_n_u32(word));
            }
        const int32x4_t vb = vdupq_n_s32((bias ? bias[c] : 0) - (int32_t)zs * wsum);
        pad_plane_s8(xp, is_uint8, zs, g, pad, PH, R, fresh);
        fresh = 0;
        const int64_t room = (planes - p) * npix; /* outputs from this plane's start to the end of the planes */
        const int s = (int)g->sh;
        if (yq) {
            const dw_requant rq = {vdupq_n_f32((float)mult[c * mult_rs]), vdupq_n_s16((int16_t)zy), out_kind == 1};
            uint8_t *yo = yq + p * npix;
            if (k == 3 && s == 1) dw_rows_dot(pad, R, yp, g, wr, vb, 3, 1, room, 1, yo, &rq);
            else if (k == 3) dw_rows_dot(pad, R, yp, g, wr, vb, 3, 2, room, 1, yo, &rq);
            else if (k == 5 && s == 1) dw_rows_dot(pad, R, yp, g, wr, vb, 5, 1, room, 1, yo, &rq);
            else if (k == 5) dw_rows_dot(pad, R, yp, g, wr, vb, 5, 2, room, 1, yo, &rq);
            else if (s == 1) dw_rows_dot(pad, R, yp, g, wr, vb, 7, 1, room, 1, yo, &rq);
            else dw_rows_dot(pad, R, yp, g, wr, vb, 7, 2, room, 1, yo, &rq);
            continue;
        }
        if (k == 3 && s == 1) dw_rows_dot(pad, R, yp, g, wr, vb, 3, 1, room, 0, NULL, NULL);
        else if (k == 3) dw_rows_dot(pad, R, yp, g, wr, vb, 3, 2, room, 0, NULL, NULL);
        else if (k == 5 && s == 1) dw_rows_dot(pad, R, yp, g, wr, vb, 5, 1, room, 0, NULL, NULL);
        else if (k == 5) dw_rows_dot(pad, R, yp, g, wr, vb, 5, 2, room, 0, NULL, NULL);
        else if (s == 1) dw_rows_dot(pad, R, yp, g, wr, vb, 7, 1, room, 0, NULL, NULL);
        else dw_rows_dot(pad, R, yp, g, wr, vb, 7, 2, room, 0, NULL, NULL);
    }
}

static void depthwise_dot(const void *xv, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias,
                          int32_t *acc, int64_t planes, const arm_conv_geom *g, int16_t *work) {
    if (!dw_dot_k(g)) {
        arm_q_depthwise(xv, is_uint8, zx, w, bias, acc, planes, g, work);
        return;
    }
    depthwise_dot_planes(xv, is_uint8, zx, w, bias, acc, planes, g, work, NULL, NULL, 0, 0, 0);
}

/* requantized in the tile: the int32 sums never stored (the generic kernel's planes go through acc) */
static void depthwise_dot_q(const void *xv, int is_uint8, int32_t zx, const int16_t *w, const int32_t *bias,
                            const double *mult, int64_t mult_rs, int32_t zy, int out_kind, void *y, int32_t *acc,
                            int64_t planes, const arm_conv_geom *g, int16_t *work) {
    depthwise_dot_planes(xv, is_uint8, zx, w, bias, acc, planes, g, work, (uint8_t *)y, mult, mult_rs, zy, out_kind);
}

const arm_qkernels arm_qkernels_int8_dot = {"int8_dot", QMR, QNR, gemm_int8_dot, depthwise_dot, depthwise_dot_q};
