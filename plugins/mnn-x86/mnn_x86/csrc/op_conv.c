/* Conv run: depthwise kernel, or per (image, group) im2col into packed B and
 * the packed GEMM with the weights as A (bias and activation in its epilogue). */
#ifdef _OPENMP
#endif

#include <string.h>

#include "bf16.h"
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

/* inference (x86infer): few output pixels (7x7, 14x14 planes). The usual GEMM puts the P pixels
 * along the register tile's NR columns, so P = 49 fills 4 panels of 16 for 3.06 worth of work; with
 * the roles swapped (C^T = X^T W^T: pixels along the MR rows, output channels along NR) the padding
 * shrinks to under one MR (_transposed_pays in _x86.pyx says when). Per image: X^T goes straight
 * into the GEMM's packed A panels (from the input with its padding written out, unless a plain 1x1,
 * packed from the NCHW input as it is), the GEMM writes C^T with the bias and the activation, and
 * one vectorized transpose writes the NCHW output. */
static int conv_is_plain_1x1(const x86_conv_geom *g) {
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->OH == g->H &&
           g->OW == g->W;
}

/* the padded input's rows and columns: what the taps reach, padding included */
static int64_t conv_t_ph(const x86_conv_geom *g) { return (g->OH - 1) * g->sh + (g->kh - 1) * g->dh + 1; }
static int64_t conv_t_pw(const x86_conv_geom *g) { return (g->OW - 1) * g->sw + (g->kw - 1) * g->dw + 1; }

/* taps all inside the input (no padding reached): im2col_a reads the input in place */
static int conv_t_unpadded(const x86_conv_geom *g) {
    return g->pt == 0 && g->pl == 0 && conv_t_ph(g) <= g->H && conv_t_pw(g) <= g->W;
}

/* Pixels per chunk: X^T and C^T of a chunk ((K + O) floats a pixel) sized to about half of L2,
 * but at least 256 pixels (fewer would stream W^T from memory again for too little work; planes of
 * up to 16x16 stay one chunk), a multiple of MR. */
#define CONV_T_CHUNK_BYTES (512 * 1024)
#define CONV_T_MIN_CHUNK 256

static int64_t conv_t_chunk(const x86_kernels *k, const x86_conv_geom *g, int64_t O) {
    const int64_t P = g->OH * g->OW, Kg = g->C * g->kh * g->kw;
    int64_t chunk = CONV_T_CHUNK_BYTES / (int64_t)sizeof(float) / (Kg + O);
    if (chunk < CONV_T_MIN_CHUNK) chunk = CONV_T_MIN_CHUNK;
    chunk = (chunk + k->mr - 1) / k->mr * k->mr;
    return chunk < P ? chunk : P;
}

/* The scratch, in this order: the padded input (C x PH x PW; none for a plain 1x1 or unpadded), X^T
 * of a chunk packed (rounded up to MR rows x K) and its C^T (chunk x O). */
typedef struct {
    float *xp, *ap, *ct;
} conv_t_scratch;

/* floats of each part, rounded up to 16 so the next one stays 64-byte aligned */
static void conv_t_sizes(const x86_kernels *k, const x86_conv_geom *g, int64_t O, int64_t chunk, int merged,
                         int64_t *xp, int64_t *ap, int64_t *ct) {
    const int64_t Kg = g->C * g->kh * g->kw;
    const int in_place = !merged && (conv_is_plain_1x1(g) || conv_t_unpadded(g)); /* merged: rows regathered */
    *xp = in_place ? 0 : (g->C * conv_t_ph(g) * conv_t_pw(g) + 15) / 16 * 16;
    *ap = ((chunk + k->mr - 1) / k->mr * k->mr * Kg + 15) / 16 * 16;
    *ct = (chunk * O + 15) / 16 * 16;
}

static conv_t_scratch conv_t_layout(const x86_kernels *k, const x86_conv_geom *g, int64_t O, int64_t chunk,
                                    int merged, float *work) {
    int64_t xp, ap, ct;
    conv_t_sizes(k, g, O, chunk, merged, &xp, &ap, &ct);
    conv_t_scratch t = {work, work + xp, work + xp + ap};
    return t;
}

/* At two threads and more, the chunks (as many as before, rounded up to a multiple of the threads, so
 * smaller) are taken whole, one thread each: its X^T, its GEMM and its transpose. Each core then
 * multiplies the panels it packed itself (shared, X^T was packed by channel groups on both cores and
 * the GEMM cut by pixels), and the threads meet once a plane instead of three times a chunk: ResNet-18's
 * 3x3 stride-2 convolutions at two threads, 64 -> 128 (28x28) 0.574 -> 0.485 ms, 128 -> 256 (14x14)
 * 0.483 -> 0.424 ms. Not below CONV_T_MIN_THREAD_PIXELS pixels a thread (7x7 planes stay shared). */
