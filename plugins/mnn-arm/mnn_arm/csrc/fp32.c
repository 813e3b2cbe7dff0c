/* The fp32 path: NEON on every aarch64 CPU (compiled -march=armv8-a).
 * Packed GEMM with an 8x12 register tile (24 accumulators, fmla by element; the full
 * tile's k-loop in assembly),
 * depthwise convolution over a zero-padded plane, and the fp32 kernels of
 * the other ops (element-wise, pooling, softmax, norms). */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"

#define ELEM float
#define MR 8
#define NR 12
#define LANES 4
#define NV 3

#define XV 4
#define COPY_X(d, s) vst1q_f32(d, vld1q_f32(s))
#define COPY_X2(d, s) vst1q_f32(d, vld2q_f32(s).val[0]) /* every other element */

static void gemv_row_f32(int64_t N, int64_t K, const float *ap, const float *bp, float *c);
#define GEMV_ROW gemv_row_f32

/* R contiguous rows of a (row stride rs) per panel, packed as ap[p][k][R]: each whole panel 4 k-steps at a
 * time, R / 4 4x4 transposes of the rows' vectors (trn1 / trn2 on words, then on doublewords); a partial last
 * panel and the last K % 4 steps one element at a time, as pack_a_impl does them. R = MR: A's rows (cs 1,
 * what MatMul gives); R = NR: B's columns when they are contiguous (rs 1: a MatMul computed as C^T = B^T A^T,
 * or Gemm's transB). */
static inline void transpose4(float32x4_t *r) {
    const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
    const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
    r[0] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    r[1] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
    r[2] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    r[3] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}

static inline __attribute__((always_inline)) void pack_rows_f32(const float *a, int64_t rs, int64_t M, int64_t K,
                                                                float *ap, const int R) {
    for (int64_t p = 0; p * R < M; ++p) {
        const float *s = a + p * R * rs;
        float *dst = ap + p * R * K;
        const int64_t rows = M - p * R < R ? M - p * R : R;
        int64_t k = 0;
        if (rows == R)
            for (; k + 4 <= K; k += 4) {
                float32x4_t r[12];
                for (int i = 0; i < R; ++i) r[i] = vld1q_f32(s + i * rs + k);
                for (int g = 0; g < R; g += 4) transpose4(r + g);
                for (int j = 0; j < 4; ++j)
                    for (int g = 0; g < R; g += 4) vst1q_f32(dst + (k + j) * R + g, r[g + j]);
            }
        for (; k < K; ++k)
            for (int i = 0; i < R; ++i) dst[k * R + i] = i < rows ? s[i * rs + k] : 0.0f;
    }
}

static void pack_a_rows_f32(const float *a, int64_t rs, int64_t M, int64_t K, float *ap) {
    pack_rows_f32(a, rs, M, K, ap, MR);
}
static void pack_b_cols_f32(const float *b, int64_t cs, int64_t K, int64_t N, float *bp) {
    pack_rows_f32(b, cs, N, K, bp, NR);
}
#define PACK_B_COLS pack_b_cols_f32

/* im2col of output columns [n0, n0 + ncols) into packed panels bp[q][k][NR], a panel at a time: for each
 * kernel tap (i, j) the panel's 12 source offsets in a plane (-1 outside it: padding) are worked out once
 * and serve every input channel; a tap whose 12 columns read 12 consecutive elements (one output row, stride
 * 1, inside the plane) copies 3 vectors, the others go element by element through the table. The generic
 * im2col_b_impl redoes its index arithmetic for every channel and panel: 6 to 22 instructions an element on
 * the 1 x 3 / 3 x 1 convolutions of openWakeWord's small planes, about half the convolution. Kernels of more
 * than IM2COL_TAPS taps take the generic one (returns 0). */
