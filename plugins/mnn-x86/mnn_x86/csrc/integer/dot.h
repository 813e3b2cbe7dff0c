/* The exact int16 dot-product tile of the integer products (csrc/integer/gemm.c) and the dynamically
 * quantized LSTM (csrc/recurrent/quant.c): included, so each module builds its own ISA clones. */
#ifndef MNN_X86_INTEGER_DOT_H
#define MNN_X86_INTEGER_DOT_H

#include <string.h>

#include "family.h"

/* the 4x4 outputs of rows a[0..3] and b[0..3] (Kp apart): sixteen dot products whose reductions GCC
 * turns into pmaddwd, eight operand loads for sixteen of them */
X86_CLONES static void x86_idot4x4(const int16_t *restrict a, const int16_t *restrict b, int64_t Kp, int32_t *restrict c) {
    const int16_t *a0 = a, *a1 = a + Kp, *a2 = a + 2 * Kp, *a3 = a + 3 * Kp;
    const int16_t *b0 = b, *b1 = b + Kp, *b2 = b + 2 * Kp, *b3 = b + 3 * Kp;
    int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
    int32_t s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
    for (int64_t k = 0; k < Kp; ++k) {
        const int32_t x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
        const int32_t y0 = b0[k], y1 = b1[k], y2 = b2[k], y3 = b3[k];
        s00 += x0 * y0; s01 += x0 * y1; s02 += x0 * y2; s03 += x0 * y3;
        s10 += x1 * y0; s11 += x1 * y1; s12 += x1 * y2; s13 += x1 * y3;
        s20 += x2 * y0; s21 += x2 * y1; s22 += x2 * y2; s23 += x2 * y3;
        s30 += x3 * y0; s31 += x3 * y1; s32 += x3 * y2; s33 += x3 * y3;
    }
    const int32_t s[16] = {s00, s01, s02, s03, s10, s11, s12, s13, s20, s21, s22, s23, s30, s31, s32, s33};
    memcpy(c, s, sizeof(s));
}

/* one row a against the 4 rows b[0..3] (Kp apart): the per-step product of a batch of one, which the
 * 4x4 tile would pad to four rows */
X86_CLONES static void x86_idot1x4(const int16_t *restrict a, const int16_t *restrict b, int64_t Kp, int32_t *restrict c) {
    const int16_t *b0 = b, *b1 = b + Kp, *b2 = b + 2 * Kp, *b3 = b + 3 * Kp;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t k = 0; k < Kp; ++k) {
        const int32_t x = a[k];
        s0 += x * b0[k]; s1 += x * b1[k]; s2 += x * b2[k]; s3 += x * b3[k];
    }
    c[0] = s0, c[1] = s1, c[2] = s2, c[3] = s3;
}

#endif
