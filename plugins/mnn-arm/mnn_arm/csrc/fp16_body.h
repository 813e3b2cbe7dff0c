/* The fp16 path's kernels, included by fp16.c (fp32 activations: converted
 * while packing, results widened) and fp16h.c (XHALF: fp16 activations read
 * and written as they are). Both are compiled -march=armv8.2-a+fp16. */

/* 8 (4) activations as halves */
static inline float16x8_t load8h(const xelem *p) {
#if XHALF
    return vld1q_f16(p);
#else
    return vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(p)), vld1q_f32(p + 4));
#endif
}
static inline float16x4_t load4h(const xelem *p) {
#if XHALF
    return vld1_f16(p);
#else
    return vcvt_f16_f32(vld1q_f32(p));
#endif
}
static inline void store8(xelem *p, float16x8_t v) {
#if XHALF
    vst1q_f16(p, v);
#else
    vst1q_f32(p, vcvt_f32_f16(vget_low_f16(v)));
    vst1q_f32(p + 4, vcvt_high_f32_f16(v));
#endif
}
/* the first n (1..7) of 8 results (lane stores: a loop would become a call to memcpy) */
static inline void store_part8(xelem *d, float16x8_t v, int64_t n) {
#if XHALF
    vst1q_lane_f16(d, v, 0);
    if (n > 1) vst1q_lane_f16(d + 1, v, 1);
    if (n > 2) vst1q_lane_f16(d + 2, v, 2);
    if (n > 3) vst1q_lane_f16(d + 3, v, 3);
    if (n > 4) vst1q_lane_f16(d + 4, v, 4);
    if (n > 5) vst1q_lane_f16(d + 5, v, 5);
    if (n > 6) vst1q_lane_f16(d + 6, v, 6);
#else
    const float32x4_t v0 = vcvt_f32_f16(vget_low_f16(v)), v1 = vcvt_high_f32_f16(v);
    float32x4_t w = v0;
    if (n >= 4) {
        vst1q_f32(d, v0);
        d += 4, n -= 4, w = v1;
    }
    if (n > 0) vst1q_lane_f32(d, w, 0);
    if (n > 1) vst1q_lane_f32(d + 1, w, 1);
    if (n > 2) vst1q_lane_f32(d + 2, w, 2);
#endif
}
/* an activation the kernels do not fuse, on results already stored */
static void activation_x(const arm_epilogue *e, xelem *y, int64_t n) {
#if XHALF
#ifdef HALF_ACT_ROWS
    arm_epilogue act = *e; /* the activation alone: the kernel has added the bias */
    act.alpha = 1.0f, act.bias = NULL;
    if (HALF_ACT_ROWS(y, n, 1, n, &act)) return;
#endif
    float tmp[256];
    for (int64_t i = 0; i < n; i += 256) {
        const int64_t m = n - i < 256 ? n - i : 256;
        for (int64_t j = 0; j < m; ++j) tmp[j] = (float)y[i + j];
        arm_activation(e, tmp, tmp, m);
        for (int64_t j = 0; j < m; ++j) y[i + j] = (xelem)tmp[j];
    }
#else
    arm_activation(e, y, y, n);
#endif
}

/* The 8 x (8*nvc) tile with named accumulators (see fp32.c for why). */
/* fmla by element on halves takes its element register from v0-v15 only; GCC 12
 * then falls back to a dup per lane, so the instruction is spelled out with the
 * "x" (v0-v15) constraint. */