#define IM2COL_TAPS 64
static int im2col_taps_f32(const float *x, const arm_conv_geom *g, int64_t n0, int64_t ncols, float *bp) {
    const int64_t taps = g->kh * g->kw, K = g->C * taps, H = g->H, W = g->W, HW = H * W;
    if (taps > IM2COL_TAPS) return 0;
    int32_t off[IM2COL_TAPS][NR];
    int contiguous[IM2COL_TAPS];
    for (int64_t q = 0; q * NR < ncols; ++q) {
        const int64_t nc = ncols - q * NR < NR ? ncols - q * NR : NR;
        for (int64_t t = 0; t < taps; ++t) {
            const int64_t i = t / g->kw, j = t % g->kw;
            int run = 1;
            for (int64_t r = 0; r < NR; ++r) {
                const int64_t col = n0 + q * NR + r, oh = col / g->OW, ow = col % g->OW;
                const int64_t ih = oh * g->sh + i * g->dh - g->pt, iw = ow * g->sw + j * g->dw - g->pl;
                off[t][r] = r < nc && ih >= 0 && ih < H && iw >= 0 && iw < W ? (int32_t)(ih * W + iw) : -1;
                run = run && off[t][r] >= 0 && off[t][r] == off[t][0] + r;
            }
            contiguous[t] = run;
        }
        float *dst = bp + q * NR * K;
        for (int64_t c = 0; c < g->C; ++c) {
            const float *plane = x + c * HW;
            for (int64_t t = 0; t < taps; ++t, dst += NR) {
                if (contiguous[t]) {
                    const float *src = plane + off[t][0];
                    vst1q_f32(dst, vld1q_f32(src)), vst1q_f32(dst + 4, vld1q_f32(src + 4));
                    vst1q_f32(dst + 8, vld1q_f32(src + 8));
                } else {
                    for (int r = 0; r < NR; ++r) dst[r] = off[t][r] >= 0 ? plane[off[t][r]] : 0.0f;
                }
            }
        }
    }
    return 1;
}
#define IM2COL_B im2col_taps_f32
#define PACK_A_ROWS pack_a_rows_f32

#include "fgemm_body.h"

/* c[0, N) = a . B for one packed row of A (a[k] at ap[k * MR]) and B's NR-column panels: per 4 k-steps
 * 4 lane loads of a, 4 loads of 12 B values and 12 fmla by element (the 8-row tile would do 8 rows'
 * work for this one) */
static void gemv_row_f32(int64_t N, int64_t K, const float *ap, const float *bp, float *c) {
    for (int64_t n = 0; n < N; n += NR) {
        const float *b = bp + (n / NR) * NR * K;
        float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0;
        int64_t k = 0;
        for (; k + 4 <= K; k += 4, b += 4 * NR) {
            float32x4_t a = vld1q_dup_f32(ap + k * MR);
            a = vld1q_lane_f32(ap + (k + 1) * MR, a, 1);
            a = vld1q_lane_f32(ap + (k + 2) * MR, a, 2);
            a = vld1q_lane_f32(ap + (k + 3) * MR, a, 3);
            const float32x4x3_t b0 = vld1q_f32_x3(b), b1 = vld1q_f32_x3(b + NR);
            const float32x4x3_t b2 = vld1q_f32_x3(b + 2 * NR), b3 = vld1q_f32_x3(b + 3 * NR);
            c0 = vfmaq_laneq_f32(c0, b0.val[0], a, 0), c1 = vfmaq_laneq_f32(c1, b0.val[1], a, 0);
            c2 = vfmaq_laneq_f32(c2, b0.val[2], a, 0);
            c0 = vfmaq_laneq_f32(c0, b1.val[0], a, 1), c1 = vfmaq_laneq_f32(c1, b1.val[1], a, 1);
            c2 = vfmaq_laneq_f32(c2, b1.val[2], a, 1);
            c0 = vfmaq_laneq_f32(c0, b2.val[0], a, 2), c1 = vfmaq_laneq_f32(c1, b2.val[1], a, 2);
            c2 = vfmaq_laneq_f32(c2, b2.val[2], a, 2);
            c0 = vfmaq_laneq_f32(c0, b3.val[0], a, 3), c1 = vfmaq_laneq_f32(c1, b3.val[1], a, 3);
            c2 = vfmaq_laneq_f32(c2, b3.val[2], a, 3);
        }
        for (; k < K; ++k, b += NR) {
            const float32x4x3_t bk = vld1q_f32_x3(b);
            const float32x4_t a = vld1q_dup_f32(ap + k * MR);
            c0 = vfmaq_f32(c0, bk.val[0], a), c1 = vfmaq_f32(c1, bk.val[1], a), c2 = vfmaq_f32(c2, bk.val[2], a);
        }
        if (N - n >= NR) {
            vst1q_f32(c + n, c0), vst1q_f32(c + n + 4, c1), vst1q_f32(c + n + 8, c2);
        } else { /* a partial panel (zero padded): the columns there are */
            float t[NR];
            vst1q_f32(t, c0), vst1q_f32(t + 4, c1), vst1q_f32(t + 8, c2);
            for (int64_t j = 0; j < N - n; ++j) c[n + j] = t[j];
        }
    }
}

/* The 8 x (4*nvc) tile with its 8*nvc accumulators as named variables (an
 * array of vectors makes GCC keep a stack copy it rewrites every k-step). */
