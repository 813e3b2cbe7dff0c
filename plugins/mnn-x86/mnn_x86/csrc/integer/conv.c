/* ConvInteger (integer.h): per image, the input minus its zero point in int16 once, then per group an
 * im2col with a row of K per output pixel (padding reads 0, the zero point taken out) and the GEMM of
 * the packed weights by those rows. */
#include <string.h>

#include "integer.h"

typedef struct {
    x86_convi_state *s;
    const mnn_tensor *ins;
    const void *x;  /* the image */
    int32_t *y;     /* the group's first output channel of the image */
    int64_t g;
} convi_job;

static int64_t numel(const mnn_tensor *t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
    return n;
}

static int32_t zp_at(const mnn_tensor *t, int64_t i) {
    const int64_t at = numel(t) == 1 ? 0 : i;
    return t->dtype == MNN_INT8 ? ((const int8_t *)t->data)[at] : ((const uint8_t *)t->data)[at];
}

static void load_image(void *ctx, int64_t lo, int64_t hi, int worker) {
    const convi_job *j = (const convi_job *)ctx;
    const x86_convi_state *s = j->s;
    const int64_t plane = s->H * s->W;
    (void)worker;
    x86_iload((const char *)j->x + lo * plane, j->ins[0].dtype == MNN_INT8, (hi - lo) * plane, s->zx,
              s->xs + lo * plane);
}

/* one output pixel's patch of group g: the kernel window of each of its channels, 0 outside */
static void patch(const x86_convi_state *s, int64_t g, int64_t oh, int64_t ow, int16_t *dst) {
    const int64_t cg = s->C / s->group;
    const int16_t *x = s->xs + g * cg * s->H * s->W;
    for (int64_t c = 0; c < cg; ++c, x += s->H * s->W) {
        for (int64_t i = 0; i < s->kh; ++i) {
            const int64_t ih = oh * s->sh - s->pt + i * s->dh;
            const int row_in = ih >= 0 && ih < s->H;
            for (int64_t jj = 0; jj < s->kw; ++jj) {
                const int64_t iw = ow * s->sw - s->pl + jj * s->dw;
                *dst++ = row_in && iw >= 0 && iw < s->W ? x[ih * s->W + iw] : 0;
            }
        }
    }
}

static void im2col(void *ctx, int64_t lo, int64_t hi, int worker) {
    const convi_job *j = (const convi_job *)ctx;
    const x86_convi_state *s = j->s;
    (void)worker;
    for (int64_t p = lo; p < hi; ++p) patch(s, j->g, p / s->OW, p % s->OW, s->patches + p * s->Kp);
}

/* item = a panel of 64 output pixels, all the group's channels */
static void convi_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const convi_job *j = (const convi_job *)ctx;
    const x86_convi_state *s = j->s;
    const int64_t P = s->OH * s->OW, Mg = s->O / s->group;
    (void)worker;
    const int64_t n0 = lo * 64, n1 = hi * 64 < P ? hi * 64 : P;
    x86_igemm(s->wp + j->g * s->Mgp * s->Kp, s->patches, Mg, n0, n1, s->Kp, j->y, P);
}

/* weights given at run (or with a zero point given at run), minus their zero points */
static void pack_weights(x86_convi_state *s, const mnn_tensor *w) {
    const int64_t Mg = s->O / s->group, K = s->C / s->group * s->kh * s->kw;
    for (int64_t o = 0; o < s->O; ++o)
        x86_iload((const char *)w->data + o * K, w->dtype == MNN_INT8, K, s->zw[o],
                  s->wp + ((o / Mg) * s->Mgp + o % Mg) * s->Kp);
}

int x86_convi_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_convi_state *s = (x86_convi_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t P = s->OH * s->OW, Mg = s->O / s->group, K = s->C / s->group * s->kh * s->kw;
    if (s->N * s->O * P == 0) return 0;
    if (s->in_zx >= 0) s->zx = zp_at(&ins[s->in_zx], 0);
    if (s->in_zw >= 0)
        for (int64_t o = 0; o < s->O; ++o) s->zw[o] = zp_at(&ins[s->in_zw], o);
    if (!s->w_ready) pack_weights(s, &ins[1]);
    const int64_t image = s->C * s->H * s->W, grain = 1 + 2048 / (K + 1);
    for (int64_t n = 0; n < s->N; ++n) {
        convi_job j = {s, ins, (const char *)ins[0].data + n * image, (int32_t *)outs[0].data + n * s->O * P, 0};
        x86_pool->ranges(s->op.threads, s->C, 1 + 8192 / (s->H * s->W + 1), load_image, &j);
        for (int64_t g = 0; g < s->group; ++g) {
            j.g = g;
            j.y = (int32_t *)outs[0].data + (n * s->O + g * Mg) * P;
            x86_pool->ranges(s->op.threads, P, grain, im2col, &j);
            x86_pool->ranges(s->op.threads, (P + 63) / 64, 1, convi_range, &j);
        }
    }
    return 0;
}
