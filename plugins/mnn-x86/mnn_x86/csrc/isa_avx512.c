/* The AVX-512 ISA level (F, BW, VL, DQ) with FMA; compiled with -mavx512f
 * -mavx512bw -mavx512vl -mavx512dq -mfma and run only when cpuid says the CPU
 * has all of them (dispatch.c). */
#if defined(__x86_64__) || defined(__i386__)
#include "vec_avx512.h"
#include "isa_body.h"
#endif
