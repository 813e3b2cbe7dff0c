/* DynamicQuantizeLSTM of mnn-arm (armv8-a NEON): see qlstm.h. The integer products are exact and the
 * float32 scaling and sums are the reference's operations in its order (a fused multiply-add would round
 * them differently, hence no contraction), so the gates' inputs are the reference's bits. */
#pragma GCC optimize("fp-contract=off")
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "qlstm.h"

/* the smallest and largest of n floats, widened to hold 0 */
static void range0(const float *x, int64_t n, float *lo, float *hi) {
    float32x4_t a = vdupq_n_f32(0.0f), b = a;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        a = vminq_f32(a, v), b = vmaxq_f32(b, v);
    }
    float l = vminvq_f32(a), h = vmaxvq_f32(b);
    for (; i < n; ++i) l = x[i] < l ? x[i] : l, h = x[i] > h ? x[i] : h;
    *lo = l, *hi = h;
}

/* q = clip(round(x / scale) + z, 0, 255) - 128 for n floats, rounding halves to even as the reference;
 * returns the scale, the zero point in *zp */
static float quantize(const float *x, int64_t n, int8_t *q, int32_t *zp) {
    float lo, hi;
    range0(x, n, &lo, &hi);
    const float scale = lo == hi ? 1.0f : (hi - lo) / 255.0f;
    float z = rintf(-lo / scale);
    z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z);
    *zp = (int32_t)z;
    const float32x4_t sv = vdupq_n_f32(scale), zv = vdupq_n_f32(z), top = vdupq_n_f32(255.0f), zero = vdupq_n_f32(0.0f);
    const int32x4_t off = vdupq_n_s32(128);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        int32x4_t w[2];
        for (int h = 0; h < 2; ++h) {
            float32x4_t v = vaddq_f32(vrndnq_f32(vdivq_f32(vld1q_f32(x + i + 4 * h), sv)), zv);
            v = vminq_f32(vmaxq_f32(v, zero), top);
            w[h] = vsubq_s32(vcvtq_s32_f32(v), off);
        }
        vst1_s8(q + i, vmovn_s16(vcombine_s16(vmovn_s32(w[0]), vmovn_s32(w[1]))));
    }
    for (; i < n; ++i) {
        float v = rintf(x[i] / scale) + z;
        v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
        q[i] = (int8_t)((int32_t)v - 128);
    }
    return scale;
}

/* c[0:N] = one row a (K4 int8; what lies past K meets B's zero padding) times B packed for the int8 GEMM,
 * by smull: per 4 k-steps of a 12-column panel, 3 loads, 6 smull and 6 sadalp. The GEMM would run its
 * 8-row tile for this one row (the sdot path's own: qlstm_dot.c). */
static void row_product(const int8_t *a, const int8_t *bp, int64_t N, int64_t K4, int32_t *c) {
    for (int64_t n0 = 0; n0 < N; n0 += ARM_Q_NR) {
        const int8_t *b = bp + n0 * K4;
        int32x4_t acc[6];
        for (int v = 0; v < 6; ++v) acc[v] = vdupq_n_s32(0);
        for (int64_t g = 0; g < K4 / 4; ++g, b += 4 * ARM_Q_NR) {
            int32_t word;
            memcpy(&word, a + 4 * g, 4);
            const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(word));
            for (int v = 0; v < 3; ++v) { /* 16 bytes: 4 columns of 4 k-steps */
                const int8x16_t bv = vld1q_s8(b + 16 * v);
                acc[2 * v] = vpadalq_s16(acc[2 * v], vmull_s8(vget_low_s8(av), vget_low_s8(bv)));
                acc[2 * v + 1] = vpadalq_s16(acc[2 * v + 1], vmull_high_s8(av, bv));
            }
        }
        int32_t out[ARM_Q_NR];
        for (int v = 0; v < 3; ++v) vst1q_s32(out + 4 * v, vpaddq_s32(acc[2 * v], acc[2 * v + 1]));
        memcpy(c + n0, out, (size_t)(N - n0 < ARM_Q_NR ? N - n0 : ARM_Q_NR) * sizeof(int32_t));
    }
}

/* the m x K block at s->q (quantized with scale sa and zero point za) times w: exact int32 products of the
 * true operands, scaled per column; y[i][n] = product (+ add[i][n] + bias[n] where add is given) */
