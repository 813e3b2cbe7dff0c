/* The op layer's threading (parallel.h): GEMMs split into ranges of whole row or column panels, float
 * convolutions into (image, group, chunk of output columns) tasks or, for one small image, into the
 * GEMM's panels; depthwise into whole planes. Each part runs the serial kernel on its range with its
 * own scratch slice, so every output is the same instructions on any thread count. */
#include "ops.h"
#include "parallel.h"

/* below this many multiply-adds a part costs more to hand out than to run */
#define MIN_PART_MACS (64.0 * 1024.0)

int arm_par_parts(int threads, double macs) {
    const double most = macs / MIN_PART_MACS;
    if (threads <= 1 || most < 2.0) return 1;
    return most < threads ? (int)most : threads;
}

typedef struct gemm_job {
    const arm_fkernels *k;
    int64_t M, N, K, ldc;
    const char *ap, *bp;
    char *c;
    const arm_epilogue *e;
    int by_rows;
} gemm_job;

static void gemm_part(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const gemm_job *j = (const gemm_job *)ctx;
    const int64_t pb = j->k->elem_bytes, io = j->k->io_bytes;
    arm_epilogue e = *j->e;
    if (j->by_rows) { /* rows [b, end): A's panels from b / MR on; the bias moves with the rows */
        if (e.bias) e.bias += b * e.bias_rs;
        j->k->gemm(end - b, j->N, j->K, j->ap + b * j->K * pb, j->bp, j->c + b * j->ldc * io, j->ldc, &e);
    } else {
        if (e.bias) e.bias += b * e.bias_cs;
        j->k->gemm(j->M, end - b, j->K, j->ap, j->bp + b * j->K * pb, j->c + b * io, j->ldc, &e);
    }
}

void arm_gemm_par(const arm_fkernels *k, int threads, int64_t M, int64_t N, int64_t K, const void *ap, const void *bp,
                  void *c, int64_t ldc, const arm_epilogue *e) {
    const int parts = arm_par_parts(threads, (double)M * (double)N * (double)K);
    const int64_t pm = (M + k->mr - 1) / k->mr, pn = (N + k->nr - 1) / k->nr;
    if (parts <= 1 || (pm < 2 && pn < 2)) {
        k->gemm(M, N, K, ap, bp, c, ldc, e);
        return;
    }
    gemm_job j = {k, M, N, K, ldc, (const char *)ap, (const char *)bp, (char *)c, e, pm > pn};
    arm_parallel(parts, j.by_rows ? M : N, j.by_rows ? k->mr : k->nr, gemm_part, &j);
}

typedef struct conv_job {
    const arm_conv_state *s;
    const char *x;
    char *y;
    const float *bias;
    int64_t chunks; /* chunks of output columns per (image, group) */
} conv_job;

/* tasks [b, end) of (image, group, chunk), on scratch slice tid */
static void conv_tasks(void *ctx, int64_t b, int64_t end, int tid) {
    const conv_job *j = (const conv_job *)ctx;
    const arm_conv_state *s = j->s;
    const arm_conv_geom *g = &s->g;
    const int64_t eb = s->k->io_bytes, cols = g->OH * g->OW;
    void *work = (char *)s->work + tid * s->work_bytes;
    for (int64_t t = b; t < end; ++t) {
        const int64_t ci = t % j->chunks, gi = (t / j->chunks) % s->group, n = t / j->chunks / s->group;
        arm_epilogue e = s->epi;
        e.bias = j->bias ? j->bias + gi * s->og : NULL;
        e.bias_rs = 1;
        e.bias_cs = 0;
        const int64_t n0 = ci * s->chunk_cols, nc = cols - n0 < s->chunk_cols ? cols - n0 : s->chunk_cols;
        arm_conv_gemm_cols(s->k, g, s->og, (const char *)s->w + gi * s->w_group_bytes,
                           j->x + (n * s->group + gi) * g->C * g->H * g->W * eb,
                           j->y + (n * s->O + gi * s->og) * cols * eb, &e, n0, nc, work);
    }
}

