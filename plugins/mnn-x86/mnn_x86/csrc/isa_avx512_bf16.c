/* The bf16 GEMM kernels (bf16.h) on AVX-512 with BF16; compiled with the AVX-512 level's flags
 * plus -mavx512bf16 and run only when cpuid says the CPU has AVX512_BF16 as well
 * (dispatch_bf16.c). Its own translation unit, so the fp32 kernels in isa_avx512.c never carry a
 * BF16 instruction onto a CPU without it. */
#if defined(__x86_64__) || defined(__i386__)
#define GEMM_MR 14 /* bf_tile_rows (gemm_bf16_impl.h) is written for 14 rows */
#include "vec_avx512.h"
#include "x86.h"

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, avx512_bf16) /* the epilogue's instance here, apart from isa_avx512.c's */
#define MR GEMM_MR
#define NR (GEMM_NV * VLEN)

#include "vmath_impl.h"
#include "gemm_epilogue_impl.h"
#include "gemm_bf16_impl.h"

const x86_bf16_kernels x86_bf16_kernels_avx512 = {"avx512_bf16", MR, NR, bf_pack_a, bf_pack_b, bf_convert_b, bf_gemm};
#endif
