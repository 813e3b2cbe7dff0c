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
