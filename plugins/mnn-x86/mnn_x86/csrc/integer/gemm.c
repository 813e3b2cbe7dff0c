/* The exact int16 GEMM of packed operands and MatMulInteger (integer.h). */
#include <string.h>

#include "integer.h"
#include "integer/dot.h"

/* columns are taken in panels that stay in cache while every row block passes over them */
enum { PANEL = 64 };

void x86_igemm(const int16_t *ap, const int16_t *bp, int64_t M, int64_t n0, int64_t n1, int64_t Kp, int32_t *c,
               int64_t ldc) {
    int32_t t[16];
    for (int64_t p0 = n0; p0 < n1; p0 += PANEL) {
        const int64_t p1 = p0 + PANEL < n1 ? p0 + PANEL : n1;
        for (int64_t m = 0; m < M; m += X86_IT) {
            const int64_t mr = M - m < X86_IT ? M - m : X86_IT;
            for (int64_t n = p0; n < p1; n += X86_IT) {
                const int64_t nr = p1 - n < X86_IT ? p1 - n : X86_IT;
                x86_idot4x4(ap + m * Kp, bp + n * Kp, Kp, t);
                for (int64_t i = 0; i < mr; ++i) memcpy(c + (m + i) * ldc + n, t + i * 4, (size_t)nr * sizeof(int32_t));
            }
        }
    }
}

X86_CLONES void x86_iload(const void *x, int is_signed, int64_t n, int32_t z, int16_t *y) {
    if (is_signed) {
        const int8_t *s = (const int8_t *)x;
        for (int64_t i = 0; i < n; ++i) y[i] = (int16_t)(s[i] - z);
    } else {
        const uint8_t *u = (const uint8_t *)x;
        for (int64_t i = 0; i < n; ++i) y[i] = (int16_t)(u[i] - z);
    }
}

/* -- MatMulInteger --------------------------------------------------------------------------------- */

static int64_t numel(const mnn_tensor *t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
    return n;
}

/* a zero point given at run: one value for all n, or one each */
static void read_zero_points(const mnn_tensor *t, int32_t *z, int64_t n) {
    const int64_t have = numel(t);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t at = have == 1 ? 0 : (i < have ? i : have - 1);
        z[i] = t->dtype == MNN_INT8 ? ((const int8_t *)t->data)[at] : ((const uint8_t *)t->data)[at];
    }
}

typedef struct {
    x86_mmi_state *s;
    const mnn_tensor *ins;
    int32_t *y;
} mmi_job;

/* rows of A (all matrices' rows in one range), each minus its zero point */
static void pack_a(void *ctx, int64_t lo, int64_t hi, int worker) {
    const mmi_job *j = (const mmi_job *)ctx;
    const x86_mmi_state *s = j->s;
    const int sgn = j->ins[0].dtype == MNN_INT8;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t m = r % s->M, mat = r / s->M;
        x86_iload((const char *)j->ins[0].data + r * s->K, sgn, s->K, s->za[m], s->ap + (mat * s->Mp + m) * s->Kp);
    }
}

/* B^T of columns lo..hi (all matrices' columns in one range), each minus its zero point */
X86_CLONES static void pack_b(void *ctx, int64_t lo, int64_t hi, int worker) {
    const mmi_job *j = (const mmi_job *)ctx;
    const x86_mmi_state *s = j->s;
    const int64_t K = s->K, N = s->N;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t n = r % N, mat = r / N;
        int16_t *dst = s->bp + (mat * s->Np + n) * s->Kp;
        const int32_t z = s->zb[n];
        if (j->ins[1].dtype == MNN_INT8) {
            const int8_t *src = (const int8_t *)j->ins[1].data + mat * K * N + n;
            for (int64_t k = 0; k < K; ++k) dst[k] = (int16_t)(src[k * N] - z);
        } else {
            const uint8_t *src = (const uint8_t *)j->ins[1].data + mat * K * N + n;
            for (int64_t k = 0; k < K; ++k) dst[k] = (int16_t)(src[k * N] - z);
        }
    }
}

/* item = (output matrix, panel of columns) */
static void mmi_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const mmi_job *j = (const mmi_job *)ctx;
    const x86_mmi_state *s = j->s;
    const int64_t panels = (s->N + PANEL - 1) / PANEL;
    (void)worker;
    for (int64_t it = lo; it < hi; ++it) {
        const int64_t b = it / panels, n0 = it % panels * PANEL, n1 = n0 + PANEL < s->N ? n0 + PANEL : s->N;
        x86_igemm(s->ap + s->a_at[b] * s->Mp * s->Kp, s->bp + s->b_at[b] * s->Np * s->Kp, s->M, n0, n1, s->Kp,
                  j->y + b * s->M * s->N, s->N);
    }
}

int x86_mmi_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_mmi_state *s = (x86_mmi_state *)state;
    (void)n_in;
    (void)n_out;
    if (s->batch * s->M * s->N == 0) return 0;
    mmi_job j = {s, ins, (int32_t *)outs[0].data};
    if (s->K == 0) {
        memset(j.y, 0, (size_t)(s->batch * s->M * s->N) * sizeof(int32_t));
        return 0;
    }
    if (s->in_za >= 0) read_zero_points(&ins[s->in_za], s->za, s->M);
    if (s->in_zb >= 0) read_zero_points(&ins[s->in_zb], s->zb, s->N);
    const int64_t grain = 1 + 4096 / (s->K + 1);
    x86_pool->ranges(s->op.threads, s->a_count * s->M, grain, pack_a, &j);
    if (!s->b_ready) x86_pool->ranges(s->op.threads, s->b_count * s->N, grain, pack_b, &j);
    const int64_t panels = (s->N + PANEL - 1) / PANEL;
    x86_pool->ranges(s->op.threads, s->batch * panels, 1, mmi_range, &j);
    return 0;
}
