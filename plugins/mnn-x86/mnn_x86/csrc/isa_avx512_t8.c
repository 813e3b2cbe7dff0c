/* The AVX-512 kernels once more, with an 8x48 fp32 GEMM tile (24 accumulators, three B vectors a
 * k step): not a process-wide tile but one a layer gets where it beats the 14x32 tile in use on
 * Intel (_x86.pyx: T8_*), GEMMs with few rows and many columns, where the 14- or 6-row table's last
 * row panel (2 or 4 rows of 16 or 32) runs a tile of few accumulators over all of B again. Same
 * flags as isa_avx512.c. */
#if defined(__x86_64__) || defined(__i386__)
#define GEMM_MR 8
#define GEMM_NV 3
#define X86_TILE_VARIANT 1
#include "vec_avx512.h"
#undef ISA
#define ISA avx512_t8
#include "isa_body.h"
#endif
