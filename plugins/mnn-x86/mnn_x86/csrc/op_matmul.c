/* MatMul / Gemm run: per output matrix, pack A (and B unless it was packed
 * at prepare) and call the packed GEMM. */
#include <pthread.h>
#include <stdlib.h>

#include "bf16.h"
#include "ops.h"

/* The packing space of A and of a B that arrives at run (a decoder's KV cache): one grow-only buffer per
 * calling thread, shared by every MatMul that thread runs one after another, instead of one per node
 * and plan (each holding a copy the size of the cache it multiplies). Freed when the thread ends. */
typedef struct {
    float *p;
    size_t n;
} matmul_scratch;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *v) {
    matmul_scratch *sc = (matmul_scratch *)v;
    free(sc->p);
    free(sc);
}

static void scratch_init(void) { pthread_key_create(&scratch_key, scratch_free); }

static float *thread_scratch(size_t floats) {
    pthread_once(&scratch_once, scratch_init);
    matmul_scratch *sc = (matmul_scratch *)pthread_getspecific(scratch_key);
    if (!sc) {
        sc = (matmul_scratch *)calloc(1, sizeof *sc);
        if (!sc || pthread_setspecific(scratch_key, sc) != 0) {
            free(sc);
            return NULL;
        }
    }
    if (sc->n < floats) {
        free(sc->p);
        sc->p = NULL, sc->n = 0;
        if (posix_memalign((void **)&sc->p, 64, floats * sizeof(float)) != 0) return sc->p = NULL;
        sc->n = floats;
    }
    return sc->p;
}

int x86_matmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_matmul_state *s = (x86_matmul_state *)state;
    const x86_kernels *k = s->op.k;
    (void)n_out;
    if (ins[0].dtype != MNN_FLOAT32 || ins[1].dtype != MNN_FLOAT32) {
        s->op.error = "x86 MatMul/Gemm takes float32 tensors";
        return 1;
    }
    const float *a = (const float *)ins[0].data, *b = (const float *)ins[1].data;
    float *y = (float *)outs[0].data;
    x86_epilogue e = s->epi;
    if (s->bias_input >= 0 && s->bias_input < n_in) e.bias = (const float *)ins[s->bias_input].data;
    if (s->bf16) return x86_matmul_bf16_run(s, a, y, &e); /* precision="low" (bf16.h) */
    if (s->b_narrow) { /* N <= X86_NARROW_N, B constant, one matrix, A's rows contiguous (op_narrow.c) */
        x86_matmul_narrow(s, a, y, &e);
        return 0;
    }
    if (x86_matmul_row_fits(s)) { /* M = 1 (op_narrow.c) */
        x86_matmul_row(s, a, y, &e);
        return 0;
    }
    const size_t a_floats = ((size_t)s->a_work_floats + 15) & ~(size_t)15; /* B's part 64-byte aligned */
    float *a_work = thread_scratch(a_floats + (size_t)s->b_work_floats);
    if (!a_work) {
        s->op.error = "MatMul: out of memory for the run's packing space";
        return 1;
    }
    float *b_work = a_work + a_floats;
    for (int64_t t = 0; t < s->batch; ++t) {
        const int64_t ao = s->a_off ? s->a_off[t] : 0, bo = s->b_off ? s->b_off[t] : 0;
        if (t == 0 || (s->a_off && ao != s->a_off[t - 1])) k->pack_a(a + ao, s->a_rs, s->a_cs, s->M, s->K, a_work, s->op.threads);
        const float *bp;
        if (s->b_packed) {
            bp = s->b_packed + t * s->b_packed_stride;
        } else {
            if (t == 0 || (s->b_off && bo != s->b_off[t - 1])) k->pack_b(b + bo, s->b_rs, s->b_cs, s->K, s->N, b_work, s->op.threads);
            bp = b_work;
        }
        k->gemm(s->M, s->N, s->K, a_work, bp, y + t * s->M * s->N, s->N, &e, s->op.threads);
    }
    return 0;
}
