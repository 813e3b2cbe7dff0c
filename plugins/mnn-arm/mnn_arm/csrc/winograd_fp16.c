/* Winograd F(2x2, 3x3) convolution on the fp16 path (-march=armv8.2-a+fp16).
 *
 * winograd.c's scheme (see there) in half precision: the padded image, the
 * transformed input V and the 16 GEMM results M are fp16; the 16 GEMMs run on
 * the fp16h path's 8x24 tile (fp16 in and out), so the transform domain costs
 * half the bytes and twice the lanes of fp32. The transforms have coefficients
 * 0 and +-1, so each of their adds rounds once in fp16; the weights are
 * transformed in double and rounded to fp16 once. Activations are fp16 (the
 * fp16 domain, io_bytes 2) or fp32 (io_bytes 4: converted when the image is
 * padded and when the output is stored). */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "arm.h"
#include "parallel.h"

#define PTS 16                   /* points of the 4x4 transform domain */
#define LN 8                     /* tiles per fp16 vector */
#define CHUNK_BYTES (192 * 1024) /* packed V of one chunk of tiles */

extern const arm_fkernels arm_fkernels_fp16h;
#define HK (&arm_fkernels_fp16h)

static int64_t tiles_h(const arm_conv_geom *g) { return (g->OH + 1) / 2; }
static int64_t tiles_w(const arm_conv_geom *g) { return (g->OW + 1) / 2; }
/* the zero-padded copy of one image: every tile's 4x4 window (and the ld2 of 8 tiles) inside it */
static int64_t pad_h(const arm_conv_geom *g) { return 2 * tiles_h(g) + 2; }
static int64_t pad_w(const arm_conv_geom *g) { return 2 * tiles_w(g) + 2; }
static int64_t round32(int64_t n) { return (n + 31) / 32 * 32; }

/* Few tiles (a small plane): each point's GEMM turned around, M^T (tiles x O) = V^T U^T, so the tile's
 * 24 columns run over output channels (O a multiple of 8: no partial columns) instead of a handful of
 * tiles, most of them in a partial panel; V^T's 8-row panels are what the input transform writes with
 * 8 tiles a vector. The output transform then takes 8 channels a vector. */
static int turned(const arm_conv_geom *g, int64_t O) { return O % 8 == 0 && tiles_h(g) * tiles_w(g) < 3 * HK->nr; }
/* elements of one point's packed U: A panels of O x C, or (turned) B panels of C x O */
static int64_t point_elems(const arm_conv_geom *g, int64_t O) {
    return arm_packed_a_elems(turned(g, O) ? HK->nr : HK->mr, O, g->C);
}

int64_t arm_wino_h_weight_bytes(const arm_conv_geom *g, int64_t O) { return PTS * point_elems(g, O) * 2; }

/* U[p] = G g G^T in double, rounded to fp16 once, each point packed for the fp16h tile (A, or B if turned) */
void arm_wino_h_pack_weights(const arm_conv_geom *geo, const float *w, int64_t O, void *packed, void *tmpv) {
    const int64_t C = geo->C;
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    __fp16 *tmp = (__fp16 *)tmpv;
    const int64_t stride = point_elems(geo, O);
    for (int64_t o = 0; o < O; ++o)
        for (int64_t c = 0; c < C; ++c) {
            const float *g = w + (o * C + c) * 9;
            double t[4][3]; /* G g */
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 3; ++j) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j)
                    tmp[((int64_t)(i * 4 + j) * O + o) * C + c] =
                        (__fp16)(float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
        }
    for (int p = 0; p < PTS; ++p)
        if (turned(geo, O))
            HK->pack_b(tmp + (int64_t)p * O * C, 1, C, C, O, (__fp16 *)packed + p * stride);
        else
            HK->pack_a(tmp + (int64_t)p * O * C, C, 1, O, C, (__fp16 *)packed + p * stride);
}

/* tiles per chunk: a multiple of the tile width NR whose 16 packed V panels stay near L2 */
int64_t arm_wino_h_chunk_tiles(const arm_conv_geom *g) {
    const int64_t nr = HK->nr, T = tiles_h(g) * tiles_w(g);
    int64_t n = CHUNK_BYTES / (PTS * 2 * (g->C > 0 ? g->C : 1)) / nr * nr;
    if (n < nr) n = nr;
    const int64_t t_round = (T + nr - 1) / nr * nr;
    return n < t_round ? n : t_round;
}

