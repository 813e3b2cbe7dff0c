/* MatMul / Gemm special cases of the packed GEMM. First, a constant B of few columns (N <= X86_NARROW_N: a per-token classifier, deepcut's
 * 200 -> 5 dense layers). The packed GEMM pads N to its register tile's NR (32 or 48), so N = 5 did
 * 15 % useful work and packed all of A first; here each output is a dot product of an A row with a
 * row of B^T (kept [N][K] at prepare), four A rows at a time sharing each load of B^T, and A is read
 * in place. Second, one row of A by a packed constant B (x86_matmul_row). GCC's function
 * multi-versioning builds the loops for AVX-512, AVX2 and SSE2. */
#include <string.h>

#include "ops.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NARROW_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NARROW_CLONES
#endif

typedef float nv16 __attribute__((vector_size(64), aligned(4)));

static inline __attribute__((always_inline)) float hsum(nv16 v) {
    float s = 0.0f;
    for (int i = 0; i < 16; ++i) s += v[i];
    return s;
}

/* rows r0 .. r0+R-1 of A (lda floats apart) times B^T ([n][kp], zero past K), raw sums into y (N apart);
 * k16: K rounded down to 16, the tail from a zero-padded copy */
static inline __attribute__((always_inline)) void narrow_rows(const float *a, int64_t lda, int R, const float *bt,
                                                              int64_t kp, int64_t K, int n, float *y) {
    nv16 acc[4][X86_NARROW_N];
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < n; ++j) acc[r][j] = (nv16){0};
    const int64_t k16 = K / 16 * 16;
    for (int64_t k = 0; k < k16; k += 16) {
        nv16 av[4];
        for (int r = 0; r < R; ++r) memcpy(&av[r], a + r * lda + k, sizeof(nv16));
        for (int j = 0; j < n; ++j) {
            nv16 b;
            memcpy(&b, bt + j * kp + k, sizeof(nv16));
            for (int r = 0; r < R; ++r) acc[r][j] += av[r] * b;
        }
    }
    if (k16 < K) { /* the last K % 16 of each row, copied: a row may end at the end of A's buffer */
        for (int r = 0; r < R; ++r) {
            float t[16] = {0};
            memcpy(t, a + r * lda + k16, (size_t)(K - k16) * sizeof(float));
            nv16 av;
            memcpy(&av, t, sizeof av);
            for (int j = 0; j < n; ++j) {
                nv16 b;
                memcpy(&b, bt + j * kp + k16, sizeof b);
                acc[r][j] += av * b;
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < n; ++j) y[r * n + j] = hsum(acc[r][j]);
}

/* one instance per N, so the accumulators are a fixed set of registers */
#define NARROW_BLOCK(NN)                                                                                           \
    static NARROW_CLONES void narrow_block_##NN(const float *a, int64_t lda, int64_t m, const float *bt, int64_t kp, \
                                                int64_t K, float *y) {                                          \
        int64_t i = 0;                                                                                             \
        for (; i + 4 <= m; i += 4) narrow_rows(a + i * lda, lda, 4, bt, kp, K, NN, y + i * NN);                   \
        for (; i < m; ++i) narrow_rows(a + i * lda, lda, 1, bt, kp, K, NN, y + i * NN);                          \
    }
NARROW_BLOCK(1)
NARROW_BLOCK(2)
NARROW_BLOCK(3)
NARROW_BLOCK(4)
NARROW_BLOCK(5)
NARROW_BLOCK(6)
NARROW_BLOCK(7)
NARROW_BLOCK(8)

typedef void (*narrow_fn)(const float *, int64_t, int64_t, const float *, int64_t, int64_t, float *);
static const narrow_fn NARROW[X86_NARROW_N + 1] = {NULL,           narrow_block_1, narrow_block_2,
                                                   narrow_block_3, narrow_block_4, narrow_block_5,
                                                   narrow_block_6, narrow_block_7, narrow_block_8};

#define NARROW_ROWS 64 /* rows per task */

typedef struct {
    const x86_matmul_state *s;
    const float *a;
    float *y;
    const x86_epilogue *e;
} narrow_job;

static void narrow_task(void *ctx, int64_t item, int worker) {
    const narrow_job *J = (const narrow_job *)ctx;
    const x86_matmul_state *s = J->s;
    const x86_epilogue *e = J->e;
    const int64_t N = s->N, i0 = item * NARROW_ROWS, m = s->M - i0 < NARROW_ROWS ? s->M - i0 : NARROW_ROWS;
    float *y = J->y + i0 * N;
    (void)worker;
    NARROW[N](J->a + i0 * s->a_rs, s->a_rs, m, s->b_narrow, s->b_narrow_kp, s->K, y);
    if (e->alpha != 1.0f || e->bias) /* y = alpha * acc + beta * bias[row * rs + col * cs] */
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < N; ++j)
                y[i * N + j] = e->alpha * y[i * N + j] +
                               (e->bias ? e->beta * e->bias[(i0 + i) * e->bias_rs + j * e->bias_cs] : 0.0f);
    if (e->act != MNN_ACT_NONE) s->op.k->activation(e, y, y, m * N, 1);
}

