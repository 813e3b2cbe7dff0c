/* The AVX-512 ISA level (F, BW, VL, DQ) with FMA; compiled with -mavx512f
 * -mavx512bw -mavx512vl -mavx512dq -mfma and run only when cpuid says the CPU
 * has all of them (dispatch.c). */
#if defined(__x86_64__) || defined(__i386__)
#include "vec_avx512.h"
#include "isa_body.h"
#endif

#if defined(__x86_64__)
#include <time.h>

/* Seconds for `iters` rounds of 12 independent FMAs on zmm (wide) or ymm registers. Twelve chains
 * cover an FMA's latency (4 cycles) on two units; the multiplier is zero, so no value turns denormal. */
static double fma_loop_seconds(int wide, long iters) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
#define FMA12(R)                                                                                       \
    "vfmadd231ps %%" R "12, %%" R "12, %%" R "0\n\t vfmadd231ps %%" R "12, %%" R "12, %%" R "1\n\t"       \
    "vfmadd231ps %%" R "12, %%" R "12, %%" R "2\n\t vfmadd231ps %%" R "12, %%" R "12, %%" R "3\n\t"       \
    "vfmadd231ps %%" R "12, %%" R "12, %%" R "4\n\t vfmadd231ps %%" R "12, %%" R "12, %%" R "5\n\t"       \
    "vfmadd231ps %%" R "12, %%" R "12, %%" R "6\n\t vfmadd231ps %%" R "12, %%" R "12, %%" R "7\n\t"       \
    "vfmadd231ps %%" R "12, %%" R "12, %%" R "8\n\t vfmadd231ps %%" R "12, %%" R "12, %%" R "9\n\t"       \
    "vfmadd231ps %%" R "12, %%" R "12, %%" R "10\n\t vfmadd231ps %%" R "12, %%" R "12, %%" R "11\n\t"
    if (wide)
        __asm__ volatile("vpxord %%zmm12, %%zmm12, %%zmm12\n\t"
                         "1:\n\t" FMA12("zmm") "dec %0\n\t jnz 1b\n\t vzeroupper"
                         : "+r"(iters) : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                           "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "cc");
    else
        __asm__ volatile("vpxor %%ymm12, %%ymm12, %%ymm12\n\t"
                         "1:\n\t" FMA12("ymm") "dec %0\n\t jnz 1b\n\t vzeroupper"
                         : "+r"(iters) : : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                           "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "cc");
#undef FMA12
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

double x86_avx512_fma_probe(void) { /* dispatch.c: x86_fma512_cost_ratio */
    double best[2] = {1e9, 1e9};
    for (int trial = 0; trial < 12; trial++) { /* interleaved, the fastest of each: a preemption or a
                                                  clock ramping up costs a trial, not the answer */
        double t = fma_loop_seconds(trial & 1, 8192);
        if (t < best[trial & 1]) best[trial & 1] = t;
    }
    return best[1] / best[0];
}
#endif
