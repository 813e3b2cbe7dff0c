/* Conv run: depthwise kernel, or per (image, group) im2col into packed B and
 * the packed GEMM with the weights as A (bias and activation in its epilogue). */
#ifdef _OPENMP
#include <omp.h>
#endif

#include <string.h>

#include "ops.h"

/* item t = (image n, group gi, chunk ch): im2col of the chunk, then its GEMM */
static void conv_item(const x86_conv_state *s, const float *x, const float *bias, float *y, int64_t t, float *bp,
                      int threads) {
    const x86_kernels *k = s->op.k;
    const x86_conv_geom *g = &s->g;
    const int64_t out_plane = g->OH * g->OW, cols = s->chunk_cols, chunks = (out_plane + cols - 1) / cols;
    const int64_t ch = t % chunks, gi = (t / chunks) % s->group, n = t / (chunks * s->group);
    const int64_t n0 = ch * cols, nc = out_plane - n0 < cols ? out_plane - n0 : cols;
    x86_epilogue e = s->epi;
    e.bias = bias ? bias + gi * s->og : NULL;
    e.bias_rs = 1;
    e.bias_cs = 0;
    k->im2col_b(x + (n * s->group + gi) * g->C * g->H * g->W, g, n0, nc, bp, threads);
    k->gemm(s->og, nc, g->C * g->kh * g->kw, s->w + gi * s->w_group_stride, bp,
            y + (n * s->O + gi * s->og) * out_plane + n0, out_plane, &e, threads);
}

/* inference (x86infer): per-item work for x86_parallel, each worker with its own chunk buffer */
typedef struct {
    const x86_conv_state *s;
    const float *x, *bias;
    float *y;
} conv_job;

static void conv_task(void *ctx, int64_t t, int worker) {
    const conv_job *j = (const conv_job *)ctx;
    conv_item(j->s, j->x, j->bias, j->y, t, j->s->work + worker * j->s->chunk_floats, 1);
}

/* inference (x86infer): few output pixels (7x7, 3x3 planes). The usual GEMM puts the P pixels along
 * the register tile's NR columns, so P = 49 fills 4 panels of 16 for 3.06 worth of work; with the
 * roles swapped (C^T = X^T W^T: pixels along the MR rows, output channels along NR) the padding
 * shrinks to under one MR. X^T is packed per image (the im2col rows first unless a plain 1x1), C^T
 * lands in scratch with the bias added per column, and one transpose writes the NCHW output. */
static int conv_is_plain_1x1(const x86_conv_geom *g) {
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->OH == g->H &&
           g->OW == g->W;
}

/* rows[(c*kh + i)*kw + j][p] = the input tap (i, j) of channel c seen by output pixel p (0 in padding) */
static void im2col_plain(const float *x, const x86_conv_geom *g, float *rows) {
    const int64_t P = g->OH * g->OW;
    for (int64_t c = 0; c < g->C; ++c)
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) {
                float *dst = rows + ((c * g->kh + i) * g->kw + j) * P;
                const float *plane = x + c * g->H * g->W;
                for (int64_t oh = 0; oh < g->OH; ++oh) {
                    const int64_t ih = oh * g->sh - g->pt + i * g->dh;
                    float *d = dst + oh * g->OW;
                    if (ih < 0 || ih >= g->H) {
                        memset(d, 0, (size_t)g->OW * sizeof(float));
                        continue;
                    }
                    for (int64_t ow = 0; ow < g->OW; ++ow) {
                        const int64_t iw = ow * g->sw - g->pl + j * g->dw;
                        d[ow] = iw >= 0 && iw < g->W ? plane[ih * g->W + iw] : 0.0f;
                    }
                }
            }
}

/* y[o][p] = ct[p][o], in 8 x 8 blocks so both sides stay in cache lines */
static void transpose_out(const float *ct, int64_t P, int64_t O, float *y) {
    for (int64_t p0 = 0; p0 < P; p0 += 8)
        for (int64_t o0 = 0; o0 < O; o0 += 8) {
            const int64_t p1 = p0 + 8 < P ? p0 + 8 : P, o1 = o0 + 8 < O ? o0 + 8 : O;
            for (int64_t o = o0; o < o1; ++o)
                for (int64_t p = p0; p < p1; ++p) y[o * P + p] = ct[p * O + o];
        }
}

int64_t x86_conv_transposed_work_floats(const x86_kernels *k, const x86_conv_geom *g, int64_t O) {
    const int64_t P = g->OH * g->OW, Kg = g->C * g->kh * g->kw;
    return (conv_is_plain_1x1(g) ? 0 : Kg * P) + (P + k->mr - 1) / k->mr * k->mr * Kg + P * O;
}

