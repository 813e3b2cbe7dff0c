/* Data movement of mnn-arm (armv8-a): strided copies, Split, Gather, GatherElements, Where, Pad.
 * Element size generic (bytes), so every dtype and the fp16 domain share them; 4- and 2-byte strided
 * inner loops and the transposing case move NEON vectors. */
#include <arm_neon.h>
#include <string.h>

#include "move.h"

static inline void copy_elem(char *y, const char *x, int32_t elem) {
    switch (elem) {
    case 4: memcpy(y, x, 4); break;
    case 2: memcpy(y, x, 2); break;
    case 1: *y = *x; break;
    case 8: memcpy(y, x, 8); break;
    default: memcpy(y, x, (size_t)elem);
    }
}

/* one run of `n` elements of the innermost dim: contiguous (memcpy), broadcast or strided */
static void inner_run(char *y, const char *x, int64_t n, int64_t st, int32_t elem) {
    if (st == 1) {
        memcpy(y, x, (size_t)(n * elem));
    } else if (elem == 4) {
        const float *p = (const float *)x;
        float *q = (float *)y;
        int64_t i = 0;
        if (st == 0) {
            const float32x4_t v = vld1q_dup_f32(p);
            for (; i + 4 <= n; i += 4) vst1q_f32(q + i, v);
            for (; i < n; ++i) q[i] = p[0];
        } else {
            for (; i + 4 <= n; i += 4) {
                float32x4_t v = vld1q_dup_f32(p + i * st);
                v = vld1q_lane_f32(p + (i + 1) * st, v, 1);
                v = vld1q_lane_f32(p + (i + 2) * st, v, 2);
                v = vld1q_lane_f32(p + (i + 3) * st, v, 3);
                vst1q_f32(q + i, v);
            }
            for (; i < n; ++i) q[i] = p[i * st];
        }
    } else if (elem == 2 && st != 0) { /* fp16-domain tensors: 8 halves gathered a vector */
        const uint16_t *p = (const uint16_t *)x;
        uint16_t *q = (uint16_t *)y;
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            const uint16_t *b = p + i * st;
            uint16x8_t v = vld1q_dup_u16(b);
            v = vld1q_lane_u16(b + st, v, 1);
            v = vld1q_lane_u16(b + 2 * st, v, 2);
            v = vld1q_lane_u16(b + 3 * st, v, 3);
            v = vld1q_lane_u16(b + 4 * st, v, 4);
            v = vld1q_lane_u16(b + 5 * st, v, 5);
            v = vld1q_lane_u16(b + 6 * st, v, 6);
            v = vld1q_lane_u16(b + 7 * st, v, 7);
            vst1q_u16(q + i, v);
        }
        for (; i < n; ++i) q[i] = p[i * st];
    } else {
        for (int64_t i = 0; i < n; ++i) copy_elem(y + i * elem, x + i * st * elem, elem);
    }
}

/* arm_transpose_f32 (below) for 2-byte elements (the fp16 domain's): 8x8 blocks, trn1 / trn2 on halves, words
 * and doublewords */
static void transpose_plane_h(uint16_t *y, const uint16_t *x, int64_t A, int64_t B, int64_t sb) {
    int64_t a = 0;
    for (; a + 8 <= A; a += 8) {
        int64_t b = 0;
        for (; b + 8 <= B; b += 8) {
            uint16x8_t r[8];
            for (int j = 0; j < 8; ++j) r[j] = vld1q_u16(x + a + (b + j) * sb);
            uint32x4_t t[8];
            for (int j = 0; j < 8; j += 2) {
                t[j] = vreinterpretq_u32_u16(vtrn1q_u16(r[j], r[j + 1]));
                t[j + 1] = vreinterpretq_u32_u16(vtrn2q_u16(r[j], r[j + 1]));
            }
            /* u[k]: columns k and k + 4 of rows 0-3 (k < 4) or 4-7 (k >= 4) */
            uint64x2_t u[8];
            for (int h = 0; h < 8; h += 4) {
                u[h + 0] = vreinterpretq_u64_u32(vtrn1q_u32(t[h], t[h + 2]));
                u[h + 2] = vreinterpretq_u64_u32(vtrn2q_u32(t[h], t[h + 2]));
                u[h + 1] = vreinterpretq_u64_u32(vtrn1q_u32(t[h + 1], t[h + 3]));
                u[h + 3] = vreinterpretq_u64_u32(vtrn2q_u32(t[h + 1], t[h + 3]));
            }
            for (int k = 0; k < 4; ++k) {
                vst1q_u16(y + (a + k) * B + b, vreinterpretq_u16_u64(vtrn1q_u64(u[k], u[k + 4])));
                vst1q_u16(y + (a + k + 4) * B + b, vreinterpretq_u16_u64(vtrn2q_u64(u[k], u[k + 4])));
            }
        }
        for (; b < B; ++b)
            for (int64_t i = 0; i < 8; ++i) y[(a + i) * B + b] = x[a + i + b * sb];
    }
    for (; a < A; ++a)
        for (int64_t b = 0; b < B; ++b) y[a * B + b] = x[a + b * sb];
}

