/* MatMulNBits (mnn_core/ops/matmul_nbits.py): Y [M, N] = A [M, K] @ dequant(B)^T with B read where it
 * lies, [N][blocks][block * bits / 8] bytes, 4-bit values two per byte (even element low).
 *
 * Two ways to multiply:
 *  - int8 (accuracy_level 4, blocks of 32 or more): each block of each row of A is quantized to int8
 *    with its own scale (amax / 127), and a block's products are summed in int32 by VPDPBUSD
 *    (AVX-512 VNNI) or VPMADDUBSW (AVX2): unsigned weights times signed activations. The zero point
 *    comes off afterwards, as zero * scale_a * sum(q_a) per block, so the weights need no unpacking
 *    beyond their nibbles. Every 4-bit block's activations are stored even elements first, then odd
 *    ones (per 32 or 64 of them), the order in which the low and high nibbles come out. On VNNI the
 *    columns go through nbits_gemv.c, the zero point folded into each block's int32 sum.
 *  - float: a column of B dequantized into float32 and dotted with each row of A (any block size,
 *    any ISA; GCC's clones vectorize it).
 *  - GEMM (many rows, prefill): Y^T = B A^T on the packed GEMM of _x86 (its kernel table), panels
 *    of about 64 columns of B dequantized straight into the packed layout of its left operand, A^T
 *    packed once per run as the right one.
 *  - QGEMM (many rows at accuracy_level 4 on AVX-512 VNNI, or AVX2 with 4-bit weights; prefill): A quantized to int8 per block and
 *    multiplied in integer register tiles (nbits_qgemm.c).
 * The threads split N: a column of B is read from memory once and stays in cache for all M rows. */
#ifndef MNN_X86_LLM_NBITS_H
#define MNN_X86_LLM_NBITS_H

#include <math.h>
#include <stdint.h>

#include "family.h"

enum { NBITS_FLOAT = 0, NBITS_AVX2 = 1, NBITS_VNNI = 2, NBITS_GEMM = 3, NBITS_QGEMM = 4 };
enum { NBITS_QG_COLS = 6, NBITS_QG_ROWS = 32 }; /* the QGEMM tile: columns of B by rows of A */
#define NBITS_PANEL 64 /* columns of B dequantized at a time for the GEMM path (rounded to the row tile) */

typedef struct {
    x86_op op;
    int32_t bits, block, nb, blob, zbytes; /* zbytes: bytes of zero points per column */
    int32_t path;                          /* NBITS_*: how the run multiplies */
    int32_t level;                         /* ISA level: 0 scalar, 1 avx2, 2 avx512 (dequantization) */
    int32_t zp_in, bias_in;                /* positions of zero_points and bias among the inputs, or -1 */
    int64_t M, N, K;
    /* scratch, pointed into the calling thread's buffer at each run (nbits.c) */
    int8_t *aq;    /* int8 path: [M][nb * block] quantized A (4-bit: nibble order); QGEMM: packed panels */
    float *ascale; /* [M][nb] each block's scale (QGEMM: [panel][nb][rows]) */
    float *asum;   /* [M][nb] scale * sum of the block's int8 values (QGEMM: as ascale) */
    int32_t *atotal; /* int8 path: [M][nb] the sum of the block's int8 values */
    float *work;   /* a dequantized column (or the zero-point terms) per worker, [workers][nb * block] */
    float *bp;     /* GEMM path: A^T packed, x86_nbits_packed_b floats */
    float *panel;  /* GEMM and QGEMM paths: per worker, a panel of B dequantized, packed, and its product [rows][M] */
    int32_t workers;
} x86_nbits_state;

/* the zero point of block b of a column (zp: that column's bytes, or NULL: 2^(bits-1)) */
static inline int x86_nbits_zero(const uint8_t *zp, int bits, int b) {
    if (!zp) return 1 << (bits - 1);
    if (bits == 8) return zp[b];
    return b & 1 ? zp[b / 2] >> 4 : zp[b / 2] & 0x0F;
}

/* A's block b (float, K long) as int8 in K's order, scale amax / 127 rounded to nearest, zero past K;
 * returns the scale, and in *total the sum of the int8 values */
static inline float x86_nbits_quantize_block(const x86_nbits_state *s, const float *a, int b, int8_t *q,
                                             int32_t *total) {
    const int64_t k0 = (int64_t)b * s->block;
    const int64_t n = s->K - k0 < s->block ? s->K - k0 : s->block;
    float amax = 0.0f; /* max and rintf, not fmaxf and nearbyintf: those are libm calls per element */
    for (int64_t i = 0; i < n; i++) amax = fabsf(a[k0 + i]) > amax ? fabsf(a[k0 + i]) : amax;
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int64_t i = 0; i < s->block; i++) {
        const int v = i < n ? (int)rintf(a[k0 + i] * inv) : 0;
        q[i] = (int8_t)v;
        sum += v;
    }
    *total = sum;
    return amax / 127.0f;
}

/* a run's operands, shared by its workers */
typedef struct {
    const x86_nbits_state *s;
    const float *a, *scales, *bias;
    const uint8_t *w, *zp;
    float *y;
} nbits_job;

int x86_nbits_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
/* the GEMM path: columns of B per panel (a multiple of the kernel table's row tile), floats of A^T packed */
int64_t x86_nbits_panel_rows(const x86_nbits_state *s);
int64_t x86_nbits_packed_b(const x86_nbits_state *s);
int64_t x86_nbits_panel_floats(const x86_nbits_state *s); /* per worker */
/* which int8 path this CPU runs at an ISA level (0 scalar, 1 avx2, 2 avx512): NBITS_* */
int x86_nbits_int8_path(int level);

/* nbits_qgemm.c: the QGEMM path's panels of A, its per-worker scratch, A quantized and packed (on the
 * caller), and the workers' ranges of 6-column groups (x86_range_fn) */
int64_t x86_nbits_qgemm_panels(const x86_nbits_state *s);
int64_t x86_nbits_qgemm_worker_bytes(const x86_nbits_state *s);
void x86_nbits_qgemm_quantize(const x86_nbits_state *s, const float *a);
void x86_nbits_qgemm_columns(void *ctx, int64_t lo, int64_t hi, int worker);

/* nbits_gemv.c: columns [lo, hi) of Y, every row, on AVX-512 VNNI (the int8 path's aq, ascale, atotal) */
void x86_nbits_gemv_vnni(const nbits_job *j, int64_t lo, int64_t hi);

/* nbits_simd.c: the AVX2 int8 dot of one column (nb blocks) with one quantized row, each block's int32 sum
 * times wscale[b] * ascale[b], summed */
float x86_nbits_dot_avx2(int bits, int block, int nb, const uint8_t *w, const int8_t *a, const float *ws,
                         const float *as);

/* nbits_simd.c: a column of B (nb blocks of 32 or more) dequantized to float32 [nb * block] */
void x86_nbits_dequant_avx512(int bits, int block, int nb, const uint8_t *w, const float *scales, const uint8_t *zp,
                              float *out);
void x86_nbits_dequant_avx2(int bits, int block, int nb, const uint8_t *w, const float *scales, const uint8_t *zp,
                            float *out);

#endif
