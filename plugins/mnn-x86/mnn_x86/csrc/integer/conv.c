/* ConvInteger (integer.h): per image, the input as uint8 channel-quad words in phase planes, padded with
 * its zero point (int8 input shifted by 128, its zero point with it), then per group the qgemm.h tiles of
 * the packed weights by X86_QG_NR flattened outputs at a time, each tap a fixed offset into a plane (no
 * im2col). The flattened outputs past a row's OW are computed and dropped. */
#include <string.h>

#include "integer.h"

enum { NR = X86_QG_NR, MR = X86_QG_MR };

static int64_t numel(const mnn_tensor *t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
    return n;
}

static int32_t zp_at(const mnn_tensor *t, int64_t i) {
    const int64_t at = numel(t) == 1 ? 0 : i;
    return t->dtype == MNN_INT8 ? ((const int8_t *)t->data)[at] : ((const uint8_t *)t->data)[at];
}

X86_CLONES void x86_convi_pack_weights(x86_convi_state *s, const void *w, int is_signed) {
    const int64_t taps = s->kh * s->kw, K = s->Cg * taps, K4 = s->g.K4;
    const uint8_t flip = is_signed ? 0 : 0x80;
    for (int64_t o = 0; o < s->O; ++o) {
        const int64_t row = (o / s->Og) * s->Ogp + o % s->Og;
        const uint8_t *src = (const uint8_t *)w + o * K;
        uint8_t *dst = (uint8_t *)(s->wp + row * K4);
        int32_t sum = 0;
        memset(dst, 0, (size_t)K4 * 4);
        for (int64_t c = 0; c < s->Cg; ++c)
            for (int64_t t = 0; t < taps; ++t) {
                const uint8_t v = src[c * taps + t] ^ flip;
                dst[(t * s->C4 + c / 4) * 4 + c % 4] = v;
                sum += (int8_t)v;
            }
        s->lsum[row] = sum;
    }
}

typedef struct {
    x86_convi_state *s;
    const uint8_t *x; /* the image */
    int32_t *y;       /* the image's output */
    int32_t zr[NR];   /* the shifted input zero point, a column each */
    uint32_t pad;     /* a padding word of the full quads */
    uint8_t flip;
} convi_job;

/* d[c] for c < QW: the word of the 4 channel rows at input column c * sw + off, pad outside [lo, hi) */
X86_CLONES static void pack_row(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3,
                                int64_t sw, int64_t off, int64_t lo, int64_t hi, uint32_t pad, uint32_t flip,
                                uint32_t *d, int64_t QW) {
    for (int64_t c = 0; c < lo; ++c) d[c] = pad;
    if (sw == 1) {
        for (int64_t c = lo; c < hi; ++c)
            d[c] = ((uint32_t)r0[c + off] | (uint32_t)r1[c + off] << 8 | (uint32_t)r2[c + off] << 16 |
                    (uint32_t)r3[c + off] << 24) ^ flip;
    } else {
        for (int64_t c = lo; c < hi; ++c) {
            const int64_t i = c * sw + off;
            d[c] = ((uint32_t)r0[i] | (uint32_t)r1[i] << 8 | (uint32_t)r2[i] << 16 | (uint32_t)r3[i] << 24) ^ flip;
        }
    }
    for (int64_t c = hi; c < QW; ++c) d[c] = pad;
}

/* item = (group, channel quad): its phase planes */
static void pack_image(void *ctx, int64_t lo, int64_t hi, int worker) {
    const convi_job *j = (const convi_job *)ctx;
    const x86_convi_state *s = j->s;
    const int64_t plane = s->H * s->W;
    (void)worker;
    for (int64_t it = lo; it < hi; ++it) {
        const int64_t g = it / s->C4, c4 = it % s->C4;
        const uint8_t *rows[4];
        uint32_t pad = 0, flip = 0;
        int stride[4];
        for (int e = 0; e < 4; ++e) { /* channels past the group's: zero bytes, so they add nothing to rsum */
            const int64_t c = c4 * 4 + e;
            const int real = c < s->Cg;
            rows[e] = real ? j->x + (g * s->Cg + c) * plane : s->zero_row;
            stride[e] = real;
            pad |= real ? (j->pad & (0xffu << (8 * e))) : 0;
            flip |= real ? (uint32_t)j->flip << (8 * e) : 0;
        }
        for (int64_t a = 0; a < s->sh; ++a)
            for (int64_t b = 0; b < s->sw; ++b) {
                uint32_t *dst = (uint32_t *)s->xq + ((g * s->planes + a * s->sw + b) * s->C4 + c4) * s->pstride;
                const int64_t off = b - s->pl; /* input column of c: c * sw + off */
                int64_t clo = off >= 0 ? 0 : (-off + s->sw - 1) / s->sw;
                int64_t chi = s->W - off <= 0 ? 0 : (s->W - 1 - off) / s->sw + 1;
                chi = chi < s->QW ? chi : s->QW;
                clo = clo < chi ? clo : chi;
                for (int64_t r = 0; r < s->QH; ++r) {
                    const int64_t ih = r * s->sh + a - s->pt;
                    uint32_t *d = dst + r * s->QW;
                    if (ih < 0 || ih >= s->H) {
                        for (int64_t c = 0; c < s->QW; ++c) d[c] = pad;
                        continue;
                    }
                    pack_row(rows[0] + stride[0] * ih * s->W, rows[1] + stride[1] * ih * s->W,
                             rows[2] + stride[2] * ih * s->W, rows[3] + stride[3] * ih * s->W, s->sw, off, clo, chi,
                             pad, flip, d, s->QW);
                }
            }
    }
}

