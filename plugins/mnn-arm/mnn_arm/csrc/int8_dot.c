/* The int8 sdot path (compiled -march=armv8.2-a+dotprod; run only where the
 * CPU reports asimddp). One vdotq_laneq_s32 multiplies 4 rows x 4 k of A by
 * one column's 4 k of B and accumulates 4 int32: 16 multiply-adds per
 * instruction, against 4 for an fp32 fmla. Register tile 8 x 12: 24
 * accumulators (2 row quads x 12 columns), 2 A and 3 B vectors per k-group. */
#include <arm_neon.h>

#include "arm.h"

#define QMR ARM_Q_MR
#define QNR ARM_Q_NR

#define DOT_COLS(v)                                                          \
    do {                                                                     \
        acc[0][4 * v + 0] = vdotq_laneq_s32(acc[0][4 * v + 0], a0, bv[v], 0); \
        acc[0][4 * v + 1] = vdotq_laneq_s32(acc[0][4 * v + 1], a0, bv[v], 1); \
        acc[0][4 * v + 2] = vdotq_laneq_s32(acc[0][4 * v + 2], a0, bv[v], 2); \
        acc[0][4 * v + 3] = vdotq_laneq_s32(acc[0][4 * v + 3], a0, bv[v], 3); \
        acc[1][4 * v + 0] = vdotq_laneq_s32(acc[1][4 * v + 0], a1, bv[v], 0); \
        acc[1][4 * v + 1] = vdotq_laneq_s32(acc[1][4 * v + 1], a1, bv[v], 1); \
        acc[1][4 * v + 2] = vdotq_laneq_s32(acc[1][4 * v + 2], a1, bv[v], 2); \
        acc[1][4 * v + 3] = vdotq_laneq_s32(acc[1][4 * v + 3], a1, bv[v], 3); \
    } while (0)

static inline __attribute__((always_inline)) void tile_dot(int64_t K4, const int8_t *a, const int8_t *b, int32_t *c,
                                                           int64_t ldc, int64_t mr, int64_t nc, const int nv) {
    int32x4_t acc[2][QNR];
    for (int h = 0; h < 2; ++h)
        for (int j = 0; j < QNR; ++j) acc[h][j] = vdupq_n_s32(0);
    for (int64_t g = 0; g < K4 / 4; ++g) {
        if ((g & 1) == 0) { /* 2 k-groups = 1 line of A, 1.5 of B: fetch 8 groups ahead */
            __builtin_prefetch(a + 8 * 32);
            __builtin_prefetch(b + 8 * 48);
            __builtin_prefetch(b + 8 * 48 + 64);
        }
        const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
        int8x16_t bv[3];
        for (int v = 0; v < nv; ++v) bv[v] = vld1q_s8(b + 16 * v);
        DOT_COLS(0);
        if (nv > 1) DOT_COLS(1);
        if (nv > 2) DOT_COLS(2);
        a += 32;
        b += 48;
    }
    /* acc[h][j] holds rows 4h..4h+3 of column j: transpose 4x4 blocks into rows */
    for (int h = 0; h < 2; ++h)
        for (int v = 0; v < nv; ++v) {
            const int32x4_t c0 = acc[h][4 * v], c1 = acc[h][4 * v + 1], c2 = acc[h][4 * v + 2], c3 = acc[h][4 * v + 3];
            const int32x4_t t0 = vtrn1q_s32(c0, c1), t1 = vtrn2q_s32(c0, c1), t2 = vtrn1q_s32(c2, c3),
                            t3 = vtrn2q_s32(c2, c3);
            int32x4_t rows[4];
            rows[0] = vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
            rows[1] = vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
            rows[2] = vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2)));
            rows[3] = vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3)));
            for (int r = 0; r < 4; ++r) {
                const int64_t row = 4 * h + r, col = 4 * v;
                if (row >= mr) break;
                if (col + 4 <= nc) {
                    vst1q_s32(c + row * ldc + col, rows[r]);
                } else {
                    int32_t tmp[4];
                    vst1q_s32(tmp, rows[r]);
                    for (int64_t j = col; j < nc; ++j) c[row * ldc + j] = tmp[j - col];
                }
            }
        }
}

static void gemm_int8_dot(int64_t M, int64_t N, int64_t K4, const int8_t *ap, const int8_t *bp, int32_t *c,
                          int64_t ldc) {
    for (int64_t n = 0; n < N; n += QNR) {
        const int64_t nc = N - n < QNR ? N - n : QNR;
        const int nv = (int)((nc + 3) / 4);
        const int8_t *b = bp + (n / QNR) * QNR * K4;
        for (int64_t m = 0; m < M; m += QMR) {
            const int64_t mr = M - m < QMR ? M - m : QMR;
            const int8_t *a = ap + (m / QMR) * QMR * K4;
            if (nv == 3) tile_dot(K4, a, b, c + m * ldc + n, ldc, mr, nc, 3);
            else if (nv == 2) tile_dot(K4, a, b, c + m * ldc + n, ldc, mr, nc, 2);
            else tile_dot(K4, a, b, c + m * ldc + n, ldc, mr, nc, 1);
        }
    }
}

const arm_qkernels arm_qkernels_int8_dot = {"int8_dot", QMR, QNR, gemm_int8_dot};
