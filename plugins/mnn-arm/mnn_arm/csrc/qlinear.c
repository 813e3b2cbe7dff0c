/* QuantizeLinear, DequantizeLinear, QLinearAdd (qlinear.h), armv8-a NEON, 8 elements a step; uint8 / int8
 * MaxPool and the byte table lookup of arm.QLinearLUT at the end.
 * Rounding as the reference: float32 division / products / sum, then round half to even (fcvtns, a
 * saturating conversion), the zero point added with saturation and saturating narrows: the same as
 * numpy's rint + clip for every finite input. No multiply-add is fused (fp-contract off). */
#pragma GCC optimize("fp-contract=off")
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "parallel.h"
#include "qlinear.h"

#define RUN 256 /* elements a unit of work (a multiple of the 8-element step) */

static inline int32_t sat_q(double v, int32_t qdtype) {
    const double lo = qdtype == ARM_Q_UINT8 ? 0.0 : -128.0, hi = qdtype == ARM_Q_UINT8 ? 255.0 : 127.0;
    return (int32_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* int32 lanes -> 8 saturated uint8 / int8 stored at y */
static inline void store8(int32x4_t lo, int32x4_t hi, int32_t qdtype, void *y) {
    const int16x8_t h = vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi));
    if (qdtype == ARM_Q_UINT8) vst1_u8((uint8_t *)y, vqmovun_s16(h));
    else vst1_s8((int8_t *)y, vqmovn_s16(h));
}

/* 8 uint8 / int8 at x minus z, as two float32x4 (exact: at most 9 bits) */
static inline void load8(const void *x, int32_t qdtype, int32x4_t z, float32x4_t *lo, float32x4_t *hi) {
    int16x8_t h;
    if (qdtype == ARM_Q_UINT8) h = vreinterpretq_s16_u16(vmovl_u8(vld1_u8((const uint8_t *)x)));
    else h = vmovl_s8(vld1_s8((const int8_t *)x));
    *lo = vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_low_s16(h)), z));
    *hi = vcvtq_f32_s32(vsubq_s32(vmovl_s16(vget_high_s16(h)), z));
}

static inline int32_t q_at(const void *x, int32_t qdtype, int64_t i) {
    return qdtype == ARM_Q_UINT8 ? ((const uint8_t *)x)[i] : ((const int8_t *)x)[i];
}

typedef struct quant_job {
    const arm_quant_state *s;
    const char *x;
    char *y;
    int64_t runs; /* units of RUN elements per row */
} quant_job;

/* units [b, e): unit u is run u % runs of row u / runs (row = o * C + c) */
static void quantize_units(void *ctx, int64_t b, int64_t e, int tid) {
    (void)tid;
    const quant_job *j = (const quant_job *)ctx;
    const arm_quant_state *s = j->s;
    for (int64_t u = b; u < e; ++u) {
        const int64_t r = u / j->runs, c = r % s->C, i0 = (u % j->runs) * RUN;
        const int64_t n = s->inner - i0 < RUN ? s->inner - i0 : RUN;
        const float *x = (const float *)j->x + r * s->inner + i0;
        char *y = j->y + r * s->inner + i0;
        const float sc = s->scale[c];
        const int32_t z = s->zp[c];
        const float32x4_t vs = vdupq_n_f32(sc);
        const int32x4_t vz = vdupq_n_s32(z);
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            const int32x4_t lo = vqaddq_s32(vcvtnq_s32_f32(vdivq_f32(vld1q_f32(x + i), vs)), vz);
            const int32x4_t hi = vqaddq_s32(vcvtnq_s32_f32(vdivq_f32(vld1q_f32(x + i + 4), vs)), vz);
            store8(lo, hi, s->qdtype, y + i);
        }
        for (; i < n; ++i) {
            const int32_t q = sat_q((double)nearbyintf(x[i] / sc) + z, s->qdtype);
            if (s->qdtype == ARM_Q_UINT8) ((uint8_t *)y)[i] = (uint8_t)q;
            else ((int8_t *)y)[i] = (int8_t)q;
        }
    }
}