/* a 4x4 block transpose when the output's last two dims read the input transposed (fp32 only):
 * out[a][b] = in[a * sa + b * sb] with sb != 1 and sa == 1 (also the transposed MatMul's C, ops.c) */
void arm_transpose_f32(float *y, const float *x, int64_t A, int64_t B, int64_t sb) {
    int64_t a = 0;
    for (; a + 4 <= A; a += 4) {
        int64_t b = 0;
        for (; b + 4 <= B; b += 4) {
            const float32x4_t r0 = vld1q_f32(x + a + (b + 0) * sb), r1 = vld1q_f32(x + a + (b + 1) * sb);
            const float32x4_t r2 = vld1q_f32(x + a + (b + 2) * sb), r3 = vld1q_f32(x + a + (b + 3) * sb);
            const float32x4_t t0 = vtrn1q_f32(r0, r1), t1 = vtrn2q_f32(r0, r1);
            const float32x4_t t2 = vtrn1q_f32(r2, r3), t3 = vtrn2q_f32(r2, r3);
            const float64x2_t u0 = vreinterpretq_f64_f32(t0), u1 = vreinterpretq_f64_f32(t1);
            const float64x2_t u2 = vreinterpretq_f64_f32(t2), u3 = vreinterpretq_f64_f32(t3);
            vst1q_f32(y + (a + 0) * B + b, vreinterpretq_f32_f64(vtrn1q_f64(u0, u2)));
            vst1q_f32(y + (a + 1) * B + b, vreinterpretq_f32_f64(vtrn1q_f64(u1, u3)));
            vst1q_f32(y + (a + 2) * B + b, vreinterpretq_f32_f64(vtrn2q_f64(u0, u2)));
            vst1q_f32(y + (a + 3) * B + b, vreinterpretq_f32_f64(vtrn2q_f64(u1, u3)));
        }
        for (; b < B; ++b)
            for (int64_t i = 0; i < 4; ++i) y[(a + i) * B + b] = x[a + i + b * sb];
    }
    for (; a < A; ++a)
        for (int64_t b = 0; b < B; ++b) y[a * B + b] = x[a + b * sb];
}

int arm_strided_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in; (void)n_out;
    const arm_strided_state *s = (const arm_strided_state *)state;
    const int nd = s->ndim, elem = s->elem;
    const char *x = (const char *)arm_data(&ins[0]) + s->base * elem;
    char *y = (char *)arm_data(&outs[0]);
    int64_t total = 1;
    for (int d = 0; d < nd; ++d) total *= s->dims[d];
    if (total == 0) return 0;
    /* fp32 transposes of the last two dims go by 4x4 blocks, fp16 ones by 8x8 */
    const int plane = (elem == 4 || elem == 2) && nd >= 2 && s->st[nd - 1] != 1 && s->st[nd - 2] == 1 && s->dims[nd - 1] >= 4 &&
                      s->dims[nd - 2] >= 4;
    const int inner_dims = plane ? 2 : 1;
    int64_t outer = 1, idx[ARM_MOVE_MAX_DIMS] = {0}, off = 0;
    for (int d = 0; d < nd - inner_dims; ++d) outer *= s->dims[d];
    const int64_t n = s->dims[nd - 1], step = plane ? n * s->dims[nd - 2] : n;
    for (int64_t o = 0; o < outer; ++o) {
        if (plane && elem == 2)
            transpose_plane_h((uint16_t *)y, (const uint16_t *)x + off, s->dims[nd - 2], n, s->st[nd - 1]);
        else if (plane)
            arm_transpose_f32((float *)y, (const float *)x + off, s->dims[nd - 2], n, s->st[nd - 1]);
        else
            inner_run(y, x + off * elem, n, s->st[nd - 1], elem);
        y += step * elem;
        for (int d = nd - inner_dims - 1; d >= 0; --d) { /* odometer over the outer dims */
            off += s->st[d];
            if (++idx[d] < s->dims[d]) break;
            off -= s->st[d] * s->dims[d];
            idx[d] = 0;
        }
    }
    return 0;
}

