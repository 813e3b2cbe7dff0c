/* MatMul / Gemm run: per output matrix, pack A (and B unless it was packed
 * at prepare) and call the packed GEMM. */
#include <stdlib.h>

#include "bf16.h"
#include "ops.h"
#include "thread_scratch.h"

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
    /* packing space of A and of a B that arrives at run (a KV cache): the thread's scratch, not a
     * copy per node and plan the size of the cache it multiplies */
    float *a_work = (float *)thread_scratch((a_floats + (size_t)s->b_work_floats) * sizeof(float));
    if (!a_work) {
        s->op.error = "MatMul: out of memory for the run's packing space";
        return 1;
    }
    float *b_work = a_work + a_floats;
    for (int64_t t = 0; t < s->batch; ++t) {
        const int64_t ao = s->a_off ? s->a_off[t] : 0, bo = s->b_off ? s->b_off[t] : 0;
        const float *bp;
        if (s->b_packed) {
            bp = s->b_packed + t * s->b_packed_stride;
        } else {
            if (t == 0 || (s->b_off && bo != s->b_off[t - 1])) k->pack_b(b + bo, s->b_rs, s->b_cs, s->K, s->N, b_work, s->op.threads);
            bp = b_work;
        }
        float *yt = y + t * s->M * s->N;
        /* A's rows contiguous (the usual activations): read in place, not packed */
        if (s->a_cs == 1 && k->gemm_a_rows(s->M, s->N, s->K, a + ao, s->a_rs, a_work, bp, yt, s->N, &e, s->op.threads))
            continue;
        if (t == 0 || (s->a_off && ao != s->a_off[t - 1]))
            k->pack_a(a + ao, s->a_rs, s->a_cs, s->M, s->K, a_work, s->op.threads);
        k->gemm(s->M, s->N, s->K, a_work, bp, yt, s->N, &e, s->op.threads);
    }
    return 0;
}