static void dequantize_units(void *ctx, int64_t b, int64_t e, int tid) {
    (void)tid;
    const quant_job *j = (const quant_job *)ctx;
    const arm_quant_state *s = j->s;
    const int ib = s->qdtype == ARM_Q_INT32 ? 4 : 1;
    for (int64_t u = b; u < e; ++u) {
        const int64_t r = u / j->runs, c = r % s->C, i0 = (u % j->runs) * RUN;
        const int64_t n = s->inner - i0 < RUN ? s->inner - i0 : RUN;
        const char *x = j->x + (r * s->inner + i0) * ib;
        float *y = (float *)j->y + r * s->inner + i0;
        const float sc = s->scale[c];
        const int32_t z = s->zp[c];
        int64_t i = 0;
        if (ib == 1) { /* x - z exact in float32: one float32 product is the reference's float64 one, rounded */
            const float32x4_t vs = vdupq_n_f32(sc);
            const int32x4_t vz = vdupq_n_s32(z);
            const int16x8_t vz16 = vdupq_n_s16((int16_t)z);
            for (; i + 16 <= n; i += 16) { /* x - z in int16 (9 bits), 16 a step */
                int16x8_t h0, h1;
                if (s->qdtype == ARM_Q_UINT8) {
                    const uint8x16_t v = vld1q_u8((const uint8_t *)x + i);
                    h0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(v)));
                    h1 = vreinterpretq_s16_u16(vmovl_high_u8(v));
                } else {
                    const int8x16_t v = vld1q_s8((const int8_t *)x + i);
                    h0 = vmovl_s8(vget_low_s8(v));
                    h1 = vmovl_high_s8(v);
                }
                h0 = vsubq_s16(h0, vz16);
                h1 = vsubq_s16(h1, vz16);
                float32x4x4_t f;
                f.val[0] = vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(h0))), vs);
                f.val[1] = vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(h0)), vs);
                f.val[2] = vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(h1))), vs);
                f.val[3] = vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(h1)), vs);
                vst1q_f32_x4(y + i, f);
            }
            for (; i + 8 <= n; i += 8) {
                float32x4_t lo, hi;
                load8(x + i, s->qdtype, vz, &lo, &hi);
                vst1q_f32(y + i, vmulq_f32(lo, vs));
                vst1q_f32(y + i + 4, vmulq_f32(hi, vs));
            }
            for (; i < n; ++i) y[i] = (float)(q_at(x, s->qdtype, i) - z) * sc;
        } else { /* int32: x - z needs 33 bits; in double, as the reference */
            for (; i < n; ++i) y[i] = (float)(((double)((const int32_t *)x)[i] - (double)z) * (double)sc);
        }
    }
}

static int units_parts(const void *state, int64_t units) {
    const int64_t most = units / 32; /* 8K elements a part at least */
    const int t = arm_threads(state);
    return most < 2 ? 1 : (most < t ? (int)most : t);
}

/* a zero point of the quantized dtype as int32 */
static int32_t zp_value(const mnn_tensor *t, int32_t qdtype, int64_t i) {
    const void *p = arm_data(t);
    return qdtype == ARM_Q_INT32 ? ((const int32_t *)p)[i] : q_at(p, qdtype, i);
}

static int quant_common(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, arm_range_fn fn) {
    arm_quant_state *s = (arm_quant_state *)state;
    if (s->scale_input >= 0 && s->scale_input < n_in) {
        const float *sc = (const float *)arm_data(&ins[s->scale_input]);
        const int64_t n = mnn_tensor_numel(&ins[s->scale_input]);
        for (int64_t c = 0; c < s->C; ++c) s->scale[c] = sc[n == 1 ? 0 : c];
    }
    if (s->zp_input >= 0 && s->zp_input < n_in) {
        const int64_t n = mnn_tensor_numel(&ins[s->zp_input]);
        for (int64_t c = 0; c < s->C; ++c) s->zp[c] = zp_value(&ins[s->zp_input], s->qdtype, n == 1 ? 0 : c);
    }
    quant_job j = {s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0]), (s->inner + RUN - 1) / RUN};
    const int64_t units = s->outer * s->C * j.runs;
    arm_parallel(units_parts(s, units), units, 1, fn, &j);
    return 0;
}

int arm_quantize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_out;
    return quant_common(state, ins, n_in, outs, quantize_units);
}

int arm_dequantize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_out;
    return quant_common(state, ins, n_in, outs, dequantize_units);
}