/* the padded image once, then V (16 x C x chunk) and M (16 x O x chunk) for each of `slices` threads */
int64_t arm_wino_h_work_bytes_mt(const arm_conv_geom *g, int64_t O, int64_t chunk, int slices) {
    return 2 * (round32(g->C * pad_h(g) * pad_w(g)) + slices * (round32(PTS * g->C * chunk) + round32(PTS * O * chunk))) +
           64;
}

static void pad_image(const void *x, int io_bytes, const arm_conv_geom *g, __fp16 *xp) {
    const int64_t PH = pad_h(g), PW = pad_w(g);
    const int64_t lead = g->pl < PW ? g->pl : PW, end = g->W + g->pl < PW ? g->W + g->pl : PW;
    for (int64_t c = 0; c < g->C; ++c)
        for (int64_t r = 0; r < PH; ++r) {
            __fp16 *d = xp + (c * PH + r) * PW;
            const int64_t ih = r - g->pt;
            if (ih < 0 || ih >= g->H || end <= lead) {
                memset(d, 0, (size_t)PW * 2);
                continue;
            }
            memset(d, 0, (size_t)lead * 2);
            const int64_t at = (c * g->H + ih) * g->W; /* the row's first element */
            if (io_bytes == 2)
                memcpy(d + lead, (const __fp16 *)x + at, (size_t)(end - lead) * 2);
            else
                arm_f32_to_f16((const float *)x + at, d + lead, end - lead);
            memset(d + end, 0, (size_t)(PW - end) * 2);
        }
}

/* B^T d B on eight tiles at once: d[i][j] holds window element (i, j) of each tile in its lanes */
static inline void input_transform(float16x8_t d[4][4], float16x8_t v[16]) {
    float16x8_t t[4][4];
    for (int j = 0; j < 4; ++j) {
        t[0][j] = vsubq_f16(d[0][j], d[2][j]);
        t[1][j] = vaddq_f16(d[1][j], d[2][j]);
        t[2][j] = vsubq_f16(d[2][j], d[1][j]);
        t[3][j] = vsubq_f16(d[1][j], d[3][j]);
    }
    for (int i = 0; i < 4; ++i) {
        v[i * 4 + 0] = vsubq_f16(t[i][0], t[i][2]);
        v[i * 4 + 1] = vaddq_f16(t[i][1], t[i][2]);
        v[i * 4 + 2] = vsubq_f16(t[i][2], t[i][1]);
        v[i * 4 + 3] = vsubq_f16(t[i][1], t[i][3]);
    }
}

/* r.val[j] lane l = (b + at[l])[j] for the 8 lanes (ld4 to one lane takes a constant lane number) */
#define LD4_LANES(r, b, at)                      \
    do {                                         \
        r = vld4q_lane_f16((b) + (at)[0], r, 0); \
        r = vld4q_lane_f16((b) + (at)[1], r, 1); \
        r = vld4q_lane_f16((b) + (at)[2], r, 2); \
        r = vld4q_lane_f16((b) + (at)[3], r, 3); \
        r = vld4q_lane_f16((b) + (at)[4], r, 4); \
        r = vld4q_lane_f16((b) + (at)[5], r, 5); \
        r = vld4q_lane_f16((b) + (at)[6], r, 6); \
        r = vld4q_lane_f16((b) + (at)[7], r, 7); \
    } while (0)

