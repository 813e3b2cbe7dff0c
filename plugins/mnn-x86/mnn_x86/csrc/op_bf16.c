/* Conv and MatMul / Gemm on the bf16 GEMM (bf16.h), for precision="low": the fp32 ops' work split,
 * with the B operand rounded to bf16 while it is packed. Weights were packed at prepare. */
#include "bf16.h"

/* Conv work item t = (image n, group gi, chunk ch of output columns): the chunk's B packed as bf16
 * (a plain 1x1 straight from the NCHW rows; else the fp32 im2col, then converted while it is in
 * L2), then its GEMM. tmp: an fp32 chunk (x86_conv_state.work), bp: a bf16 one. */
static void conv_bf16_item(const x86_conv_state *s, const float *x, const float *bias, float *y, int64_t t,
                           float *tmp, uint32_t *bp, int threads) {
    const x86_bf16_conv *B = s->bf16;
    const x86_conv_geom *g = &s->g;
    const int64_t out_plane = g->OH * g->OW, cols = s->chunk_cols, chunks = (out_plane + cols - 1) / cols;
    const int64_t ch = t % chunks, gi = (t / chunks) % s->group, n = t / (chunks * s->group);
    const int64_t n0 = ch * cols, nc = out_plane - n0 < cols ? out_plane - n0 : cols, Kg = g->C * g->kh * g->kw;
    const float *xg = x + (n * s->group + gi) * g->C * g->H * g->W;
    const int plain_1x1 = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
                          g->OH == g->H && g->OW == g->W;
    x86_epilogue e = s->epi;
    e.bias = bias ? bias + gi * s->og : NULL;
    e.bias_rs = 1;
    e.bias_cs = 0;
    if (plain_1x1) {
        B->kb->pack_b(xg + n0, out_plane, 1, Kg, nc, bp, threads);
    } else {
        s->op.k->im2col_b(xg, g, n0, nc, tmp, threads);
        B->kb->convert_b(tmp, Kg, nc, bp, threads);
    }
    B->kb->gemm(s->og, nc, Kg, B->w + gi * B->w_group_stride, bp, y + (n * s->O + gi * s->og) * out_plane + n0,
                out_plane, &e, threads);
}

typedef struct {
    const x86_conv_state *s;
    const float *x, *bias;
    float *y;
} conv_bf16_job;

static void conv_bf16_task(void *ctx, int64_t t, int worker) {
    const conv_bf16_job *j = (const conv_bf16_job *)ctx;
    const x86_conv_state *s = j->s;
    conv_bf16_item(s, j->x, j->bias, j->y, t, s->work + worker * s->chunk_floats, s->bf16->bp + worker * s->bf16->bp_words,
                   1);
}

/* Many items: a thread each, with its own chunks; few: all threads share each item (x86_conv_plan) */
int x86_conv_bf16_run(const x86_conv_state *s, const float *x, const float *bias, float *y) {
    const int64_t out_plane = s->g.OH * s->g.OW;
    const int64_t items = s->N * s->group * ((out_plane + s->chunk_cols - 1) / s->chunk_cols);
    if (s->per_item) {
        conv_bf16_job j = {s, x, bias, y};
        x86_parallel(s->op.threads, items, conv_bf16_task, &j);
    } else {
        for (int64_t t = 0; t < items; ++t) conv_bf16_item(s, x, bias, y, t, s->work, s->bf16->bp, s->op.threads);
    }
    return 0;
}

/* MatMul / Gemm with B packed at prepare: per output matrix, A packed as bf16 (again only where
 * the batch moves to another A), then the GEMM */
int x86_matmul_bf16_run(const x86_matmul_state *s, const float *a, float *y, const x86_epilogue *e) {
    const x86_bf16_matmul *B = s->bf16;
    for (int64_t t = 0; t < s->batch; ++t) {
        const int64_t ao = s->a_off ? s->a_off[t] : 0;
        if (t == 0 || (s->a_off && ao != s->a_off[t - 1]))
            B->kb->pack_a(a + ao, s->a_rs, s->a_cs, s->M, s->K, B->a, s->op.threads);
        B->kb->gemm(s->M, s->N, s->K, B->a, B->b + t * B->b_stride, y + t * s->M * s->N, s->N, e, s->op.threads);
    }
    return 0;
}