/* -- QLinearAdd ------------------------------------------------------------------------------------ */

/* one run of n outputs; a and b advance by sa / sb (1, or 0 for a broadcast value) */
static void qadd_run1(const arm_qadd_state *s, const char *a, int64_t sa, const char *b, int64_t sb, char *y, int64_t n) {
    int64_t i = 0;
    const float32x4_t ma = vdupq_n_f32(s->ma), mb = vdupq_n_f32(s->mb);
    const int32x4_t za = vdupq_n_s32(s->za), zb = vdupq_n_s32(s->zb), zc = vdupq_n_s32(s->zc);
    if ((sa == 1 || sa == 0) && (sb == 1 || sb == 0)) {
        float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, b0 = a0, b1 = a0;
        if (sa == 0) a0 = a1 = vdupq_n_f32((float)(q_at(a, s->qdtype, 0) - s->za));
        if (sb == 0) b0 = b1 = vdupq_n_f32((float)(q_at(b, s->qdtype, 0) - s->zb));
        for (; i + 8 <= n; i += 8) {
            if (sa) load8(a + i, s->qdtype, za, &a0, &a1);
            if (sb) load8(b + i, s->qdtype, zb, &b0, &b1);
            const float32x4_t lo = vaddq_f32(vmulq_f32(a0, ma), vmulq_f32(b0, mb));
            const float32x4_t hi = vaddq_f32(vmulq_f32(a1, ma), vmulq_f32(b1, mb));
            store8(vqaddq_s32(vcvtnq_s32_f32(lo), zc), vqaddq_s32(vcvtnq_s32_f32(hi), zc), s->qdtype, y + i);
        }
    }
    for (; i < n; ++i) {
        const float va = (float)(q_at(a, s->qdtype, i * sa) - s->za) * s->ma;
        const float vb = (float)(q_at(b, s->qdtype, i * sb) - s->zb) * s->mb;
        const int32_t q = sat_q((double)nearbyintf(va + vb) + s->zc, s->qdtype);
        if (s->qdtype == ARM_Q_UINT8) ((uint8_t *)y)[i] = (uint8_t)q;
        else ((int8_t *)y)[i] = (int8_t)q;
    }
}

typedef struct qadd_job {
    const arm_qadd_state *s;
    const char *a, *b;
    char *y;
    int64_t inner;
} qadd_job;

/* indices [b, e) of the outermost collapsed dim (of the only one: a run of elements) */
static void qadd_part(void *ctx, int64_t b0, int64_t e0, int tid) {
    (void)tid;
    const qadd_job *j = (const qadd_job *)ctx;
    const arm_qadd_state *s = j->s;
    const int nd = s->ndim;
    if (nd == 1) {
        qadd_run1(s, j->a + b0 * s->sa[0], s->sa[0], j->b + b0 * s->sb[0], s->sb[0], j->y + b0, e0 - b0);
        return;
    }
    const int64_t n = s->dims[nd - 1];
    int64_t idx[MNN_MAX_DIMS] = {0}, outer = e0 - b0;
    for (int d = 1; d < nd - 1; ++d) outer *= s->dims[d];
    idx[0] = b0;
    for (int64_t o = 0; o < outer; ++o) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < nd - 1; ++d) oa += idx[d] * s->sa[d], ob += idx[d] * s->sb[d];
        qadd_run1(s, j->a + oa, s->sa[nd - 1], j->b + ob, s->sb[nd - 1], j->y + b0 * j->inner + o * n, n);
        for (int d = nd - 2; d >= 0; --d) {
            if (++idx[d] < (d == 0 ? e0 : s->dims[d])) break;
            idx[d] = d == 0 ? b0 : 0;
        }
    }
}