/* planes [b, end) of N*C, cut at image boundaries (the kernels find a plane's channel as p % C) */
static void depthwise_planes(void *ctx, int64_t b, int64_t end, int tid) {
    const conv_job *j = (const conv_job *)ctx;
    const arm_conv_state *s = j->s;
    const arm_conv_geom *g = &s->g;
    const int64_t eb = s->k->io_bytes, taps = g->kh * g->kw;
    void *work = (char *)s->work + tid * s->work_bytes;
    for (int64_t p = b; p < end;) {
        const int64_t c0 = p % g->C, img_end = p - c0 + g->C, q = end < img_end ? end : img_end;
        s->k->depthwise(j->x + p * g->H * g->W * eb, (const float *)s->w + c0 * taps, j->bias ? j->bias + c0 : NULL,
                        j->y + p * g->OH * g->OW * eb, q - p, g, &s->epi, work);
        p = q;
    }
}

void arm_conv_par(const arm_conv_state *s, const char *x, char *y, const float *bias) {
    const arm_conv_geom *g = &s->g;
    const int64_t eb = s->k->io_bytes, cols = g->OH * g->OW;
    const int threads = arm_threads(s) < s->slices ? arm_threads(s) : (s->slices > 0 ? s->slices : 1);
    const double macs = (double)s->N * s->O * cols * g->C * g->kh * g->kw;
    const int parts = arm_par_parts(threads, macs);
    conv_job j = {s, x, y, bias, cols > 0 ? (cols + s->chunk_cols - 1) / s->chunk_cols : 0};
    if (s->depthwise) {
        arm_parallel(parts, s->N * g->C, 1, depthwise_planes, &j);
        return;
    }
    if (s->winograd) {
        arm_epilogue e = s->epi;
        e.bias = bias;
        e.bias_rs = 1;
        e.bias_cs = 0;
        for (int64_t n = 0; n < s->N; ++n)
            if (s->winograd == 2) /* the fp16 path's, on fp16 or fp32 activations */
                arm_wino_h_conv_mt(g, s->O, s->w, x + n * g->C * g->H * g->W * eb, y + n * s->O * cols * eb, (int)eb,
                                   &e, s->chunk_cols, s->work, parts);
            else
                arm_wino_conv_mt(s->k, g, s->O, (const float *)s->w, (const float *)(x + n * g->C * g->H * g->W * eb),
                                 (float *)(y + n * s->O * cols * eb), &e, s->chunk_cols, s->work, parts);
        return;
    }
    const int64_t tasks = s->N * s->group * j.chunks;
    if (parts <= 1 || tasks >= parts) {
        arm_parallel(parts, tasks, 1, conv_tasks, &j);
        return;
    }
    /* fewer tasks than threads (one small image): each chunk's GEMM split across them instead */
    for (int64_t t = 0; t < tasks; ++t) {
        const int64_t ci = t % j.chunks, gi = (t / j.chunks) % s->group, n = t / j.chunks / s->group;
        const int64_t n0 = ci * s->chunk_cols, nc = cols - n0 < s->chunk_cols ? cols - n0 : s->chunk_cols;
        const int64_t K = g->C * g->kh * g->kw;
        const char *xi = x + (n * s->group + gi) * g->C * g->H * g->W * eb;
        arm_epilogue e = s->epi;
        e.bias = bias ? bias + gi * s->og : NULL;
        e.bias_rs = 1;
        e.bias_cs = 0;
        if (g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->OH == g->H &&
            g->OW == g->W)
            s->k->pack_b(xi + n0 * eb, cols, 1, K, nc, s->work);
        else
            s->k->im2col_b(xi, g, n0, nc, s->work);
        arm_gemm_par(s->k, parts, s->og, nc, K, (const char *)s->w + gi * s->w_group_bytes, s->work,
                     y + ((n * s->O + gi * s->og) * cols + n0) * eb, cols, &e);
    }
}

/* -- int8 ------------------------------------------------------------------------------------------ */

typedef struct qgemm_job {
    const arm_qkernels *k;
    int64_t M, K4, ldc;
    const int8_t *ap, *bp;
    int32_t *c;
} qgemm_job;

