/* The op modules built apart from _x86: mnn_x86/_<family>.pyx with its kernels in csrc/<family>/.
 * Each is a small extension that compiles in seconds. They run on _x86's thread pool through
 * x86_pool (defined and set at import by family.pxd), and build their loops for three ISA levels
 * with X86_CLONES: GCC's function multi-versioning picks one at load by cpuid, so a plain C loop
 * vectorizes for AVX-512, AVX2 or SSE2 without a hand-written dispatch. */
#ifndef MNN_X86_FAMILY_H
#define MNN_X86_FAMILY_H

#include "op_head.h"

extern const x86_pool_api *x86_pool;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define X86_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define X86_CLONES
#endif

#endif
