/* Winograd F(2x2, 3x3) convolution on the fp32 path (NEON, -march=armv8-a).
 *
 * For a 3x3, stride-1, dilation-1, non-grouped convolution each 2x2 block of
 * outputs (a tile) is Y = A^T [ (G g G^T) .* (B^T d B) ] A, d the tile's 4x4
 * input window. Summed over input channels, the 16 products of the 4x4
 * transform domain are 16 independent GEMMs: M[p] = U[p] (O x C) @ V[p] (C x T).
 *   weights  U = G g G^T, transformed and packed (pack_a) once at prepare;
 *   input    V = B^T d B, written by the transform straight into packed B
 *            panels (the layout of arm.h: V[p][q][c][NR]), 4 tiles per vector;
 *   GEMM     the path's packed 8x12 tile, 16 times per chunk of tiles;
 *   output   Y = A^T M A, with bias and relu/clip fused, stored as 2x2 blocks.
 * F(2x2) rather than F(4x4): its transforms have coefficients 0, +-1 (and
 * +-1/2 in G, exact in binary), so the result carries the rounding of a
 * direct convolution and holds the fp32 path's 1e-4 bound; F(4x4) saves more
 * multiplications (4x against 2.25x) but its +-2, +-4, +-8 and 1/24
 * coefficients grow the error by about two orders of magnitude. The design
 * (transform domain as batched packed GEMMs) is mnn-x86's; this code is not. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"
#include "parallel.h"

#define PTS 16                   /* points of the 4x4 transform domain */
#define CHUNK_BYTES (192 * 1024) /* packed V of one chunk of tiles */

int arm_wino_applies(const arm_conv_geom *g) {
    return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->OH > 0 && g->OW > 0;
}

static int64_t tiles_h(const arm_conv_geom *g) { return (g->OH + 1) / 2; }
static int64_t tiles_w(const arm_conv_geom *g) { return (g->OW + 1) / 2; }
/* the zero-padded copy of one image: every tile's 4x4 window (and the ld2 of 4 tiles) inside it */
static int64_t pad_h(const arm_conv_geom *g) { return 2 * tiles_h(g) + 2; }
static int64_t pad_w(const arm_conv_geom *g) { return 2 * tiles_w(g) + 2; }

int64_t arm_wino_weight_elems(const arm_fkernels *k, int64_t O, int64_t C) {
    return PTS * arm_packed_a_elems(k->mr, O, C);
}

/* U[p] = G g G^T for every (o, c), in double then rounded, each point packed as an O x C A operand */
void arm_wino_pack_weights(const arm_fkernels *k, const float *w, int64_t O, int64_t C, float *packed, float *tmp) {
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    const int64_t stride = arm_packed_a_elems(k->mr, O, C);
    for (int64_t o = 0; o < O; ++o)
        for (int64_t c = 0; c < C; ++c) {
            const float *g = w + (o * C + c) * 9;
            double t[4][3]; /* G g */
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 3; ++j) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j)
                    tmp[((int64_t)(i * 4 + j) * O + o) * C + c] =
                        (float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
        }
    for (int p = 0; p < PTS; ++p) k->pack_a(tmp + (int64_t)p * O * C, C, 1, O, C, packed + p * stride);
}

/* tiles per chunk: a multiple of the tile width NR whose 16 packed V panels stay near L2 */
int64_t arm_wino_chunk_tiles(const arm_fkernels *k, const arm_conv_geom *g) {
    const int64_t nr = k->nr, T = tiles_h(g) * tiles_w(g);
    int64_t n = CHUNK_BYTES / (PTS * 4 * (g->C > 0 ? g->C : 1)) / nr * nr;
    if (n < nr) n = nr;
    const int64_t t_round = (T + nr - 1) / nr * nr;
    return n < t_round ? n : t_round;
}

/* work: the padded image, V (16 x C x chunk) and M (16 x O x chunk), each 64-byte aligned */
static int64_t round16(int64_t n) { return (n + 15) / 16 * 16; }
int64_t arm_wino_work_bytes(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, int64_t chunk) {
    return arm_wino_work_bytes_mt(k, g, O, chunk, 1);
}

/* the padded image once, then V and M for each of `slices` threads */
int64_t arm_wino_work_bytes_mt(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, int64_t chunk, int slices) {
    (void)k;
    return 4 * (round16(g->C * pad_h(g) * pad_w(g)) + slices * (round16(PTS * g->C * chunk) + round16(PTS * O * chunk))) +
           64;
}

