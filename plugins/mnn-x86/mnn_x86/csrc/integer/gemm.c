/* MatMulInteger (integer.h): A's rows as words of uint8 (int8 A shifted by 128), B in panels of
 * X86_QG_NR columns of int8 (uint8 B shifted by 128), the zero points shifted with them, then the
 * qgemm.h tiles panel by panel. */
#include <string.h>

#include "integer.h"

enum { NR = X86_QG_NR, MR = X86_QG_MR };

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

/* panels [lo, hi) of all matrices' B: bp[mat][panel][k4][n][e] = B[4 * k4 + e][panel * NR + n] ^ flip, and
 * each column's sum (zeros past K and N) */
X86_CLONES static void pack_b_panels(x86_mmi_state *s, const uint8_t *b, uint8_t flip, int64_t lo, int64_t hi) {
    const int64_t K = s->K, N = s->N, K4 = s->g.K4;
    for (int64_t it = lo; it < hi; ++it) {
        const int64_t mat = it / s->panels, n0 = it % s->panels * NR, nr = N - n0 < NR ? N - n0 : NR;
        uint8_t *dst = s->bp + it * K4 * NR * 4;
        int32_t *sum = s->bsum + it * NR;
        memset(dst, 0, (size_t)(K4 * NR * 4));
        for (int64_t n = 0; n < NR; ++n) sum[n] = 0;
        for (int64_t k = 0; k < K; ++k) {
            const uint8_t *src = b + (mat * K + k) * N + n0;
            uint8_t *d = dst + (k / 4) * NR * 4 + k % 4;
            for (int64_t n = 0; n < nr; ++n) {
                const uint8_t v = src[n] ^ flip;
                d[4 * n] = v;
                sum[n] += (int8_t)v;
            }
        }
    }
}

void x86_mmi_pack_b(x86_mmi_state *s, const void *b, int is_signed) {
    pack_b_panels(s, (const uint8_t *)b, is_signed ? 0 : 0x80, 0, s->b_count * s->panels);
}

typedef struct {
    x86_mmi_state *s;
    const mnn_tensor *ins;
    int32_t *y;
} mmi_job;

static void pack_b_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const mmi_job *j = (const mmi_job *)ctx;
    (void)worker;
    pack_b_panels(j->s, (const uint8_t *)j->ins[1].data, j->s->b_signed ? 0 : 0x80, lo, hi);
}

/* rows of A (all matrices' rows in one range) as words, flipped to uint8, and u = row sum - K * zl */
X86_CLONES static void pack_a(void *ctx, int64_t lo, int64_t hi, int worker) {
    const mmi_job *j = (const mmi_job *)ctx;
    const x86_mmi_state *s = j->s;
    const int64_t K = s->K, K4 = s->g.K4;
    const uint8_t flip = s->a_signed ? 0x80 : 0;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const int64_t m = r % s->M, mat = r / s->M;
        const uint8_t *src = (const uint8_t *)j->ins[0].data + r * K;
        uint8_t *dst = (uint8_t *)(s->ap + (mat * s->Mp + m) * K4);
        int32_t sum = 0;
        for (int64_t k = 0; k < K; ++k) {
            dst[k] = src[k] ^ flip;
            sum += dst[k];
        }
        for (int64_t k = K; k < K4 * 4; ++k) dst[k] = 0;
        s->u[mat * s->Mp + m] = (int32_t)((uint32_t)sum - (uint32_t)K * (uint32_t)s->zl[m]);
    }
}

/* item = (output matrix, panel of columns), all rows */
static void mmi_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const mmi_job *j = (const mmi_job *)ctx;
    const x86_mmi_state *s = j->s;
    const int64_t K4 = s->g.K4, M = s->M, N = s->N;
    (void)worker;
    for (int64_t it = lo; it < hi; ++it) {
        const int64_t b = it / s->panels, p = it % s->panels, n0 = p * NR, nr = N - n0 < NR ? N - n0 : NR;
        const int64_t am = s->a_at[b] * s->Mp, bm = s->b_at[b] * s->panels + p;
        const uint8_t *r = s->bp + bm * K4 * NR * 4;
        for (int64_t m0 = 0; m0 < M; m0 += MR)
            x86_qgemm_tile(&s->g, s->ap + (am + m0) * K4, s->u + am + m0, s->zl + m0, M - m0 < MR ? M - m0 : MR, r,
                           s->zr + n0, s->bsum + bm * NR, nr, j->y + (b * M + m0) * N + n0, N);
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
    for (int64_t m = 0; m < s->M; ++m) s->zl[m] = s->za[m] + (s->a_signed ? 128 : 0);
    for (int64_t n = 0; n < s->N; ++n) s->zr[n] = s->zb[n] - (s->b_signed ? 0 : 128);
    const int64_t grain = 1 + 4096 / (s->K + 1);
    x86_pool->ranges(s->op.threads, s->a_count * s->M, grain, pack_a, &j);
    if (!s->b_ready) x86_pool->ranges(s->op.threads, s->b_count * s->panels, 1, pack_b_range, &j);
    x86_pool->ranges(s->op.threads, s->batch * s->panels, 1, mmi_range, &j);
    return 0;
}
