/* 3-D convolution as im2col + the path's packed GEMM (conv3d.h), tasks of (image, group, chunk of
 * output columns) split over the session's threads, each on its own scratch slice. */
#include <string.h>

#include "conv3d.h"
#include "parallel.h"

/* rows [0, K) x columns [n0, n0 + nc) of one group's im2col into cols[K][nc] (elements of eb bytes) */
static void gather(const arm_conv3d_state *s, const char *x, int64_t n0, int64_t nc, char *cols, int64_t eb) {
    const int64_t taps = s->kd * s->kh * s->kw, K = s->C * taps, hw = s->OH * s->OW;
    for (int64_t r = 0; r < K; ++r) {
        const int64_t c = r / taps, t = r % taps, i = t / (s->kh * s->kw), j = (t / s->kw) % s->kh, l = t % s->kw;
        const char *xc = x + c * s->D * s->H * s->W * eb;
        char *dst = cols + r * nc * eb;
        int64_t od = n0 / hw, oh = (n0 % hw) / s->OW, ow = n0 % s->OW;
        for (int64_t q = 0; q < nc; ++q) {
            const int64_t id = od * s->sd + i * s->dd - s->pd, ih = oh * s->sh + j * s->dh - s->pt,
                          iw = ow * s->sw + l * s->dw - s->pl;
            const int inside = id >= 0 && id < s->D && ih >= 0 && ih < s->H && iw >= 0 && iw < s->W;
            if (eb == 4)
                ((float *)dst)[q] = inside ? ((const float *)xc)[(id * s->H + ih) * s->W + iw] : 0.0f;
            else
                ((uint16_t *)dst)[q] = inside ? ((const uint16_t *)xc)[(id * s->H + ih) * s->W + iw] : 0;
            if (++ow == s->OW) {
                ow = 0;
                if (++oh == s->OH) oh = 0, ++od;
            }
        }
    }
}

typedef struct conv3d_job {
    const arm_conv3d_state *s;
    const char *x;
    char *y;
    const float *bias;
    int64_t chunks;
} conv3d_job;

static void conv3d_tasks(void *ctx, int64_t b, int64_t end, int tid) {
    const conv3d_job *j = (const conv3d_job *)ctx;
    const arm_conv3d_state *s = j->s;
    const int64_t eb = s->k->io_bytes, cols = s->OD * s->OH * s->OW, K = s->C * s->kd * s->kh * s->kw;
    char *gathered = (char *)s->work + tid * s->work_bytes;
    void *packed = gathered + (K * s->chunk_cols * eb + 63) / 64 * 64;
    for (int64_t t = b; t < end; ++t) {
        const int64_t ci = t % j->chunks, gi = (t / j->chunks) % s->group, n = t / j->chunks / s->group;
        const int64_t n0 = ci * s->chunk_cols, nc = cols - n0 < s->chunk_cols ? cols - n0 : s->chunk_cols;
        gather(s, j->x + (n * s->group + gi) * s->C * s->D * s->H * s->W * eb, n0, nc, gathered, eb);
        s->k->pack_b(gathered, nc, 1, K, nc, packed);
        arm_epilogue e = s->epi;
        e.bias = j->bias ? j->bias + gi * s->og : NULL;
        e.bias_rs = 1;
        e.bias_cs = 0;
        s->k->gemm(s->og, nc, K, (const char *)s->w + gi * s->w_group_bytes, packed,
                   j->y + ((n * s->O + gi * s->og) * cols + n0) * eb, cols, &e);
    }
}

int arm_conv3d_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_out;
    arm_conv3d_state *s = (arm_conv3d_state *)state;
    const int64_t cols = s->OD * s->OH * s->OW;
    const float *bias = s->bias_input >= 0 && s->bias_input < n_in ? (const float *)arm_data(&ins[s->bias_input]) : s->bias;
    conv3d_job j = {s, (const char *)arm_data(&ins[0]), (char *)arm_data(&outs[0]), bias,
                    (cols + s->chunk_cols - 1) / s->chunk_cols};
    const double macs = (double)s->N * s->O * cols * s->C * s->kd * s->kh * s->kw;
    int parts = arm_par_parts(arm_threads(s), macs);
    if (parts > s->slices) parts = s->slices > 0 ? s->slices : 1;
    arm_parallel(parts, s->N * s->group * j.chunks, 1, conv3d_tasks, &j);
    return 0;
}
