/* The AVX-512 kernels again, with the fp32 GEMM's register tile 14x32 instead of 6x32 (28
 * accumulators): on CPUs with two 512-bit FMA units (Intel's server cores, Zen 5) a tile twice as
 * tall halves the B loads per FMA, and whole models ran 3-20 % faster; on Zen 4, which splits each
 * 512-bit FMA in two, 6x32 was faster (vec_avx512.h). dispatch.c picks one table by timing both
 * widths of FMA (x86_avx512_rows); same flags as isa_avx512.c. The training and int8 tables do not
 * depend on the tile, so this unit leaves them to isa_avx512.c. */
#if defined(__x86_64__) || defined(__i386__)
#define GEMM_MR 14
#define X86_TILE_VARIANT 1
#include "vec_avx512.h"
#undef ISA
#define ISA avx512_t14
#include "isa_body.h"
#endif