/* V of tiles [t0, t0 + nt) for every channel, into packed panels: V[p] at vbuf + p * C * ntp */
static void transform_input(const __fp16 *xp, const arm_conv_geom *g, int64_t nr, int64_t t0, int64_t nt, int64_t ntp,
                            __fp16 *vbuf) {
    const int64_t TW = tiles_w(g), PW = pad_w(g), plane = pad_h(g) * PW, C = g->C;
    for (int64_t n = 0; n < ntp; n += LN) { /* 8 columns of one panel (nr is a multiple of 8) */
        const int64_t t = t0 + n, th = t / TW, tw = t % TW;
        const int64_t off = (n / nr) * nr * C + n % nr; /* column n's place in its panel, channel 0 */
        /* 8 tiles in one tile row: their windows are columns 2tw.. of rows 2th..2th+3, read by ld2 */
        const int same_row = n + LN <= nt && tw + LN <= TW;
        if (n >= nt) { /* past the last tile: zero columns */
            for (int64_t c = 0; c < C; ++c)
                for (int p = 0; p < PTS; ++p) vst1q_f16(vbuf + off + c * nr + p * C * ntp, vdupq_n_f16(0));
            continue;
        }
        int64_t at[LN]; /* each lane's window in a channel's plane; lanes past the last tile repeat lane 0 */
        for (int l = 0; l < LN; ++l) {
            const int64_t tl = n + l < nt ? t + l : t;
            at[l] = 2 * (tl / TW) * PW + 2 * (tl % TW);
        }
        for (int64_t c = 0; c < C; ++c) {
            const __fp16 *base = xp + c * plane + 2 * th * PW + 2 * tw;
            float16x8_t d[4][4], v[16];
            if (same_row) {
                for (int i = 0; i < 4; ++i) {
                    const float16x8x2_t e = vld2q_f16(base + i * PW), o = vld2q_f16(base + i * PW + 2);
                    d[i][0] = e.val[0], d[i][1] = e.val[1], d[i][2] = o.val[0], d[i][3] = o.val[1];
                }
            } else { /* tiles across row ends: each lane's 4x4 window by ld4 into that lane, row by row */
                const __fp16 *b = xp + c * plane;
                for (int i = 0; i < 4; ++i) {
                    float16x8x4_t r = {{vdupq_n_f16(0), vdupq_n_f16(0), vdupq_n_f16(0), vdupq_n_f16(0)}};
                    LD4_LANES(r, b + i * PW, at);
                    d[i][0] = r.val[0], d[i][1] = r.val[1], d[i][2] = r.val[2], d[i][3] = r.val[3];
                }
            }
            input_transform(d, v);
            __fp16 *dst = vbuf + off + c * nr;
            for (int p = 0; p < PTS; ++p) vst1q_f16(dst + p * C * ntp, v[p]);
        }
    }
}

/* two rows of eight 2x2 blocks: r[0], r[1] the top row's even and odd columns, r[2], r[3] the bottom's */
static inline void store_blocks(void *y, int io_bytes, int64_t at, int64_t OW, const float16x8_t r[4]) {
    for (int i = 0; i < 2; ++i) {
        const float16x8_t ev = r[2 * i], od = r[2 * i + 1];
        if (io_bytes == 2) {
            vst2q_f16((__fp16 *)y + at + i * OW, (float16x8x2_t){{ev, od}});
        } else {
            float *row = (float *)y + at + i * OW;
            vst2q_f32(row, (float32x4x2_t){{vcvt_f32_f16(vget_low_f16(ev)), vcvt_f32_f16(vget_low_f16(od))}});
            vst2q_f32(row + 8, (float32x4x2_t){{vcvt_high_f32_f16(ev), vcvt_high_f32_f16(od)}});
        }
    }
}

/* lane l of one 2x2 block: r[0], r[1] to y[0..1], r[2], r[3] to y[OW..OW+1] (st2 to one lane takes a constant) */
static inline void st2_lane(__fp16 *y, int64_t OW, const float16x8_t r[4], int l) {
    const float16x8x2_t top = {{r[0], r[1]}}, bot = {{r[2], r[3]}};
    switch (l) {
#define ST2_CASE(L)                             \
    case L:                                     \
        vst2q_lane_f16(y, top, L);              \
        vst2q_lane_f16(y + OW, bot, L);         \
        break;
        ST2_CASE(0) ST2_CASE(1) ST2_CASE(2) ST2_CASE(3) ST2_CASE(4) ST2_CASE(5) ST2_CASE(6) ST2_CASE(7)
#undef ST2_CASE
    }
}