static void qgemm_cols(void *ctx, int64_t b, int64_t end, int tid) {
    (void)tid;
    const qgemm_job *j = (const qgemm_job *)ctx;
    j->k->gemm(j->M, end - b, j->K4, j->ap, j->bp + b * j->K4, j->c + b, j->ldc);
}

void arm_qgemm_par(const arm_qkernels *k, int threads, int64_t M, int64_t N, int64_t K4, const int8_t *ap,
                   const int8_t *bp, int32_t *c, int64_t ldc) {
    const int parts = arm_par_parts(threads, (double)M * (double)N * (double)K4 * 4.0);
    if (parts <= 1 || N <= k->nr) {
        k->gemm(M, N, K4, ap, bp, c, ldc);
        return;
    }
    qgemm_job j = {k, M, K4, ldc, ap, bp, c};
    arm_parallel(parts, N, k->nr, qgemm_cols, &j); /* panel q of B starts at q * NR * K4 bytes */
}

typedef struct qconv_job {
    const arm_qconv_state *s;
    const char *x;
    char *y;
    const arm_qepilogue *e;
    int64_t chunks;
} qconv_job;

static void qconv_tasks(void *ctx, int64_t b, int64_t end, int tid) {
    const qconv_job *j = (const qconv_job *)ctx;
    const arm_qconv_state *s = j->s;
    const arm_conv_geom *g = &s->g;
    const int64_t npix = g->OH * g->OW, in_plane = g->H * g->W, K4 = arm_k4(g->C * g->kh * g->kw);
    int8_t *bwork = s->bwork + tid * s->bwork_bytes;
    int32_t *colsum = s->colsum + tid * s->chunk_cols, *acc = s->acc + tid * s->acc_elems;
    for (int64_t t = b; t < end; ++t) {
        const int64_t ci = t % j->chunks, gi = (t / j->chunks) % s->group, n = t / j->chunks / s->group;
        const int64_t n0 = ci * s->chunk_cols, nc = npix - n0 < s->chunk_cols ? npix - n0 : s->chunk_cols;
        arm_qepilogue ec = *j->e; /* this group's rows (as arm_qconv_gemm's callers place them) */
        ec.da = j->e->da + gi * s->og * j->e->da_rs;
        ec.rowsum = j->e->rowsum + gi * s->og;
        ec.bias = j->e->bias ? j->e->bias + gi * s->og : NULL;
        ec.mult = j->e->mult + gi * s->og * j->e->mult_rs;
        int32_t *cs = arm_q_needs_colsum(&ec, s->og) ? colsum : NULL;
        ec.colsum = cs;
        arm_q_im2col_b(j->x + (n * s->group + gi) * g->C * in_plane, s->is_uint8, s->zx, g, n0, nc, bwork, cs);
        s->k->gemm(s->og, nc, K4, s->w + gi * s->w_group_bytes, bwork, acc, nc);
        arm_q_finish(acc, nc, j->y + ((n * s->O + gi * s->og) * npix + n0) * s->out_bytes, npix, 0, 0, s->og, nc,
                     &ec);
    }
}

