/* Depthwise convolution (one filter per channel), NCHW. Each thread copies a
 * plane into a zero-padded scratch plane, so the inner loop has no bounds
 * checks: one output vector is kh*kw FMAs over (strided) loads of the padded
 * rows. Generic over `vf`; included by each isa_*.c. */
#ifndef MNN_X86_DEPTHWISE_IMPL_H
#define MNN_X86_DEPTHWISE_IMPL_H

#ifdef _OPENMP
#include <omp.h>
#endif

/* padded plane PH x PW: exactly the extent the output needs */
static inline void FN(pad_plane)(const float *src, int64_t H, int64_t W, int64_t pt, int64_t pl, float *pad,
                                 int64_t PH, int64_t PW, int64_t total, float fill) {
    for (int64_t i = 0; i < total; ++i) pad[i] = fill;
    const int64_t x0 = pl, x1 = pl + W < PW ? pl + W : PW; /* pad columns that hold input */
    if (x1 <= x0) return;
    for (int64_t py = 0; py < PH; ++py) {
        const int64_t sy = py - pt;
        if (sy < 0 || sy >= H) continue;
        FN(copy_n)(pad + py * PW + x0, src + sy * W, x1 - x0);
    }
}

static void FN(depthwise)(const float *x, const float *w, const float *bias, float *y, int64_t planes,
                          const x86_conv_geom *g, const x86_epilogue *e, float *work, int threads) {
    const int64_t PH = (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t PW = (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    const int64_t per_thread = x86_depthwise_work_floats(g), khw = g->kh * g->kw;
    const int64_t sw = g->sw, OW = g->OW;
#pragma omp parallel num_threads(threads) if (threads > 1 && planes > 1)
    {
#ifdef _OPENMP
        float *pad = work + omp_get_thread_num() * per_thread;
#else
        float *pad = work;
#endif
#pragma omp for schedule(static)
        for (int64_t pi = 0; pi < planes; ++pi) {
            const int64_t c = pi % g->C;
            const float *wc = w + c * khw;
            const vf b0 = vf_set1(bias ? bias[c] : 0.0f);
            float *dst = y + pi * g->OH * OW;
            FN(pad_plane)(x + pi * g->H * g->W, g->H, g->W, g->pt, g->pl, pad, PH, PW, per_thread, 0.0f);
            if (g->kh == 3 && g->kw == 3) { /* the common case: weights held in registers */
                vf wv[9];
                for (int t = 0; t < 9; ++t) wv[t] = vf_set1(wc[t]);
                for (int64_t oh = 0; oh < g->OH; ++oh) {
                    const float *r0 = pad + oh * g->sh * PW, *r1 = r0 + g->dh * PW, *r2 = r1 + g->dh * PW;
                    for (int64_t ow = 0; ow < OW; ow += VLEN) {
                        const int64_t o = ow * sw, d = g->dw;
                        vf acc = b0;
                        acc = vf_fma(wv[0], vf_load_stride(r0 + o, sw), acc);
                        acc = vf_fma(wv[1], vf_load_stride(r0 + o + d, sw), acc);
                        acc = vf_fma(wv[2], vf_load_stride(r0 + o + 2 * d, sw), acc);
                        acc = vf_fma(wv[3], vf_load_stride(r1 + o, sw), acc);
                        acc = vf_fma(wv[4], vf_load_stride(r1 + o + d, sw), acc);
                        acc = vf_fma(wv[5], vf_load_stride(r1 + o + 2 * d, sw), acc);
                        acc = vf_fma(wv[6], vf_load_stride(r2 + o, sw), acc);
                        acc = vf_fma(wv[7], vf_load_stride(r2 + o + d, sw), acc);
                        acc = vf_fma(wv[8], vf_load_stride(r2 + o + 2 * d, sw), acc);
                        vf_store_n(dst + oh * OW + ow, acc, (int)(OW - ow < VLEN ? OW - ow : VLEN));
                    }
                    if (e->act != X86_ACT_NONE) FN(act_row)(e->act, e->act_alpha, e->act_beta, dst + oh * OW, dst + oh * OW, OW);
                }
            } else {
                for (int64_t oh = 0; oh < g->OH; ++oh) {
                    const float *rows = pad + oh * g->sh * PW;
                    for (int64_t ow = 0; ow < OW; ow += VLEN) {
                        vf acc = b0;
                        for (int64_t i = 0; i < g->kh; ++i) {
                            const float *r = rows + i * g->dh * PW + ow * sw;
                            for (int64_t j = 0; j < g->kw; ++j)
                                acc = vf_fma(vf_set1(wc[i * g->kw + j]), vf_load_stride(r + j * g->dw, sw), acc);
                        }
                        vf_store_n(dst + oh * OW + ow, acc, (int)(OW - ow < VLEN ? OW - ow : VLEN));
                    }
                    if (e->act != X86_ACT_NONE) FN(act_row)(e->act, e->act_alpha, e->act_beta, dst + oh * OW, dst + oh * OW, OW);
                }
            }
        }
    }
}

#endif