/* Y = A^T M A for tiles [t0, t0 + nt) of every output channel; bias, relu/clip; M[p] at mbuf + p * O * ntp */
static void transform_output(const __fp16 *mbuf, const arm_conv_geom *g, int64_t O, int64_t t0, int64_t nt,
                             int64_t ntp, void *y, int io_bytes, const arm_epilogue *e, int clamp, float lo, float hi) {
    const int64_t TW = tiles_w(g), OH = g->OH, OW = g->OW;
    const float16x8_t vlo = vdupq_n_f16((__fp16)lo), vhi = vdupq_n_f16((__fp16)hi), va = vdupq_n_f16((__fp16)e->alpha);
    for (int64_t o = 0; o < O; ++o) {
        const float16x8_t vb = vdupq_n_f16((__fp16)(e->bias ? e->beta * e->bias[o * e->bias_rs] : 0.0f));
        const int64_t yo = o * OH * OW;
        const __fp16 *mo = mbuf + o * ntp;
        for (int64_t n = 0; n < nt; n += LN) {
            float16x8_t m[16], s[2][4], r[4];
            for (int p = 0; p < PTS; ++p) m[p] = vld1q_f16(mo + p * O * ntp + n);
            for (int j = 0; j < 4; ++j) {
                s[0][j] = vaddq_f16(vaddq_f16(m[j], m[4 + j]), m[8 + j]);
                s[1][j] = vsubq_f16(vsubq_f16(m[4 + j], m[8 + j]), m[12 + j]);
            }
            for (int i = 0; i < 2; ++i) {
                r[i * 2 + 0] = vaddq_f16(vaddq_f16(s[i][0], s[i][1]), s[i][2]);
                r[i * 2 + 1] = vsubq_f16(vsubq_f16(s[i][1], s[i][2]), s[i][3]);
            }
            for (int q = 0; q < 4; ++q) {
                r[q] = vfmaq_f16(vb, r[q], va);
                if (clamp) r[q] = vminq_f16(vmaxq_f16(r[q], vlo), vhi);
            }
            const int64_t t = t0 + n, th = t / TW, tw = t % TW, oh = 2 * th, ow = 2 * tw;
            if (n + LN <= nt && tw + LN <= TW && ow + 2 * LN <= OW && oh + 2 <= OH) { /* eight whole blocks in a row */
                store_blocks(y, io_bytes, yo + oh * OW + ow, OW, r);
                continue;
            }
            __fp16 v[4][LN];
            for (int q = 0; q < 4; ++q) vst1q_f16(v[q], r[q]);
            for (int l = 0; l < LN && n + l < nt; ++l) {
                const int64_t tl = t + l, h = 2 * (tl / TW), w = 2 * (tl % TW);
                if (io_bytes == 2 && h + 2 <= OH && w + 2 <= OW) { /* a whole 2x2 block: two st2 of one lane */
                    st2_lane((__fp16 *)y + yo + h * OW + w, OW, r, l);
                    continue;
                }
                for (int i = 0; i < 2 && h + i < OH; ++i)
                    for (int j = 0; j < 2 && w + j < OW; ++j) {
                        const int64_t at = yo + (h + i) * OW + w + j;
                        if (io_bytes == 2)
                            ((__fp16 *)y)[at] = v[i * 2 + j][l];
                        else
                            ((float *)y)[at] = (float)v[i * 2 + j][l];
                    }
            }
        }
    }
}

/* st1 of lane L of v to p (one lane per constant) */
#define ST1_LANES(v, p, stride)                       \
    do {                                              \
        vst1q_lane_f16((p) + 0 * (stride), v, 0);     \
        vst1q_lane_f16((p) + 1 * (stride), v, 1);     \
        vst1q_lane_f16((p) + 2 * (stride), v, 2);     \
        vst1q_lane_f16((p) + 3 * (stride), v, 3);     \
        vst1q_lane_f16((p) + 4 * (stride), v, 4);     \
        vst1q_lane_f16((p) + 5 * (stride), v, 5);     \
        vst1q_lane_f16((p) + 6 * (stride), v, 6);     \
        vst1q_lane_f16((p) + 7 * (stride), v, 7);     \
    } while (0)

/* turned: Y = A^T M A for tiles [t0, t0 + nt), 8 output channels a vector; M[p] at mbuf + p * ntp * O, [tile][O] */
static void transform_output_turned(const __fp16 *mbuf, const arm_conv_geom *g, int64_t O, int64_t t0, int64_t nt,
                                    int64_t ntp, void *y, int io_bytes, const arm_epilogue *e, int clamp, float lo,
                                    float hi) {
    const int64_t TW = tiles_w(g), OH = g->OH, OW = g->OW, plane = OH * OW;
    const float16x8_t vlo = vdupq_n_f16((__fp16)lo), vhi = vdupq_n_f16((__fp16)hi), va = vdupq_n_f16((__fp16)e->alpha);
    for (int64_t o = 0; o < O; o += 8) {
        __fp16 bias[8];
        for (int l = 0; l < 8; ++l) bias[l] = (__fp16)(e->bias ? e->beta * e->bias[(o + l) * e->bias_rs] : 0.0f);
        const float16x8_t vb = vld1q_f16(bias);
        for (int64_t n = 0; n < nt; ++n) {
            float16x8_t m[16], s[2][4], r[4];
            for (int p = 0; p < PTS; ++p) m[p] = vld1q_f16(mbuf + (p * ntp + n) * O + o);
            for (int j = 0; j < 4; ++j) {
                s[0][j] = vaddq_f16(vaddq_f16(m[j], m[4 + j]), m[8 + j]);
                s[1][j] = vsubq_f16(vsubq_f16(m[4 + j], m[8 + j]), m[12 + j]);
            }
            for (int i = 0; i < 2; ++i) {
                r[i * 2 + 0] = vaddq_f16(vaddq_f16(s[i][0], s[i][1]), s[i][2]);
                r[i * 2 + 1] = vsubq_f16(vsubq_f16(s[i][1], s[i][2]), s[i][3]);
            }
            const int64_t t = t0 + n, h = 2 * (t / TW), w = 2 * (t % TW);
            for (int q = 0; q < 4; ++q) {
                r[q] = vfmaq_f16(vb, r[q], va);
                if (clamp) r[q] = vminq_f16(vmaxq_f16(r[q], vlo), vhi);
                const int i = q / 2, jj = q % 2;
                if (h + i >= OH || w + jj >= OW) continue;
                const int64_t at = (o * OH + h + i) * OW + w + jj;
                if (io_bytes == 2) {
                    ST1_LANES(r[q], (__fp16 *)y + at, plane);
                } else {
                    __fp16 v[8];
                    vst1q_f16(v, r[q]);
                    for (int l = 0; l < 8; ++l) ((float *)y)[at + l * plane] = (float)v[l];
                }
            }
        }
    }
}