/* item = (group, tile of NR flattened outputs), all the group's output channels */
static void convi_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const convi_job *j = (const convi_job *)ctx;
    const x86_convi_state *s = j->s;
    const int64_t K4 = s->g.K4, P = s->OH * s->OW;
    int32_t buf[MR * NR], rsum[NR];
    (void)worker;
    for (int64_t it = lo; it < hi; ++it) {
        const int64_t g = it / s->tiles, n0 = it % s->tiles * NR;
        const uint8_t *r = s->xq + (g * s->planes * s->C4 * s->pstride + n0) * 4;
        const int32_t *zl = s->zl + g * s->Ogp;
        int need_rsum = 0;
        for (int64_t o = 0; o < s->Og; ++o) need_rsum |= zl[o] != 0;
        if (need_rsum) x86_qgemm_rsum(&s->g, r, rsum);
        /* the tile's runs of real outputs: (start in the tile, length, index in the output plane) */
        int64_t seg[NR + 1][3], nseg = 0;
        const int64_t end = n0 + NR < s->Nf ? n0 + NR : s->Nf;
        for (int64_t n = n0; n < end;) {
            const int64_t oh = n / s->QW, ow = n % s->QW, row_end = (oh + 1) * s->QW, e = end < row_end ? end : row_end;
            if (ow < s->OW) {
                seg[nseg][0] = n - n0;
                seg[nseg][1] = e - n < s->OW - ow ? e - n : s->OW - ow;
                seg[nseg][2] = oh * s->OW + ow;
                ++nseg;
            }
            n = e;
        }
        for (int64_t m0 = 0; m0 < s->Og; m0 += MR) {
            const int64_t mr = s->Og - m0 < MR ? s->Og - m0 : MR;
            int32_t *y = j->y + (g * s->Og + m0) * P;
            if (nseg == 1 && seg[0][0] == 0 && seg[0][1] == NR) { /* one whole run: straight to the output */
                x86_qgemm_tile(&s->g, s->wp + (g * s->Ogp + m0) * K4, s->u + g * s->Ogp + m0, zl + m0, mr, r, j->zr,
                               need_rsum ? rsum : NULL, NR, y + seg[0][2], P);
                continue;
            }
            x86_qgemm_tile(&s->g, s->wp + (g * s->Ogp + m0) * K4, s->u + g * s->Ogp + m0, zl + m0, mr, r, j->zr,
                           need_rsum ? rsum : NULL, NR, buf, NR);
            for (int64_t i = 0; i < mr; ++i)
                for (int64_t k = 0; k < nseg; ++k)
                    memcpy(y + i * P + seg[k][2], buf + i * NR + seg[k][0], (size_t)seg[k][1] * sizeof(int32_t));
        }
    }
}

int x86_convi_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_convi_state *s = (x86_convi_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t P = s->OH * s->OW, K = s->Cg * s->kh * s->kw;
    if (s->N * s->O * P == 0) return 0;
    if (s->in_zx >= 0) s->zx = zp_at(&ins[s->in_zx], 0);
    if (s->in_zw >= 0)
        for (int64_t o = 0; o < s->O; ++o) s->zw[o] = zp_at(&ins[s->in_zw], o);
    if (!s->w_ready) x86_convi_pack_weights(s, ins[1].data, ins[1].dtype == MNN_INT8);
    for (int64_t o = 0; o < s->O; ++o) {
        const int64_t row = (o / s->Og) * s->Ogp + o % s->Og;
        s->zl[row] = s->zw[o] - (s->w_signed ? 0 : 128);
        s->u[row] = (int32_t)((uint32_t)s->lsum[row] - (uint32_t)K * (uint32_t)s->zl[row]);
    }
    const int32_t zr = s->zx + (s->x_signed ? 128 : 0); /* 0..255: the padding byte */
    const int64_t image = s->C * s->H * s->W;
    convi_job j = {s, NULL, NULL, {0}, (uint32_t)zr * 0x01010101u, (uint8_t)(s->x_signed ? 0x80 : 0)};
    for (int n = 0; n < NR; ++n) j.zr[n] = zr;
    for (int64_t n = 0; n < s->N; ++n) {
        j.x = (const uint8_t *)ins[0].data + n * image;
        j.y = (int32_t *)outs[0].data + n * s->O * P;
        x86_pool->ranges(s->op.threads, s->group * s->C4, 1, pack_image, &j);
        x86_pool->ranges(s->op.threads, s->group * s->tiles, 1, convi_range, &j);
    }
    return 0;
}