int arm_qadd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_out;
    arm_qadd_state *s = (arm_qadd_state *)state;
    if (s->runtime && n_in >= 8) { /* as the reference's add_multipliers: one float32 division each */
        const float sc = *(const float *)arm_data(&ins[6]);
        s->ma = *(const float *)arm_data(&ins[1]) / sc;
        s->mb = *(const float *)arm_data(&ins[4]) / sc;
        s->za = q_at(arm_data(&ins[2]), s->qdtype, 0);
        s->zb = q_at(arm_data(&ins[5]), s->qdtype, 0);
        s->zc = q_at(arm_data(&ins[7]), s->qdtype, 0);
    }
    qadd_job j = {s, (const char *)arm_data(&ins[0]), (const char *)arm_data(&ins[3]), (char *)arm_data(&outs[0]), 1};
    for (int d = 1; d < s->ndim; ++d) j.inner *= s->dims[d];
    const int64_t total = s->dims[0] * j.inner, most = total / 8192;
    const int parts = most < 2 ? 1 : (most < arm_threads(s) ? (int)most : arm_threads(s));
    arm_parallel(parts, s->dims[0], s->ndim == 1 ? RUN : 1, qadd_part, &j);
    return 0;
}

/* -- MaxPool on uint8 / int8 ------------------------------------------------------------------ */

/* int8 is compared as uint8 after flipping the sign bit (x ^ 0x80 keeps the order), so one unsigned
 * kernel serves both; the output row is built in that domain and flipped back */
static void qmaxpool_plane(const arm_qmaxpool_state *s, const uint8_t *x, uint8_t *y) {
    const arm_pool_geom *g = &s->g;
    const uint8_t flip = s->qdtype == ARM_Q_INT8 ? 0x80 : 0;
    const uint8x16_t vflip = vdupq_n_u8(flip);
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        uint8_t *yr = y + oh * g->OW;
        memset(yr, 0, (size_t)g->OW); /* the lowest value of the unsigned domain */
        for (int64_t i = 0; i < g->kh; ++i) {
            const int64_t ih = oh * g->sh - g->pt + i * g->dh;
            if (ih < 0 || ih >= g->H) continue;
            const uint8_t *xr = x + ih * g->W;
            for (int64_t j = 0; j < g->kw; ++j) {
                const int64_t off = j * g->dw - g->pl; /* column of output ow: ow * sw + off */
                int64_t ow = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
                const int64_t end = g->W - off <= 0 ? 0 : (g->W - off + g->sw - 1) / g->sw;
                const int64_t stop = end < g->OW ? end : g->OW;
                if (g->sw == 1)
                    for (; ow + 16 <= stop; ow += 16)
                        vst1q_u8(yr + ow, vmaxq_u8(vld1q_u8(yr + ow), veorq_u8(vld1q_u8(xr + ow + off), vflip)));
                else if (g->sw == 2) /* vld2 reads 32 columns: only where all lie in the row */
                    for (; ow + 16 <= stop && (ow + 16) * 2 + off <= g->W; ow += 16)
                        vst1q_u8(yr + ow, vmaxq_u8(vld1q_u8(yr + ow), veorq_u8(vld2q_u8(xr + ow * 2 + off).val[0], vflip)));
                for (; ow < stop; ++ow) {
                    const uint8_t v = xr[ow * g->sw + off] ^ flip;
                    if (v > yr[ow]) yr[ow] = v;
                }
            }
        }
        if (flip)
            for (int64_t ow = 0; ow < g->OW; ++ow) yr[ow] ^= flip;
    }
}

typedef struct qmaxpool_job {
    const arm_qmaxpool_state *s;
    const uint8_t *x;
    uint8_t *y;
} qmaxpool_job;

static void qmaxpool_part(void *ctx, int64_t b, int64_t end, int tid) {
    const qmaxpool_job *j = (const qmaxpool_job *)ctx;
    const arm_pool_geom *g = &j->s->g;
    (void)tid;
    for (int64_t p = b; p < end; ++p) qmaxpool_plane(j->s, j->x + p * g->H * g->W, j->y + p * g->OH * g->OW);
}

int arm_qmaxpool_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    const arm_qmaxpool_state *s = (const arm_qmaxpool_state *)state;
    (void)n_in, (void)n_out;
    qmaxpool_job j = {s, (const uint8_t *)arm_data(&ins[0]), (uint8_t *)arm_data(&outs[0])};
    const int64_t most = s->planes * s->g.OH * s->g.OW * s->g.kh * s->g.kw / (RUN * 64);
    const int parts = most < 2 ? 1 : (most < arm_threads(s) ? (int)most : arm_threads(s));
    arm_parallel(parts, s->planes, 1, qmaxpool_part, &j);
    return 0;
}

