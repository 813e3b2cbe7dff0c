/* x86.Attention (mnn_x86/ops_attention.py): softmax(scale * Q K^T + mask) V per batch matrix, block by
 * block of query rows, so the M x N scores never leave the cache.
 *
 * Unfused, the scores are a tensor: at 1500 frames and 6 heads (a Whisper encoder) 54 MB written by
 * the first MatMul, read and written by the scale and the softmax, then packed by the second MatMul.
 * Here K^T and V are packed once per batch matrix as B panels; a block of query rows (as many as keep
 * its scores within ATTENTION_BLOCK_BYTES) computes S = Q_blk K^T with the scale in the GEMM's
 * epilogue, adds the mask, runs the softmax along its contiguous rows, packs S as A panels (16 x 16
 * transposes in registers) and multiplies by V into the output rows. The scores computed the other way
 * round (S^T = K Q_blk^T, already an A panel once copied) took one-vector-wide GEMM tiles, a softmax
 * down strided columns and a copy per key row: 1.3-1.5x the time of ONNX Runtime's unfused ops at
 * BERT's and ViT's sizes. Q, K and V are read where their walks say (ops.h): heads split from
 * [b][seq][heads][d] by a Transpose that the op took in are packed from there, with no copy. */

#include "ops.h"
#include "thread_scratch.h"

/* a block's scores: up to this many bytes (within L2, beside V's panels) */
#define ATTENTION_BLOCK_BYTES (64 * 1024)

static int64_t round16(int64_t n) { return (n + 15) & ~(int64_t)15; }
static int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

typedef struct {
    const x86_attention_state *s;
    const float *q, *k, *v, *mask;
    float *y, *kv;         /* kv: K^T's B panels then V's (kv_floats apart), per batch matrix or per worker */
    float *work;           /* per worker: Q_blk's A panels, S, S's A panels (work_floats apart) */
    int64_t kb_floats, kv_floats, work_floats, rows, blocks;
} attention_ctx;

/* the first element of batch matrix t of an operand laid out as `w` says */
static int64_t walk_at(const x86_attention_walk *w, int64_t t) {
    return w->off + (t / w->heads) * w->bs + (t % w->heads) * w->hs;
}

/* K^T (part 0) or V (part 1) of batch matrix t, packed as B panels at dst */
static void attention_pack_one(const attention_ctx *c, int64_t t, int part, float *dst) {
    const x86_attention_state *s = c->s;
    const x86_kernels *k = s->op.k;
    const int64_t N = s->N, D = s->D;
    if (part == 0) { /* B[d][n]: K ([N][D], read down its columns) or K^T itself ([D][N]) */
        const float *kt = c->k + walk_at(&s->k, t);
        if (s->k_rows) k->pack_b(kt, 1, s->k.rs, D, N, dst, 1);
        else k->pack_b(kt, s->k.rs, 1, D, N, dst, 1);
    } else {
        k->pack_b(c->v + walk_at(&s->v, t), s->v.rs, 1, N, s->Dv, dst + c->kb_floats, 1);
    }
}

/* item i: K^T (i even) or V (i odd) of batch matrix i / 2, into its place in c->kv */
static void attention_pack(void *ctx, int64_t i, int worker) {
    const attention_ctx *c = (const attention_ctx *)ctx;
    (void)worker;
    attention_pack_one(c, i / 2, (int)(i % 2), c->kv + i / 2 * c->kv_floats);
}

/* query rows [r0, r0 + c->rows) of batch matrix t, with its K^T and V packed at kb */
static void attention_rows(const attention_ctx *c, int64_t t, int64_t r0, const float *kb, int worker) {
    const x86_attention_state *s = c->s;
    const x86_kernels *k = s->op.k;
    const int64_t N = s->N, D = s->D, Dv = s->Dv;
    const int64_t rows = s->M - r0 < c->rows ? s->M - r0 : c->rows, panels = round_up(rows, k->mr);
    float *qa = c->work + worker * c->work_floats, *sc = qa + round16(panels * D), *sa = sc + round16(rows * N);
    const float *vb = kb + c->kb_floats;
    x86_epilogue e = s->epi;
    k->pack_a(c->q + walk_at(&s->q, t) + r0 * s->q.rs, s->q.rs, 1, rows, D, qa, 1);
    e.alpha = s->scale;
    k->gemm(rows, N, D, qa, kb, sc, N, &e, 1);
    if (c->mask) { /* S[r][n] += mask[n]: one mask row for every query row */
        const int64_t dims[2] = {rows, N}, sa_[2] = {N, 1}, sb[2] = {0, s->mask_cs};
        k->binary(X86_ADD, sc, c->mask + s->mask_off[t], sc, 2, dims, sa_, sb, 1);
    }
    k->softmax(sc, sc, rows, N, 1, 0, 1);
    k->pack_a(sc, N, 1, rows, N, sa, 1);
    e.alpha = 1.0f;
    k->gemm(rows, Dv, N, sa, vb, c->y + walk_at(&s->y, t) + r0 * s->y.rs, s->y.rs, &e, 1);
}

/* item i: block i % blocks of batch matrix i / blocks (K^T and V packed beforehand, in c->kv) */
static void attention_block(void *ctx, int64_t i, int worker) {
    const attention_ctx *c = (const attention_ctx *)ctx;
    const int64_t t = i / c->blocks;
    attention_rows(c, t, (i % c->blocks) * c->rows, c->kv + t * c->kv_floats, worker);
}

/* item t: batch matrix t whole, its K^T and V packed into the worker's own panels, still in L2 for
 * its blocks (packed all first, BERT's 96 matrices' panels went out to memory and back) */
static void attention_matrix(void *ctx, int64_t t, int worker) {
    const attention_ctx *c = (const attention_ctx *)ctx;
    float *kb = c->kv + worker * c->kv_floats;
    attention_pack_one(c, t, 0, kb);
    attention_pack_one(c, t, 1, kb);
    for (int64_t r0 = 0; r0 < c->s->M; r0 += c->rows) attention_rows(c, t, r0, kb, worker);
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
    c.kb_floats = round16(round_up(N, NR) * D);
    c.kv_floats = c.kb_floats + round16(round_up(Dv, NR) * N);
    /* whole A panels of query rows, as many as keep the block's scores within ATTENTION_BLOCK_BYTES */
    c.rows = ATTENTION_BLOCK_BYTES / (N * (int64_t)sizeof(float)) / MR * MR;
    if (c.rows < MR) c.rows = MR;
    if (c.rows > round_up(s->M, MR)) c.rows = round_up(s->M, MR);
    c.blocks = (s->M + c.rows - 1) / c.rows;
    c.work_floats = round16(c.rows * D) + round16(c.rows * N) + round16(c.rows * N);
    const int threads = s->op.threads;
    /* enough matrices to share out whole: one item each; else blocks of rows, K^T and V packed first */
    const int whole = s->batch >= 4 * (int64_t)threads;
    const int64_t kv_sets = whole ? threads : s->batch;
    float *buf = (float *)thread_scratch((size_t)(kv_sets * c.kv_floats + threads * c.work_floats) * sizeof(float));
    if (!buf) {
        ((x86_attention_state *)state)->op.error = "Attention: out of memory for the run's packing space";
        return 1;
    }
    c.kv = buf, c.work = buf + kv_sets * c.kv_floats;
    if (whole) {
        x86_parallel(threads, s->batch, attention_matrix, &c);
    } else {
        x86_parallel(threads, 2 * s->batch, attention_pack, &c); /* (in order on this thread at 1) */
        x86_parallel(threads, s->batch * c.blocks, attention_block, &c);
    }
    return 0;
}
