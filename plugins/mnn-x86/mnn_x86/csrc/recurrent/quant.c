/* The dynamically quantized LSTM's products (recurrent.h, mnn_core/ops/rnn_quant.py): a block of floats
 * quantized to uint8 over its range widened to hold 0, as ONNX Runtime does, the exact integer dot
 * products with the quantized weights (integer/dot.h), then one float32 scale per output column. */
#include <math.h>

#include "integer/integer.h"
#include "integer/dot.h"
#include "recurrent.h"

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

X86_CLONES static void quantize_row(const float *x, int64_t n, float scale, float z, int16_t *q) {
    for (int64_t i = 0; i < n; ++i) {
        float v = rintf(x[i] / scale) + z;
        v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
        q[i] = (int16_t)(v - z);
    }
}

/* m rows quantized into q (rows qld apart), minus the zero point; returns the scale */
static float quantize_block(const float *x, int64_t m, int64_t n, int64_t ld, int16_t *q, int64_t qld) {
    float lo, hi;
    block_range(x, m, n, ld, &lo, &hi);
    const float scale = lo == hi ? 1.0f : (hi - lo) / 255.0f;
    float z = rintf(-lo / scale);
    z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z);
    for (int64_t r = 0; r < m; ++r) quantize_row(x + r * ld, n, scale, z, q + r * qld);
    return scale;
}

/* y[r * y_ld + n] = float(a[r] · b[n]) * (sa * bscale[n]) for r < m, n0 <= n < n1 (n0 a multiple of 4) */
static void scaled_product(const int16_t *a, int64_t m, const int16_t *b, int64_t kp, int64_t n0, int64_t n1,
                           float sa, const float *bscale, float *y, int64_t y_ld) {
    int32_t t[16];
    if (m == 1) {
        for (int64_t n = n0; n < n1; n += X86_IT) {
            x86_idot1x4(a, b + n * kp, kp, t);
            for (int64_t jj = 0; jj < X86_IT && n + jj < n1; ++jj) y[n + jj] = (float)t[jj] * (sa * bscale[n + jj]);
        }
        return;
    }
    for (int64_t r = 0; r < m; r += X86_IT) {
        for (int64_t n = n0; n < n1; n += X86_IT) {
            x86_idot4x4(a + r * kp, b + n * kp, kp, t);
            for (int64_t i = 0; i < X86_IT && r + i < m; ++i)
                for (int64_t jj = 0; jj < X86_IT && n + jj < n1; ++jj)
                    y[(r + i) * y_ld + n + jj] = (float)t[i * 4 + jj] * (sa * bscale[n + jj]);
        }
    }
}

typedef struct {
    const x86_rnn_state *s;
    float sx;
} qproj_job;

/* item = 64 output columns of one direction, all rows */
static void qproj_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const qproj_job *j = (const qproj_job *)ctx;
    const x86_rnn_state *s = j->s;
    const int64_t GH = s->gates * s->hidden, panels = (GH + 63) / 64;
    (void)worker;
    for (int64_t it = lo; it < hi; ++it) {
        const int64_t d = it / panels, n0 = it % panels * 64, n1 = n0 + 64 < GH ? n0 + 64 : GH;
        scaled_product(s->xq, s->seq * s->batch, s->wq + d * GH * s->kp, s->kp, n0, n1, j->sx, s->wscale + d * GH,
                       s->xw + d * GH, s->dirs * GH);
    }
}

int x86_rnn_qproject(x86_rnn_state *s, const mnn_tensor *ins) {
    const int64_t rows = s->seq * s->batch, GH = s->gates * s->hidden;
    qproj_job j = {s, quantize_block((const float *)ins[0].data, rows, s->input, s->input, s->xq, s->kp)};
    x86_pool->ranges(s->op.threads, s->dirs * ((GH + 63) / 64), 1, qproj_range, &j);
    return 0;
}

void x86_rnn_qgemm(const x86_rnn_state *s, int64_t d, const float *h, int64_t h_ld, int64_t m, float *y,
                   int64_t y_ld) {
    const int64_t GH = s->gates * s->hidden, mp = (s->batch + X86_IT - 1) / X86_IT * X86_IT;
    int16_t *hq = s->hq + d * mp * s->hp;
    const float sh = quantize_block(h, m, s->hidden, h_ld, hq, s->hp);
    scaled_product(hq, m, s->rq + d * GH * s->hp, s->hp, 0, GH, sh, s->rscale + d * GH, y, y_ld);
}