#define CONV_T_MIN_THREAD_PIXELS 64

void x86_conv_transposed_plan(const x86_kernels *k, const x86_conv_geom *g, int64_t O, int threads, int merged,
                              int64_t *chunk, int32_t *per_item, int64_t *work_floats) {
    const int64_t P = g->OH * g->OW;
    int64_t xp, ap, ct;
    *chunk = conv_t_chunk(k, g, O);
    *per_item = threads > 1 && P >= threads * CONV_T_MIN_THREAD_PIXELS;
    if (*per_item) {
        const int64_t items = ((P + *chunk - 1) / *chunk + threads - 1) / threads * threads;
        *chunk = ((P + items - 1) / items + k->mr - 1) / k->mr * k->mr;
    }
    conv_t_sizes(k, g, O, *chunk, merged, &xp, &ap, &ct);
    *work_floats = xp + (*per_item ? threads : 1) * (ap + ct);
}

/* channels [c0, c1) of one image, padding written out as zeros; merge_h > 0: of all images, as one
 * image whose row iy is row iy % merge_h of image iy / merge_h */
static void conv_t_pad(const float *x, const x86_conv_geom *g, int64_t merge_h, float *xp, int64_t c0, int64_t c1) {
    const int64_t PH = conv_t_ph(g), PW = conv_t_pw(g);
    const int64_t lo = g->pl < PW ? g->pl : PW; /* columns [lo, hi) come from the input */
    int64_t hi = g->pl + g->W < PW ? g->pl + g->W : PW;
    if (hi < lo) hi = lo;
    for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = 0; r < PH; ++r) {
            float *d = xp + (c * PH + r) * PW;
            const int64_t iy = r - g->pt;
            if (iy < 0 || iy >= g->H) {
                memset(d, 0, (size_t)PW * sizeof(float));
                continue;
            }
            memset(d, 0, (size_t)lo * sizeof(float));
            const float *row = merge_h ? x + ((iy / merge_h * g->C + c) * merge_h + iy % merge_h) * g->W
                                       : x + (c * g->H + iy) * g->W;
            memcpy(d + lo, row + (lo - g->pl), (size_t)(hi - lo) * sizeof(float));
            memset(d + hi, 0, (size_t)(PW - hi) * sizeof(float));
        }
}

/* the per-image phases around the GEMM, cut into items for x86_parallel */
#define CONV_T_CHANNELS 16 /* channels per padding item, rows of X^T per im2col item: 16 * kh * kw */
#define CONV_T_OUT 32      /* output channels per transpose item */
typedef struct {
    const x86_conv_state *s;
    const float *xn;
    float *yn;
    conv_t_scratch t;
    int64_t p0, np; /* the chunk: pixels [p0, p0 + np) */
    x86_epilogue e; /* the GEMM's: bias along C^T's columns, the activation */
} conv_t_job;

static void conv_t_pad_task(void *ctx, int64_t item, int worker) {
    const conv_t_job *J = (const conv_t_job *)ctx;
    const int64_t c0 = item * CONV_T_CHANNELS, C = J->s->g.C;
    (void)worker;
    conv_t_pad(J->xn, &J->s->g, J->s->merge_h, J->t.xp, c0, c0 + CONV_T_CHANNELS < C ? c0 + CONV_T_CHANNELS : C);
}

/* taps [kk0, kk1) of X^T for pixels [p0, p0 + np) into ap: from the input in place where no tap
 * reaches padding, else from its padded copy */
static void conv_t_im2col(const conv_t_job *J, float *ap, int64_t kk0, int64_t kk1, int64_t p0, int64_t np) {
    const x86_conv_geom *g = &J->s->g;
    const int in_place = conv_t_unpadded(g) && !J->s->merge_h;
    J->s->op.k->im2col_a(in_place ? J->xn : J->t.xp, g, in_place ? g->H : conv_t_ph(g), in_place ? g->W : conv_t_pw(g),
                         ap, kk0, kk1, p0, np);
}

static void conv_t_im2col_task(void *ctx, int64_t item, int worker) {
    const conv_t_job *J = (const conv_t_job *)ctx;
    const x86_conv_geom *g = &J->s->g;
    const int64_t rows = CONV_T_CHANNELS * g->kh * g->kw, K = g->C * g->kh * g->kw, kk0 = item * rows;
    (void)worker;
    conv_t_im2col(J, J->t.ap, kk0, kk0 + rows < K ? kk0 + rows : K, J->p0, J->np);
}

