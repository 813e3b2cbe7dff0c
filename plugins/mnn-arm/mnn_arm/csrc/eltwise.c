/* fp32 kernels of the ops around the convolutions (armv8-a NEON): activations,
 * broadcasting binary ops, per-channel affine, pooling, row reductions,
 * softmax and normalizations, and the generic GEMM epilogue. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"
#include "vmath.h"

static float act1(const arm_epilogue *e, float v) {
    switch (e->act) {
    case MNN_ACT_RELU: return v > 0.0f ? v : 0.0f;
    case MNN_ACT_CLIP: return v < e->act_alpha ? e->act_alpha : (v > e->act_beta ? e->act_beta : v);
    case MNN_ACT_LEAKY_RELU: return v >= 0.0f ? v : v * e->act_alpha;
    case MNN_ACT_SIGMOID: return v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v));
    case MNN_ACT_SILU: return v * (v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v)));
    case MNN_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case MNN_ACT_TANH: return tanhf(v);
    case MNN_ACT_HARD_SIGMOID: {
        const float h = v * e->act_alpha + e->act_beta;
        return h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h);
    }
    case MNN_ACT_HARD_SWISH: {
        const float h = v / 6.0f + 0.5f;
        return v * (h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h));
    }
    default: return v;
    }
}

void arm_activation(const arm_epilogue *e, const float *x, float *y, int64_t n) {
    int64_t i = 0;
    if (e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP) {
        const float32x4_t lo = vdupq_n_f32(e->act == MNN_ACT_CLIP ? e->act_alpha : 0.0f);
        const float32x4_t hi = vdupq_n_f32(e->act == MNN_ACT_CLIP ? e->act_beta : INFINITY);
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vminq_f32(vmaxq_f32(vld1q_f32(x + i), lo), hi));
    } else if (e->act == MNN_ACT_NONE) {
        if (x != y) memcpy(y, x, (size_t)n * sizeof(float));
        return;
    } else if (e->act == MNN_ACT_GELU) {
        for (; i + 16 <= n; i += 16) {
            float32x4x4_t v = vld1q_f32_x4(x + i);
            v.val[0] = v_gelu(v.val[0]), v.val[1] = v_gelu(v.val[1]), v.val[2] = v_gelu(v.val[2]);
            v.val[3] = v_gelu(v.val[3]);
            vst1q_f32_x4(y + i, v);
        }
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, v_gelu(vld1q_f32(x + i)));
    } else if (e->act == MNN_ACT_SIGMOID) {
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, v_sigmoid(vld1q_f32(x + i)));
    } else if (e->act == MNN_ACT_SILU) {
        for (; i + 4 <= n; i += 4) {
            const float32x4_t v = vld1q_f32(x + i);
            vst1q_f32(y + i, vmulq_f32(v, v_sigmoid(v)));
        }
    } else if (e->act == MNN_ACT_TANH) {
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, v_tanh(vld1q_f32(x + i)));
    } else if (e->act == MNN_ACT_LEAKY_RELU) {
        const float32x4_t a = vdupq_n_f32(e->act_alpha), z = vdupq_n_f32(0.0f);
        for (; i + 4 <= n; i += 4) {
            const float32x4_t v = vld1q_f32(x + i);
            vst1q_f32(y + i, vbslq_f32(vcgeq_f32(v, z), v, vmulq_f32(v, a)));
        }
    } else if (e->act == MNN_ACT_HARD_SIGMOID || e->act == MNN_ACT_HARD_SWISH) {
        /* the scalar rules' operations in their order (v / 6 a division), so the lanes give act1's bits */
        const int swish = e->act == MNN_ACT_HARD_SWISH;
        const float32x4_t a = vdupq_n_f32(swish ? 0.0f : e->act_alpha), b = vdupq_n_f32(swish ? 0.5f : e->act_beta);
        const float32x4_t six = vdupq_n_f32(6.0f), z = vdupq_n_f32(0.0f), one = vdupq_n_f32(1.0f);
        for (; i + 4 <= n; i += 4) {
            const float32x4_t v = vld1q_f32(x + i);
            const float32x4_t h = swish ? vaddq_f32(vdivq_f32(v, six), b) : vaddq_f32(vmulq_f32(v, a), b);
            const float32x4_t c = vminq_f32(vmaxq_f32(h, z), one);
            vst1q_f32(y + i, swish ? vmulq_f32(v, c) : c);
        }
    }
    for (; i < n; ++i) y[i] = act1(e, x[i]);
}

