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

/* the VNNI kernels run where they are compiled in (AVX-512 unit) and cpuid has VNNI */
int x86_int8_vnni(const char *isa) {
    const x86_int8_kernels *k = x86_int8_kernels_for(isa);
    if (k == NULL || k->conv_c4 == NULL) return 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

/* depthwise scratch per thread: the sw column phases of the padded plane (int16), then a row of int32 */
int64_t x86_int8_dw_work_bytes(const x86_conv_geom *g) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1, PWs = (PW + g->sw - 1) / g->sw;
    /* slack: the vector loop reads up to 8 int16 past a row and stores acc in whole vectors */
    return ((g->sw * PH * PWs + 16 + 15) / 16 * 16) * 2 + (g->OW + 8) * 4 + 64;
}

/* the phase-plane geometry of int8.h's x86_qphase; returns the bytes of one input's phase planes
 * (conv: every channel quad; depthwise: one channel). tap_off: kh * kw int64 (rounded up to 4 for
 * depthwise). Needs sh * sw <= 64 (the phase mask); shifted (conv only) sh * kw <= 64 too, else it is off. */
int64_t x86_qphase_init(x86_qphase *q, const x86_conv_geom *g, int64_t C4, int depthwise, int shifted,
                        int64_t *tap_off) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    memset(q, 0, sizeof(*q));
    q->QH = (PH + g->sh - 1) / g->sh;
    q->QP = (PW + g->sw - 1) / g->sw;
    q->direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
                g->OH == g->H && g->OW == g->W;
    q->shifted = shifted && !depthwise && !q->direct && g->sh * g->kw <= 64;
    q->QW = q->shifted ? g->OW : q->QP;
    q->pstride = (q->QH * q->QW + 128 + 63) / 64 * 64; /* the last 64-wide tile reads up to 63 + 12 past */
    if (!depthwise) { /* C4 words: an odd number of cache lines from one channel quad to the next, so that the
                       * kernels' reads of one pixel in every quad spread over all L1 sets (a multiple of 1 KiB
                       * would put them in 4 of 64) */
        /* slack: conv_c4's last 32-word tile, the one-vector row packing's 63 bytes, px_pack's 3 words */
        q->pstride = (q->QH * q->QW + 32 + 15) / 16;
        q->pstride = (q->pstride | 1) * 16;
    }
    q->C4 = depthwise ? 1 : C4;
    q->taps = g->kh * g->kw;
    q->Nf = (g->OH - 1) * q->QW + g->OW;
    for (int64_t i = 0; i < g->kh; ++i)
        for (int64_t j = 0; j < g->kw; ++j) {
            const int64_t ri = i * g->dh, cj = j * g->dw;
            /* shifted: plane (ri % sh, j) holds column cj at c = 0; else phase (ri % sh, cj % sw), column cj / sw */
            const int64_t ph = q->shifted ? (ri % g->sh) * g->kw + j : (ri % g->sh) * g->sw + cj % g->sw;
            q->phase_mask |= (uint64_t)1 << ph;
            tap_off[i * g->kw + j] = ph * q->C4 * q->pstride + (ri / g->sh) * q->QW + (q->shifted ? 0 : cj / g->sw);
        }
    if (depthwise)
        for (int64_t t = q->taps; t < (q->taps + 3) / 4 * 4; ++t) tap_off[t] = 0;
    q->window = depthwise && g->sw == 1 && g->dw == 1 && g->kw <= 4;
    q->groups = q->window ? g->kh : (q->taps + 3) / 4;
    q->tap_off = tap_off;
    const int64_t planes = g->sh * (q->shifted ? g->kw : g->sw);
    /* depthwise: the flattened outputs follow the planes, in whole 64-byte tiles */
    return planes * q->C4 * q->pstride * (depthwise ? 1 : 4) + (depthwise ? (q->Nf + 63) / 64 * 64 : 0);
}

/* pack_c4's row scratch per thread: 8 channel rows of QP (+ a vector) bytes; shifted: then the sw interleaved
 * column-phase rows of QP words */
int64_t x86_qphase_tmp_bytes(const x86_qphase *q, const x86_conv_geom *g) {
    return (8 + (q->shifted ? 4 * g->sw : 0)) * (q->QP + 64);
}

static int qconv_depthwise(x86_qconv_state *s, const uint8_t *x, uint8_t *y) {
    const x86_conv_geom *g = &s->g;
    const int64_t plane = g->OH * g->OW, in_plane = g->H * g->W, items = s->N * s->O;
    const int threads = s->op.threads;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(threads > 1 && items > 1))
    for (int64_t t = 0; t < items; ++t) {
#ifdef _OPENMP
        int16_t *work = s->work + (threads > 1 && items > 1 ? omp_get_thread_num() : 0) * s->work_stride;
#else
        int16_t *work = s->work;
#endif
        const int64_t c = t % s->O;
        s->k8->depthwise(x + t * in_plane, s->zx, g, s->wdw + c * g->kh * g->kw, s->bias[c], s->mult[c], s->zy,
                         s->qmin, s->qmax, y + t * plane, work);
    }
    return 0;
}