#define FMA16(acc, b, a, lane) __asm__("fmla %0.8h, %1.8h, %2.h[" #lane "]" : "+w"(acc) : "w"(b), "x"(a))
#define ROW_ACC(r) float16x8_t c##r##0 = vdupq_n_f16(0), c##r##1 = c##r##0, c##r##2 = c##r##0;
#define ROW_FMA(r)                                                  \
    FMA16(c##r##0, b0, av, r);                                      \
    if (nvc > 1) FMA16(c##r##1, b1, av, r);                         \
    if (nvc > 2) FMA16(c##r##2, b2, av, r);
#define PUT8(r, v, acc)                                             \
    put4(t, r, 8 * v, vcvt_f32_f16(vget_low_f16(acc)));             \
    put4(t, r, 8 * v + 4, vcvt_high_f32_f16(acc));
#define ROW_PUT(r) PUT8(r, 0, c##r##0) if (nvc > 1) { PUT8(r, 1, c##r##1) } if (nvc > 2) { PUT8(r, 2, c##r##2) }
#define TMP8(r, v, acc)                                             \
    vst1q_f32(tmp + r * NR + 8 * v, vcvt_f32_f16(vget_low_f16(acc))); \
    vst1q_f32(tmp + r * NR + 8 * v + 4, vcvt_high_f32_f16(acc));
/* the common case (first and only K block): bias and clamp on 8 halves at a
 * time, then widened to fp32 for the store */
#define FAST8(r, col, acc)                                                      \
    do {                                                                        \
        float16x8_t v_ = vaddq_f16(acc, bias##r);                               \
        if (q.clamp) v_ = vminq_f16(vmaxq_f16(v_, lo), hi);                     \
        store8(t->c + r * t->ldc + col, v_);                                    \
    } while (0)
#define ROW_FAST(r)                                                             \
    {                                                                           \
        const float16x8_t bias##r = vdupq_n_f16((__fp16)q.bias[r]);             \
        FAST8(r, 0, c##r##0);                                                   \
        if (nvc > 1) FAST8(r, 8, c##r##1);                                      \
        if (nvc > 2) FAST8(r, 16, c##r##2);                                     \
    }
#define ROW_TMP(r) TMP8(r, 0, c##r##0) if (nvc > 1) { TMP8(r, 1, c##r##1) } if (nvc > 2) { TMP8(r, 2, c##r##2) }

/* fp16 partial sums are carried into fp32 every SPAN k-steps (their rounding error grows with the
 * run of steps), so the K blocks can be KC = 512 long like fp32's: the same bytes of B in L1 */
#define SPAN 256
#define ADD8(r, v, acc)                                                                          \
    vst1q_f32(tmp + r * NR + 8 * v, vaddq_f32(vld1q_f32(tmp + r * NR + 8 * v), vcvt_f32_f16(vget_low_f16(acc)))); \
    vst1q_f32(tmp + r * NR + 8 * v + 4, vaddq_f32(vld1q_f32(tmp + r * NR + 8 * v + 4), vcvt_high_f32_f16(acc)));
#define ROW_ADD(r) ADD8(r, 0, c##r##0) if (nvc > 1) { ADD8(r, 1, c##r##1) } if (nvc > 2) { ADD8(r, 2, c##r##2) }
#define ROW_ZERO(r) c##r##0 = vdupq_n_f16(0), c##r##1 = c##r##0, c##r##2 = c##r##0;

/* the carried fp32 sums folded back into the last span's fp16 ones: the result is fp16-rounded either way */
#define FOLD8(r, v, acc) \
    acc = vaddq_f16(acc, vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(tmp + r * NR + 8 * v)), vld1q_f32(tmp + r * NR + 8 * v + 4)));
#define ROW_FOLD(r) FOLD8(r, 0, c##r##0) if (nvc > 1) { FOLD8(r, 1, c##r##1) } if (nvc > 2) { FOLD8(r, 2, c##r##2) }

/* The full tile's k-loop of one span in assembly, as fp32.c's: accumulators v8-v31 (row r's three in
 * v8+3r..v10+3r), 4 k-steps an iteration, each one ldr of A's 8 halves (v0: by-element fmla on halves
 * takes v0-v15) and one ld1 of B's 24, post-indexed, for 24 fmla; the sums go to acc[8][24] */
#define FMA3H_ASM(r0, r1, r2, lane)            \
    "fmla " r0 ".8h, v2.8h, v0.h[" #lane "]\n" \
    "fmla " r1 ".8h, v3.8h, v0.h[" #lane "]\n" \
    "fmla " r2 ".8h, v4.8h, v0.h[" #lane "]\n"
#define KSTEPH_ASM                                                                                        \
    "ldr q0, [%[a]], #16\n"                                                                               \
    "ld1 {v2.8h-v4.8h}, [%[b]], #48\n" FMA3H_ASM("v8", "v9", "v10", 0) FMA3H_ASM("v11", "v12", "v13", 1)   \
        FMA3H_ASM("v14", "v15", "v16", 2) FMA3H_ASM("v17", "v18", "v19", 3) FMA3H_ASM("v20", "v21", "v22", 4) \
            FMA3H_ASM("v23", "v24", "v25", 5) FMA3H_ASM("v26", "v27", "v28", 6) FMA3H_ASM("v29", "v30", "v31", 7)
#define ZERO4H_ASM(a, b, c, d) "movi " a ".16b, #0\nmovi " b ".16b, #0\nmovi " c ".16b, #0\nmovi " d ".16b, #0\n"
/* the span's k-steps, 4 an iteration (prefetches once per iteration), then the 0-3 left */
#define KLOOPH_ASM                                                                                            \
    "cbz %[n4], 2f\n"                                                                                         \
    "1:\n"                                                                                                    \
    "prfm pldl1keep, [%[a], #256]\n"                                                                          \
    "prfm pldl1keep, [%[b], #768]\n"                                                                          \
    "prfm pldl1keep, [%[b], #832]\n"                                                                          \
    "prfm pldl1keep, [%[b], #896]\n" KSTEPH_ASM KSTEPH_ASM KSTEPH_ASM KSTEPH_ASM                              \
    "subs %[n4], %[n4], #1\n"                                                                                 \
    "b.ne 1b\n"                                                                                               \
    "2:\n"                                                                                                    \
    "cbz %[n1], 4f\n"                                                                                         \
    "3:\n" KSTEPH_ASM                                                                                         \
    "subs %[n1], %[n1], #1\n"                                                                                 \
    "b.ne 3b\n"                                                                                               \
    "4:\n"
#define KLOOPH_CLOBBERS                                                                                       \
    "v0", "v2", "v3", "v4", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", \
        "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "cc", "memory"
static void kloop_8x24(int64_t kc, const __fp16 *a, const __fp16 *b, __fp16 *acc) {
    int64_t n4 = kc >> 2, n1 = kc & 3;
    __asm__ volatile(ZERO4H_ASM("v8", "v9", "v10", "v11") ZERO4H_ASM("v12", "v13", "v14", "v15")
                         ZERO4H_ASM("v16", "v17", "v18", "v19") ZERO4H_ASM("v20", "v21", "v22", "v23")
                             ZERO4H_ASM("v24", "v25", "v26", "v27") ZERO4H_ASM("v28", "v29", "v30", "v31")
                                 KLOOPH_ASM
                     "st1 {v8.8h-v11.8h}, [%[acc]], #64\n"
                     "st1 {v12.8h-v15.8h}, [%[acc]], #64\n"
                     "st1 {v16.8h-v19.8h}, [%[acc]], #64\n"
                     "st1 {v20.8h-v23.8h}, [%[acc]], #64\n"
                     "st1 {v24.8h-v27.8h}, [%[acc]], #64\n"
                     "st1 {v28.8h-v31.8h}, [%[acc]], #64\n"
                     : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [n1] "+r"(n1), [acc] "+r"(acc)
                     :
                     : KLOOPH_CLOBBERS);
}

#if XHALF
/* A whole tile of one span with its epilogue in the same assembly, on fp16 outputs: the sums start at
 * their row's bias (as the depthwise kernels' do), relu / clip on the registers, each row's 24 results
 * stored by one st1. The accumulators never go through the stack, and nothing is set up per row: on
 * short k-loops (K = 16..64) that epilogue was a tenth of the tile. clamp: 0 none, 1 max(lo), 2 both. */
typedef struct tile_out_h {
    __fp16 bias[MR], lo[8], hi[8];
} tile_out_h;
#define BIAS3H_ASM(r0, r1, r2, lane) "dup " r0 ".8h, v1.h[" #lane "]\nmov " r1 ".16b, " r0 ".16b\nmov " r2 ".16b, " r0 ".16b\n"
#define OP6H_ASM(op, bound, a, b, c, d, e, f)                                                                 \
    op " " a ".8h, " a ".8h, " bound ".8h\n" op " " b ".8h, " b ".8h, " bound ".8h\n" op " " c ".8h, " c ".8h, " \
    bound ".8h\n" op " " d ".8h, " d ".8h, " bound ".8h\n" op " " e ".8h, " e ".8h, " bound ".8h\n" op " " f    \
    ".8h, " f ".8h, " bound ".8h\n"
#define OP24H_ASM(op, bound)                                                                                  \
    OP6H_ASM(op, bound, "v8", "v9", "v10", "v11", "v12", "v13") OP6H_ASM(op, bound, "v14", "v15", "v16", "v17",  \
                                                                         "v18", "v19")                         \
        OP6H_ASM(op, bound, "v20", "v21", "v22", "v23", "v24", "v25")                                          \
            OP6H_ASM(op, bound, "v26", "v27", "v28", "v29", "v30", "v31")
static void kloop_8x24_out(int64_t kc, const __fp16 *a, const __fp16 *b, __fp16 *c, int64_t ldc,
                           const tile_out_h *o, int64_t clamp) {
    int64_t n4 = kc >> 2, n1 = kc & 3, ldc_bytes = ldc * 2;
    __asm__ volatile("ldr q1, [%[o]]\n"
                     "ldr q5, [%[o], #16]\n"
                     "ldr q6, [%[o], #32]\n" BIAS3H_ASM("v8", "v9", "v10", 0) BIAS3H_ASM("v11", "v12", "v13", 1)
                         BIAS3H_ASM("v14", "v15", "v16", 2) BIAS3H_ASM("v17", "v18", "v19", 3)
                             BIAS3H_ASM("v20", "v21", "v22", 4) BIAS3H_ASM("v23", "v24", "v25", 5)
                                 BIAS3H_ASM("v26", "v27", "v28", 6) BIAS3H_ASM("v29", "v30", "v31", 7) KLOOPH_ASM
                     "cbz %[clamp], 5f\n" OP24H_ASM("fmax", "v5")
                     "cmp %[clamp], #1\n"
                     "b.eq 5f\n" OP24H_ASM("fmin", "v6")
                     "5:\n"
                     "st1 {v8.8h-v10.8h}, [%[c]], %[ldc]\n"
                     "st1 {v11.8h-v13.8h}, [%[c]], %[ldc]\n"
                     "st1 {v14.8h-v16.8h}, [%[c]], %[ldc]\n"
                     "st1 {v17.8h-v19.8h}, [%[c]], %[ldc]\n"
                     "st1 {v20.8h-v22.8h}, [%[c]], %[ldc]\n"
                     "st1 {v23.8h-v25.8h}, [%[c]], %[ldc]\n"
                     "st1 {v26.8h-v28.8h}, [%[c]], %[ldc]\n"
                     "st1 {v29.8h-v31.8h}, [%[c]], %[ldc]\n"
                     : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [n1] "+r"(n1), [c] "+r"(c)
                     : [o] "r"(o), [ldc] "r"(ldc_bytes), [clamp] "r"(clamp)
                     : "v1", "v5", "v6", KLOOPH_CLOBBERS);
}

/* the full tile of one span that does not add to C: kloop_8x24_out with the row biases as halves */
static void tile_out_fast(const tile_args *t) {
    const arm_epilogue *e = t->e;
    tile_out_h o __attribute__((aligned(16)));
    int64_t clamp = 0;
    if (!t->epi || !e->bias) {
        vst1q_f16(o.bias, vdupq_n_f16(0));
    } else if (e->beta == 1.0f && e->bias_rs == 1) {
        const float *bias = e->bias + t->m;
        vst1q_f16(o.bias, vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(bias)), vld1q_f32(bias + 4)));
    } else {
        for (int r = 0; r < MR; ++r) o.bias[r] = (__fp16)row_bias(t, r);
    }
    if (t->epi && e->act != MNN_ACT_NONE) {
        float lo, hi;
        clamp_bounds(e, &lo, &hi);
        vst1q_f16(o.lo, vdupq_n_f16((__fp16)lo));
        vst1q_f16(o.hi, vdupq_n_f16((__fp16)hi));
        clamp = e->act == MNN_ACT_RELU ? 1 : 2;
    }
    kloop_8x24_out(t->kc, t->a, t->b, t->c, t->ldc, &o, clamp);
}
#define TILE_OUT_FAST(t, nvc)                                                                     \
    if (nvc == 3 && t->kc <= SPAN && !t->accumulate && t->mr == MR && t->nc == NR) {               \
        tile_out_fast(t);                                                                         \
        return;                                                                                   \
    }
#else
#define TILE_OUT_FAST(t, nvc)
#endif
#define ROW_LOADH(r) c##r##0 = vld1q_f16(acc + r * NR), c##r##1 = vld1q_f16(acc + r * NR + 8), c##r##2 = vld1q_f16(acc + r * NR + 16);

#define DEFINE_TILE(NAME, NVC)                                                      \
    static void NAME(const tile_args *t) {                                          \
        const int nvc = NVC;                                                        \
        TILE_OUT_FAST(t, nvc)                                                       \
        ROW_ACC(0) ROW_ACC(1) ROW_ACC(2) ROW_ACC(3) ROW_ACC(4) ROW_ACC(5) ROW_ACC(6) ROW_ACC(7) \
        const __fp16 *a = t->a, *b = t->b;                                          \
        float tmp[MR * NR];                                                         \
        int carried = 0;                                                            \
        int64_t k = 0;                                                              \
        for (;;) {                                                                  \
            const int64_t kend = t->kc - k > SPAN ? k + SPAN : t->kc;               \
            if (nvc == 3) { /* the span's sums in assembly (kloop_8x24) */          \
                __fp16 acc[MR * NR] __attribute__((aligned(16)));                   \
                kloop_8x24(kend - k, a, b, acc);                                    \
                a += (kend - k) * MR, b += (kend - k) * NR, k = kend;               \
                ROW_LOADH(0) ROW_LOADH(1) ROW_LOADH(2) ROW_LOADH(3) ROW_LOADH(4) ROW_LOADH(5) ROW_LOADH(6) ROW_LOADH(7) \
            }                                                                       \
            for (; k < kend; ++k) {                                                 \
                if ((k & 3) == 0) { /* 4 k-steps = 1 line of A, 3 of B: 16 steps ahead */ \
                    __builtin_prefetch(a + 16 * MR);                                \
                    __builtin_prefetch(b + 16 * NR);                                \
                    __builtin_prefetch(b + 16 * NR + 32);                           \
                    __builtin_prefetch(b + 16 * NR + 64);                           \
                }                                                                   \
                const float16x8_t av = vld1q_f16(a);                                \
                const float16x8_t b0 = vld1q_f16(b);                                \
                const float16x8_t b1 = nvc > 1 ? vld1q_f16(b + 8) : b0;             \
                const float16x8_t b2 = nvc > 2 ? vld1q_f16(b + 16) : b0;            \
                ROW_FMA(0) ROW_FMA(1) ROW_FMA(2) ROW_FMA(3) ROW_FMA(4) ROW_FMA(5) ROW_FMA(6) ROW_FMA(7) \
                a += MR;                                                            \
                b += NR;                                                            \
            }                                                                       \
            if (k == t->kc) break;                                                  \
            if (carried) {                                                          \
                ROW_ADD(0) ROW_ADD(1) ROW_ADD(2) ROW_ADD(3) ROW_ADD(4) ROW_ADD(5) ROW_ADD(6) ROW_ADD(7) \
            } else {                                                                \
                ROW_TMP(0) ROW_TMP(1) ROW_TMP(2) ROW_TMP(3) ROW_TMP(4) ROW_TMP(5) ROW_TMP(6) ROW_TMP(7) \
            }                                                                       \
            ROW_ZERO(0) ROW_ZERO(1) ROW_ZERO(2) ROW_ZERO(3) ROW_ZERO(4) ROW_ZERO(5) ROW_ZERO(6) ROW_ZERO(7) \
            carried = 1;                                                            \
        }                                                                           \
        if (carried) {                                                              \
            ROW_FOLD(0) ROW_FOLD(1) ROW_FOLD(2) ROW_FOLD(3) ROW_FOLD(4) ROW_FOLD(5) ROW_FOLD(6) ROW_FOLD(7) \
        }                                                                           \
        if (t->mr == MR && t->nc == 8 * nvc && t->epi && !t->accumulate) {   \
            tile_epi q;                                                             \
            tile_epi_init(t, &q);                                                   \
            const float16x8_t lo = vdupq_n_f16((__fp16)q.lo), hi = vdupq_n_f16((__fp16)q.hi); \
            ROW_FAST(0) ROW_FAST(1) ROW_FAST(2) ROW_FAST(3) ROW_FAST(4) ROW_FAST(5) ROW_FAST(6) ROW_FAST(7) \
        } else if (t->mr == MR && t->nc == 8 * nvc) {                               \
            ROW_PUT(0) ROW_PUT(1) ROW_PUT(2) ROW_PUT(3) ROW_PUT(4) ROW_PUT(5) ROW_PUT(6) ROW_PUT(7) \
        } else {                                                                    \
            ROW_TMP(0) ROW_TMP(1) ROW_TMP(2) ROW_TMP(3) ROW_TMP(4) ROW_TMP(5) ROW_TMP(6) ROW_TMP(7) \
            put_partial(t, tmp);                                                    \
        }                                                                           \
    }

/* c[0, N) = a . B for one packed row of A (a[k] at ap[k * MR]) and B's 24-column panels: per 8 k-steps
 * 8 lane loads of a, 8 loads of 24 B values and 24 fmla by element (the 8-row tile would do 8 rows'
 * work for this one); fp16 sums carried into fp32 every SPAN steps, as the tile's */
#define GEMV_STEP(j)                                        \
    {                                                       \
        const float16x8x3_t b_ = vld1q_f16_x3(b + j * NR);  \
        FMA16(c0, b_.val[0], a, j);                         \
        FMA16(c1, b_.val[1], a, j);                         \
        FMA16(c2, b_.val[2], a, j);                         \
    }
static void gemv_row_h(int64_t N, int64_t K, const __fp16 *ap, const __fp16 *bp, void *cv) {
    xelem *c = (xelem *)cv;
    for (int64_t n = 0; n < N; n += NR) {
        const __fp16 *b = bp + (n / NR) * NR * K;
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0;
        for (int64_t k = 0; k < K;) {
            const int64_t kend = K - k > SPAN ? k + SPAN : K;
            float16x8_t c0 = vdupq_n_f16(0), c1 = c0, c2 = c0;
            for (; k + 8 <= kend; k += 8, b += 8 * NR) {
                float16x8_t a = vld1q_dup_f16(ap + k * MR);
                a = vld1q_lane_f16(ap + (k + 1) * MR, a, 1);
                a = vld1q_lane_f16(ap + (k + 2) * MR, a, 2);
                a = vld1q_lane_f16(ap + (k + 3) * MR, a, 3);
                a = vld1q_lane_f16(ap + (k + 4) * MR, a, 4);
                a = vld1q_lane_f16(ap + (k + 5) * MR, a, 5);
                a = vld1q_lane_f16(ap + (k + 6) * MR, a, 6);
                a = vld1q_lane_f16(ap + (k + 7) * MR, a, 7);
                GEMV_STEP(0) GEMV_STEP(1) GEMV_STEP(2) GEMV_STEP(3) GEMV_STEP(4) GEMV_STEP(5) GEMV_STEP(6) GEMV_STEP(7)
            }
            for (; k < kend; ++k, b += NR) {
                const float16x8x3_t bk = vld1q_f16_x3(b);
                const float16x8_t a = vld1q_dup_f16(ap + k * MR);
                c0 = vfmaq_f16(c0, bk.val[0], a), c1 = vfmaq_f16(c1, bk.val[1], a), c2 = vfmaq_f16(c2, bk.val[2], a);
            }
            s0 = vaddq_f32(s0, vcvt_f32_f16(vget_low_f16(c0))), s1 = vaddq_f32(s1, vcvt_high_f32_f16(c0));
            s2 = vaddq_f32(s2, vcvt_f32_f16(vget_low_f16(c1))), s3 = vaddq_f32(s3, vcvt_high_f32_f16(c1));
            s4 = vaddq_f32(s4, vcvt_f32_f16(vget_low_f16(c2))), s5 = vaddq_f32(s5, vcvt_high_f32_f16(c2));
        }
        float t[NR];
        vst1q_f32(t, s0), vst1q_f32(t + 4, s1), vst1q_f32(t + 8, s2);
        vst1q_f32(t + 12, s3), vst1q_f32(t + 16, s4), vst1q_f32(t + 20, s5);
        const int64_t nc = N - n < NR ? N - n : NR;
        for (int64_t j = 0; j < nc; ++j) c[n + j] = (xelem)t[j];
    }
}

DEFINE_TILE(tile_nv3, 3)
DEFINE_TILE(tile_nv2, 2)
DEFINE_TILE(tile_nv1, 1)

static void tile_full(const tile_args *t) { tile_nv3(t); }
static void tile_part(const tile_args *t, int nv) {
    if (nv == 1) tile_nv1(t);
    else tile_nv2(t);
}

/* -- depthwise: 8 outputs per instruction over a zero-padded fp16 plane ------------- */

static inline float16x8_t load_strided16(const __fp16 *p, int64_t s) {
    if (s == 1) return vld1q_f16(p);
    if (s == 2) return vld2q_f16(p).val[0];
    __fp16 v[8];
    for (int i = 0; i < 8; ++i) v[i] = p[i * s];
    return vld1q_f16(v);
}

/* 3x3 and 5x5, no dilation, stride across 1 or 2: the same kernels as fp32.c's, 8 halves per vector.
 * Taps 0-7 (8-15, 16-23) in one register each and the last tap in another (fmla by element); bias,
 * clamp and the accumulation in fp16, widened to fp32 for the store. */
/* no memset/memcpy calls for the zero stores (they would run outside the counted code) */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void pad_plane_k_f16(const xelem *x, const arm_conv_geom *g, __fp16 *pad, int64_t PH, int64_t R, int fresh) {
    const int64_t W = g->W, pl = g->pl, need = (g->OW - 1) * g->sw + g->kw;
    const float16x8_t z = vdupq_n_f16((__fp16)0);
    /* the zeros are the same for every plane: stored for the first (fresh) only, later planes copy their rows */
    const int64_t ph0 = fresh ? 0 : g->pt, ph1 = fresh || g->pt + g->H > PH ? PH : g->pt + g->H;
    for (int64_t ph = ph0; ph < ph1; ++ph) {
        const int64_t ih = ph - g->pt;
        __fp16 *d = pad + ph * R;
        if (ih < 0 || ih >= g->H) {
            if (fresh)
                for (int64_t pw = 0; pw < need; pw += 8) vst1q_f16(d + pw, z);
            continue;
        }
        /* as in fp32.c, 8 values per store (converted from fp32 unless XHALF) */
        const xelem *row = x + ih * W;
        if (fresh)
            for (int64_t pw = 0; pw < pl; pw += 8) vst1q_f16(d + pw, z);
        if (W >= 8) {
            for (int64_t iw = 0; iw + 8 < W; iw += 8) vst1q_f16(d + pl + iw, load8h(row + iw));
            vst1q_f16(d + pl + W - 8, load8h(row + W - 8));
        } else if (W >= 4) {
            vst1_f16(d + pl, load4h(row));
            vst1_f16(d + pl + W - 4, load4h(row + W - 4));
        } else {
            for (int64_t iw = 0; iw < W; ++iw) d[pl + iw] = (__fp16)row[iw];
        }
        if (fresh)
            for (int64_t pw = pl + W; pw < need; pw += 8) vst1q_f16(d + pw, z);
    }
}

/* FMA16 with the lane as a value (constant once inlined) */
static inline __attribute__((always_inline)) float16x8_t fma_lane_f16(float16x8_t acc, float16x8_t b,
                                                                       float16x8_t a, const int lane) {
    if (lane == 0) FMA16(acc, b, a, 0);
    else if (lane == 1) FMA16(acc, b, a, 1);
    else if (lane == 2) FMA16(acc, b, a, 2);
    else if (lane == 3) FMA16(acc, b, a, 3);
    else if (lane == 4) FMA16(acc, b, a, 4);
    else if (lane == 5) FMA16(acc, b, a, 5);
    else if (lane == 6) FMA16(acc, b, a, 6);
    else FMA16(acc, b, a, 7);
    return acc;
}

/* tap t of the window (row-major): lane t % 8 of register t / 8 */
#define DW16_TAP(v, t) acc = fma_lane_f16(acc, v, (t) < 8 ? w0 : (t) < 16 ? w1 : (t) < 24 ? w2 : w3, (t) & 7)
/* window row i (taps K*i ...) for the 8 outputs from ow, as fp32.c's DW_ROW */
#define DW16_ROW(r, K, i)                                                             \
    do {                                                                              \
        const __fp16 *q_ = (r) + s * ow;                                              \
        if (s == 1) {                                                                 \
            DW16_TAP(vld1q_f16(q_), K * i);                                           \
            DW16_TAP(vld1q_f16(q_ + 1), K * i + 1);                                   \
            DW16_TAP(vld1q_f16(q_ + 2), K * i + 2);                                   \
            if (K == 5) {                                                             \
                DW16_TAP(vld1q_f16(q_ + 3), K * i + 3);                               \
                DW16_TAP(vld1q_f16(q_ + 4), K * i + 4);                               \
            }                                                                         \
        } else {                                                                      \
            const float16x8x2_t a_ = vld2q_f16(q_), b_ = vld2q_f16(q_ + 2);           \
            DW16_TAP(a_.val[0], K * i);                                               \
            DW16_TAP(a_.val[1], K * i + 1);                                           \
            DW16_TAP(b_.val[0], K * i + 2);                                           \
            if (K == 5) {                                                             \
                DW16_TAP(b_.val[1], K * i + 3);                                       \
                DW16_TAP(vld2q_f16(q_ + 4).val[0], K * i + 4);                        \
            }                                                                         \
        }                                                                             \
    } while (0)

static inline __attribute__((always_inline)) void dwk_rows_f16(const __fp16 *pad, int64_t R, xelem *yp,
                                                               const arm_conv_geom *g, const int K,
                                                               const float16x8_t w0, const float16x8_t w1,
                                                               const float16x8_t w2, const float16x8_t w3,
                                                               float16x8_t vb, const int clamp, float16x8_t lo,
                                                               float16x8_t hi, const int s, const int64_t room) {
    const int64_t OH = g->OH, OW = g->OW, down = g->sh * R;
    for (int64_t oh = 0; oh < OH; ++oh) {
        const __fp16 *r0 = pad + oh * down;
        xelem *yo = yp + oh * OW;
        for (int64_t ow = 0; ow < OW; ow += 8) {
            float16x8_t acc = vb;
            if (K == 3) {
                DW16_ROW(r0, 3, 0);
                DW16_ROW(r0 + R, 3, 1);
                DW16_ROW(r0 + 2 * R, 3, 2);
            } else {
                DW16_ROW(r0, 5, 0);
                DW16_ROW(r0 + R, 5, 1);
                DW16_ROW(r0 + 2 * R, 5, 2);
                DW16_ROW(r0 + 3 * R, 5, 3);
                DW16_ROW(r0 + 4 * R, 5, 4);
            }
            if (clamp) acc = vminq_f16(vmaxq_f16(acc, lo), hi);
            /* as in fp32.c: whole vectors spill into the next rows where that stays inside y */
            if (ow + 8 <= OW || oh * OW + ow + 8 <= room) store8(yo + ow, acc);
            else store_part8(yo + ow, acc, OW - ow);
        }
    }
}

static inline float16x8_t load8w(const float *w) { return vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(w)), vld1q_f32(w + 4)); }

static void depthwise_k_f16(const xelem *x, const float *w, const float *bias, xelem *y, int64_t planes,
                            const arm_conv_geom *g, int clamp, float lo, float hi, __fp16 *pad) {
    const int K = arm_dwk(g), taps = K * K;
    const int64_t PH = (g->OH - 1) * g->sh + K, R = arm_dw_row(g);
    const float16x8_t vlo = vdupq_n_f16((__fp16)lo);
    /* an fp16 ceiling: +inf (no clip) stays inf, a finite clip bound rounds to the nearest half */
    const float16x8_t vhi = vdupq_n_f16((__fp16)hi);
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const float *wk = w + c * taps;
        const float16x8_t w0 = load8w(wk), last = vdupq_n_f16((__fp16)wk[taps - 1]);
        const float16x8_t w1 = K == 3 ? last : load8w(wk + 8), w2 = K == 3 ? last : load8w(wk + 16);
        const float16x8_t w3 = last;
        const float16x8_t vb = vdupq_n_f16((__fp16)(bias ? bias[c] : 0.0f));
        pad_plane_k_f16(x + p * g->H * g->W, g, pad, PH, R, p == 0);
        xelem *yp = y + p * g->OH * g->OW;
        const int64_t room = (planes - p) * g->OH * g->OW; /* elements from yp to the end of y */
#define DW16_CASE(K_, s_)                                                                          \
    if (clamp) dwk_rows_f16(pad, R, yp, g, K_, w0, w1, w2, w3, vb, 1, vlo, vhi, s_, room);         \
    else dwk_rows_f16(pad, R, yp, g, K_, w0, w1, w2, w3, vb, 0, vlo, vhi, s_, room);
        if (K == 3 && g->sw == 1) { DW16_CASE(3, 1) }
        else if (K == 3) { DW16_CASE(3, 2) }
        else if (g->sw == 1) { DW16_CASE(5, 1) }
        else { DW16_CASE(5, 2) }
#undef DW16_CASE
    }
}

