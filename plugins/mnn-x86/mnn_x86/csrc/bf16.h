/* mnn-x86 under precision="low": GEMMs on bf16 operands (VDPBF16PS) where the CPU has AVX-512 BF16.
 *
 * Only the multiplications change: constant weights are rounded to bf16 once at prepare and the
 * activations while they are packed (round to nearest even); the products are summed in fp32, and
 * bias, activations and every tensor between ops stay fp32. One ISA has it (AVX-512 with BF16), in
 * its own translation unit (isa_avx512_bf16.c, -mavx512bf16), handed out by dispatch_bf16.c after a
 * cpuid check, so a CPU without it never runs one of its instructions.
 *
 * Packed operands hold pairs of consecutive k (k = 2*kp, 2*kp + 1) in one 32-bit word, the even k
 * in the low half, what VDPBF16PS multiplies and adds in one step; an odd K pads its last pair
 * with zero. The register tile (MR x NR) is the fp32 AVX-512 one:
 *   A: panel p holds rows [p*MR, p*MR+MR):   ap[p*MR*KP + kp*MR + r]     (KP = (K + 1) / 2 words)
 *   B: panel q holds cols [q*NR, q*NR+NR):   bp[q*NR*KP + kp*NR + c]
 */
#ifndef MNN_X86_BF16_H
#define MNN_X86_BF16_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct x86_bf16_kernels {
    const char *name;
    int32_t mr, nr;
    /* A[i][k] = a[i*rs + k*cs] into MR-row panels of bf16 pairs */
    void (*pack_a)(const float *a, int64_t rs, int64_t cs, int64_t M, int64_t K, uint32_t *ap, int threads);
    /* B[k][j] = b[k*rs + j*cs] into NR-column panels of bf16 pairs */
    void (*pack_b)(const float *b, int64_t rs, int64_t cs, int64_t K, int64_t N, uint32_t *bp, int threads);
    /* fp32 packed B panels (x86.h's layout: an im2col chunk) of K x N into bf16 pair panels */
    void (*convert_b)(const float *bp32, int64_t K, int64_t N, uint32_t *bp, int threads);
    /* C = epilogue(A @ B), both packed as above; the epilogue as the fp32 GEMM's (x86.h) */
    void (*gemm)(int64_t M, int64_t N, int64_t K, const uint32_t *ap, const uint32_t *bp, float *c, int64_t ldc,
                 const x86_epilogue *e, int threads);
} x86_bf16_kernels;

/* 32-bit words of packed A (rows rounded up to MR) or B (columns rounded up to NR) */
static inline int64_t x86_bf16_words(int64_t rows, int64_t tile, int64_t K) {
    return (rows + tile - 1) / tile * tile * ((K + 1) / 2);
}

/* dispatch_bf16.c: the bf16 kernels for an fp32 ISA level, or NULL when that level has none or
 * the CPU lacks AVX-512 BF16 */
int x86_cpu_supports_bf16(void);
const x86_bf16_kernels *x86_bf16_kernels_for(const char *isa);

/* What a Conv (GEMM path, constant weights) keeps for bf16 (x86_conv_state.bf16) */
typedef struct x86_bf16_conv {
    const x86_bf16_kernels *kb;
    const uint32_t *w;      /* packed A of every group */
    int64_t w_group_stride; /* words */
    uint32_t *bp;           /* a packed chunk of columns per thread (or one, shared), bp_words each; the
                             * fp32 im2col chunk it is converted from is x86_conv_state.work */
    int64_t bp_words;
} x86_bf16_conv;
int x86_conv_bf16_run(const x86_conv_state *s, const float *x, const float *bias, float *y);

/* What a MatMul / Gemm with a constant B keeps for bf16 (x86_matmul_state.bf16) */
typedef struct x86_bf16_matmul {
    const x86_bf16_kernels *kb;
    const uint32_t *b;  /* packed B of every batch */
    int64_t b_stride;   /* words between batches (0: one B for all) */
    uint32_t *a;        /* packed A of one batch */
} x86_bf16_matmul;
int x86_matmul_bf16_run(const x86_matmul_state *s, const float *a, float *y, const x86_epilogue *e);

#ifdef __cplusplus
}
#endif
#endif
