/* QLinearConv run (int8.h): per (image, group) im2col of the uint8 input minus
 * its zero point, then the int16-pair GEMM with the requantizing epilogue; the
 * fully connected form packs all images as the GEMM's columns at once. */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "int8.h"

extern const x86_int8_kernels x86_int8_kernels_scalar;
#if defined(__x86_64__) || defined(__i386__)
extern const x86_int8_kernels x86_int8_kernels_avx2;
extern const x86_int8_kernels x86_int8_kernels_avx512;
#endif

const x86_int8_kernels *x86_int8_kernels_for(const char *isa) {
    if (x86_kernels_for(isa) == NULL) return NULL; /* not compiled in, or this CPU lacks it */
    if (strcmp(isa, "scalar") == 0) return &x86_int8_kernels_scalar;
#if defined(__x86_64__) || defined(__i386__)
    if (strcmp(isa, "avx2") == 0) return &x86_int8_kernels_avx2;
    if (strcmp(isa, "avx512") == 0) return &x86_int8_kernels_avx512;
#endif
    return NULL;
}

int x86_qconv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_qconv_state *s = (x86_qconv_state *)state;
    const x86_int8_kernels *k = s->k8;
    const x86_conv_geom *g = &s->g;
    (void)n_in;
    (void)n_out;
    if (ins[0].dtype != MNN_UINT8 || outs[0].dtype != MNN_UINT8) {
        s->op.error = "x86 QLinearConv takes and gives uint8 tensors";
        return 1;
    }
    const uint8_t *x = (const uint8_t *)ins[0].data;
    uint8_t *y = (uint8_t *)outs[0].data;
    if (s->fc) { /* y[n][m] = W[m] . (x[n] - zx): the images are the columns */
        const int64_t K = g->C;
        for (int64_t n0 = 0; n0 < s->N; n0 += s->np) {
            const int64_t nn = s->N - n0 < s->np ? s->N - n0 : s->np;
            k->pack_rows(x + n0 * K, s->zx, nn, K, s->work, s->np);
            k->gemm_requant(s->O, nn, s->K2, s->np, s->w, s->work, s->bias, s->mult, s->zy, s->qmin, s->qmax,
                            y + n0 * s->O, 1, s->O);
        }
        return 0;
    }
    const int64_t plane = g->OH * g->OW, in_group = g->C * g->H * g->W;
    const int64_t items = s->N * s->group;
    const int threads = s->op.threads;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && items > 1)
    for (int64_t t = 0; t < items; ++t) {
#ifdef _OPENMP
        int16_t *bp = s->work + (threads > 1 && items > 1 ? omp_get_thread_num() : 0) * s->work_stride;
#else
        int16_t *bp = s->work;
#endif
        const int64_t n = t / s->group, gi = t % s->group;
        k->im2col(x + (n * s->group + gi) * in_group, s->zx, g, bp, s->np);
        k->gemm_requant(s->og, plane, s->K2, s->np, s->w + gi * s->ogp * s->K2, bp, s->bias + gi * s->og,
                        s->mult + gi * s->og, s->zy, s->qmin, s->qmax, y + (n * s->O + gi * s->og) * plane, plane,
                        1);
    }
    return 0;
}