/* VNNI convolution: the phase planes of each (image, group) once (channel quads over the threads), then
 * the tiles of flattened outputs over the threads (int8_vnni_impl.h) */
static int qconv_c4(x86_qconv_state *s, const uint8_t *x, uint8_t *y) {
    const x86_conv_geom *g = &s->g;
    const int64_t plane = g->OH * g->OW, in_group = g->C * g->H * g->W;
    const int64_t tiles = (s->q.Nf + QC_NB - 1) / QC_NB, C4 = s->q.C4;
    const int threads = s->op.threads;
    for (int64_t t = 0; t < s->N * s->group; ++t) {
        const int64_t n = t / s->group, gi = t % s->group;
        const uint8_t *xg = x + (n * s->group + gi) * in_group;
        const int64_t pparts = threads > 1 ? (C4 < threads ? C4 : threads) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(pparts > 1))
        for (int64_t pi = 0; pi < pparts; ++pi)
            s->k8->pack_c4(xg, s->zx, g, &s->q, C4 * pi / pparts, C4 * (pi + 1) / pparts, s->xq,
                           s->tmp + pi * s->tmp_stride);
        const int32_t *a = s->w + gi * s->ogp * s->K4;
        uint8_t *yg = y + (n * s->O + gi * s->og) * plane;
        const int64_t parts = threads > 1 ? (tiles < threads ? tiles : threads) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(parts > 1))
        for (int64_t pi = 0; pi < parts; ++pi)
            s->k8->conv_c4(&s->q, s->xq, s->og, tiles * pi / parts, tiles * (pi + 1) / parts, a,
                           s->bias_eff + gi * s->og, s->mult + gi * s->og, s->zy, s->qmin, s->qmax, yg, g->OW, plane);
    }
    return 0;
}

/* conv_px (group 1): the phase planes as qconv_c4, then the 64-channel blocks over the threads, then the
 * [pixel][channel] bytes transposed into the NCHW plane */
static int qconv_px(x86_qconv_state *s, const uint8_t *x, uint8_t *y) {
    const x86_conv_geom *g = &s->g;
    const int64_t P = g->OH * g->OW, in_img = g->C * g->H * g->W, C4 = s->q.C4, Mp = s->ogp, mbs = Mp / 64;
    const int threads = s->op.threads;
    for (int64_t n = 0; n < s->N; ++n) {
        const int64_t pparts = threads > 1 ? (C4 < threads ? C4 : threads) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(pparts > 1))
        for (int64_t pi = 0; pi < pparts; ++pi)
            s->k8->pack_c4(x + n * in_img, s->zx, g, &s->q, C4 * pi / pparts, C4 * (pi + 1) / pparts, s->xq,
                           s->tmp + pi * s->tmp_stride);
        s->k8->px_pack(s->xq, &s->q, s->xq + s->xq_stride);
        const int64_t parts = threads > 1 ? (mbs < threads ? mbs : threads) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(parts > 1))
        for (int64_t pi = 0; pi < parts; ++pi)
            s->k8->conv_px(&s->q, s->xq + s->xq_stride, g->OH, g->OW, mbs * pi / parts, mbs * (pi + 1) / parts, Mp, s->wq,
                           s->bias_eff, s->mult, s->zy, s->qmin, s->qmax, s->ypx);
        s->k8->px_to_nchw(s->ypx, P, Mp, s->O, y + n * s->O * P);
    }
    return 0;
}

