/* The AVX2 + FMA ISA level; compiled with -mavx2 -mfma and run only when cpuid
 * says the CPU has both (dispatch.c). */
#if defined(__x86_64__) || defined(__i386__)
#include "vec_avx2.h"
#include "isa_body.h"
#endif
