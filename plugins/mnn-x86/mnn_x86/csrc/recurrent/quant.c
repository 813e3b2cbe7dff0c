/* The dynamically quantized LSTM's products (recurrent.h, mnn_core/ops/rnn_quant.py): a block of floats
 * quantized to uint8 over its range widened to hold 0, as ONNX Runtime does, the exact integer products with
 * the int8 weights on the u8 x s8 tiles (integer/qgemm.h; integer/qgemv.h for a step's single row of h),
 * then one float32 scale per output column. */
#include <math.h>

#include "integer/qgemv.h"
#include "recurrent.h"

enum { NR = X86_QG_NR, MR = X86_QG_MR };

/* the range of m rows of n floats (ld apart), widened to hold 0 */
X86_CLONES static void block_range(const float *x, int64_t m, int64_t n, int64_t ld, float *lo, float *hi) {
    float a = 0.0f, b = 0.0f;
    for (int64_t r = 0; r < m; ++r)
        for (int64_t i = 0; i < n; ++i) {
            const float v = x[r * ld + i];
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
    *lo = a;
    *hi = b;
}

/* q = clip(round(x / scale) + z) as uint8; returns their sum */
X86_CLONES static int32_t quantize_row(const float *x, int64_t n, float scale, float z, uint8_t *q) {
    int32_t sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        float v = rintf(x[i] / scale) + z;
        v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
        q[i] = (uint8_t)v;
        sum += q[i];
    }
    return sum;
}

/* m rows quantized into rows of K4 words at q (their padding stays zero), u[r] = row sum - n * z; returns the
 * scale and the zero point in *zp */
static float quantize_block(const float *x, int64_t m, int64_t n, int64_t ld, int32_t *q, int64_t K4, int32_t *u,
                            int32_t *zp) {
    float lo, hi;
    block_range(x, m, n, ld, &lo, &hi);
    const float scale = lo == hi ? 1.0f : (hi - lo) / 255.0f;
    float z = rintf(-lo / scale);
    z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z);
    *zp = (int32_t)z;
    for (int64_t r = 0; r < m; ++r)
        u[r] = quantize_row(x + r * ld, n, scale, z, (uint8_t *)(q + r * K4)) - (int32_t)n * *zp;
    return scale;
}

/* y[i * y_ld + n] = float(c[i * NR + n]) * (sa * scale[n]) for i < mr, n < nr */
static void scale_out(const int32_t *c, int64_t mr, int64_t nr, float sa, const float *scale, float *y, int64_t y_ld) {
    for (int64_t i = 0; i < mr; ++i)
        for (int64_t n = 0; n < nr; ++n) y[i * y_ld + n] = (float)c[i * NR + n] * (sa * scale[n]);
}

/* y[:, n0:n0+nr] = the m quantized rows at l (K4 words each) times panel p of direction d's weights: the
 * one-row tile for a single row, the register tiles of MR rows otherwise */
static void panel_product(const x86_qgemm *g, const int32_t *l, const int32_t *u, int32_t z, int64_t m,
                          const uint8_t *wp, const int32_t *zr, const int32_t *wsum, int64_t nr, float sa,
                          const float *scale, float *y, int64_t y_ld) {
    int32_t c[MR * NR], zl[MR];
    for (int i = 0; i < MR; ++i) zl[i] = z;
    if (m == 1) {
        x86_qgemv_tile(g, l, u[0], z, wp, zr, wsum, nr, c);
        scale_out(c, 1, nr, sa, scale, y, y_ld);
        return;
    }
    for (int64_t m0 = 0; m0 < m; m0 += MR) {
        const int64_t mr = m - m0 < MR ? m - m0 : MR;
        x86_qgemm_tile(g, l + m0 * g->K4, u + m0, zl, mr, wp, zr, wsum, nr, c, NR);
        scale_out(c, mr, nr, sa, scale, y + m0 * y_ld, y_ld);
    }
}

typedef struct {
    const x86_rnn_state *s;
    float sx;
    int32_t zx;
} qproj_job;

/* item = one panel of one direction's columns, all rows */
static void qproj_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const qproj_job *j = (const qproj_job *)ctx;
    const x86_rnn_state *s = j->s;
    const int64_t GH = s->gates * s->hidden, panels = (GH + NR - 1) / NR, K4 = s->gw.K4;
    (void)worker;
    for (int64_t it = lo; it < hi; ++it) {
        const int64_t d = it / panels, n0 = it % panels * NR, nr = GH - n0 < NR ? GH - n0 : NR;
        const int64_t col = d * panels * NR + n0;
        panel_product(&s->gw, s->xq, s->xu, j->zx, s->seq * s->batch, s->wp + (d * panels * K4 + n0 / NR * K4) * NR * 4,
                      s->wz + col, s->wsum + col, nr, j->sx, s->wscale + d * GH + n0, s->xw + d * GH + n0,
                      s->dirs * GH);
    }
}

int x86_rnn_qproject(x86_rnn_state *s, const mnn_tensor *ins) {
    const int64_t rows = s->seq * s->batch, GH = s->gates * s->hidden;
    qproj_job j = {s, 0.0f, 0};
    j.sx = quantize_block((const float *)ins[0].data, rows, s->input, s->input, s->xq, s->gw.K4, s->xu, &j.zx);
    x86_pool->ranges(s->op.threads, s->dirs * ((GH + NR - 1) / NR), 1, qproj_range, &j);
    return 0;
}

void x86_rnn_qgemm(const x86_rnn_state *s, int64_t d, const float *h, int64_t h_ld, int64_t m, float *y,
                   int64_t y_ld) {
    const int64_t GH = s->gates * s->hidden, panels = (GH + NR - 1) / NR, K4 = s->gr.K4;
    const int64_t mp = (s->batch + MR - 1) / MR * MR;
    int32_t *hq = s->hq + d * mp * K4, *hu = s->hu + d * mp, zh;
    const float sh = quantize_block(h, m, s->hidden, h_ld, hq, K4, hu, &zh);
    for (int64_t p = 0; p < panels; ++p) {
        const int64_t n0 = p * NR, nr = GH - n0 < NR ? GH - n0 : NR, col = d * panels * NR + n0;
        panel_product(&s->gr, hq, hu, zh, m, s->rp + (d * panels + p) * K4 * NR * 4, s->rz + col, s->rsum + col, nr,
                      sh, s->rscale + d * GH + n0, y + n0, y_ld);
    }
}