/* C^T of pixels [p0, p0 + np) (ct: np x O), output channels [o0, o1), into the NCHW output; merged
 * images: cut where an image ends (each image's P0 = P / N pixels, O * P0 floats apart) */
static void conv_t_store(const conv_t_job *J, const float *ct, int64_t p0, int64_t np, int64_t o0, int64_t o1) {
    const x86_conv_state *s = J->s;
    const int64_t P = s->g.OH * s->g.OW, O = s->O;
    if (!s->merge_h) {
        s->op.k->transpose_out(ct, np, O, J->yn + p0, P, o0, o1);
        return;
    }
    const int64_t P0 = P / s->N;
    for (int64_t p = p0; p < p0 + np;) {
        const int64_t n = p / P0, end = (n + 1) * P0 < p0 + np ? (n + 1) * P0 : p0 + np;
        s->op.k->transpose_out(ct + (p - p0) * O, end - p, O, J->yn + n * O * P0 + (p - n * P0), P0, o0, o1);
        p = end;
    }
}

static void conv_t_out_task(void *ctx, int64_t item, int worker) {
    const conv_t_job *J = (const conv_t_job *)ctx;
    const int64_t O = J->s->O, o0 = item * CONV_T_OUT;
    (void)worker;
    conv_t_store(J, J->t.ct, J->p0, J->np, o0, o0 + CONV_T_OUT < O ? o0 + CONV_T_OUT : O);
}

/* per_item: chunk `item` of the image, whole, on the worker's own part of the scratch */
static void conv_t_chunk_task(void *ctx, int64_t item, int worker) {
    const conv_t_job *J = (const conv_t_job *)ctx;
    const x86_conv_state *s = J->s;
    const x86_kernels *k = s->op.k;
    const x86_conv_geom *g = &s->g;
    const int64_t P = g->OH * g->OW, Kg = g->C * g->kh * g->kw, p0 = item * s->chunk_cols;
    const int64_t np = P - p0 < s->chunk_cols ? P - p0 : s->chunk_cols;
    int64_t xp_floats, ap_floats, ct_floats;
    conv_t_sizes(k, g, s->O, s->chunk_cols, s->merge_h > 0, &xp_floats, &ap_floats, &ct_floats);
    float *ap = J->t.ap + worker * (ap_floats + ct_floats), *ct = ap + ap_floats;
    if (conv_is_plain_1x1(g) && !s->merge_h) k->pack_a(J->xn + p0, 1, P, np, Kg, ap, 1);
    else conv_t_im2col(J, ap, 0, Kg, p0, np);
    k->gemm(np, s->O, Kg, ap, s->w, ct, s->O, &J->e, 1);
    conv_t_store(J, ct, p0, np, 0, s->O);
}

static void conv_transposed(const x86_conv_state *s, const float *x, const float *bias, float *y) {
    const x86_kernels *k = s->op.k;
    const x86_conv_geom *g = &s->g;
    const int64_t P = g->OH * g->OW, Kg = g->C * g->kh * g->kw, O = s->O;
    const int merged = s->merge_h > 0, direct = conv_is_plain_1x1(g) && !merged, threads = s->op.threads;
    conv_t_job J = {s, NULL, NULL, conv_t_layout(k, g, O, s->chunk_cols, merged, s->t_work), 0, 0, s->epi};
    x86_epilogue *e = &J.e;
    e->bias = bias;
    e->bias_rs = 0; /* C^T: the bias runs along the columns */
    e->bias_cs = 1;
    for (int64_t n = 0; n < (merged ? 1 : s->N); ++n) { /* merged: g is all images' rows, once */
        J.xn = x + n * g->C * g->H * g->W;
        J.yn = y + n * O * P;
        if (!direct && (merged || !conv_t_unpadded(g)))
            x86_parallel(threads, (g->C + CONV_T_CHANNELS - 1) / CONV_T_CHANNELS, conv_t_pad_task, &J);
        if (s->per_item) {
            x86_parallel(threads, (P + s->chunk_cols - 1) / s->chunk_cols, conv_t_chunk_task, &J);
            continue;
        }
        for (J.p0 = 0; J.p0 < P; J.p0 += s->chunk_cols) {
            J.np = P - J.p0 < s->chunk_cols ? P - J.p0 : s->chunk_cols;
            if (direct) /* vector copies of MR pixels: a few percent of the GEMM */
                k->pack_a(J.xn + J.p0, 1, P, J.np, Kg, J.t.ap, 1);
            else
                x86_parallel(threads, (g->C + CONV_T_CHANNELS - 1) / CONV_T_CHANNELS, conv_t_im2col_task, &J);
            k->gemm(J.np, O, Kg, J.t.ap, s->w, J.t.ct, O, e, threads);
            x86_parallel(threads, (O + CONV_T_OUT - 1) / CONV_T_OUT, conv_t_out_task, &J);
        }
    }
}

