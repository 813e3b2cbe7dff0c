/* The AVX-512 kernels again, with the fp32 GEMM's register tile 14x32 instead of 6x32 (28
 * accumulators): on CPUs with two 512-bit FMA units (Intel's server cores) a tile twice as tall
 * halves the B loads per FMA, and whole models ran 3-8 % faster; on Zen 4, which splits each
 * 512-bit FMA in two, 6x32 was faster (vec_avx512.h). dispatch.c picks one table by the CPU's
 * vendor (x86_avx512_rows); same flags as isa_avx512.c. The training and int8 tables do not
 * depend on the tile, so this unit leaves them to isa_avx512.c.
 *
 * Its tiles also prefetch B's rows ahead (gemm_impl.h: GEMM_PF_NEAR): weights read from DRAM
 * (49 x 512 x 4608, eight weight sets in turn) ran 15-20 % faster, weights in cache the same. The
 * 6x32 tile, with fewer FMAs per B row to hide them behind, lost 6-10 % in cache, so it goes without. */
#if defined(__x86_64__) || defined(__i386__)
#define GEMM_MR 14
#define X86_TILE_VARIANT 1
#define GEMM_PF_NEAR 16
#include "vec_avx512.h"
#undef ISA
#define ISA avx512_t14
#include "isa_body.h"
#endif