/* 7x7, stride 1, no dilation (ConvNeXt's depthwise layers): the 49 weights in 7 registers (fmla by element),
 * two output rows a pass so each input row's 7 shifted vectors are loaded once for both (8 rows of loads
 * for 14 rows of taps), 8 outputs a vector; bias first and clamp on the registers as the 3x3 / 5x5 kernels. */
static inline int dw7_f16(const arm_conv_geom *g) {
    return g->kh == 7 && g->kw == 7 && g->dh == 1 && g->dw == 1 && g->sh == 1 && g->sw == 1;
}

/* tap t (row-major) of the window into acc: lane t % 8 of register t / 8 */
#define DW7_TAP(acc, v, t) acc = fma_lane_f16(acc, v, (t) < 8 ? w0 : (t) < 16 ? w1 : (t) < 24 ? w2 : (t) < 32 ? w3 : (t) < 40 ? w4 : (t) < 48 ? w5 : w6, (t) & 7)
/* input row r of a pass (pad row oh + r): window row r of the first output row, row r - 1 of the second */
#define DW7_IN(r, two)                                                                   \
    do {                                                                                 \
        const __fp16 *q_ = r0 + (r) * R + ow;                                            \
        for (int j_ = 0; j_ < 7; ++j_) {                                                 \
            const float16x8_t v_ = vld1q_f16(q_ + j_);                                   \
            if ((r) < 7) DW7_TAP(a0, v_, 7 * (r) + j_);                                  \
            if ((two) && (r) >= 1) DW7_TAP(a1, v_, 7 * ((r) - 1) + j_);                  \
        }                                                                                \
    } while (0)

