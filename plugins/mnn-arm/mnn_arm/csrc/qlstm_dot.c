/* DynamicQuantizeLSTM's one-row product on the sdot path (compiled -march=armv8.2-a+dotprod; called only
 * where the CPU reports asimddp): a step of batch 1 is h R, and the GEMM's 8-row tile would do 8 rows'
 * work for it. Per 4 k-steps of a 12-column panel of R: 3 loads and 3 sdot of the broadcast h word. */
#include <arm_neon.h>
#include <string.h>

#include "qlstm.h"

void arm_qlstm_row_dot(const int8_t *a, const int8_t *bp, int64_t N, int64_t K4, int32_t *c) {
    for (int64_t n0 = 0; n0 < N; n0 += ARM_Q_NR) {
        const int8_t *b = bp + n0 * K4;
        int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0, acc2 = acc0;
        for (int64_t g = 0; g < K4 / 4; ++g, b += 4 * ARM_Q_NR) {
            int32_t word;
            memcpy(&word, a + 4 * g, 4);
            const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(word));
            acc0 = vdotq_s32(acc0, vld1q_s8(b), av); /* lane j: column j's 4 k-steps times a's */
            acc1 = vdotq_s32(acc1, vld1q_s8(b + 16), av);
            acc2 = vdotq_s32(acc2, vld1q_s8(b + 32), av);
        }
        int32_t out[ARM_Q_NR];
        vst1q_s32(out, acc0), vst1q_s32(out + 4, acc1), vst1q_s32(out + 8, acc2);
        memcpy(c + n0, out, (size_t)(N - n0 < ARM_Q_NR ? N - n0 : ARM_Q_NR) * sizeof(int32_t));
    }
}