int arm_epilogue_in_tile(const arm_epilogue *e) {
    return e->alpha == 1.0f && (e->bias == NULL || e->bias_cs == 0) &&
           (e->act == MNN_ACT_NONE || e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP);
}

/* What the GEMM tiles leave (alpha, a column bias, activations other than relu/clip: a convolution's
 * fused SiLU), 4 lanes a vector: alpha and the bias, then the row through arm_activation's vector
 * sigmoid / tanh / gelu instead of a libm call per element. */
void arm_epilogue_rows(float *c, int64_t ldc, int64_t m0, int64_t n0, int64_t rows, int64_t cols,
                       const arm_epilogue *e) {
    const float32x4_t va = vdupq_n_f32(e->alpha);
    for (int64_t r = 0; r < rows; ++r) {
        float *p = c + r * ldc;
        const float *b = e->bias ? e->bias + (m0 + r) * e->bias_rs + n0 * e->bias_cs : NULL;
        int64_t j = 0;
        if (b && e->bias_cs == 0) {
            const float32x4_t vb = vdupq_n_f32(e->beta * b[0]);
            for (; j + 4 <= cols; j += 4) vst1q_f32(p + j, vaddq_f32(vmulq_f32(va, vld1q_f32(p + j)), vb));
        } else if (b && e->bias_cs == 1) {
            const float32x4_t vbeta = vdupq_n_f32(e->beta);
            for (; j + 4 <= cols; j += 4)
                vst1q_f32(p + j, vaddq_f32(vmulq_f32(va, vld1q_f32(p + j)), vmulq_f32(vbeta, vld1q_f32(b + j))));
        } else if (!b && e->alpha != 1.0f) {
            for (; j + 4 <= cols; j += 4) vst1q_f32(p + j, vmulq_f32(va, vld1q_f32(p + j)));
        } else if (!b) {
            j = cols; /* nothing before the activation */
        }
        for (; j < cols; ++j) p[j] = e->alpha * p[j] + (b ? e->beta * b[j * e->bias_cs] : 0.0f);
        arm_activation(e, p, p, cols);
    }
}

static inline float32x4_t binop4(int op, float32x4_t a, float32x4_t b) {
    switch (op) {
    case ARM_ADD: return vaddq_f32(a, b);
    case ARM_SUB: return vsubq_f32(a, b);
    case ARM_MUL: return vmulq_f32(a, b);
    case ARM_DIV: return vdivq_f32(a, b);
    case ARM_MAX: return vmaxq_f32(a, b);
    default: return vminq_f32(a, b);
    }
}

static inline float binop1(int op, float a, float b) {
    switch (op) {
    case ARM_ADD: return a + b;
    case ARM_SUB: return a - b;
    case ARM_MUL: return a * b;
    case ARM_DIV: return a / b;
    case ARM_MAX: return a != a || b != b ? NAN : (a > b ? a : b);
    default: return a != a || b != b ? NAN : (a < b ? a : b);
    }
}

/* the innermost run: strides 1/1, 1/0 (b broadcast) or 0/1; 8 elements an iteration, inlined per op
 * (binary_run below) so the op is not switched on per vector */
