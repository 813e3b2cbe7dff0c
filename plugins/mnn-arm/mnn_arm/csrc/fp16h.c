/* The fp16 path on activations kept in half precision between ops ("fp16h";
 * compiled -march=armv8.2-a+fp16, run only where the CPU reports asimdhp).
 * Under precision="low" every float tensor of the plan lives in fp16 in
 * mnn-arm's own memory domain, so the kernels here read their inputs and
 * write their outputs as halves: the GEMM's B panels and the depthwise padded
 * planes are plain copies, results are stored without widening. The register
 * tiles and the depthwise structure are fp16.c's (fp16_body.h); only the
 * loads and stores of activations differ. Conversion happens only where the
 * graph enters or leaves the fp16 domain (the arena's copies). */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"

#define ELEM __fp16
#define MR 8
#define NR 24
#define LANES 8
#define NV 3
#define KC 512
#define XHALF 1
#define XV 8
#define COPY_X(d, s) vst1q_f16(d, vld1q_f16(s))
#define COPY_X2(d, s) vst1q_f16(d, vld2q_f16(s).val[0]) /* every other element */

/* one-row GEMMs as a matrix-vector product (fp16_body.h) */
static void gemv_row_h(int64_t N, int64_t K, const __fp16 *ap, const __fp16 *bp, void *c);
#define GEMV_ROW gemv_row_h

#include "fgemm_body.h"
#include "fp16_body.h"

const arm_fkernels arm_fkernels_fp16h = {"fp16h", MR, NR, 2, 2, pack_a_impl, pack_b_impl, im2col_b_impl,
                                         gemm_driver, depthwise_impl};

/* -- element-wise on halves ------------------------------------------------------------ */

static inline float16x8_t binop8(int op, float16x8_t a, float16x8_t b) {
    switch (op) {
    case ARM_ADD: return vaddq_f16(a, b);
    case ARM_SUB: return vsubq_f16(a, b);
    case ARM_MUL: return vmulq_f16(a, b);
    case ARM_DIV: return vdivq_f16(a, b);
    case ARM_MAX: return vmaxq_f16(a, b);
    default: return vminq_f16(a, b);
    }
}

/* n results; sa / sb: 1 (contiguous) or 0 (one value broadcast). Inlined per op (binary_run_h below)
 * so the op is not switched on per vector, 16 halves an iteration as eltwise.c's fp32 runs */
static inline __attribute__((always_inline)) void binary_run_op_h(int op, const __fp16 *a, int64_t sa,
                                                                  const __fp16 *b, int64_t sb, __fp16 *y,
                                                                  int64_t n) {
    int64_t i = 0;
    if ((sa == 1 || sa == 0) && (sb == 1 || sb == 0)) {
        const float16x8_t a1 = vld1q_dup_f16(a), b1 = vld1q_dup_f16(b);
        if (sa && sb) {
            for (; i + 16 <= n; i += 16) {
                vst1q_f16(y + i, binop8(op, vld1q_f16(a + i), vld1q_f16(b + i)));
                vst1q_f16(y + i + 8, binop8(op, vld1q_f16(a + i + 8), vld1q_f16(b + i + 8)));
            }
        } else if (sa) {
            for (; i + 16 <= n; i += 16) {
                vst1q_f16(y + i, binop8(op, vld1q_f16(a + i), b1));
                vst1q_f16(y + i + 8, binop8(op, vld1q_f16(a + i + 8), b1));
            }
        } else if (sb) {
            for (; i + 16 <= n; i += 16) {
                vst1q_f16(y + i, binop8(op, a1, vld1q_f16(b + i)));
                vst1q_f16(y + i + 8, binop8(op, a1, vld1q_f16(b + i + 8)));
            }
        }
        for (; i + 8 <= n; i += 8)
            vst1q_f16(y + i, binop8(op, sa ? vld1q_f16(a + i) : a1, sb ? vld1q_f16(b + i) : b1));
    }
    for (; i < n; ++i) {
        const float16x8_t r = binop8(op, vdupq_n_f16(a[i * sa]), vdupq_n_f16(b[i * sb]));
        y[i] = vgetq_lane_f16(r, 0);
    }
}