/* inference (x86infer): x86.ConvGlobalAvgPool (conv_gap_impl.h). Item = (image, panel of NR output channels);
 * each prefetches the next panel's weights, usually its own next item (x86_parallel hands out runs of items). */
static void conv_gap_task(void *ctx, int64_t item, int worker) {
    const conv_job *J = (const conv_job *)ctx;
    const x86_conv_state *s = J->s;
    const x86_kernels *k = s->op.k;
    const int64_t P = s->g.OH * s->g.OW, C = s->g.C, panels = (s->O + k->nr - 1) / k->nr;
    const int64_t n = item / panels, o0 = item % panels * k->nr;
    (void)worker;
    const float *next = o0 + k->nr < s->O ? s->w + (o0 + k->nr) * C : NULL;
    const int64_t image = (s->g.in_nc16 ? x86_nc16_channels(C) : C) * P; /* NC16: channels in whole blocks */
    k->gap_panel(J->x + n * image, s->g.in_nc16, P, C, s->w + o0 * C, next, J->bias ? J->bias + o0 : NULL,
                 (int)(s->O - o0 < k->nr ? s->O - o0 : k->nr), &s->epi, J->y + n * s->O + o0);
}

static int conv_compute(x86_conv_state *s, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, const float *res);

/* inference (x86infer): a strided 1x1 by the pointwise kernel reads only every sh-th row and sw-th
 * column; those pixels are gathered first into a plane of OH x OW (in the input's layout), which the
 * kernel then reads as a plain 1x1's. Item: one block of 16 channels (NC16: one block, NCHW: 16 planes). */
typedef struct {
    const x86_conv_geom *g;
    const float *x;
    float *xs;
} conv_gather_job;

static void conv_gather_task(void *ctx, int64_t item, int worker) {
    const conv_gather_job *J = (const conv_gather_job *)ctx;
    const x86_conv_geom *g = J->g;
    const int64_t plane = g->H * g->W, out_plane = g->OH * g->OW, c0 = item * X86_NC16;
    (void)worker;
    if (g->in_nc16) { /* a pixel's 16 channels: one 64-byte copy */
        const float *src = J->x + c0 * plane;
        float *dst = J->xs + c0 * out_plane;
        for (int64_t oh = 0; oh < g->OH; ++oh)
            for (int64_t ow = 0; ow < g->OW; ++ow, dst += X86_NC16)
                memcpy(dst, src + (oh * g->sh * g->W + ow * g->sw) * X86_NC16, X86_NC16 * sizeof(float));
        return;
    }
    const int64_t c1 = c0 + X86_NC16 < g->C ? c0 + X86_NC16 : g->C;
    for (int64_t c = c0; c < c1; ++c) {
        const float *src = J->x + c * plane;
        float *dst = J->xs + c * out_plane;
        for (int64_t oh = 0; oh < g->OH; ++oh)
            for (int64_t ow = 0; ow < g->OW; ++ow) *dst++ = src[oh * g->sh * g->W + ow * g->sw];
    }
}

int x86_conv_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_conv_state *s = (x86_conv_state *)state;
    const x86_conv_geom *g = &s->g;
    (void)n_out;
    if (ins[0].dtype != MNN_FLOAT32 || ins[1].dtype != MNN_FLOAT32) {
        s->op.error = "x86 Conv takes float32 tensors";
        return 1;
    }
    const int out_nc16 = s->pwdw ? s->dg.out_nc16 : g->out_nc16; /* x86.ConvDepthwise: the depthwise writes it */
    if (ins[0].layout != (g->in_nc16 ? X86_LAYOUT_NC16 : 0) || outs[0].layout != (out_nc16 ? X86_LAYOUT_NC16 : 0)) {
        s->op.error = "x86 Conv was prepared for other tensor layouts than it was given";
        return 1;
    }
    if (s->res_input < 0) return conv_compute(s, ins, n_in, outs, NULL);
    const mnn_tensor *r = &ins[s->res_input];
    if (s->res_input >= n_in || r->dtype != MNN_FLOAT32 || r->layout != outs[0].layout ||
        x86_tensor_floats(r) != x86_tensor_floats(&outs[0])) {
        s->op.error = "x86.ConvAdd's residual is not a float32 tensor of its output's shape and layout";
        return 1;
    }
    if (conv_compute(s, ins, n_in, outs, (const float *)r->data)) return 1;
    if (!s->pointwise) { /* the pointwise kernel added it in registers; the other paths: two passes over y */
        float *y = (float *)outs[0].data;
        const int64_t n = x86_tensor_floats(&outs[0]), one = 1;
        s->op.k->binary(X86_ADD, y, (const float *)r->data, y, 1, &n, &one, &one, s->op.threads);
        if (s->res_act.act != MNN_ACT_NONE) s->op.k->activation(&s->res_act, y, y, n, s->op.threads);
    }
    return 0;
}