/* -- table lookup over bytes (arm.QLinearLUT) ------------------------------------------------------ */

typedef struct qlut_job {
    const arm_qlut_state *s;
    const uint8_t *x;
    uint8_t *y;
    int64_t n;
} qlut_job;

/* runs [b, e) of RUN bytes: 16 bytes a step by four 64-byte tbl / tbx lookups (an index past a
 * quarter's 64 entries leaves tbx's lane as it was) */
static void qlut_part(void *ctx, int64_t b, int64_t e, int tid) {
    (void)tid;
    const qlut_job *j = (const qlut_job *)ctx;
    const uint8_t *t = j->s->table;
    const uint8x16x4_t t0 = vld1q_u8_x4(t), t1 = vld1q_u8_x4(t + 64), t2 = vld1q_u8_x4(t + 128),
                       t3 = vld1q_u8_x4(t + 192);
    const uint8x16_t k64 = vdupq_n_u8(64);
    const int64_t end = e * RUN < j->n ? e * RUN : j->n;
    int64_t i = b * RUN;
    for (; i + 16 <= end; i += 16) {
        uint8x16_t v = vld1q_u8(j->x + i);
        uint8x16_t r = vqtbl4q_u8(t0, v);
        v = vsubq_u8(v, k64);
        r = vqtbx4q_u8(r, t1, v);
        v = vsubq_u8(v, k64);
        r = vqtbx4q_u8(r, t2, v);
        v = vsubq_u8(v, k64);
        vst1q_u8(j->y + i, vqtbx4q_u8(r, t3, v));
    }
    for (; i < end; ++i) j->y[i] = t[j->x[i]];
}

/* one byte table of 256 looked up for 16 indices (v, v - 64, v - 128, v - 192) */
static inline uint8x16_t lookup256(const uint8_t *t, uint8x16_t v0, uint8x16_t v1, uint8x16_t v2, uint8x16_t v3) {
    uint8x16_t r = vqtbl4q_u8(vld1q_u8_x4(t), v0);
    r = vqtbx4q_u8(r, vld1q_u8_x4(t + 64), v1);
    r = vqtbx4q_u8(r, vld1q_u8_x4(t + 128), v2);
    return vqtbx4q_u8(r, vld1q_u8_x4(t + 192), v3);
}

/* float32 out: each of the four byte tables gives one byte of 16 floats, and st4 interleaves them into
 * the floats' little-endian bytes */
static void qlut_float_part(void *ctx, int64_t b, int64_t e, int tid) {
    (void)tid;
    const qlut_job *j = (const qlut_job *)ctx;
    const arm_qlut_state *s = j->s;
    const uint8x16_t k64 = vdupq_n_u8(64);
    const int64_t end = e * RUN < j->n ? e * RUN : j->n;
    float *y = (float *)(void *)j->y;
    int64_t i = b * RUN;
    for (; i + 16 <= end; i += 16) {
        const uint8x16_t v0 = vld1q_u8(j->x + i), v1 = vsubq_u8(v0, k64), v2 = vsubq_u8(v1, k64),
                         v3 = vsubq_u8(v2, k64);
        uint8x16x4_t o;
        for (int k = 0; k < 4; ++k) o.val[k] = lookup256(s->planes[k], v0, v1, v2, v3);
        vst4q_u8((uint8_t *)(y + i), o);
    }
    for (; i < end; ++i) {
        const uint8_t x = j->x[i];
        const uint32_t bits = (uint32_t)s->planes[0][x] | (uint32_t)s->planes[1][x] << 8 |
                              (uint32_t)s->planes[2][x] << 16 | (uint32_t)s->planes[3][x] << 24;
        memcpy(y + i, &bits, 4);
    }
}

int arm_qlut_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_qlut_state *s = (const arm_qlut_state *)state;
    qlut_job j = {s, (const uint8_t *)arm_data(&ins[0]), (uint8_t *)arm_data(&outs[0]), mnn_tensor_numel(&ins[0])};
    /* float_out: y is float32 (the job's byte pointer only carries it) */
    const int64_t units = (j.n + RUN - 1) / RUN;
    arm_parallel(units_parts(s, units), units, 1, s->float_out ? qlut_float_part : qlut_part, &j);
    return 0;
}
