/* Reductions of mnn-arm over any axes (armv8-a NEON, fp32): ReduceSum/Mean/Max/Min/Prod/SumSquare/
 * L1/L2/LogSum/LogSumExp. One block of reduced axes (x [outer][n][inner]) runs vectorized: along
 * rows when inner == 1, else four inner columns at a time; scattered axes walk their strides. */
#include <arm_neon.h>
#include <math.h>

#include "move.h"

static inline float32x4_t pre4(int kind, float32x4_t v) {
    if (kind == ARM_RED_SUMSQ || kind == ARM_RED_L2) return vmulq_f32(v, v);
    if (kind == ARM_RED_L1) return vabsq_f32(v);
    return v;
}

static inline float pre1(int kind, float v) {
    if (kind == ARM_RED_SUMSQ || kind == ARM_RED_L2) return v * v;
    if (kind == ARM_RED_L1) return fabsf(v);
    return v;
}

/* max and min propagate NaN, as numpy's do */
static inline float32x4_t comb4(int kind, float32x4_t a, float32x4_t b) {
    switch (kind) {
    case ARM_RED_MAX: return vmaxq_f32(a, b);
    case ARM_RED_MIN: return vminq_f32(a, b);
    case ARM_RED_PROD: return vmulq_f32(a, b);
    default: return vaddq_f32(a, b);
    }
}

static inline float comb1(int kind, float a, float b) {
    switch (kind) {
    case ARM_RED_MAX: return a > b || a != a ? a : b;
    case ARM_RED_MIN: return a < b || a != a ? a : b;
    case ARM_RED_PROD: return a * b;
    default: return a + b;
    }
}

static inline float init1(int kind) {
    return kind == ARM_RED_MAX ? -INFINITY : kind == ARM_RED_MIN ? INFINITY : kind == ARM_RED_PROD ? 1.0f : 0.0f;
}

static inline float fin1(int kind, float v, int64_t n) {
    switch (kind) {
    case ARM_RED_MEAN: return v / (float)n;
    case ARM_RED_L2: return sqrtf(v);
    case ARM_RED_LOGSUM: return logf(v);
    default: return v;
    }
}

static float horizontal(int kind, float32x4_t v) {
    switch (kind) {
    case ARM_RED_MAX: return vmaxvq_f32(v);
    case ARM_RED_MIN: return vminvq_f32(v);
    case ARM_RED_PROD: return vgetq_lane_f32(v, 0) * vgetq_lane_f32(v, 1) * vgetq_lane_f32(v, 2) * vgetq_lane_f32(v, 3);
    default: return vaddvq_f32(v);
    }
}

/* one contiguous row of n values */
static float reduce_row(int kind, const float *p, int64_t n) {
    if (kind == ARM_RED_LOGSUMEXP) {
        float m = reduce_row(ARM_RED_MAX, p, n);
        if (!isfinite(m)) m = 0.0f; /* all -inf (or inf/NaN): exp of the raw values says it */
        float s = 0.0f;
        for (int64_t i = 0; i < n; ++i) s += expf(p[i] - m);
        return logf(s) + m;
    }
    float acc = init1(kind);
    int64_t i = 0;
    if (n >= 8) {
        float32x4_t a0 = pre4(kind, vld1q_f32(p)), a1 = pre4(kind, vld1q_f32(p + 4));
        for (i = 8; i + 8 <= n; i += 8) {
            a0 = comb4(kind, a0, pre4(kind, vld1q_f32(p + i)));
            a1 = comb4(kind, a1, pre4(kind, vld1q_f32(p + i + 4)));
        }
        acc = horizontal(kind, comb4(kind, a0, a1));
    }
    for (; i < n; ++i) acc = comb1(kind, acc, pre1(kind, p[i]));
    return fin1(kind, acc, n);
}

/* x [n][inner] -> y [inner]: four columns at a time down the rows */
static void reduce_cols(int kind, const float *x, float *y, int64_t n, int64_t inner) {
    int64_t j = 0;
    if (kind != ARM_RED_LOGSUMEXP) {
        for (; j + 4 <= inner; j += 4) {
            float32x4_t a = vdupq_n_f32(init1(kind));
            for (int64_t r = 0; r < n; ++r) a = comb4(kind, a, pre4(kind, vld1q_f32(x + r * inner + j)));
            for (int l = 0; l < 4; ++l) y[j + l] = fin1(kind, a[l], n);
        }
    }
    for (; j < inner; ++j) {
        if (kind == ARM_RED_LOGSUMEXP) {
            float m = -INFINITY, s = 0.0f;
            for (int64_t r = 0; r < n; ++r) m = comb1(ARM_RED_MAX, m, x[r * inner + j]);
            if (!isfinite(m)) m = 0.0f;
            for (int64_t r = 0; r < n; ++r) s += expf(x[r * inner + j] - m);
            y[j] = logf(s) + m;
            continue;
        }
        float a = init1(kind);
        for (int64_t r = 0; r < n; ++r) a = comb1(kind, a, pre1(kind, x[r * inner + j]));
        y[j] = fin1(kind, a, n);
    }
}

