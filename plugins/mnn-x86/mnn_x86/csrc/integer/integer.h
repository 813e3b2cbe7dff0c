/* Integer matrix products on x86 (mnn_x86/_integer.pyx, ops_integer.py): MatMulInteger and ConvInteger
 * with ONNX semantics (mnn_core/ops/quant.py), exact int32 results. Both operands have their zero
 * points taken out into int16 (|v| <= 255), rows of K contiguous and padded with zeros to X86_IK, so
 * that every output is a dot product GCC vectorizes as pmaddwd (int16 pairs into int32, dot.h). */
#ifndef MNN_X86_INTEGER_H
#define MNN_X86_INTEGER_H

#include "family.h"

/* K is padded to a multiple of this (zeros), the rows of both operands to a multiple of X86_IT */
enum { X86_IK = 32, X86_IT = 4 };

/* MatMulInteger: out[b] = (A[a_at[b]] - za) · (B[b_at[b]] - zb), [M][K] · [K][N] */
typedef struct {
    x86_op op;
    int64_t M, N, K, Kp, Mp, Np;
    int64_t batch, a_count, b_count;
    const int64_t *a_at, *b_at; /* [batch]: which A and B matrix each output reads */
    /* positions among the present inputs of zero points given at run, -1 where constant or absent */
    int32_t in_za, in_zb;
    int32_t *za, *zb;       /* [Mp], [Np]: the zero points per row of A and column of B */
    int32_t b_ready;        /* B and zb constant: bp was filled at prepare */
    int16_t *ap;            /* [a_count][Mp][Kp]: A - za */
    int16_t *bp;            /* [b_count][Np][Kp]: (B - zb)^T */
} x86_mmi_state;
int x86_mmi_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* ConvInteger: 2-D, NCHW, the weights [O][C/group][kh][kw] */
typedef struct {
    x86_op op;
    int64_t N, C, H, W, O, group, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl;
    int64_t Kp, Mgp, Pp; /* per group: K = (C/group)*kh*kw padded, its output channels and pixels padded */
    int32_t in_zx, in_zw; /* zero points given at run, -1 where constant or absent */
    int32_t zx;
    int32_t *zw;          /* [O] */
    int32_t w_ready;
    int16_t *wp;          /* [group][Mgp][Kp]: W - zw */
    int16_t *xs;          /* [C][H][W]: one image - zx */
    int16_t *patches;     /* [Pp][Kp]: one group's im2col, a row per output pixel */
} x86_convi_state;
int x86_convi_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* the blocked product of packed operands (gemm.c): c[m * ldc + n] = ap[m] · bp[n] over Kp, for m < M
 * and n0 <= n < n1 (n0 a multiple of X86_IT) */
void x86_igemm(const int16_t *ap, const int16_t *bp, int64_t M, int64_t n0, int64_t n1, int64_t Kp, int32_t *c,
               int64_t ldc);
/* y[i] = x[i] - z, of a uint8 (is_signed 0) or int8 row */
void x86_iload(const void *x, int is_signed, int64_t n, int32_t z, int16_t *y);

#endif