/* planes [b, end) of N*C, cut at image boundaries; sums in this slice's acc, indexed by channel */
static void qdepthwise_planes(void *ctx, int64_t b, int64_t end, int tid) {
    const qconv_job *j = (const qconv_job *)ctx;
    const arm_qconv_state *s = j->s;
    const arm_conv_geom *g = &s->g;
    const int64_t npix = g->OH * g->OW, in_plane = g->H * g->W, taps = g->kh * g->kw;
    int32_t *acc = s->acc + tid * s->acc_elems;
    int16_t *dwork = s->dwork + tid * s->dwork_elems;
    for (int64_t p = b; p < end;) {
        const int64_t c0 = p % g->C, img_end = p - c0 + g->C, q = end < img_end ? end : img_end;
        if (s->k->depthwise_q && j->e->out_kind != 0) { /* requantized in the kernel's tiles */
            s->k->depthwise_q(j->x + p * in_plane, s->is_uint8, s->zx, s->w16 + c0 * taps,
                              j->e->bias ? j->e->bias + c0 : NULL, j->e->mult + c0 * j->e->mult_rs, j->e->mult_rs,
                              (int32_t)j->e->zy, j->e->out_kind, j->y + p * npix * s->out_bytes, acc, q - p, g, dwork);
            p = q;
            continue;
        }
        s->k->depthwise(j->x + p * in_plane, s->is_uint8, s->zx, s->w16 + c0 * taps,
                        j->e->bias ? j->e->bias + c0 : NULL, acc + c0 * npix, q - p, g, dwork);
        for (int64_t c = c0; c < c0 + (q - p); ++c) {
            arm_qepilogue ec = *j->e; /* the depthwise sums are exact (x - zx, w - zw): nothing to undo */
            ec.K = 0;
            ec.rowsum = ec.colsum = NULL;
            ec.bias = NULL;
            ec.mult = j->e->mult + c * j->e->mult_rs;
            ec.mult_rs = 0;
            arm_q_finish(acc + c * npix, npix, j->y + (p - c0 + c) * npix * s->out_bytes, npix, 0, 0, 1, npix, &ec);
        }
        p = q;
    }
}

/* the direct 3x3 path: padded-grid columns [b, end) (multiples of 12) in chunks of chunk_cols, each chunk's
 * sums requantized row segment by row segment (the grid's two extra columns a row left out) */
static void qconv3x3_cols(void *ctx, int64_t b, int64_t end, int tid) {
    const qconv_job *j = (const qconv_job *)ctx;
    const arm_qconv_state *s = j->s;
    const int64_t W = s->g.W, Wp = W + 2, npix = s->g.OH * s->g.OW;
    int32_t *acc = s->acc + tid * s->acc_elems;
    for (int64_t c0 = b; c0 < end; c0 += s->chunk_cols) {
        const int64_t nc = end - c0 < s->chunk_cols ? end - c0 : s->chunk_cols;
        arm_q_conv3x3_tiles(s->og, s->w, s->groups, s->xq, s->off, c0, nc, acc, nc);
        for (int64_t yy = c0 / Wp; yy * Wp < c0 + nc && yy < s->g.OH; ++yy) {
            const int64_t lo = c0 > yy * Wp ? c0 : yy * Wp, hi = c0 + nc < yy * Wp + W ? c0 + nc : yy * Wp + W;
            if (hi > lo)
                arm_q_finish(acc + (lo - c0), nc, j->y + (yy * W + lo - yy * Wp) * s->out_bytes, npix, 0, 0, s->og,
                             hi - lo, j->e);
        }
    }
}

void arm_qconv_par(const arm_qconv_state *s, const char *x, char *y, const arm_qepilogue *e) {
    const arm_conv_geom *g = &s->g;
    const int64_t npix = g->OH * g->OW;
    int threads = arm_threads(s) < s->slices ? arm_threads(s) : (s->slices > 0 ? s->slices : 1);
    const double macs = (double)s->N * s->O * npix * (s->depthwise ? 1 : g->C) * g->kh * g->kw;
    const int parts = arm_par_parts(threads, macs);
    qconv_job j = {s, x, y, e, npix > 0 ? (npix + s->chunk_cols - 1) / s->chunk_cols : 0};
    if (s->direct) { /* the padded quads once per image (shared), then the grid's columns over the threads */
        const int64_t cols = (g->OH * (g->W + 2) + ARM_Q_NR - 1) / ARM_Q_NR * ARM_Q_NR;
        for (int64_t n = 0; n < s->N; ++n) {
            arm_q_pad_quads(x + n * g->C * g->H * g->W, s->is_uint8, s->zx, g->C, g->H, g->W, s->xq, s->plane);
            j.y = y + n * s->O * npix * s->out_bytes;
            arm_parallel(parts, cols, ARM_Q_NR, qconv3x3_cols, &j);
        }
        return;
    }
    if (s->depthwise) arm_parallel(parts, s->N * g->C, 1, qdepthwise_planes, &j);
    else arm_parallel(parts, s->N * s->group * j.chunks, 1, qconv_tasks, &j);
}