static inline __attribute__((always_inline)) void binary_run_op(int op, const float *a, int64_t sa, const float *b,
                                                                int64_t sb, float *y, int64_t n) {
    int64_t i = 0;
    if (sa == 1 && sb == 1) {
        for (; i + 8 <= n; i += 8) {
            vst1q_f32(y + i, binop4(op, vld1q_f32(a + i), vld1q_f32(b + i)));
            vst1q_f32(y + i + 4, binop4(op, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4)));
        }
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, binop4(op, vld1q_f32(a + i), vld1q_f32(b + i)));
    } else if (sa == 1 && sb == 0) {
        const float32x4_t bv = vdupq_n_f32(b[0]);
        for (; i + 8 <= n; i += 8) {
            vst1q_f32(y + i, binop4(op, vld1q_f32(a + i), bv));
            vst1q_f32(y + i + 4, binop4(op, vld1q_f32(a + i + 4), bv));
        }
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, binop4(op, vld1q_f32(a + i), bv));
    } else if (sa == 0 && sb == 1) {
        const float32x4_t av = vdupq_n_f32(a[0]);
        for (; i + 8 <= n; i += 8) {
            vst1q_f32(y + i, binop4(op, av, vld1q_f32(b + i)));
            vst1q_f32(y + i + 4, binop4(op, av, vld1q_f32(b + i + 4)));
        }
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, binop4(op, av, vld1q_f32(b + i)));
    }
    for (; i < n; ++i) y[i] = binop1(op, a[i * sa], b[i * sb]);
}

static void binary_run(int op, const float *a, int64_t sa, const float *b, int64_t sb, float *y, int64_t n) {
    switch (op) {
    case ARM_ADD: binary_run_op(ARM_ADD, a, sa, b, sb, y, n); break;
    case ARM_SUB: binary_run_op(ARM_SUB, a, sa, b, sb, y, n); break;
    case ARM_MUL: binary_run_op(ARM_MUL, a, sa, b, sb, y, n); break;
    case ARM_DIV: binary_run_op(ARM_DIV, a, sa, b, sb, y, n); break;
    case ARM_MAX: binary_run_op(ARM_MAX, a, sa, b, sb, y, n); break;
    default: binary_run_op(ARM_MIN, a, sa, b, sb, y, n); break;
    }
}

void arm_binary(int op, const float *a, const float *b, float *y, int ndim, const int64_t *dims,
                const int64_t *sa, const int64_t *sb) {
    /* walk the outer dims with an odometer; the innermost is one run */
    int64_t outer = 1, idx[8] = {0};
    for (int d = 0; d < ndim - 1; ++d) outer *= dims[d];
    const int64_t n = dims[ndim - 1];
    for (int64_t o = 0; o < outer; ++o) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < ndim - 1; ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
        binary_run(op, a + oa, sa[ndim - 1], b + ob, sb[ndim - 1], y + o * n, n);
        for (int d = ndim - 2; d >= 0; --d) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

void arm_channel_affine(const float *x, const float *scale, const float *shift, float *y, int64_t outer,
                        int64_t C, int64_t inner) {
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t c = 0; c < C; ++c) {
            const float *xp = x + (o * C + c) * inner;
            float *yp = y + (o * C + c) * inner;
            const float32x4_t s = vdupq_n_f32(scale[c]), t = vdupq_n_f32(shift[c]);
            int64_t i = 0;
            for (; i + 4 <= inner; i += 4) vst1q_f32(yp + i, vfmaq_f32(t, vld1q_f32(xp + i), s));
            for (; i < inner; ++i) yp[i] = xp[i] * scale[c] + shift[c];
        }
}

int64_t arm_pool_work_floats(const arm_pool_geom *g) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    return PH * PW + 64;
}

/* the plane with its padding (fill) as PH rows of PW: rows copied whole, the fill around them */
static void pool_pad_plane(const float *xp, const arm_pool_geom *g, float *pad, int64_t PH, int64_t PW, float fill) {
    const int64_t w0 = g->pl < PW ? g->pl : PW, w1 = g->pl + g->W < PW ? g->pl + g->W : PW;
    for (int64_t ph = 0; ph < PH; ++ph) {
        float *d = pad + ph * PW;
        const int64_t ih = ph - g->pt;
        int64_t pw = 0;
        if (ih >= 0 && ih < g->H && w1 > w0) {
            for (; pw < w0; ++pw) d[pw] = fill;
            memcpy(d + w0, xp + ih * g->W, (size_t)(w1 - w0) * sizeof(float));
            pw = w1;
        }
        for (; pw < PW; ++pw) d[pw] = fill;
    }
}