/* VNNI depthwise: one channel plane per item, each thread with its own phase planes */
static int qconv_depthwise_vnni(x86_qconv_state *s, const uint8_t *x, uint8_t *y) {
    const x86_conv_geom *g = &s->g;
    const int64_t plane = g->OH * g->OW, in_plane = g->H * g->W, items = s->N * s->O, G = s->q.groups;
    const int threads = s->op.threads;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(threads > 1 && items > 1))
    for (int64_t t = 0; t < items; ++t) {
#ifdef _OPENMP
        uint8_t *xd = s->xq + (threads > 1 && items > 1 ? omp_get_thread_num() : 0) * s->xq_stride;
#else
        uint8_t *xd = s->xq;
#endif
        const int64_t c = t % s->O;
        s->k8->depthwise_vnni(x + t * in_plane, s->zx, g, &s->q, s->wq + c * G, s->bias_eff[c], s->mult[c], s->zy,
                              s->qmin, s->qmax, y + t * plane, xd);
    }
    return 0;
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
    if (s->kind == 2) return qconv_depthwise(s, x, y);
    if (s->kind == 1) return qconv_c4(s, x, y);
    if (s->kind == 3) return qconv_depthwise_vnni(s, x, y);
    if (s->kind == 5) return qconv_px(s, x, y);
    if (s->kind == 4) { /* the images split over the threads, each with its own padded row */
        const int64_t K = g->C, N = s->N;
        const int64_t parts = s->op.threads > 1 ? (N < s->op.threads ? N : s->op.threads) : 1;
#pragma omp parallel for num_threads(s->op.threads) schedule(static) if (X86_OMP(parts > 1))
        for (int64_t pi = 0; pi < parts; ++pi) {
            const int64_t n0 = N * pi / parts, n1 = N * (pi + 1) / parts;
            k->fc_vnni(x + n0 * K, n1 - n0, K, s->O, s->wq, s->bias_eff, s->mult, s->zy, s->qmin, s->qmax,
                       y + n0 * s->O, s->xq + pi * s->xq_stride);
        }
        return 0;
    }
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
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(threads > 1 && items > 1))
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

/* QuantizeLinear / DequantizeLinear (per tensor), QLinearAdd and uint8 MaxPool */
int x86_qelt_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_qelt_state *s = (x86_qelt_state *)state;
    (void)n_out;
    const int threads = s->op.threads;
    if (s->kind == 2) {
        const int64_t in_plane = s->pg.H * s->pg.W, plane = s->pg.OH * s->pg.OW;
        const uint8_t *x = (const uint8_t *)ins[0].data;
        uint8_t *y = (uint8_t *)outs[0].data;
        if (s->xq != NULL) {
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(threads > 1 && s->planes > 1))
            for (int64_t p = 0; p < s->planes; ++p) {
#ifdef _OPENMP
                uint8_t *xd = s->xq + (threads > 1 && s->planes > 1 ? omp_get_thread_num() : 0) * s->xq_stride;
#else
                uint8_t *xd = s->xq;
#endif
                s->k8->maxpool_vnni(x + p * in_plane, &s->cg, &s->q, y + p * plane, xd);
            }
            return 0;
        }
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(threads > 1 && s->planes > 1))
        for (int64_t p = 0; p < s->planes; ++p) s->k8->maxpool(&s->pg, x + p * in_plane, y + p * plane);
        return 0;
    }
    if (s->kind == 3) { /* QLinearAdd of equal shapes; per-tensor scales and zero points read at run time */
        const float sc = *(const float *)ins[6].data;
        const float ma = *(const float *)ins[1].data / sc, mb = *(const float *)ins[4].data / sc; /* float32 */
        const int32_t za = *(const uint8_t *)ins[2].data, zb = *(const uint8_t *)ins[5].data;
        const int32_t zc = *(const uint8_t *)ins[7].data;
        int64_t n = 1;
        for (int32_t d = 0; d < ins[0].ndim; ++d) n *= ins[0].shape[d];
        const uint8_t *a = (const uint8_t *)ins[0].data, *b = (const uint8_t *)ins[3].data;
        uint8_t *y = (uint8_t *)outs[0].data;
        const int64_t chunk = 16384, chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(threads > 1 && chunks > 1))
        for (int64_t c = 0; c < chunks; ++c) {
            const int64_t i0 = c * chunk, m = n - i0 < chunk ? n - i0 : chunk;
            s->k8->add(a + i0, b + i0, m, ma, mb, za, zb, zc, y + i0);
        }
        return 0;
    }
    /* the scale and zero point are read at run time: constants or computed, per tensor (checked at prepare) */
    const float scale = *(const float *)ins[1].data;
    const int32_t zp = n_in > 2 && ins[2].data != NULL ? *(const uint8_t *)ins[2].data : 0;
    int64_t n = 1;
    for (int32_t d = 0; d < ins[0].ndim; ++d) n *= ins[0].shape[d];
    const int64_t chunk = 16384, chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static) if (X86_OMP(threads > 1 && chunks > 1))
    for (int64_t c = 0; c < chunks; ++c) {
        const int64_t i0 = c * chunk, m = n - i0 < chunk ? n - i0 : chunk;
        if (s->kind == 0)
            s->k8->quantize((const float *)ins[0].data + i0, m, scale, zp, (uint8_t *)outs[0].data + i0);
        else
            s->k8->dequantize((const uint8_t *)ins[0].data + i0, m, scale, zp, (float *)outs[0].data + i0);
    }
    return 0;
}
