/* MatMulNBits on x86: the run (nbits.h). A is quantized (int8 path) on the caller, then the threads
 * take ranges of B's columns; each column is read once and multiplied with every row of A. */
#include "nbits.h"
#include "thread_scratch.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GRAIN_BYTES 32768 /* weight bytes a range should hold at least */

int x86_nbits_int8_path(int level) {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (level >= 2 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw"))
        return NBITS_VNNI;
    if (level >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return NBITS_AVX2;
#endif
    (void)level;
    return NBITS_FLOAT;
}

/* Row m of A as int8 blocks (scale amax / 127, rounded to nearest), zero past K; 4-bit weights take
 * each chunk's even elements first, then its odd ones (chunks of 32 for blocks of 32, else 64). */
X86_CLONES static void quantize_row(const x86_nbits_state *s, const float *a, int8_t *q, float *scale, float *sum,
                                     int32_t *totals) {
    const int chunk = s->block == 32 ? 32 : 64;
    int8_t kq[s->block];
    for (int b = 0; b < s->nb; b++) {
        int32_t total;
        const float d = x86_nbits_quantize_block(s, a, b, kq, &total);
        int8_t *qb = q + (int64_t)b * s->block;
        if (s->bits != 4) {
            memcpy(qb, kq, (size_t)s->block);
        } else {
            for (int64_t i = 0; i < s->block; i++) {
                const int64_t c = i % chunk, base = i - c;
                qb[base + (c & 1 ? chunk / 2 : 0) + c / 2] = kq[i];
            }
        }
        scale[b] = d;
        sum[b] = d * (float)total;
        totals[b] = total;
    }
}

static void int8_columns(void *ctx, int64_t lo, int64_t hi, int worker) {
    const nbits_job *j = (const nbits_job *)ctx;
    const x86_nbits_state *s = j->s;
    if (s->path == NBITS_VNNI) {
        x86_nbits_gemv_vnni(j, lo, hi);
        return;
    }
    const int nb = s->nb, kp = nb * s->block;
    /* the int8 AVX2 dot makes 8-bit weights signed (q - 128): the zero point moves with them */
    const int shift = s->bits == 8 ? 128 : 0;
    float *zs = s->work + (int64_t)worker * kp; /* each block's scale * zero point */
    for (int64_t n = lo; n < hi; n++) {
        const uint8_t *wn = j->w + n * nb * s->blob;
        const float *sn = j->scales + n * nb;
        const uint8_t *zn = j->zp ? j->zp + n * s->zbytes : NULL;
        for (int b = 0; b < nb; b++) zs[b] = sn[b] * (float)(x86_nbits_zero(zn, s->bits, b) - shift);
        const float bias = j->bias ? j->bias[n] : 0.0f;
        for (int64_t m = 0; m < s->M; m++) {
            const float *as = s->ascale + m * nb, *sums = s->asum + m * nb;
            const int8_t *aq = s->aq + m * kp;
            const float dot = x86_nbits_dot_avx2(s->bits, s->block, nb, wn, aq, sn, as);
            float corr = 0.0f;
            for (int b = 0; b < nb; b++) corr += zs[b] * sums[b];
            j->y[m * s->N + n] = dot - corr + bias;
        }
    }
}

X86_CLONES static void dequantize_plain(const x86_nbits_state *s, const uint8_t *w, const float *scales,
                                         const uint8_t *zp, float *out) {
    for (int b = 0; b < s->nb; b++) {
        const float d = scales[b], z = (float)x86_nbits_zero(zp, s->bits, b);
        const uint8_t *wb = w + (int64_t)b * s->blob;
        float *ob = out + (int64_t)b * s->block;
        if (s->bits == 8) {
            for (int i = 0; i < s->block; i++) ob[i] = ((float)wb[i] - z) * d;
        } else {
            for (int i = 0; i < s->blob; i++) {
                ob[2 * i] = ((float)(wb[i] & 0x0F) - z) * d;
                ob[2 * i + 1] = ((float)(wb[i] >> 4) - z) * d;
            }
        }
    }
}

/* a column of B as float32 [nb * block] */
static void dequantize_column(const x86_nbits_state *s, const uint8_t *w, const float *scales, const uint8_t *zp,
                              float *out) {
    if (s->block >= 32 && s->level >= 2) x86_nbits_dequant_avx512(s->bits, s->block, s->nb, w, scales, zp, out);
    else if (s->block >= 32 && s->level >= 1) x86_nbits_dequant_avx2(s->bits, s->block, s->nb, w, scales, zp, out);
    else dequantize_plain(s, w, scales, zp, out);
}

/* x . w over k, in 16 lanes (a vector's worth, whichever ISA the clone runs) */
X86_CLONES static float dot_f32(const float *x, const float *w, int64_t k) {
    float lane[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= k; i += 16)
        for (int l = 0; l < 16; l++) lane[l] += x[i + l] * w[i + l];
    float t = 0.0f;
    for (; i < k; i++) t += x[i] * w[i];
    for (int l = 0; l < 8; l++) lane[l] += lane[l + 8];
    for (int l = 0; l < 4; l++) lane[l] += lane[l + 4];
    return t + (lane[0] + lane[2]) + (lane[1] + lane[3]);
}

static void float_columns(void *ctx, int64_t lo, int64_t hi, int worker) {
    const nbits_job *j = (const nbits_job *)ctx;
    const x86_nbits_state *s = j->s;
    float *col = s->work + (int64_t)worker * s->nb * s->block;
    for (int64_t n = lo; n < hi; n++) {
        dequantize_column(s, j->w + n * s->nb * s->blob, j->scales + n * s->nb,
                          j->zp ? j->zp + n * s->zbytes : NULL, col);
        const float bias = j->bias ? j->bias[n] : 0.0f;
        for (int64_t m = 0; m < s->M; m++) j->y[m * s->N + n] = dot_f32(j->a + m * s->K, col, s->K) + bias;
    }
}

int64_t x86_nbits_panel_rows(const x86_nbits_state *s) {
    const int64_t mr = s->op.k->mr;
    return mr * (NBITS_PANEL / mr > 0 ? NBITS_PANEL / mr : 1);
}

int64_t x86_nbits_panel_floats(const x86_nbits_state *s) {
    const int64_t rows = x86_nbits_panel_rows(s), mr = s->op.k->mr;
    return rows * (int64_t)s->nb * s->block + (rows + mr - 1) / mr * mr * s->K + rows * s->M;
}

int64_t x86_nbits_packed_b(const x86_nbits_state *s) {
    const int64_t nr = s->op.k->nr;
    return (s->M + nr - 1) / nr * nr * s->K;
}

/* Y^T's rows [lo, hi) of panels: each panel's columns of B dequantized ([rows][K]) and packed as the
 * GEMM's left operand, times A^T (packed once per run as the right one), then written into Y's columns
 * with the bias */
static void gemm_panels(void *ctx, int64_t lo, int64_t hi, int worker) {
    const nbits_job *j = (const nbits_job *)ctx;
    const x86_nbits_state *s = j->s;
    const int64_t rows = x86_nbits_panel_rows(s), K = s->K, M = s->M, kp = (int64_t)s->nb * s->block;
    float *cols = s->panel + (int64_t)worker * x86_nbits_panel_floats(s);
    float *packed = cols + rows * kp, *out = packed + rows * K;
    const x86_epilogue e = {1.0f, 1.0f, NULL, 0, 0, MNN_ACT_NONE, 0.0f, 0.0f};
    for (int64_t p = lo; p < hi; p++) {
        const int64_t n0 = p * rows, nc = s->N - n0 < rows ? s->N - n0 : rows;
        for (int64_t c = 0; c < nc; c++) {
            const int64_t n = n0 + c;
            dequantize_column(s, j->w + n * s->nb * s->blob, j->scales + n * s->nb,
                              j->zp ? j->zp + n * s->zbytes : NULL, cols + c * kp);
        }
        s->op.k->pack_a(cols, kp, 1, nc, K, packed, 1);
        s->op.k->gemm(nc, M, K, packed, s->bp, out, M, &e, 1);
        for (int64_t m = 0; m < M; m++) {
            float *y = j->y + m * s->N + n0;
            for (int64_t c = 0; c < nc; c++) y[c] = out[c * M + m] + (j->bias ? j->bias[n0 + c] : 0.0f);
        }
    }
}

/* The run's scratch (quantized rows, dequantized panels, per-worker columns) is the calling thread's,
 * shared by every MatMulNBits it runs, not one per node and plan (a 24-layer decoder's 170 nodes held
 * 300 MB of them). */

#define ROUND64(n) (((n) + 63) & ~(size_t)63)

/* points the state's scratch into this thread's buffer; 0 when it cannot be had */
static int bind_scratch(x86_nbits_state *s) {
    const size_t kp = (size_t)s->nb * s->block, M = (size_t)s->M;
    size_t at[7], total = 0;
    at[0] = total, total += ROUND64(4 * (size_t)s->workers * (kp > 0 ? kp : 1)); /* work */
    at[1] = total, total += s->path == NBITS_GEMM ? 0 : ROUND64(M * kp + 64);     /* aq */
    at[2] = total, total += s->path == NBITS_GEMM ? 0 : ROUND64(4 * M * s->nb + 4); /* ascale */
    at[3] = total, total += s->path == NBITS_GEMM ? 0 : ROUND64(4 * M * s->nb + 4); /* asum */
    at[4] = total, total += s->path == NBITS_GEMM ? ROUND64(4 * (size_t)x86_nbits_packed_b(s)) : 0;
    at[5] = total, total += s->path == NBITS_GEMM ? ROUND64(4 * (size_t)s->workers * x86_nbits_panel_floats(s)) : 0;
    at[6] = total, total += s->path == NBITS_GEMM ? 0 : ROUND64(4 * M * s->nb + 4); /* atotal */
    if (s->path == NBITS_QGEMM) { /* packed A, its scales, the workers' columns */
        const size_t P = (size_t)x86_nbits_qgemm_panels(s), rows = NBITS_QG_ROWS;
        total = 0;
        at[1] = total, total += ROUND64(P * rows * kp);
        at[2] = total, total += ROUND64(4 * P * rows * s->nb);
        at[3] = total, total += ROUND64(4 * P * rows * s->nb);
        at[5] = total, total += ROUND64((size_t)s->workers * x86_nbits_qgemm_worker_bytes(s));
        at[0] = at[4] = at[6] = 0;
    }
    char *base = (char *)thread_scratch(total);
    if (!base) return 0;
    s->work = (float *)(base + at[0]);
    s->aq = (int8_t *)(base + at[1]);
    s->ascale = (float *)(base + at[2]);
    s->asum = (float *)(base + at[3]);
    s->bp = (float *)(base + at[4]);
    s->panel = (float *)(base + at[5]);
    s->atotal = (int32_t *)(base + at[6]);
    return 1;
}

int x86_nbits_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_nbits_state *s = (x86_nbits_state *)state;
    (void)n_in, (void)n_out;
    if (!bind_scratch(s)) {
        s->op.error = "MatMulNBits: out of memory for the run's scratch";
        return 1;
    }
    nbits_job j = {s,
                   (const float *)ins[0].data,
                   (const float *)ins[2].data,
                   s->bias_in >= 0 ? (const float *)ins[s->bias_in].data : NULL,
                   (const uint8_t *)ins[1].data,
                   s->zp_in >= 0 ? (const uint8_t *)ins[s->zp_in].data : NULL,
                   (float *)outs[0].data};
    if (s->M == 0 || s->N == 0) return 0;
    const int64_t column = (int64_t)s->nb * s->blob;
    const int64_t grain = 1 + GRAIN_BYTES / (column > 0 ? column : 1);
    if (s->path == NBITS_GEMM) {
        s->op.k->pack_b(j.a, 1, s->K, s->K, s->M, s->bp, s->op.threads);
        const int64_t rows = x86_nbits_panel_rows(s);
        x86_pool->ranges(s->op.threads, (s->N + rows - 1) / rows, 1, gemm_panels, &j);
        return 0;
    }
    if (s->path == NBITS_QGEMM) {
        x86_nbits_qgemm_quantize(s, j.a);
        const int64_t groups = (s->N + NBITS_QG_COLS - 1) / NBITS_QG_COLS;
        x86_pool->ranges(s->op.threads, groups, 1 + grain / NBITS_QG_COLS, x86_nbits_qgemm_columns, &j);
        return 0;
    }
    if (s->path == NBITS_FLOAT) {
        x86_pool->ranges(s->op.threads, s->N, grain, float_columns, &j);
        return 0;
    }
    const int64_t kp = (int64_t)s->nb * s->block;
    for (int64_t m = 0; m < s->M; m++)
        quantize_row(s, j.a + m * s->K, s->aq + m * kp, s->ascale + m * s->nb, s->asum + m * s->nb,
                     s->atotal + m * s->nb);
    x86_pool->ranges(s->op.threads, s->N, grain, int8_columns, &j);
    return 0;
}