/* 4 elements sw apart (sw 1 or 2: every other one of 8) */
static inline float32x4_t load_every(const float *p, int64_t sw) { return sw == 1 ? vld1q_f32(p) : vld2q_f32(p).val[0]; }

/* One output row, 4 outputs a vector while every read stays inside the row (width ld) or, with `past` 1,
 * one element beyond it (readable: another row or the scratch's slack; at stride 2 the last vld2q's odd
 * lane, never used); returns where the vectors stopped. Inlined with sw, kind and k3 (3 window columns side
 * by side) constant, so none is tested per window element and a 3-wide row needs no column loop. */
static inline __attribute__((always_inline)) int64_t pool_row4(const float *src, int64_t ld, int64_t past,
                                                               float *yrow, const arm_pool_geom *g, int64_t oh,
                                                               int64_t sw, int kind, int k3) {
    const int64_t span = (g->kw - 1) * g->dw + 4 * sw - 1, end = ld + (sw == 2 ? past : 0);
    int64_t ow = 0;
    for (; ow + 4 <= g->OW && ow * sw + span < end; ow += 4) {
        float32x4_t acc = vdupq_n_f32(kind == 0 ? -INFINITY : 0.0f);
        for (int64_t i = 0; i < g->kh; ++i) {
            const float *row = src + (oh * g->sh + i * g->dh) * ld + ow * sw;
            if (k3) {
                float32x4_t v0, v1, v2;
                if (sw == 2) { /* the first two columns: the even and odd elements of one ld2 */
                    const float32x4x2_t ab = vld2q_f32(row);
                    v0 = ab.val[0], v1 = ab.val[1], v2 = vld2q_f32(row + 2).val[0];
                } else {
                    v0 = vld1q_f32(row), v1 = vld1q_f32(row + 1), v2 = vld1q_f32(row + 2);
                }
                acc = kind == 0 ? vmaxq_f32(vmaxq_f32(acc, v0), vmaxq_f32(v1, v2))
                                : vaddq_f32(vaddq_f32(acc, v0), vaddq_f32(v1, v2));
                continue;
            }
            for (int64_t j = 0; j < g->kw; ++j) {
                const float32x4_t v = load_every(row + j * g->dw, sw);
                acc = kind == 0 ? vmaxq_f32(acc, v) : vaddq_f32(acc, v);
            }
        }
        if (kind == 1) acc = vmulq_f32(vmulq_n_f32(acc, g->inv_rows[oh]), vld1q_f32(g->inv_cols + ow));
        vst1q_f32(yrow + ow, acc);
    }
    return ow;
}