static void binary_run_h(int op, const __fp16 *a, int64_t sa, const __fp16 *b, int64_t sb, __fp16 *y, int64_t n) {
    switch (op) {
    case ARM_ADD: binary_run_op_h(ARM_ADD, a, sa, b, sb, y, n); break;
    case ARM_SUB: binary_run_op_h(ARM_SUB, a, sa, b, sb, y, n); break;
    case ARM_MUL: binary_run_op_h(ARM_MUL, a, sa, b, sb, y, n); break;
    case ARM_DIV: binary_run_op_h(ARM_DIV, a, sa, b, sb, y, n); break;
    case ARM_MAX: binary_run_op_h(ARM_MAX, a, sa, b, sb, y, n); break;
    default: binary_run_op_h(ARM_MIN, a, sa, b, sb, y, n); break;
    }
}

void arm_binary_h(int op, const void *av, const void *bv, void *yv, int ndim, const int64_t *dims,
                  const int64_t *sa, const int64_t *sb) {
    const __fp16 *a = (const __fp16 *)av, *b = (const __fp16 *)bv;
    __fp16 *y = (__fp16 *)yv;
    int64_t outer = 1, idx[8] = {0};
    for (int d = 0; d < ndim - 1; ++d) outer *= dims[d];
    const int64_t n = dims[ndim - 1];
    for (int64_t o = 0; o < outer; ++o) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < ndim - 1; ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
        binary_run_h(op, a + oa, sa[ndim - 1], b + ob, sb[ndim - 1], y + o * n, n);
        for (int d = ndim - 2; d >= 0; --d) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

void arm_reduce_rows_h(const void *xv, void *yv, int64_t rows, int64_t n, int kind) {
    const __fp16 *x = (const __fp16 *)xv;
    __fp16 *y = (__fp16 *)yv;
    for (int64_t r = 0; r < rows; ++r) {
        const __fp16 *p = x + r * n;
        int64_t i = 0;
        if (kind == 0) {
            float m = -INFINITY;
            if (n >= 8) {
                float16x8_t v = vld1q_f16(p);
                for (i = 8; i + 8 <= n; i += 8) v = vmaxq_f16(v, vld1q_f16(p + i));
                m = (float)vmaxvq_f16(v);
            }
            for (; i < n; ++i) m = (float)p[i] > m || p[i] != p[i] ? (float)p[i] : m;
            y[r] = (__fp16)m;
        } else {
            float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
            for (; i + 8 <= n; i += 8) {
                const float16x8_t v = vld1q_f16(p + i);
                s0 = vaddq_f32(s0, vcvt_f32_f16(vget_low_f16(v))), s1 = vaddq_f32(s1, vcvt_high_f32_f16(v));
            }
            float s = vaddvq_f32(vaddq_f32(s0, s1));
            for (; i < n; ++i) s += (float)p[i];
            y[r] = (__fp16)(n ? s / (float)n : NAN);
        }
    }
}

/* relu / clip on 8 halves per instruction; the other activations in fp32, 256 values at a time */
void arm_activation_h(const arm_epilogue *e, const void *xv, void *yv, int64_t n) {
    const __fp16 *x = (const __fp16 *)xv;
    __fp16 *y = (__fp16 *)yv;
    if (e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP) {
        const float16x8_t lo = vdupq_n_f16((__fp16)(e->act == MNN_ACT_CLIP ? e->act_alpha : 0.0f));
        const float16x8_t hi = vdupq_n_f16((__fp16)(e->act == MNN_ACT_CLIP ? e->act_beta : INFINITY));
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) vst1q_f16(y + i, vminq_f16(vmaxq_f16(vld1q_f16(x + i), lo), hi));
        for (; i < n; ++i) {
            const float v = (float)x[i];
            const float l = (float)vgetq_lane_f16(lo, 0), h = (float)vgetq_lane_f16(hi, 0);
            y[i] = (__fp16)(v < l ? l : (v > h ? h : v));
        }
        return;
    }
    if (x != y) memmove(y, x, (size_t)n * 2);
    activation_x(e, y, n);
}