static void conv_transposed(const x86_conv_state *s, const float *x, const float *bias, float *y) {
    const x86_kernels *k = s->op.k;
    const x86_conv_geom *g = &s->g;
    const int64_t P = g->OH * g->OW, Kg = g->C * g->kh * g->kw, O = s->O;
    const int direct = conv_is_plain_1x1(g);
    float *rows = s->t_work, *ap = rows + (direct ? 0 : Kg * P), *ct = ap + (P + k->mr - 1) / k->mr * k->mr * Kg;
    x86_epilogue e = s->epi;
    e.bias = bias;
    e.bias_rs = 0; /* C^T: the bias runs along the columns */
    e.bias_cs = 1;
    for (int64_t n = 0; n < s->N; ++n) {
        const float *xn = x + n * g->C * g->H * g->W;
        if (!direct) im2col_plain(xn, g, rows);
        /* the packing and the transpose are a few percent of the GEMM: on the caller (1 thread) */
        k->pack_a(direct ? xn : rows, 1, P, P, Kg, ap, 1);
        k->gemm(P, O, Kg, ap, s->w, ct, O, &e, s->op.threads);
        transpose_out(ct, P, O, y + n * O * P);
    }
}

int x86_conv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_conv_state *s = (x86_conv_state *)state;
    const x86_kernels *k = s->op.k;
    const x86_conv_geom *g = &s->g;
    (void)n_out;
    if (ins[0].dtype != MNN_FLOAT32 || ins[1].dtype != MNN_FLOAT32) {
        s->op.error = "x86 Conv takes float32 tensors";
        return 1;
    }
    const float *x = (const float *)ins[0].data;
    float *y = (float *)outs[0].data;
    const float *bias = s->bias_input >= 0 && s->bias_input < n_in ? (const float *)ins[s->bias_input].data : s->bias;
    const int64_t out_plane = g->OH * g->OW;
    if (s->depthwise) {
        const float *w = s->weight_input >= 0 ? (const float *)ins[s->weight_input].data : s->w;
        k->depthwise(x, w, bias, y, s->N * g->C, g, &s->epi, s->work, s->op.threads);
        return 0;
    }
    if (s->transposed) {
        conv_transposed(s, x, bias, y);
        return 0;
    }
    if (s->winograd) { /* inference (x86infer): weights transformed and packed at prepare */
        for (int64_t n = 0; n < s->N; ++n)
            k->winograd(x + n * g->C * g->H * g->W, s->w, s->w_group_stride, s->O, bias, y + n * s->O * out_plane, g,
                        &s->epi, s->chunk_cols, s->per_item, s->wino_gemm_t, s->work, s->op.threads);
        return 0;
    }
    const int64_t Kg = g->C * g->kh * g->kw;
    if (s->weight_input < 0 && g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
        g->OH == g->H && g->OW == g->W) {
        /* inference (x86infer): a 1x1 convolution is a GEMM on the NCHW input as it is (no im2col copy) */
        for (int64_t n = 0; n < s->N; ++n)
            for (int64_t gi = 0; gi < s->group; ++gi) {
                x86_epilogue e = s->epi;
                e.bias = bias ? bias + gi * s->og : NULL;
                e.bias_rs = 1;
                e.bias_cs = 0;
                k->gemm_rows(s->og, out_plane, g->C, s->w + gi * s->w_group_stride,
                             x + (n * s->group + gi) * g->C * g->H * g->W, out_plane,
                             y + (n * s->O + gi * s->og) * out_plane, out_plane, &e, s->op.threads);
            }
        return 0;
    }
    if (s->weight_input >= 0) { /* weights computed by the graph: pack them now */
        const float *w = (const float *)ins[s->weight_input].data;
        for (int64_t gi = 0; gi < s->group; ++gi)
            k->pack_a(w + gi * s->og * Kg, Kg, 1, s->og, Kg, s->w + gi * s->w_group_stride, s->op.threads);
    }
    /* Work items are (image, group, chunk of output columns). Many items: one
     * thread per item, each packing its chunk into its own L2-sized buffer and
     * running the GEMM over it. Few items: the threads share each item (never
     * nested parallel regions: those would start new threads every time). */
    const int64_t items = s->N * s->group * ((out_plane + s->chunk_cols - 1) / s->chunk_cols);
    const int threads = s->op.threads;
    if (s->per_item) {
        conv_job j = {s, x, bias, y};
        x86_parallel(threads, items, conv_task, &j);
    } else {
        for (int64_t t = 0; t < items; ++t) conv_item(s, x, bias, y, t, s->work, threads);
    }
    return 0;
}