static void pad_image(const float *x, const arm_conv_geom *g, float *xp) {
    const int64_t PH = pad_h(g), PW = pad_w(g);
    for (int64_t c = 0; c < g->C; ++c) {
        const float *src = x + c * g->H * g->W;
        float *dst = xp + c * PH * PW;
        for (int64_t r = 0; r < PH; ++r) {
            float *d = dst + r * PW;
            const int64_t ih = r - g->pt;
            int64_t col = 0;
            if (ih >= 0 && ih < g->H) {
                const float *row = src + ih * g->W;
                for (; col < PW && col - g->pl < 0; ++col) d[col] = 0.0f;
                int64_t end = g->W + g->pl < PW ? g->W + g->pl : PW; /* columns taken from the row */
                for (; col + 4 <= end; col += 4) vst1q_f32(d + col, vld1q_f32(row + col - g->pl));
                for (; col < end; ++col) d[col] = row[col - g->pl];
            }
            for (; col + 4 <= PW; col += 4) vst1q_f32(d + col, vdupq_n_f32(0.0f));
            for (; col < PW; ++col) d[col] = 0.0f;
        }
    }
}

/* B^T d B on four tiles at once: d[i][j] holds window element (i, j) of each tile in its lanes */
static inline void input_transform(float32x4_t d[4][4], float32x4_t v[16]) {
    float32x4_t t[4][4];
    for (int j = 0; j < 4; ++j) {
        t[0][j] = vsubq_f32(d[0][j], d[2][j]);
        t[1][j] = vaddq_f32(d[1][j], d[2][j]);
        t[2][j] = vsubq_f32(d[2][j], d[1][j]);
        t[3][j] = vsubq_f32(d[1][j], d[3][j]);
    }
    for (int i = 0; i < 4; ++i) {
        v[i * 4 + 0] = vsubq_f32(t[i][0], t[i][2]);
        v[i * 4 + 1] = vaddq_f32(t[i][1], t[i][2]);
        v[i * 4 + 2] = vsubq_f32(t[i][2], t[i][1]);
        v[i * 4 + 3] = vsubq_f32(t[i][1], t[i][3]);
    }
}

/* V of tiles [t0, t0 + nt) for every channel, into packed panels: V[p] at vbuf + p * C * ntp */
static void transform_input(const float *xp, const arm_conv_geom *g, int64_t nr, int64_t t0, int64_t nt, int64_t ntp,
                            float *vbuf) {
    const int64_t TW = tiles_w(g), PW = pad_w(g), plane = pad_h(g) * PW, C = g->C;
    for (int64_t n = 0; n < ntp; n += 4) { /* 4 columns of one panel (nr is a multiple of 4) */
        const int64_t t = t0 + n, th = t / TW, tw = t % TW;
        const int64_t off = (n / nr) * nr * C + n % nr; /* column n's place in its panel, channel 0 */
        /* the 4 tiles in one tile row: their windows are columns 2tw.. of rows 2th..2th+3, read by ld2 */
        const int same_row = n + 4 <= nt && tw + 4 <= TW;
        for (int64_t c = 0; c < C; ++c) {
            const float *base = xp + c * plane + 2 * th * PW + 2 * tw;
            float32x4_t d[4][4], v[16];
            if (same_row) {
                for (int i = 0; i < 4; ++i) {
                    const float32x4x2_t e = vld2q_f32(base + i * PW), o = vld2q_f32(base + i * PW + 2);
                    d[i][0] = e.val[0], d[i][1] = e.val[1], d[i][2] = o.val[0], d[i][3] = o.val[1];
                }
            } else { /* tiles across a row end, or past the last tile (zeros) */
                float lanes[4][4][4];
                for (int l = 0; l < 4; ++l) {
                    const int64_t tl = t + l, hl = tl / TW, wl = tl % TW;
                    const float *b = xp + c * plane + 2 * hl * PW + 2 * wl;
                    for (int i = 0; i < 4; ++i)
                        for (int j = 0; j < 4; ++j) lanes[i][j][l] = n + l < nt ? b[i * PW + j] : 0.0f;
                }
                for (int i = 0; i < 4; ++i)
                    for (int j = 0; j < 4; ++j) d[i][j] = vld1q_f32(lanes[i][j]);
            }
            input_transform(d, v);
            float *dst = vbuf + off + c * nr;
            for (int p = 0; p < PTS; ++p) vst1q_f32(dst + p * C * ntp, v[p]);
        }
    }
}