static inline __attribute__((always_inline)) void dw7_pass_f16(const __fp16 *r0, int64_t R, xelem *y0, xelem *y1,
                                                               int64_t OW, const float16x8_t *w, float16x8_t vb,
                                                               const int clamp, float16x8_t lo, float16x8_t hi,
                                                               const int two) {
    const float16x8_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6];
    for (int64_t ow = 0; ow < OW; ow += 8) {
        float16x8_t a0 = vb, a1 = vb;
        DW7_IN(0, two);
        DW7_IN(1, two);
        DW7_IN(2, two);
        DW7_IN(3, two);
        DW7_IN(4, two);
        DW7_IN(5, two);
        DW7_IN(6, two);
        if (two) DW7_IN(7, two);
        if (clamp) a0 = vminq_f16(vmaxq_f16(a0, lo), hi), a1 = vminq_f16(vmaxq_f16(a1, lo), hi);
        if (ow + 8 <= OW) { /* a partial last vector is stored lane by lane: the next row is already written */
            store8(y0 + ow, a0);
            if (two) store8(y1 + ow, a1);
        } else {
            store_part8(y0 + ow, a0, OW - ow);
            if (two) store_part8(y1 + ow, a1, OW - ow);
        }
    }
}

static void depthwise_7_f16(const xelem *x, const float *w, const float *bias, xelem *y, int64_t planes,
                            const arm_conv_geom *g, int clamp, float lo, float hi, __fp16 *pad) {
    const int64_t PH = g->OH + 6, R = arm_dw_row(g), OH = g->OH, OW = g->OW;
    const float16x8_t vlo = vdupq_n_f16((__fp16)lo), vhi = vdupq_n_f16((__fp16)hi);
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        float16x8_t wv[7];
        float wk[56] = {0};
        for (int t = 0; t < 49; ++t) wk[t] = w[c * 49 + t];
        for (int i = 0; i < 7; ++i) wv[i] = load8w(wk + 8 * i);
        const float16x8_t vb = vdupq_n_f16((__fp16)(bias ? bias[c] : 0.0f));
        pad_plane_k_f16(x + p * g->H * g->W, g, pad, PH, R, p == 0);
        xelem *yp = y + p * OH * OW;
        int64_t oh = 0;
        for (; oh + 2 <= OH; oh += 2) {
            if (clamp) dw7_pass_f16(pad + oh * R, R, yp + oh * OW, yp + (oh + 1) * OW, OW, wv, vb, 1, vlo, vhi, 1);
            else dw7_pass_f16(pad + oh * R, R, yp + oh * OW, yp + (oh + 1) * OW, OW, wv, vb, 0, vlo, vhi, 1);
        }
        if (oh < OH) dw7_pass_f16(pad + oh * R, R, yp + oh * OW, yp + oh * OW, OW, wv, vb, clamp, vlo, vhi, 0);
    }
}