void arm_pool(const float *x, float *y, int64_t planes, const arm_pool_geom *g, float *pad) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const float fill = g->kind == 0 ? -INFINITY : 0.0f;
    /* windows inside the plane (ceil_mode's included when they fit): read it as it is, no padded copy */
    const int direct = g->pt == 0 && g->pl == 0 && PH <= g->H && PW <= g->W;
    const int64_t ld = direct ? g->W : PW, sw = g->sw;
    const int max = g->kind == 0, k3 = g->kw == 3 && g->dw == 1;
    for (int64_t p = 0; p < planes; ++p) {
        const float *xp = x + p * g->H * g->W, *src = xp;
        if (!direct) {
            pool_pad_plane(xp, g, pad, PH, PW, fill);
            src = pad;
        }
        float *yp = y + p * g->OH * g->OW;
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            float *yrow = yp + oh * g->OW;
            int64_t ow = 0;
            /* an element past the window's last row: the padded scratch (64 floats of slack), a later row of
             * the plane, or the next plane */
            const int64_t past = !direct || p + 1 < planes || oh * g->sh + (g->kh - 1) * g->dh + 1 < g->H;
            if (sw == 1 && k3) ow = max ? pool_row4(src, ld, past, yrow, g, oh, 1, 0, 1) : pool_row4(src, ld, past, yrow, g, oh, 1, 1, 1);
            if (sw == 2 && k3) ow = max ? pool_row4(src, ld, past, yrow, g, oh, 2, 0, 1) : pool_row4(src, ld, past, yrow, g, oh, 2, 1, 1);
            if (sw == 1 && !k3) ow = max ? pool_row4(src, ld, past, yrow, g, oh, 1, 0, 0) : pool_row4(src, ld, past, yrow, g, oh, 1, 1, 0);
            if (sw == 2 && !k3) ow = max ? pool_row4(src, ld, past, yrow, g, oh, 2, 0, 0) : pool_row4(src, ld, past, yrow, g, oh, 2, 1, 0);
            for (; ow < g->OW; ++ow) {
                float acc = fill;
                for (int64_t i = 0; i < g->kh; ++i)
                    for (int64_t j = 0; j < g->kw; ++j) {
                        const float v = src[(oh * g->sh + i * g->dh) * ld + ow * sw + j * g->dw];
                        acc = g->kind == 0 ? (v > acc || v != v ? v : acc) : acc + v;
                    }
                yp[oh * g->OW + ow] = g->kind == 0 ? acc : acc * g->inv_rows[oh] * g->inv_cols[ow];
            }
        }
    }
}

void arm_reduce_rows(const float *x, float *y, int64_t rows, int64_t n, int kind) {
    for (int64_t r = 0; r < rows; ++r) {
        const float *p = x + r * n;
        int64_t i = 0;
        if (kind == 0) {
            float m = -INFINITY;
            if (n >= 4) {
                float32x4_t v = vld1q_f32(p);
                for (i = 4; i + 4 <= n; i += 4) v = vmaxq_f32(v, vld1q_f32(p + i));
                m = vmaxvq_f32(v);
            }
            for (; i < n; ++i) m = p[i] > m || p[i] != p[i] ? p[i] : m;
            y[r] = m;
        } else {
            float32x4_t v = vdupq_n_f32(0.0f);
            for (; i + 4 <= n; i += 4) v = vaddq_f32(v, vld1q_f32(p + i));
            float s = vaddvq_f32(v);
            for (; i < n; ++i) s += p[i];
            y[r] = n ? s / (float)n : NAN;
        }
    }
}

/* softmax of contiguous rows (the last axis) of scale * x, 16 lanes an iteration: the row's max, then
 * e = 2^((x - max) scale log2 e) stored with its sum (v_exp2_nonpos), then the products by 1 / sum.
 * A scale > 0 (an attention's 1 / sqrt(d), fused from the Mul before) leaves the max where it was. */