#define ROW_ACC(r) float32x4_t c##r##0 = vdupq_n_f32(0.0f), c##r##1 = c##r##0, c##r##2 = c##r##0;
#define ROW_FMA(r, av, lane)                                      \
    c##r##0 = vfmaq_laneq_f32(c##r##0, b0, av, lane);             \
    if (nvc > 1) c##r##1 = vfmaq_laneq_f32(c##r##1, b1, av, lane); \
    if (nvc > 2) c##r##2 = vfmaq_laneq_f32(c##r##2, b2, av, lane);
#define ROW_PUT(r)                                 \
    put4(t, r, 0, c##r##0);                        \
    if (nvc > 1) put4(t, r, 4, c##r##1);           \
    if (nvc > 2) put4(t, r, 8, c##r##2);
/* the common case: first and only K block, bias and clamp applied here */
#define FAST4(r, col, acc)                                        \
    do {                                                          \
        float32x4_t v_ = vaddq_f32(acc, bias##r);                 \
        if (q.clamp) v_ = vminq_f32(vmaxq_f32(v_, lo), hi);       \
        vst1q_f32(t->c + r * t->ldc + col, v_);                   \
    } while (0)
#define ROW_FAST(r)                                               \
    {                                                             \
        const float32x4_t bias##r = vdupq_n_f32(q.bias[r]);       \
        FAST4(r, 0, c##r##0);                                     \
        if (nvc > 1) FAST4(r, 4, c##r##1);                        \
        if (nvc > 2) FAST4(r, 8, c##r##2);                        \
    }
#define ROW_TMP(r)                                 \
    vst1q_f32(tmp + r * NR, c##r##0);              \
    if (nvc > 1) vst1q_f32(tmp + r * NR + 4, c##r##1); \
    if (nvc > 2) vst1q_f32(tmp + r * NR + 8, c##r##2);

/* The full tile's k-loop in assembly (accumulators v8-v31, row r's three in v8+3r..v10+3r), 4 k-steps
 * per iteration: each k-step one ldp of A and one ld1 of B's 12 values, post-indexed, for 24 fmla, the
 * prefetches once per 4 steps as in the C loop below (for which GCC adds an address increment per load
 * and tests k & 3 every step). The sums go to acc[8][12] (6 stores) for the C epilogue. */
#define FMA3_ASM(r0, r1, r2, v, lane)         \
    "fmla " r0 ".4s, v2.4s, " v ".s[" #lane "]\n" \
    "fmla " r1 ".4s, v3.4s, " v ".s[" #lane "]\n" \
    "fmla " r2 ".4s, v4.4s, " v ".s[" #lane "]\n"
#define KSTEP_ASM                                                                                         \
    "ldp q0, q1, [%[a]], #32\n"                                                                           \
    "ld1 {v2.4s-v4.4s}, [%[b]], #48\n" FMA3_ASM("v8", "v9", "v10", "v0", 0)                                \
        FMA3_ASM("v11", "v12", "v13", "v0", 1) FMA3_ASM("v14", "v15", "v16", "v0", 2)                     \
            FMA3_ASM("v17", "v18", "v19", "v0", 3) FMA3_ASM("v20", "v21", "v22", "v1", 0)                 \
                FMA3_ASM("v23", "v24", "v25", "v1", 1) FMA3_ASM("v26", "v27", "v28", "v1", 2)             \
                    FMA3_ASM("v29", "v30", "v31", "v1", 3)
#define ZERO4_ASM(a, b, c, d) "movi " a ".16b, #0\nmovi " b ".16b, #0\nmovi " c ".16b, #0\nmovi " d ".16b, #0\n"
static void kloop_8x12(int64_t kc, const float *a, const float *b, float *acc) {
    int64_t n4 = kc >> 2, n1 = kc & 3;
    __asm__ volatile(ZERO4_ASM("v8", "v9", "v10", "v11") ZERO4_ASM("v12", "v13", "v14", "v15")
                         ZERO4_ASM("v16", "v17", "v18", "v19") ZERO4_ASM("v20", "v21", "v22", "v23")
                             ZERO4_ASM("v24", "v25", "v26", "v27") ZERO4_ASM("v28", "v29", "v30", "v31")
                     "cbz %[n4], 2f\n"
                     "1:\n"
                     "prfm pldl1keep, [%[a], #512]\n"
                     "prfm pldl1keep, [%[a], #576]\n"
                     "prfm pldl1keep, [%[b], #768]\n"
                     "prfm pldl1keep, [%[b], #832]\n"
                     "prfm pldl1keep, [%[b], #896]\n" KSTEP_ASM KSTEP_ASM KSTEP_ASM KSTEP_ASM
                     "subs %[n4], %[n4], #1\n"
                     "b.ne 1b\n"
                     "2:\n"
                     "cbz %[n1], 4f\n"
                     "3:\n" KSTEP_ASM
                     "subs %[n1], %[n1], #1\n"
                     "b.ne 3b\n"
                     "4:\n"
                     "st1 {v8.4s-v11.4s}, [%[acc]], #64\n"
                     "st1 {v12.4s-v15.4s}, [%[acc]], #64\n"
                     "st1 {v16.4s-v19.4s}, [%[acc]], #64\n"
                     "st1 {v20.4s-v23.4s}, [%[acc]], #64\n"
                     "st1 {v24.4s-v27.4s}, [%[acc]], #64\n"
                     "st1 {v28.4s-v31.4s}, [%[acc]], #64\n"
                     : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [n1] "+r"(n1), [acc] "+r"(acc)
                     :
                     : "v0", "v1", "v2", "v3", "v4", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16",
                       "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29",
                       "v30", "v31", "cc", "memory");
}
#define ROW_LOAD(r) c##r##0 = vld1q_f32(acc + r * NR), c##r##1 = vld1q_f32(acc + r * NR + 4), c##r##2 = vld1q_f32(acc + r * NR + 8);
#define KLOOP_8X12_ASM                                                                            \
    float acc[MR * NR] __attribute__((aligned(16)));                                              \
    kloop_8x12(t->kc, a, b, acc);                                                                 \
    ROW_LOAD(0) ROW_LOAD(1) ROW_LOAD(2) ROW_LOAD(3) ROW_LOAD(4) ROW_LOAD(5) ROW_LOAD(6) ROW_LOAD(7)

#define DEFINE_TILE(NAME, NVC)                                                      \
    static void NAME(const tile_args *t) {                                          \
        const int nvc = NVC;                                                        \
        ROW_ACC(0) ROW_ACC(1) ROW_ACC(2) ROW_ACC(3) ROW_ACC(4) ROW_ACC(5) ROW_ACC(6) ROW_ACC(7) \
        const float *a = t->a, *b = t->b;                                           \
        if (nvc == 3) {                                                             \
            KLOOP_8X12_ASM                                                          \
        } else                                                                      \
        for (int64_t k = 0; k < t->kc; ++k) {                                       \
            if ((k & 3) == 0) { /* 4 k-steps = 2 lines of A, 3 of B: 16 steps ahead */ \
                __builtin_prefetch(a + 16 * MR);                                    \
                __builtin_prefetch(a + 16 * MR + 16);                               \
                __builtin_prefetch(b + 16 * NR);                                    \
                __builtin_prefetch(b + 16 * NR + 16);                               \
                __builtin_prefetch(b + 16 * NR + 32);                               \
            }                                                                       \
            const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);             \
            const float32x4_t b0 = vld1q_f32(b);                                    \
            const float32x4_t b1 = nvc > 1 ? vld1q_f32(b + 4) : b0;                 \
            const float32x4_t b2 = nvc > 2 ? vld1q_f32(b + 8) : b0;                 \
            ROW_FMA(0, a0, 0) ROW_FMA(1, a0, 1) ROW_FMA(2, a0, 2) ROW_FMA(3, a0, 3) \
            ROW_FMA(4, a1, 0) ROW_FMA(5, a1, 1) ROW_FMA(6, a1, 2) ROW_FMA(7, a1, 3) \
            a += MR;                                                                \
            b += NR;                                                                \
        }                                                                           \
        if (t->mr == MR && t->nc == 4 * nvc && t->epi && !t->accumulate) {          \
            tile_epi q;                                                             \
            tile_epi_init(t, &q);                                                   \
            const float32x4_t lo = vdupq_n_f32(q.lo), hi = vdupq_n_f32(q.hi);       \
            ROW_FAST(0) ROW_FAST(1) ROW_FAST(2) ROW_FAST(3) ROW_FAST(4) ROW_FAST(5) ROW_FAST(6) ROW_FAST(7) \
        } else if (t->mr == MR && t->nc == 4 * nvc) {                               \
            ROW_PUT(0) ROW_PUT(1) ROW_PUT(2) ROW_PUT(3) ROW_PUT(4) ROW_PUT(5) ROW_PUT(6) ROW_PUT(7) \
        } else {                                                                    \
            float tmp[MR * NR];                                                     \
            ROW_TMP(0) ROW_TMP(1) ROW_TMP(2) ROW_TMP(3) ROW_TMP(4) ROW_TMP(5) ROW_TMP(6) ROW_TMP(7) \
            put_partial(t, tmp);                                                    \
        }                                                                           \
    }

DEFINE_TILE(tile_nv3, 3)
DEFINE_TILE(tile_nv2, 2)
DEFINE_TILE(tile_nv1, 1)

/* A panel's last rows when they are 4 or fewer (M = 12, 20, ...: the frames or tokens of a small batch):
 * 4 x 12 with 12 accumulators, each k-step one ldr of the 4 rows' A values (the panel's other 4 are zeros)
 * and one ld1 of B's 12 for 12 fmla, the same 0.29 instructions a multiply-add as the 8 x 12 tile instead
 * of twice that on its empty rows. */
#define KSTEP4_ASM                                                                                        \
    "ldr q0, [%[a]], #32\n"                                                                              \
    "ld1 {v2.4s-v4.4s}, [%[b]], #48\n" FMA3_ASM("v8", "v9", "v10", "v0", 0)                               \
        FMA3_ASM("v11", "v12", "v13", "v0", 1) FMA3_ASM("v14", "v15", "v16", "v0", 2)                    \
            FMA3_ASM("v17", "v18", "v19", "v0", 3)
static void kloop_4x12(int64_t kc, const float *a, const float *b, float *acc) {
    int64_t n4 = kc >> 2, n1 = kc & 3;
    __asm__ volatile(ZERO4_ASM("v8", "v9", "v10", "v11") ZERO4_ASM("v12", "v13", "v14", "v15")
                         ZERO4_ASM("v16", "v17", "v18", "v19")
                     "cbz %[n4], 2f\n"
                     "1:\n"
                     "prfm pldl1keep, [%[a], #512]\n"
                     "prfm pldl1keep, [%[a], #576]\n"
                     "prfm pldl1keep, [%[b], #768]\n"
                     "prfm pldl1keep, [%[b], #832]\n"
                     "prfm pldl1keep, [%[b], #896]\n" KSTEP4_ASM KSTEP4_ASM KSTEP4_ASM KSTEP4_ASM
                     "subs %[n4], %[n4], #1\n"
                     "b.ne 1b\n"
                     "2:\n"
                     "cbz %[n1], 4f\n"
                     "3:\n" KSTEP4_ASM
                     "subs %[n1], %[n1], #1\n"
                     "b.ne 3b\n"
                     "4:\n"
                     "st1 {v8.4s-v11.4s}, [%[acc]], #64\n"
                     "st1 {v12.4s-v15.4s}, [%[acc]], #64\n"
                     "st1 {v16.4s-v19.4s}, [%[acc]], #64\n"
                     : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [n1] "+r"(n1), [acc] "+r"(acc)
                     :
                     : "v0", "v2", "v3", "v4", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17",
                       "v18", "v19", "cc", "memory");
}

static void tile_4x12(const tile_args *t) {
    float acc[MR * NR] __attribute__((aligned(16))); /* rows 0-3 from the k-loop; put_partial reads mr <= 4 */
    kloop_4x12(t->kc, t->a, t->b, acc);
    if (t->nc < NR) {
        put_partial(t, acc);
        return;
    }
    for (int r = 0; r < t->mr; ++r) {
        put4(t, r, 0, vld1q_f32(acc + r * NR));
        put4(t, r, 4, vld1q_f32(acc + r * NR + 4));
        put4(t, r, 8, vld1q_f32(acc + r * NR + 8));
    }
}

static void tile_full(const tile_args *t) {
    if (t->mr <= 4) tile_4x12(t);
    else tile_nv3(t);
}
static void tile_part(const tile_args *t, int nv) {
    if (nv == 1) tile_nv1(t);
    else tile_nv2(t);
}

/* -- depthwise ---------------------------------------------------------------------- */

static void pad_plane_f32(const float *x, const arm_conv_geom *g, float *pad, int64_t PH, int64_t PW) {
    for (int64_t ph = 0; ph < PH; ++ph) {
        const int64_t ih = ph - g->pt;
        float *d = pad + ph * PW;
        if (ih < 0 || ih >= g->H) {
            memset(d, 0, (size_t)PW * sizeof(float));
            continue;
        }
        for (int64_t pw = 0; pw < PW; ++pw) {
            const int64_t iw = pw - g->pl;
            d[pw] = iw >= 0 && iw < g->W ? x[ih * g->W + iw] : 0.0f;
        }
    }
}

/* The 3x3 kernels' padded rows are ARM_DW_ROW elements apart: whole vectors of
 * 16 outputs (fp16's 8 lanes, twice) may run past OW, reading (never storing)
 * past the row's needed width; the generic kernel uses the tight width. */
int64_t arm_dw_row(const arm_conv_geom *g) { return (g->OW + 16) * g->sw + (g->kw - 1) * g->dw + 4; }

int64_t arm_depthwise_work_bytes(const arm_conv_geom *g) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    return (PH * arm_dw_row(g) + 64) * (int64_t)sizeof(float); /* slack: a vld2q of the last vector reads past the row */
}

int arm_dw3x3(const arm_conv_geom *g) {
    return g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1 && (g->sh == 1 || g->sh == 2) && g->sw == g->sh;
}

int arm_dwk(const arm_conv_geom *g) {
    const int k = g->kh == g->kw && (g->kh == 3 || g->kh == 5) ? (int)g->kh : 0;
    return k && g->dh == 1 && g->dw == 1 && (g->sw == 1 || g->sw == 2) && g->sh >= 1 ? k : 0;
}

/* 3x3 and 5x5, no dilation (MobileNet's and PP-LCNet's depthwise layers, strides (1, 1), (2, 2), (2, 1),
 * (1, 2)): the 9 or 25 weights held in 3 or 7 registers (fmla by element), the plane copied into the
 * padded scratch with vector moves, one output row of 4-lane vectors at a time (the last vector of a
 * row computed whole and stored lane by lane). */
/* no memset/memcpy calls for the zero stores (they would run outside the counted code) */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void pad_plane_k_f32(const float *x, const arm_conv_geom *g, float *pad, int64_t PH, int64_t R, int fresh) {
    const int64_t W = g->W, pl = g->pl, need = (g->OW - 1) * g->sw + g->kw; /* columns a stored output reads */
    const float32x4_t z = vdupq_n_f32(0.0f);
    /* the zeros are the same for every plane: stored for the first (fresh) only, later planes copy their rows */
    const int64_t ph0 = fresh ? 0 : g->pt, ph1 = fresh || g->pt + g->H > PH ? PH : g->pt + g->H;
    for (int64_t ph = ph0; ph < ph1; ++ph) {
        const int64_t ih = ph - g->pt;
        float *d = pad + ph * R;
        if (ih < 0 || ih >= g->H) {
            if (fresh)
                for (int64_t pw = 0; pw < need; pw += 4) vst1q_f32(d + pw, z);
            continue;
        }
        /* whole vectors: the left zeros first (the copy overwrites what lies past pl), the row's last
         * vector overlapping the one before it, then zeros from the row's end (R has room) */
        const float *row = x + ih * W;
        if (fresh)
            for (int64_t pw = 0; pw < pl; pw += 4) vst1q_f32(d + pw, z);
        if (W >= 4) {
            for (int64_t iw = 0; iw + 4 < W; iw += 4) vst1q_f32(d + pl + iw, vld1q_f32(row + iw));
            vst1q_f32(d + pl + W - 4, vld1q_f32(row + W - 4));
        } else {
            for (int64_t iw = 0; iw < W; ++iw) vst1q_lane_f32(d + pl + iw, vld1q_dup_f32(row + iw), 0);
        }
        if (fresh)
            for (int64_t pw = pl + W; pw < need; pw += 4) vst1q_f32(d + pw, z);
    }
}

/* the first n (1..3) lanes (lane stores: a loop would become a call to memcpy) */
static inline void store_part_f32(float *d, float32x4_t v, int64_t n) {
    vst1q_lane_f32(d, v, 0);
    if (n > 1) vst1q_lane_f32(d + 1, v, 1);
    if (n > 2) vst1q_lane_f32(d + 2, v, 2);
}

/* fmla by element, kept so: the intrinsic lets GCC hoist a dup of each of the 25 weights out of the
 * loop (25 registers, spills) */
#define FMA32(acc, b, a, lane) __asm__("fmla %0.4s, %1.4s, %2.s[" #lane "]" : "+w"(acc) : "w"(b), "w"(a))
static inline __attribute__((always_inline)) float32x4_t fma_lane_f32(float32x4_t acc, float32x4_t b,
                                                                       float32x4_t a, const int lane) {
    if (lane == 0) FMA32(acc, b, a, 0);
    else if (lane == 1) FMA32(acc, b, a, 1);
    else if (lane == 2) FMA32(acc, b, a, 2);
    else FMA32(acc, b, a, 3);
    return acc;
}

/* tap t of the window (row-major) times the vector v: weight t is lane t % 4 of register t / 4 */
#define DW_W(t) ((t) < 4 ? w0 : (t) < 8 ? w1 : (t) < 12 ? w2 : (t) < 16 ? w3 : (t) < 20 ? w4 : (t) < 24 ? w5 : w6)
#define DW_TAP(v, t) acc = fma_lane_f32(acc, v, DW_W(t), (t) & 3)
/* window row i (taps K*i ...) for the 4 outputs from ow: unit-stride loads, or at stride 2 each ld2
 * giving two columns */
#define DW_ROW(r, K, i)                                                               \
    do {                                                                              \
        const float *q_ = (r) + s * ow;                                               \
        if (s == 1) {                                                                 \
            DW_TAP(vld1q_f32(q_), K * i);                                             \
            DW_TAP(vld1q_f32(q_ + 1), K * i + 1);                                     \
            DW_TAP(vld1q_f32(q_ + 2), K * i + 2);                                     \
            if (K == 5) {                                                             \
                DW_TAP(vld1q_f32(q_ + 3), K * i + 3);                                 \
                DW_TAP(vld1q_f32(q_ + 4), K * i + 4);                                 \
            }                                                                         \
        } else {                                                                      \
            const float32x4x2_t a_ = vld2q_f32(q_), b_ = vld2q_f32(q_ + 2);           \
            DW_TAP(a_.val[0], K * i);                                                 \
            DW_TAP(a_.val[1], K * i + 1);                                             \
            DW_TAP(b_.val[0], K * i + 2);                                             \
            if (K == 5) {                                                             \
                DW_TAP(b_.val[1], K * i + 3);                                         \
                DW_TAP(vld2q_f32(q_ + 4).val[0], K * i + 4);                          \
            }                                                                         \
        }                                                                             \
    } while (0)

static inline __attribute__((always_inline)) void dwk_rows_f32(const float *pad, int64_t R, float *yp,
                                                               const arm_conv_geom *g, const int K,
                                                               const float32x4_t w0, const float32x4_t w1,
                                                               const float32x4_t w2, const float32x4_t w3,
                                                               const float32x4_t w4, const float32x4_t w5,
                                                               const float32x4_t w6, float32x4_t vb,
                                                               const int clamp, float32x4_t lo, float32x4_t hi,
                                                               const int s, const int64_t room) {
    const int64_t OH = g->OH, OW = g->OW, down = g->sh * R;
    for (int64_t oh = 0; oh < OH; ++oh) {
        const float *r0 = pad + oh * down;
        float *yo = yp + oh * OW;
        for (int64_t ow = 0; ow < OW; ow += 4) {
            float32x4_t acc = vb;
            if (K == 3) {
                DW_ROW(r0, 3, 0);
                DW_ROW(r0 + R, 3, 1);
                DW_ROW(r0 + 2 * R, 3, 2);
            } else {
                DW_ROW(r0, 5, 0);
                DW_ROW(r0 + R, 5, 1);
                DW_ROW(r0 + 2 * R, 5, 2);
                DW_ROW(r0 + 3 * R, 5, 3);
                DW_ROW(r0 + 4 * R, 5, 4);
            }
            if (clamp) acc = vminq_f32(vmaxq_f32(acc, lo), hi);
            /* a whole vector, spilling past the row into the next rows (written after this one) where
             * that stays inside y */
            if (ow + 4 <= OW || oh * OW + ow + 4 <= room) vst1q_f32(yo + ow, acc);
            else store_part_f32(yo + ow, acc, OW - ow);
        }
    }
}

static void depthwise_k_f32(const float *x, const float *w, const float *bias, float *y, int64_t planes,
                            const arm_conv_geom *g, int clamp, float lo, float hi, float *pad) {
    const int K = arm_dwk(g), taps = K * K;
    const int64_t PH = (g->OH - 1) * g->sh + K, R = arm_dw_row(g);
    const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const float *wk = w + c * taps;
        /* whole vectors of taps, the last tap alone (never read past the channel's weights) */
        const float32x4_t w0 = vld1q_f32(wk), w1 = vld1q_f32(wk + 4);
        const float32x4_t w2 = K == 3 ? vdupq_n_f32(wk[8]) : vld1q_f32(wk + 8);
        const float32x4_t w3 = K == 3 ? w2 : vld1q_f32(wk + 12), w4 = K == 3 ? w2 : vld1q_f32(wk + 16);
        const float32x4_t w5 = K == 3 ? w2 : vld1q_f32(wk + 20), w6 = vdupq_n_f32(wk[taps - 1]);
        const float32x4_t vb = vdupq_n_f32(bias ? bias[c] : 0.0f);
        pad_plane_k_f32(x + p * g->H * g->W, g, pad, PH, R, p == 0);
        float *yp = y + p * g->OH * g->OW;
        const int64_t room = (planes - p) * g->OH * g->OW; /* elements from yp to the end of y */
        /* window, stride across and clamp as constants: eight specialised loops */
#define DW_CASE(K_, s_)                                                                                  \
    if (clamp) dwk_rows_f32(pad, R, yp, g, K_, w0, w1, w2, w3, w4, w5, w6, vb, 1, vlo, vhi, s_, room);   \
    else dwk_rows_f32(pad, R, yp, g, K_, w0, w1, w2, w3, w4, w5, w6, vb, 0, vlo, vhi, s_, room);
        if (K == 3 && g->sw == 1) { DW_CASE(3, 1) }
        else if (K == 3) { DW_CASE(3, 2) }
        else if (g->sw == 1) { DW_CASE(5, 1) }
        else { DW_CASE(5, 2) }
#undef DW_CASE
    }
}

static inline float32x4_t load_strided(const float *p, int64_t s) {
    if (s == 1) return vld1q_f32(p);
    if (s == 2) return vld2q_f32(p).val[0];
    const float v[4] = {p[0], p[s], p[2 * s], p[3 * s]};
    return vld1q_f32(v);
}

static void depthwise_fp32(const void *xv, const float *w, const float *bias, void *yv, int64_t planes,
                           const arm_conv_geom *g, const arm_epilogue *e, void *work) {
    const float *x = (const float *)xv;
    float *y = (float *)yv;
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t taps = g->kh * g->kw;
    float *pad = (float *)work;
    float lo, hi;
    const int clamp = e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP;
    lo = e->act == MNN_ACT_CLIP ? e->act_alpha : 0.0f;
    hi = e->act == MNN_ACT_CLIP ? e->act_beta : INFINITY;
    if (arm_dwk(g)) {
        depthwise_k_f32(x, w, bias, y, planes, g, clamp, lo, hi, pad);
        if (!clamp && e->act != MNN_ACT_NONE) arm_activation(e, y, y, planes * g->OH * g->OW);
        return;
    }
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const float *wk = w + c * taps;
        const float b = bias ? bias[c] : 0.0f;
        float *yp = y + p * g->OH * g->OW;
        pad_plane_f32(x + p * g->H * g->W, g, pad, PH, PW);
        if (PW == 1) { /* one column (a 1-D depthwise along H: FSMN's memory blocks): 4 outputs down it a vector */
            int64_t oh = 0;
            for (; oh + 4 <= g->OH; oh += 4) {
                float32x4_t acc = vdupq_n_f32(b);
                for (int64_t i = 0; i < g->kh; ++i)
                    acc = vfmaq_n_f32(acc, load_strided(pad + oh * g->sh + i * g->dh, g->sh), wk[i]);
                if (clamp) acc = vminq_f32(vmaxq_f32(acc, vdupq_n_f32(lo)), vdupq_n_f32(hi));
                vst1q_f32(yp + oh, acc);
            }
            for (; oh < g->OH; ++oh) {
                float acc = b;
                for (int64_t i = 0; i < g->kh; ++i) acc += pad[oh * g->sh + i * g->dh] * wk[i];
                yp[oh] = clamp ? (acc < lo ? lo : (acc > hi ? hi : acc)) : acc;
            }
            continue;
        }
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            float *yo = yp + oh * g->OW;
            int64_t ow = 0;
            for (; ow + 4 <= g->OW; ow += 4) {
                float32x4_t acc = vdupq_n_f32(b);
                for (int64_t i = 0; i < g->kh; ++i) {
                    const float *src = pad + (oh * g->sh + i * g->dh) * PW + ow * g->sw;
                    for (int64_t j = 0; j < g->kw; ++j)
                        acc = vfmaq_n_f32(acc, load_strided(src + j * g->dw, g->sw), wk[i * g->kw + j]);
                }
                if (clamp) acc = vminq_f32(vmaxq_f32(acc, vdupq_n_f32(lo)), vdupq_n_f32(hi));
                vst1q_f32(yo + ow, acc);
            }
            for (; ow < g->OW; ++ow) {
                float acc = b;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j)
                        acc += pad[(oh * g->sh + i * g->dh) * PW + ow * g->sw + j * g->dw] * wk[i * g->kw + j];
                if (clamp) acc = acc < lo ? lo : (acc > hi ? hi : acc);
                yo[ow] = acc;
            }
        }
    }
    if (!clamp && e->act != MNN_ACT_NONE) arm_activation(e, y, y, planes * g->OH * g->OW);
}

const arm_fkernels arm_fkernels_fp32 = {"fp32", MR, NR, 4, 4, pack_a_impl, pack_b_impl, im2col_b_impl,
                                        gemm_driver, depthwise_fp32};