static void depthwise_impl(const void *xv, const float *w, const float *bias, void *yv, int64_t planes,
                           const arm_conv_geom *g, const arm_epilogue *e, void *work) {
    const xelem *x = (const xelem *)xv;
    xelem *y = (xelem *)yv;
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t taps = g->kh * g->kw;
    __fp16 *pad = (__fp16 *)work;
    const int clamp = e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP;
    const float lo = e->act == MNN_ACT_CLIP ? e->act_alpha : 0.0f;
    const float hi = e->act == MNN_ACT_CLIP ? e->act_beta : INFINITY;
    if (arm_dwk(g) || dw7_f16(g)) {
        if (arm_dwk(g)) depthwise_k_f16(x, w, bias, y, planes, g, clamp, lo, hi, pad);
        else depthwise_7_f16(x, w, bias, y, planes, g, clamp, lo, hi, pad);
        if (!clamp && e->act != MNN_ACT_NONE) activation_x(e, y, planes * g->OH * g->OW);
        return;
    }
    __fp16 wk[64];
    for (int64_t p = 0; p < planes; ++p) {
        const int64_t c = p % g->C;
        const xelem *xp = x + p * g->H * g->W;
        xelem *yp = y + p * g->OH * g->OW;
        const int small = taps <= 64;
        if (small)
            for (int64_t t = 0; t < taps; ++t) wk[t] = (__fp16)w[c * taps + t];
        for (int64_t ph = 0; ph < PH; ++ph) {
            const int64_t ih = ph - g->pt;
            __fp16 *d = pad + ph * PW;
            int64_t pw = 0;
            if (ih >= 0 && ih < g->H) {
                const xelem *row = xp + ih * g->W;
                for (; pw < PW && pw < g->pl; ++pw) d[pw] = 0;
                for (; pw + 4 <= PW && pw - g->pl + 4 <= g->W; pw += 4) vst1_f16(d + pw, load4h(row + pw - g->pl));
                for (; pw < PW; ++pw) {
                    const int64_t iw = pw - g->pl;
                    d[pw] = iw >= 0 && iw < g->W ? (__fp16)row[iw] : (__fp16)0;
                }
            } else {
                for (; pw < PW; ++pw) d[pw] = 0;
            }
        }
        const float b = bias ? bias[c] : 0.0f;
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            xelem *yo = yp + oh * g->OW;
            int64_t ow = 0;
            if (small) {
                for (; ow + 8 <= g->OW; ow += 8) {
                    float16x8_t acc = vdupq_n_f16((__fp16)0);
                    for (int64_t i = 0; i < g->kh; ++i) {
                        const __fp16 *src = pad + (oh * g->sh + i * g->dh) * PW + ow * g->sw;
                        for (int64_t j = 0; j < g->kw; ++j)
                            acc = vfmaq_n_f16(acc, load_strided16(src + j * g->dw, g->sw), wk[i * g->kw + j]);
                    }
                    float32x4_t r0 = vaddq_f32(vcvt_f32_f16(vget_low_f16(acc)), vdupq_n_f32(b));
                    float32x4_t r1 = vaddq_f32(vcvt_high_f32_f16(acc), vdupq_n_f32(b));
                    if (clamp) {
                        r0 = vminq_f32(vmaxq_f32(r0, vdupq_n_f32(lo)), vdupq_n_f32(hi));
                        r1 = vminq_f32(vmaxq_f32(r1, vdupq_n_f32(lo)), vdupq_n_f32(hi));
                    }
                    store_c4(yo + ow, r0);
                    store_c4(yo + ow + 4, r1);
                }
            }
            for (; ow < g->OW; ++ow) {
                float acc = b;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j)
                        acc += (float)pad[(oh * g->sh + i * g->dh) * PW + ow * g->sw + j * g->dw] *
                               (float)(__fp16)w[c * taps + i * g->kw + j];
                if (clamp) acc = acc < lo ? lo : (acc > hi ? hi : acc);
                yo[ow] = (xelem)acc;
            }
        }
    }
    if (!clamp && e->act != MNN_ACT_NONE) activation_x(e, y, planes * g->OH * g->OW);
}