typedef struct wino_job {
    const arm_conv_geom *g;
    int64_t O, chunk;
    const __fp16 *wpacked, *xp;
    void *y;
    __fp16 *bufs; /* per thread: V then M */
    const arm_epilogue *e;
    int io_bytes, clamp;
    float lo, hi;
} wino_job;

/* chunks [c0, c1) of tiles: transform in, 16 GEMMs, transform out (with bias and relu/clip) */
static void wino_chunks(void *ctx, int64_t c0, int64_t c1, int tid) {
    const wino_job *j = (const wino_job *)ctx;
    const arm_conv_geom *g = j->g;
    const int64_t C = g->C, O = j->O, T = tiles_h(g) * tiles_w(g), wstride = point_elems(g, O);
    const int turn = turned(g, O), nr = turn ? HK->mr : HK->nr; /* V's panel width: A's rows, or B's columns */
    __fp16 *vbuf = j->bufs + tid * (round32(PTS * C * j->chunk) + round32(PTS * O * j->chunk));
    __fp16 *mbuf = vbuf + round32(PTS * C * j->chunk);
    const arm_epilogue plain = {1.0f, 1.0f, NULL, 0, 0, MNN_ACT_NONE, 0.0f, 0.0f};
    for (int64_t ci = c0; ci < c1; ++ci) {
        const int64_t t0 = ci * j->chunk, nt = T - t0 < j->chunk ? T - t0 : j->chunk, ntp = (nt + nr - 1) / nr * nr;
        transform_input(j->xp, g, nr, t0, nt, ntp, vbuf);
        if (turn) {
            for (int p = 0; p < PTS; ++p)
                HK->gemm(nt, O, C, vbuf + p * C * ntp, j->wpacked + p * wstride, mbuf + p * ntp * O, O, &plain);
            transform_output_turned(mbuf, g, O, t0, nt, ntp, j->y, j->io_bytes, j->e, j->clamp, j->lo, j->hi);
            continue;
        }
        for (int p = 0; p < PTS; ++p)
            HK->gemm(O, nt, C, j->wpacked + p * wstride, vbuf + p * C * ntp, mbuf + p * O * ntp, ntp, &plain);
        transform_output(mbuf, g, O, t0, nt, ntp, j->y, j->io_bytes, j->e, j->clamp, j->lo, j->hi);
    }
}

void arm_wino_h_conv_mt(const arm_conv_geom *g, int64_t O, const void *wpacked, const void *x, void *y, int io_bytes,
                        const arm_epilogue *e, int64_t chunk, void *work, int threads) {
    const int64_t T = tiles_h(g) * tiles_w(g);
    __fp16 *xp = (__fp16 *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    wino_job j = {g, O, chunk, (const __fp16 *)wpacked, xp, y, xp + round32(g->C * pad_h(g) * pad_w(g)),
                  e, io_bytes, 0, 0.0f, INFINITY};
    j.clamp = e->act == MNN_ACT_RELU || e->act == MNN_ACT_CLIP;
    if (e->act == MNN_ACT_CLIP) j.lo = e->act_alpha, j.hi = e->act_beta;
    pad_image(x, io_bytes, g, xp);
    arm_parallel(threads, (T + chunk - 1) / chunk, 1, wino_chunks, &j);
    if (j.clamp || e->act == MNN_ACT_NONE) return;
    if (io_bytes == 2)
        arm_activation_h(e, y, y, O * g->OH * g->OW);
    else
        arm_activation(e, (float *)y, (float *)y, O * g->OH * g->OW);
}