static void softmax_rows(const float *x, float *y, int64_t rows, int64_t n, float scale) {
    const float c = scale * 1.44269504088896341f;
    const float32x4_t vc = vdupq_n_f32(c);
    for (int64_t r = 0; r < rows; ++r) {
        const float *p = x + r * n;
        float *q = y + r * n;
        float m = -INFINITY;
        int64_t i = 0;
        if (n >= 16) {
            float32x4x4_t a = vld1q_f32_x4(p);
            for (i = 16; i + 16 <= n; i += 16) {
                const float32x4x4_t b = vld1q_f32_x4(p + i);
                a.val[0] = vmaxq_f32(a.val[0], b.val[0]), a.val[1] = vmaxq_f32(a.val[1], b.val[1]);
                a.val[2] = vmaxq_f32(a.val[2], b.val[2]), a.val[3] = vmaxq_f32(a.val[3], b.val[3]);
            }
            m = vmaxvq_f32(vmaxq_f32(vmaxq_f32(a.val[0], a.val[1]), vmaxq_f32(a.val[2], a.val[3])));
        }
        for (; i < n; ++i) m = p[i] > m || p[i] != p[i] ? p[i] : m;
        const float32x4_t vmax = vdupq_n_f32(m);
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
        for (i = 0; i + 16 <= n; i += 16) {
            float32x4x4_t v = vld1q_f32_x4(p + i);
            v.val[0] = v_exp2_nonpos(vmulq_f32(vsubq_f32(v.val[0], vmax), vc));
            v.val[1] = v_exp2_nonpos(vmulq_f32(vsubq_f32(v.val[1], vmax), vc));
            v.val[2] = v_exp2_nonpos(vmulq_f32(vsubq_f32(v.val[2], vmax), vc));
            v.val[3] = v_exp2_nonpos(vmulq_f32(vsubq_f32(v.val[3], vmax), vc));
            vst1q_f32_x4(q + i, v);
            s0 = vaddq_f32(s0, v.val[0]), s1 = vaddq_f32(s1, v.val[1]);
            s2 = vaddq_f32(s2, v.val[2]), s3 = vaddq_f32(s3, v.val[3]);
        }
        for (; i + 4 <= n; i += 4) {
            const float32x4_t e = v_exp2_nonpos(vmulq_f32(vsubq_f32(vld1q_f32(p + i), vmax), vc));
            vst1q_f32(q + i, e);
            s0 = vaddq_f32(s0, e);
        }
        float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
        if (i < n) { /* the last 1-3 through the same vector code, in a zero-padded vector */
            float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (int64_t k = i; k < n; ++k) t[k - i] = (p[k] - m) * c;
            vst1q_f32(t, v_exp2_nonpos(vld1q_f32(t)));
            for (int64_t k = i; k < n; ++k) s += q[k] = t[k - i];
        }
        const float inv = 1.0f / s;
        const float32x4_t vi = vdupq_n_f32(inv);
        for (i = 0; i + 16 <= n; i += 16) {
            float32x4x4_t v = vld1q_f32_x4(q + i);
            v.val[0] = vmulq_f32(v.val[0], vi), v.val[1] = vmulq_f32(v.val[1], vi);
            v.val[2] = vmulq_f32(v.val[2], vi), v.val[3] = vmulq_f32(v.val[3], vi);
            vst1q_f32_x4(q + i, v);
        }
        for (; i + 4 <= n; i += 4) vst1q_f32(q + i, vmulq_f32(vld1q_f32(q + i), vi));
        for (; i < n; ++i) q[i] *= inv;
    }
}

void arm_softmax(const float *x, float *y, int64_t outer, int64_t axis, int64_t inner, int log, float scale) {
    if (inner == 1 && !log && scale > 0.0f) {
        softmax_rows(x, y, outer, axis, scale);
        return;
    }
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
            const float *p = x + o * axis * inner + in;
            float *q = y + o * axis * inner + in;
            float m = -INFINITY;
            for (int64_t a = 0; a < axis; ++a) m = p[a * inner] * scale > m ? p[a * inner] * scale : m;
            double s = 0.0;
            for (int64_t a = 0; a < axis; ++a) {
                const float e = expf(p[a * inner] * scale - m);
                if (!log) q[a * inner] = e;
                s += e;
            }
            if (log) {
                const float ls = (float)logf((float)s);
                for (int64_t a = 0; a < axis; ++a) q[a * inner] = p[a * inner] * scale - m - ls;
            } else {
                const float inv = (float)(1.0 / s);
                for (int64_t a = 0; a < axis; ++a) q[a * inner] *= inv;
            }
        }
}

/* sum of p[i] (centred: of (p[i] - mu)^2) over n: 4-lane float sums of at most NORM_BLOCK elements, each
 * block's added up in double, so a long row (an instance norm's plane) keeps the double sum's precision */
