/* Which bf16 kernels (bf16.h) this CPU runs: the AVX-512 level's, when cpuid also reports
 * AVX512_BF16. Compiled with baseline flags only, as dispatch.c. */
#include <string.h>

#include "bf16.h"

#if defined(__x86_64__) || defined(__i386__)
extern const x86_bf16_kernels x86_bf16_kernels_avx512;
#endif

int x86_cpu_supports_bf16(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return x86_cpu_supports("avx512") && __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}

const x86_bf16_kernels *x86_bf16_kernels_for(const char *isa) {
#if defined(__x86_64__) || defined(__i386__)
    if (strcmp(isa, "avx512") == 0 && x86_cpu_supports_bf16()) return &x86_bf16_kernels_avx512;
#else
    (void)isa;
#endif
    return NULL;
}
