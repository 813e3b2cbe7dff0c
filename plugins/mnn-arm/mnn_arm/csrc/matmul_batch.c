/* Batched MatMul (A [..., M, K] @ B [..., K, N], batch dims broadcast) on a float path's packed
 * GEMM: per output batch, B's panel is packed unless the previous batch read the same B (a batch
 * of A against one B packs it once), then A is packed and the path's tile runs. */
#include "ops.h"

int arm_bmatmul_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    arm_bmatmul_state *s = (arm_bmatmul_state *)state;
    const char *a = (const char *)arm_data(&ins[0]), *b = (const char *)arm_data(&ins[1]);
    char *y = (char *)arm_data(&outs[0]);
    const int64_t eb = s->k->io_bytes;
    int64_t packed = -1;
    for (int64_t t = 0; t < s->batch; ++t) {
        if (s->b_off[t] != packed) {
            s->k->pack_b(b + s->b_off[t] * eb, s->N, 1, s->K, s->N, s->b_work);
            packed = s->b_off[t];
        }
        s->k->pack_a(a + s->a_off[t] * eb, s->K, 1, s->M, s->K, s->a_work);
        arm_gemm_par(s->k, arm_threads(s), s->M, s->N, s->K, s->a_work, s->b_work, y + t * s->M * s->N * eb, s->N,
                     &s->epi);
    }
    return 0;
}