/* the convolution into outs[0]; res: the pointwise kernel's residual (x86.ConvAdd), else NULL */
static int conv_compute(x86_conv_state *s, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, const float *res) {
    const x86_kernels *k = s->op.k;
    const x86_conv_geom *g = &s->g;
    const float *x = (const float *)ins[0].data;
    float *y = (float *)outs[0].data;
    const float *bias = s->bias_input >= 0 && s->bias_input < n_in ? (const float *)ins[s->bias_input].data : s->bias;
    const int64_t out_plane = g->OH * g->OW;
    if (s->depthwise) {
        const float *w = s->weight_input >= 0 ? (const float *)ins[s->weight_input].data : s->w;
        k->depthwise(x, w, bias, y, s->N * g->C, g, &s->epi, s->work, s->op.threads);
        return 0;
    }
    if (s->pwdw) { /* inference (x86infer): x86.ConvDepthwise */
        k->pointwise_dw(x, s->w, bias, s->dw_w, s->dw_bias, y, s->N, g, &s->epi, &s->dg, &s->dw_epi, s->work,
                        s->op.threads);
        return 0;
    }
    if (s->pointwise) { /* inference (x86infer): per image; an NC16 image holds its channels rounded up */
        const int64_t cx = g->in_nc16 ? x86_nc16_channels(g->C) : g->C, cy = g->out_nc16 ? x86_nc16_channels(s->O) : s->O;
        const int strided = !conv_is_plain_1x1(g); /* s->work: the gathered pixels (conv_gather_task) */
        for (int64_t n = 0; n < s->N; ++n) {
            const float *xn = x + n * cx * g->H * g->W;
            if (strided) {
                conv_gather_job G = {g, xn, s->work};
                x86_parallel(s->op.threads, (g->C + X86_NC16 - 1) / X86_NC16, conv_gather_task, &G);
                xn = s->work;
            }
            k->pointwise(xn, s->w, bias, res ? res + n * cy * out_plane : NULL, y + n * cy * out_plane, g->C, s->O,
                         out_plane, g, &s->epi, s->op.threads);
        }
        return 0;
    }
    if (s->gap) { /* inference (x86infer): x86.ConvGlobalAvgPool, its input NCHW or NC16 */
        conv_job J = {s, x, bias, y};
        x86_parallel(s->op.threads, s->N * ((s->O + k->nr - 1) / k->nr), conv_gap_task, &J);
        return 0;
    }
    if (s->direct && s->pool) { /* inference (x86infer): and the max pooling after it */
        k->direct_conv_pool(x, s->w, bias, y, s->N, s->O, g, &s->pg, &s->epi, s->d_rows, s->d_parts,
                            s->d_worker_floats, s->work, s->op.threads);
        return 0;
    }
    if (s->direct == 2) { /* inference (x86infer): output channels along the vectors (conv_direct_oc_impl.h) */
        k->dco_conv(x, s->w, bias, y, s->N, s->O, g, &s->epi, s->d_rows, s->d_parts, s->d_worker_floats, s->work,
                    s->op.threads);
        return 0;
    }
    if (s->direct) { /* inference (x86infer): few input channels (conv_direct_impl.h) */
        k->direct_conv(x, s->w, bias, y, s->N, s->O, g, &s->epi, s->d_rows, s->d_parts, s->d_worker_floats, s->work,
                       s->op.threads);
        return 0;
    }
    if (s->transposed) {
        conv_transposed(s, x, bias, y);
        return 0;
    }
    if (s->winograd) { /* inference (x86infer): weights transformed and packed at prepare */
        k->winograd(x, s->w, s->w_group_stride, s->O, bias, y, s->N, g, &s->epi, s->chunk_cols, s->per_item,
                    s->wino_gemm_t, s->work, s->op.threads, s->bf16);
        return 0;
    }
    if (s->bf16) return x86_conv_bf16_run(s, x, bias, y); /* precision="low" (bf16.h) */
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