#define NORM_BLOCK 512
static double norm_sum(const float *p, int64_t n, float mu, int centred) {
    const float32x4_t vm = vdupq_n_f32(mu);
    double total = 0.0;
    for (int64_t b = 0; b < n; b += NORM_BLOCK) {
        const int64_t e = b + NORM_BLOCK < n ? b + NORM_BLOCK : n;
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
        int64_t i = b;
        if (centred) {
            for (; i + 8 <= e; i += 8) {
                const float32x4_t d0 = vsubq_f32(vld1q_f32(p + i), vm), d1 = vsubq_f32(vld1q_f32(p + i + 4), vm);
                s0 = vfmaq_f32(s0, d0, d0), s1 = vfmaq_f32(s1, d1, d1);
            }
        } else {
            for (; i + 8 <= e; i += 8) s0 = vaddq_f32(s0, vld1q_f32(p + i)), s1 = vaddq_f32(s1, vld1q_f32(p + i + 4));
        }
        double part = (double)vaddvq_f32(vaddq_f32(s0, s1));
        for (; i < e; ++i) part += centred ? (double)(p[i] - mu) * (double)(p[i] - mu) : (double)p[i];
        total += part;
    }
    return total;
}

void arm_normalize_rows(const float *x, float *y, int64_t rows, int64_t n, float eps, const float *scale,
                        const float *shift, int64_t per_row) {
    for (int64_t r = 0; r < rows; ++r) {
        const float *p = x + r * n;
        float *q = y + r * n;
        const float mu = n ? (float)(norm_sum(p, n, 0.0f, 0) / (double)n) : 0.0f;
        const float inv = (float)(1.0 / sqrt((n ? norm_sum(p, n, mu, 1) / (double)n : 0.0) + eps));
        int64_t i = 0;
        if (per_row || (!scale && !shift)) { /* one scale and shift for the row: (x - mu) * a + b */
            const int64_t c = per_row ? r % per_row : 0;
            const float a = inv * (per_row && scale ? scale[c] : 1.0f), b = per_row && shift ? shift[c] : 0.0f;
            const float32x4_t vm = vdupq_n_f32(mu), va = vdupq_n_f32(a), vb = vdupq_n_f32(b);
            for (; i + 4 <= n; i += 4) vst1q_f32(q + i, vfmaq_f32(vb, vsubq_f32(vld1q_f32(p + i), vm), va));
            for (; i < n; ++i) q[i] = (p[i] - mu) * a + b;
            continue;
        }
        /* a scale and shift per element (LayerNorm's): ((x - mu) * inv) * scale + shift */
        const float32x4_t vm = vdupq_n_f32(mu), vi = vdupq_n_f32(inv), one = vdupq_n_f32(1.0f), zero = vdupq_n_f32(0.0f);
        for (; i + 4 <= n; i += 4) {
            const float32x4_t v = vmulq_f32(vsubq_f32(vld1q_f32(p + i), vm), vi);
            vst1q_f32(q + i, vfmaq_f32(shift ? vld1q_f32(shift + i) : zero, v, scale ? vld1q_f32(scale + i) : one));
        }
        for (; i < n; ++i) q[i] = (p[i] - mu) * inv * (scale ? scale[i] : 1.0f) + (shift ? shift[i] : 0.0f);
    }
}

void arm_f16_to_f32(const void *xv, float *y, int64_t n) {
    const __fp16 *x = (const __fp16 *)xv;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t v = vld1q_f16(x + i);
        vst1q_f32(y + i, vcvt_f32_f16(vget_low_f16(v)));
        vst1q_f32(y + i + 4, vcvt_high_f32_f16(v));
    }
    for (; i < n; ++i) y[i] = (float)x[i];
}

void arm_f32_to_f16(const float *x, void *yv, int64_t n) {
    __fp16 *y = (__fp16 *)yv;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        vst1q_f16(y + i, vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(x + i)), vld1q_f32(x + i + 4)));
    for (; i < n; ++i) y[i] = (__fp16)x[i];
}