/* Y = A^T M A for tiles [t0, t0 + nt) of every output channel; bias, relu/clip; M[p] at mbuf + p * O * ntp */
static void transform_output(const float *mbuf, const arm_conv_geom *g, int64_t O, int64_t t0, int64_t nt,
                             int64_t ntp, float *y, const arm_epilogue *e, int clamp, float lo, float hi) {
    const int64_t TW = tiles_w(g), OH = g->OH, OW = g->OW;
    const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi), va = vdupq_n_f32(e->alpha);
    for (int64_t o = 0; o < O; ++o) {
        const float32x4_t vb = vdupq_n_f32(e->bias ? e->beta * e->bias[o * e->bias_rs] : 0.0f);
        float *yo = y + o * OH * OW;
        const float *mo = mbuf + o * ntp;
        for (int64_t n = 0; n < nt; n += 4) {
            float32x4_t m[16], s[2][4], r[4];
            for (int p = 0; p < PTS; ++p) m[p] = vld1q_f32(mo + p * O * ntp + n);
            for (int j = 0; j < 4; ++j) {
                s[0][j] = vaddq_f32(vaddq_f32(m[j], m[4 + j]), m[8 + j]);
                s[1][j] = vsubq_f32(vsubq_f32(m[4 + j], m[8 + j]), m[12 + j]);
            }
            for (int i = 0; i < 2; ++i) {
                r[i * 2 + 0] = vaddq_f32(vaddq_f32(s[i][0], s[i][1]), s[i][2]);
                r[i * 2 + 1] = vsubq_f32(vsubq_f32(s[i][1], s[i][2]), s[i][3]);
            }
            for (int q = 0; q < 4; ++q) {
                r[q] = vfmaq_f32(vb, r[q], va);
                if (clamp) r[q] = vminq_f32(vmaxq_f32(r[q], vlo), vhi);
            }
            const int64_t t = t0 + n, th = t / TW, tw = t % TW, oh = 2 * th, ow = 2 * tw;
            if (n + 4 <= nt && tw + 4 <= TW && ow + 8 <= OW && oh + 2 <= OH) { /* four whole 2x2 blocks in a row */
                vst2q_f32(yo + oh * OW + ow, (float32x4x2_t){{r[0], r[1]}});
                vst2q_f32(yo + (oh + 1) * OW + ow, (float32x4x2_t){{r[2], r[3]}});
                continue;
            }
            float v[4][4];
            for (int q = 0; q < 4; ++q) vst1q_f32(v[q], r[q]);
            for (int l = 0; l < 4 && n + l < nt; ++l) {
                const int64_t tl = t + l, h = 2 * (tl / TW), w = 2 * (tl % TW);
                for (int i = 0; i < 2 && h + i < OH; ++i)
                    for (int j = 0; j < 2 && w + j < OW; ++j) yo[(h + i) * OW + w + j] = v[i * 2 + j][l];
            }
        }
    }
}

typedef struct wino_job {
    const arm_fkernels *k;
    const arm_conv_geom *g;
    int64_t O, chunk;
    const float *wpacked, *xp;
    float *y, *bufs; /* per thread: V then M */
    const arm_epilogue *e;
    int clamp;
    float lo, hi;
} wino_job;

/* chunks [c0, c1) of tiles: transform in, 16 GEMMs, transform out (with bias and relu/clip) */
static void wino_chunks(void *ctx, int64_t c0, int64_t c1, int tid) {
    const wino_job *j = (const wino_job *)ctx;
    const arm_conv_geom *g = j->g;
    const int64_t C = g->C, O = j->O, nr = j->k->nr, T = tiles_h(g) * tiles_w(g);
    const int64_t wstride = arm_packed_a_elems(j->k->mr, O, C);
    float *vbuf = j->bufs + tid * (round16(PTS * C * j->chunk) + round16(PTS * O * j->chunk));
    float *mbuf = vbuf + round16(PTS * C * j->chunk);
    const arm_epilogue plain = {1.0f, 1.0f, NULL, 0, 0, MNN_ACT_NONE, 0.0f, 0.0f};
    for (int64_t ci = c0; ci < c1; ++ci) {
        const int64_t t0 = ci * j->chunk, nt = T - t0 < j->chunk ? T - t0 : j->chunk, ntp = (nt + nr - 1) / nr * nr;
        transform_input(j->xp, g, nr, t0, nt, ntp, vbuf);
        for (int p = 0; p < PTS; ++p)
            j->k->gemm(O, nt, C, j->wpacked + p * wstride, vbuf + p * C * ntp, mbuf + p * O * ntp, ntp, &plain);
        transform_output(mbuf, g, O, t0, nt, ntp, j->y, j->e, j->clamp, j->lo, j->hi);
    }
}

void arm_wino_conv_mt(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, const float *wpacked, const float *x,
                      float *y, const arm_epilogue *e, int64_t chunk, void *work, int threads) {
    const int64_t T = tiles_h(g) * tiles_w(g);
    float *xp = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    wino_job j = {k, g, O, chunk, wpacked, xp, y, xp + round16(g->C * pad_h(g) * pad_w(g)), e, 0, 0.0f, INFINITY};
    j.clamp = e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP;
    if (e->act == MNN_ACT_CLIP) j.lo = e->act_alpha, j.hi = e->act_beta;
    pad_image(x, g, xp);
    arm_parallel(threads, (T + chunk - 1) / chunk, 1, wino_chunks, &j);
    if (!j.clamp && e->act != MNN_ACT_NONE) arm_activation(e, y, y, O * g->OH * g->OW);
}

void arm_wino_conv(const arm_fkernels *k, const arm_conv_geom *g, int64_t O, const float *wpacked, const float *x,
                   float *y, const arm_epilogue *e, int64_t chunk, void *work) {
    arm_wino_conv_mt(k, g, O, wpacked, x, y, e, chunk, work, 1);
}