int arm_split_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in;
    const arm_concat_state *s = (const arm_concat_state *)state;
    const char *x = (const char *)arm_data(&ins[0]);
    int64_t row = 0;
    for (int k = 0; k < s->n; ++k) row += s->block[k];
    int64_t at = 0;
    for (int k = 0; k < s->n && k < n_out; ++k) {
        const size_t nb = (size_t)(s->block[k] * s->elem);
        char *y = (char *)arm_data(&outs[k]);
        for (int64_t o = 0; o < s->outer; ++o) memcpy(y + o * nb, x + (o * row + at) * s->elem, nb);
        at += s->block[k];
    }
    return 0;
}

static inline int64_t index_at(const void *idx, int32_t bytes, int64_t i) {
    return bytes == 8 ? ((const int64_t *)idx)[i] : ((const int32_t *)idx)[i];
}

int arm_gather_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in; (void)n_out;
    arm_gather_state *s = (arm_gather_state *)state;
    const char *x = (const char *)arm_data(&ins[0]);
    const void *idx = arm_data(&ins[1]);
    char *y = (char *)arm_data(&outs[0]);
    int64_t n = 1;
    for (int d = 0; d < ins[1].ndim; ++d) n *= ins[1].shape[d];
    for (int64_t i = 0; i < n; ++i) { /* checked once, before anything is written */
        const int64_t v = index_at(idx, s->idx_bytes, i);
        if (v < -s->axis || v >= s->axis) {
            s->op.error = "Gather: an index is out of range of the gathered axis";
            return 1;
        }
    }
    const size_t nb = (size_t)s->inner_bytes;
    for (int64_t o = 0; o < s->outer; ++o)
        for (int64_t i = 0; i < n; ++i) {
            int64_t v = index_at(idx, s->idx_bytes, i);
            v += v < 0 ? s->axis : 0;
            memcpy(y + (o * n + i) * nb, x + (o * s->axis + v) * nb, nb);
        }
    return 0;
}

int arm_gather_elements_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in; (void)n_out;
    arm_gather_el_state *s = (arm_gather_el_state *)state;
    const char *x = (const char *)arm_data(&ins[0]);
    const void *idx = arm_data(&ins[1]);
    char *y = (char *)arm_data(&outs[0]);
    const int64_t total = s->outer * s->n * s->inner;
    for (int64_t i = 0; i < total; ++i) {
        const int64_t v = index_at(idx, s->idx_bytes, i);
        if (v < -s->axis || v >= s->axis) {
            s->op.error = "GatherElements: an index is out of range of the gathered axis";
            return 1;
        }
    }
    for (int64_t o = 0; o < s->outer; ++o)
        for (int64_t j = 0; j < s->n; ++j)
            for (int64_t k = 0; k < s->inner; ++k) {
                const int64_t i = (o * s->n + j) * s->inner + k;
                int64_t v = index_at(idx, s->idx_bytes, i);
                v += v < 0 ? s->axis : 0;
                copy_elem(y + i * s->elem, x + ((o * s->axis + v) * s->inner + k) * s->elem, s->elem);
            }
    return 0;
}

