/* x86.Attention (mnn_x86/ops_attention.py): softmax(scale * Q K^T + mask) V per batch matrix, block by
 * block of MR query rows, so the M x N scores never leave the cache.
 *
 * Unfused, the scores are a tensor: at 1500 frames and 6 heads (a Whisper encoder) 54 MB written by
 * the first MatMul, read and written by the scale and the softmax, then packed into A panels by the
 * second MatMul (a scalar transpose of every element). Here a block computes its scores transposed,
 * S^T = K Q_blk^T (N x MR, row-major), which is already the packed A panel the second GEMM reads
 * (panel rows are MR floats apart, once copied from the softmax's rows), and the softmax runs down
 * its columns (eltwise_impl.h's strided softmax, one vector of lanes per key). K is packed once per
 * batch as A panels, V as B panels. */
#include <string.h>

#include "ops.h"
#include "thread_scratch.h"

static int64_t round16(int64_t n) { return (n + 15) & ~(int64_t)15; }

typedef struct {
    const x86_attention_state *s;
    const float *q, *k, *v, *mask;
    float *y, *kv;         /* kv: per batch, K's A panels then V's B panels (kv_floats apart) */
    float *work;           /* per worker: Q_blk^T's B panel, then S^T (work_floats apart) */
    int64_t kp_floats, kv_floats, work_floats, blocks;
} attention_ctx;

/* item i: K (i even) or V (i odd) of batch i / 2, packed */
static void attention_pack(void *ctx, int64_t i, int worker) {
    const attention_ctx *c = (const attention_ctx *)ctx;
    const x86_attention_state *s = c->s;
    const x86_kernels *k = s->op.k;
    const int64_t t = i / 2, N = s->N, D = s->D;
    float *dst = c->kv + t * c->kv_floats;
    (void)worker;
    if (i % 2 == 0) { /* A[n][d]: K^T given ([D][N]) or K itself ([N][D]) */
        const float *kt = c->k + t * N * D;
        if (s->k_rows) k->pack_a(kt, D, 1, N, D, dst, 1);
        else k->pack_a(kt, 1, N, N, D, dst, 1);
    } else {
        k->pack_b(c->v + t * N * s->Dv, s->Dv, 1, N, s->Dv, dst + c->kp_floats, 1);
    }
}

/* S^T's row stride while the softmax runs on it: MR rounded up to whole vectors. At MR floats apart,
 * every row was a masked load and store across two cache lines, each load waiting on the store
 * before it (the fused op ran 1.5x slower than the unfused ones); then the rows are packed MR apart. */
static int64_t attention_width(const x86_kernels *k) { return (k->mr + k->vlen - 1) / k->vlen * k->vlen; }

/* item i: query rows [r0, r0 + MR) of batch i / blocks */
static void attention_block(void *ctx, int64_t i, int worker) {
    const attention_ctx *c = (const attention_ctx *)ctx;
    const x86_attention_state *s = c->s;
    const x86_kernels *k = s->op.k;
    const int64_t MR = k->mr, NR = k->nr, W = attention_width(k), N = s->N, D = s->D, Dv = s->Dv;
    const int64_t t = i / c->blocks, r0 = (i % c->blocks) * MR;
    const int64_t rows = s->M - r0 < MR ? s->M - r0 : MR;
    float *qp = c->work + worker * c->work_floats, *sw = qp + round16(NR * D), *st = sw + round16(N * W);
    const float *kp = c->kv + t * c->kv_floats, *vp = kp + c->kp_floats;
    x86_epilogue e = s->epi;
    /* B[d][r] = Q[r0 + r][d], zero past the last row: all W columns of S^T are written, and finite */
    k->pack_b(c->q + (t * s->M + r0) * D, 1, D, D, rows, qp, 1);
    e.alpha = s->scale;
    k->gemm(N, W, D, kp, qp, sw, W, &e, 1);
    if (c->mask) { /* S^T[n][r] += mask[n]: one mask row for every query row */
        const int64_t dims[2] = {N, W}, sa[2] = {W, 1}, sb[2] = {s->mask_cs, 0};
        k->binary(X86_ADD, sw, c->mask + s->mask_off[t], sw, 2, dims, sa, sb, 1);
    }
    k->softmax(sw, sw, 1, N, W, 0, 1);
    for (int64_t n = 0; n < N; ++n) memcpy(st + n * MR, sw + n * W, (size_t)MR * sizeof(float));
    e.alpha = 1.0f;
    float *y = c->y + (t / s->y_heads) * s->y_bs + (t % s->y_heads) * s->y_hs + r0 * s->y_rs;
    k->gemm(rows, Dv, N, st, vp, y, s->y_rs, &e, 1);
}

int x86_attention_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    const x86_attention_state *s = (const x86_attention_state *)state;
    const x86_kernels *k = s->op.k;
    (void)n_out;
    for (int32_t i = 0; i < n_in; ++i) {
        if (ins[i].dtype != MNN_FLOAT32) {
            ((x86_attention_state *)state)->op.error = "x86 Attention takes float32 tensors";
            return 1;
        }
    }
    const int64_t MR = k->mr, NR = k->nr, N = s->N, D = s->D, Dv = s->Dv;
    attention_ctx c;
    c.s = s;
    c.q = (const float *)ins[0].data, c.k = (const float *)ins[1].data, c.v = (const float *)ins[2].data;
    c.mask = s->mask_input >= 0 ? (const float *)ins[s->mask_input].data : NULL;
    c.y = (float *)outs[0].data;
    c.kp_floats = round16((N + MR - 1) / MR * MR * D);
    c.kv_floats = c.kp_floats + round16((Dv + NR - 1) / NR * NR * N);
    c.work_floats = round16(NR * D) + round16(N * attention_width(k)) + round16(N * MR);
    c.blocks = (s->M + MR - 1) / MR;
    const int threads = s->op.threads;
    float *buf = (float *)thread_scratch((size_t)(s->batch * c.kv_floats + threads * c.work_floats) * sizeof(float));
    if (!buf) {
        ((x86_attention_state *)state)->op.error = "Attention: out of memory for the run's packing space";
        return 1;
    }
    c.kv = buf, c.work = buf + s->batch * c.kv_floats;
    x86_parallel(threads, 2 * s->batch, attention_pack, &c);  /* (in order on this thread at 1) */
    x86_parallel(threads, s->batch * c.blocks, attention_block, &c);
    return 0;
}