/* scattered axes: for each kept index (dense output) walk the reduced ones by their strides */
static void reduce_scattered(const arm_reduce_any_state *s, const float *x, float *y) {
    int64_t kidx[MNN_MAX_DIMS] = {0}, ridx[MNN_MAX_DIMS], kept = 1, count = 1;
    for (int d = 0; d < s->nk; ++d) kept *= s->kdims[d];
    for (int d = 0; d < s->nr; ++d) count *= s->rdims[d];
    int64_t koff = 0;
    const int lse = s->kind == ARM_RED_LOGSUMEXP;
    for (int64_t o = 0; o < kept; ++o) {
        float m = 0.0f;
        for (int pass = lse ? 0 : 1; pass < 2; ++pass) {
            const int kind = pass == 0 ? ARM_RED_MAX : (lse ? ARM_RED_SUM : s->kind);
            float a = init1(kind);
            int64_t roff = 0;
            for (int d = 0; d < s->nr; ++d) ridx[d] = 0;
            for (int64_t r = 0; r < count; ++r) {
                const float v = x[koff + roff];
                a = comb1(kind, a, pass == 0 ? v : (lse ? expf(v - m) : pre1(kind, v)));
                for (int d = s->nr - 1; d >= 0; --d) {
                    roff += s->rst[d];
                    if (++ridx[d] < s->rdims[d]) break;
                    roff -= s->rst[d] * s->rdims[d];
                    ridx[d] = 0;
                }
            }
            if (pass == 0) m = isfinite(a) ? a : 0.0f;
            else y[o] = lse ? logf(a) + m : fin1(kind, a, count);
        }
        for (int d = s->nk - 1; d >= 0; --d) {
            koff += s->kst[d];
            if (++kidx[d] < s->kdims[d]) break;
            koff -= s->kst[d] * s->kdims[d];
            kidx[d] = 0;
        }
    }
}

/* rows of 2, 3 or 4 (a stack's new last axis): four rows a vector, their columns split by ld2 / ld3 / ld4;
 * the same operations in the same order as reduce_row's scalar loop, so the same bits */
static int64_t reduce_short_rows(int kind, const float *x, float *y, int64_t rows, int64_t n) {
    if (kind == ARM_RED_LOGSUMEXP || n < 2 || n > 4) return 0;
    const float32x4_t init = vdupq_n_f32(init1(kind));
    int64_t o = 0;
    for (; o + 4 <= rows; o += 4) {
        const float *p = x + o * n;
        float32x4_t a;
        if (n == 2) {
            const float32x4x2_t v = vld2q_f32(p);
            a = comb4(kind, comb4(kind, init, pre4(kind, v.val[0])), pre4(kind, v.val[1]));
        } else if (n == 3) {
            const float32x4x3_t v = vld3q_f32(p);
            a = comb4(kind, comb4(kind, comb4(kind, init, pre4(kind, v.val[0])), pre4(kind, v.val[1])),
                      pre4(kind, v.val[2]));
        } else {
            const float32x4x4_t v = vld4q_f32(p);
            a = comb4(kind, comb4(kind, init, pre4(kind, v.val[0])), pre4(kind, v.val[1]));
            a = comb4(kind, comb4(kind, a, pre4(kind, v.val[2])), pre4(kind, v.val[3]));
        }
        vst1q_f32(y + o, a);
        if (kind == ARM_RED_MEAN || kind == ARM_RED_L2 || kind == ARM_RED_LOGSUM)
            for (int l = 0; l < 4; ++l) y[o + l] = fin1(kind, y[o + l], n);
    }
    return o;
}

int arm_reduce_any_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in; (void)n_out;
    const arm_reduce_any_state *s = (const arm_reduce_any_state *)state;
    const float *x = (const float *)arm_data(&ins[0]);
    float *y = (float *)arm_data(&outs[0]);
    if (!s->block) {
        reduce_scattered(s, x, y);
        return 0;
    }
    const int64_t first = s->inner == 1 ? reduce_short_rows(s->kind, x, y, s->outer, s->n) : 0;
    for (int64_t o = first; o < s->outer; ++o) {
        if (s->inner == 1)
            y[o] = reduce_row(s->kind, x + o * s->n, s->n);
        else
            reduce_cols(s->kind, x + o * s->n * s->inner, y + o * s->inner, s->n, s->inner);
    }
    return 0;
}