void x86_matmul_narrow(const x86_matmul_state *s, const float *a, float *y, const x86_epilogue *e) {
    narrow_job J = {s, a, y, e};
    const int64_t items = (s->M + NARROW_ROWS - 1) / NARROW_ROWS;
    /* under about 64k multiply-adds a second thread costs more than it saves */
    const int threads = s->M * s->K * s->N >= 65536 ? s->op.threads : 1;
    x86_parallel(threads, items, narrow_task, &J);
}

/* -- one row of A (M = 1: a fully connected layer at batch 1) -------------------------------------- */

/* y[0:NR] = a · panel ([K][NR] of the packed B, nv = NR / 16 vectors): two accumulator sets (even and
 * odd k), so each FMA waits on the one two steps back; the panel is read in order (the GEMM's one-row
 * tile took 10 us for 1536 x 128 with B in L2, where streaming it takes about 5) */
static inline __attribute__((always_inline)) void row_panel(const float *a, int64_t a_cs, const float *p, int64_t K,
                                                            int nv, float *y) {
    nv16 s0[3] = {{0}}, s1[3] = {{0}};
    int64_t k = 0;
    for (; k + 2 <= K; k += 2) {
        const float x0 = a[k * a_cs], x1 = a[(k + 1) * a_cs];
        for (int v = 0; v < nv; ++v) {
            nv16 b0, b1;
            memcpy(&b0, p + k * nv * 16 + v * 16, sizeof b0);
            memcpy(&b1, p + (k + 1) * nv * 16 + v * 16, sizeof b1);
            s0[v] += x0 * b0;
            s1[v] += x1 * b1;
        }
    }
    if (k < K)
        for (int v = 0; v < nv; ++v) {
            nv16 b0;
            memcpy(&b0, p + k * nv * 16 + v * 16, sizeof b0);
            s0[v] += a[k * a_cs] * b0;
        }
    for (int v = 0; v < nv; ++v) {
        const nv16 s = s0[v] + s1[v];
        memcpy(y + v * 16, &s, sizeof s);
    }
}

#define ROW_PANELS(NV)                                                                                             \
    static NARROW_CLONES void row_panels_##NV(const float *a, int64_t a_cs, const float *bp, int64_t K, int64_t q0, \
                                              int64_t q1, float *y) {                                           \
        for (int64_t q = q0; q < q1; ++q) row_panel(a, a_cs, bp + q * NV * 16 * K, K, NV, y + q * NV * 16);      \
    }
ROW_PANELS(1)
ROW_PANELS(2)
ROW_PANELS(3)

typedef struct {
    const x86_matmul_state *s;
    const float *a;
    float *row; /* the panels' columns, NR a panel (N rounded up) */
} row_job;

static void row_task(void *ctx, int64_t lo, int64_t hi, int worker) {
    const row_job *J = (const row_job *)ctx;
    const x86_matmul_state *s = J->s;
    const int nv = s->op.k->nr / 16;
    (void)worker;
    if (nv == 1) row_panels_1(J->a, s->a_cs, s->b_packed, s->K, lo, hi, J->row);
    else if (nv == 2) row_panels_2(J->a, s->a_cs, s->b_packed, s->K, lo, hi, J->row);
    else row_panels_3(J->a, s->a_cs, s->b_packed, s->K, lo, hi, J->row);
}

int x86_matmul_row_fits(const x86_matmul_state *s) {
    const int nr = s->op.k->nr;
    return s->M == 1 && s->batch == 1 && s->b_packed && !s->bf16 && (nr == 16 || nr == 32 || nr == 48) &&
           s->N <= X86_ROW_MAX_N;
}

void x86_matmul_row(const x86_matmul_state *s, const float *a, float *y, const x86_epilogue *e) {
    float row[X86_ROW_MAX_N + 48] __attribute__((aligned(64)));
    const int64_t nr = s->op.k->nr, panels = (s->N + nr - 1) / nr, N = s->N;
    row_job J = {s, a, row};
    /* a thread per part only where the panels are large: below about 1 MB of B one core streams it */
    const int threads = s->K * N >= (1 << 18) ? s->op.threads : 1;
    x86_parallel_ranges(threads, panels, 1, row_task, &J);
    for (int64_t j = 0; j < N; ++j)
        y[j] = e->alpha * row[j] + (e->bias ? e->beta * e->bias[j * e->bias_cs] : 0.0f);
    if (e->act != MNN_ACT_NONE) s->op.k->activation(e, y, y, N, 1);
}