int arm_where_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in; (void)n_out;
    const arm_where_state *s = (const arm_where_state *)state;
    const uint8_t *c = (const uint8_t *)arm_data(&ins[0]);
    const char *x = (const char *)arm_data(&ins[1]), *yv = (const char *)arm_data(&ins[2]);
    char *out = (char *)arm_data(&outs[0]);
    const int nd = s->ndim, elem = s->elem;
    int64_t outer = 1, idx[MNN_MAX_DIMS] = {0}, oc = 0, ox = 0, oy = 0;
    for (int d = 0; d < nd - 1; ++d) outer *= s->dims[d];
    const int64_t n = s->dims[nd - 1], cs = s->sc[nd - 1], xs = s->sx[nd - 1], ys = s->sy[nd - 1];
    for (int64_t o = 0; o < outer; ++o) {
        if (elem == 4 && cs == 1 && xs == 1 && ys == 1) { /* the common dense case: a NEON select */
            const float *px = (const float *)(x + ox * 4), *py = (const float *)(yv + oy * 4);
            float *q = (float *)out;
            int64_t i = 0;
            for (; i + 4 <= n; i += 4) {
                uint32_t w;
                memcpy(&w, c + oc + i, 4);
                const uint32x4_t b = vmovl_u16(vget_low_u16(vmovl_u8(vcreate_u8(w))));
                const uint32x4_t m = vtstq_u32(b, b);
                vst1q_f32(q + i, vbslq_f32(m, vld1q_f32(px + i), vld1q_f32(py + i)));
            }
            for (; i < n; ++i) q[i] = c[oc + i] ? px[i] : py[i];
        } else {
            for (int64_t i = 0; i < n; ++i)
                copy_elem(out + i * elem, c[oc + i * cs] ? x + (ox + i * xs) * elem : yv + (oy + i * ys) * elem, elem);
        }
        out += n * elem;
        for (int d = nd - 2; d >= 0; --d) {
            oc += s->sc[d]; ox += s->sx[d]; oy += s->sy[d];
            if (++idx[d] < s->dims[d]) break;
            oc -= s->sc[d] * s->dims[d]; ox -= s->sx[d] * s->dims[d]; oy -= s->sy[d] * s->dims[d];
            idx[d] = 0;
        }
    }
    return 0;
}

int arm_pad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in; (void)n_out;
    const arm_pad_state *s = (const arm_pad_state *)state;
    const char *x = (const char *)arm_data(&ins[0]);
    char *y = (char *)arm_data(&outs[0]);
    const int nd = s->ndim, elem = s->elem;
    int64_t outer = 1, idx[MNN_MAX_DIMS] = {0};
    for (int d = 0; d < nd; ++d) outer *= s->dims[d];
    if (outer == 0) return 0;
    outer /= s->dims[nd - 1];
    const int64_t n = s->dims[nd - 1];
    const int64_t *last = s->map + s->off[nd - 1];
    for (int64_t o = 0; o < outer; ++o) {
        int64_t base = 0, pad = 0;
        for (int d = 0; d < nd - 1; ++d) {
            const int64_t m = s->map[s->off[d] + idx[d]];
            if (m < 0) pad = 1;
            base += m;
        }
        for (int64_t i = 0; i < n; ++i)
            copy_elem(y + i * elem, pad || last[i] < 0 ? (const char *)s->value : x + (base + last[i]) * elem, elem);
        y += n * elem;
        for (int d = nd - 2; d >= 0; --d) {
            if (++idx[d] < s->dims[d]) break;
            idx[d] = 0;
        }
    }
    return 0;
}

int arm_gather_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in; (void)n_out;
    arm_gather_nd_state *s = (arm_gather_nd_state *)state;
    const char *x = (const char *)arm_data(&ins[0]);
    const int64_t *idx = (const int64_t *)arm_data(&ins[1]);
    char *y = (char *)arm_data(&outs[0]);
    const int64_t total = s->nbatch * s->nidx;
    for (int64_t i = 0; i < total; ++i) /* checked before anything is written */
        for (int j = 0; j < s->k; ++j) {
            const int64_t v = idx[i * s->k + j];
            if (v < -s->dims[j] || v >= s->dims[j]) {
                s->op.error = "GatherND: an index is out of range of its axis";
                return 1;
            }
        }
    const size_t nb = (size_t)s->inner_bytes;
    for (int64_t bt = 0; bt < s->nbatch; ++bt)
        for (int64_t i = 0; i < s->nidx; ++i) {
            const int64_t *t = idx + (bt * s->nidx + i) * s->k;
            int64_t off = bt * s->batch_blocks;
            for (int j = 0; j < s->k; ++j) off += (t[j] < 0 ? t[j] + s->dims[j] : t[j]) * s->st[j];
            memcpy(y + (bt * s->nidx + i) * nb, x + off * nb, nb);
        }
    return 0;
}