static void product(arm_qlstm_state *s, const arm_qlstm_weights *w, int64_t m, int64_t K, float sa, int32_t za,
                    const float *add, const float *bias, float *y) {
    const int64_t N = 4 * s->hidden, K4 = arm_k4(K);
    if (m == 1 && s->row_product) {
        int32_t sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += s->q[k];
        s->rowsum[0] = sum;
        if (s->row_product == 2) arm_qlstm_row_dot(s->q, w->packed, N, K4, s->acc);
        else row_product(s->q, w->packed, N, K4, s->acc);
    } else {
        arm_q_pack_a(s->q, 0, K, 1, m, K, s->ap, s->rowsum);
        arm_qgemm_par(s->k, arm_threads(s), m, N, K4, s->ap, w->packed, s->acc, N);
    }
    /* (a + da)(b + db) summed over K: acc + da colsum + db rowsum + K da db */
    const int32_t da = 128 - za, kdd = (int32_t)K * da * w->db;
    for (int64_t i = 0; i < m; ++i) {
        const int32x4_t rowpart = vdupq_n_s32(w->db * s->rowsum[i] + kdd);
        const int32_t *acc = s->acc + i * N;
        const float *ad = add ? add + i * N : NULL;
        float *yi = y + i * N;
        int64_t n = 0;
        for (; n + 4 <= N; n += 4) {
            const int32x4_t t = vmlaq_n_s32(vaddq_s32(vld1q_s32(acc + n), rowpart), vld1q_s32(w->colsum + n), da);
            float32x4_t v = vmulq_f32(vcvtq_f32_s32(t), vmulq_n_f32(vld1q_f32(w->scale + n), sa));
            if (ad) v = vaddq_f32(vaddq_f32(vld1q_f32(ad + n), v), vld1q_f32(bias + n));
            vst1q_f32(yi + n, v);
        }
        for (; n < N; ++n) {
            const int32_t t = acc[n] + w->db * s->rowsum[i] + kdd + da * w->colsum[n];
            float v = (float)t * (sa * w->scale[n]);
            yi[n] = ad ? (ad[n] + v) + bias[n] : v;
        }
    }
}

/* -- the gates ---------------------------------------------------------------------------------------- */

static inline double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline double clipped(double v, double clip) { return clip > 0.0 ? (v < -clip ? -clip : (v > clip ? clip : v)) : v; }

/* one batch entry: g its 4H float32 pre-activations (i, o, f, c), h its state, c its cell, p the peepholes or
 * NULL. In float64 with the cell carried in float64, as the reference: the next step quantizes h, and an h
 * a float32 approximation moves across a rounding boundary moves a whole quantization step there. */
static void cell(const arm_qlstm_state *s, const float *g, const float *p, float *h, double *c) {
    const int64_t H = s->hidden;
    const double clip = s->clip;
    for (int64_t j = 0; j < H; ++j) {
        const double c0 = c[j];
        double gi = g[j], go = g[H + j], gf = g[2 * H + j];
        if (p) gi += (double)p[j] * c0, gf += (double)p[2 * H + j] * c0;
        const double i = sigmoid(clipped(gi, clip));
        const double f = s->input_forget ? 1.0 - i : sigmoid(clipped(gf, clip));
        const double cn = f * c0 + i * tanh(clipped(g[3 * H + j], clip));
        if (p) go += (double)p[H + j] * cn;
        h[j] = (float)(sigmoid(clipped(go, clip)) * tanh(cn));
        c[j] = cn;
    }
}

int arm_qlstm_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    arm_qlstm_state *s = (arm_qlstm_state *)state;
    const int64_t H = s->hidden, B = s->batch, T = s->seq, I = s->input, N = 4 * H;
    const float *x = (const float *)arm_data(&ins[0]);
    const float *h0 = s->in_h0 >= 0 && s->in_h0 < n_in ? (const float *)arm_data(&ins[s->in_h0]) : NULL;
    const float *c0 = s->in_c0 >= 0 && s->in_c0 < n_in ? (const float *)arm_data(&ins[s->in_c0]) : NULL;
    float *y = n_out > 0 ? (float *)arm_data(&outs[0]) : NULL;
    for (int d = 0; d < s->dirs; ++d) {
        const int reverse = s->reverse || d == 1;
        int32_t zx;
        /* every step's X in one block, as ONNX Runtime multiplies them (reversing the rows keeps the range) */
        const float sx = quantize(x, T * B * I, s->q, &zx);
        product(s, &s->w[d], T * B, I, sx, zx, NULL, NULL, s->xw);
        const size_t bytes = (size_t)(B * H) * sizeof(float);
        if (h0) memcpy(s->h, h0 + d * B * H, bytes);
        else memset(s->h, 0, bytes);
        for (int64_t j = 0; j < B * H; ++j) s->c[j] = c0 ? c0[d * B * H + j] : 0.0;
        for (int64_t t = 0; t < T; ++t) {
            const int64_t tt = reverse ? T - 1 - t : t;
            int32_t zh;
            const float sh = quantize(s->h, B * H, s->q, &zh);
            product(s, &s->r[d], B, H, sh, zh, s->xw + tt * B * N, s->bias[d], s->gates);
            for (int64_t b = 0; b < B; ++b) cell(s, s->gates + b * N, s->peep[d], s->h + b * H, s->c + b * H);
            if (y) memcpy(y + (tt * s->dirs + d) * B * H, s->h, bytes);
        }
        if (n_out > 1) memcpy((float *)arm_data(&outs[1]) + d * B * H, s->h, bytes);
        if (n_out > 2)
            for (int64_t j = 0; j < B * H; ++j) ((float *)arm_data(&outs[2]))[d * B * H + j] = (float)s->c[j];
    }
    return 0;
}
