/* Run-time path choice from the CPU's hardware capabilities (getauxval).
 * Compiled with baseline flags only: it runs on every aarch64 CPU and decides
 * whether the fp16 / sdot translation units may run at all. */
#include <string.h>

#include "arm.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

/* bits of AT_HWCAP on aarch64 Linux (asm/hwcap.h); spelled out so an old libc header does not matter */
#define ARM_HWCAP_ASIMD (1UL << 1)
#define ARM_HWCAP_FPHP (1UL << 9)
#define ARM_HWCAP_ASIMDHP (1UL << 10)
#define ARM_HWCAP_ASIMDDP (1UL << 20)

extern const arm_fkernels arm_fkernels_fp32;
extern const arm_fkernels arm_fkernels_fp16;
extern const arm_fkernels arm_fkernels_fp16h;
extern const arm_qkernels arm_qkernels_int8;
extern const arm_qkernels arm_qkernels_int8_dot;

uint64_t arm_hwcap(void) {
#if defined(__aarch64__) && defined(__linux__)
    return (uint64_t)getauxval(AT_HWCAP);
#else
    return 0;
#endif
}

int arm_path_runnable(int path) {
#if defined(__aarch64__)
    const uint64_t hw = arm_hwcap();
    switch (path) {
    case ARM_PATH_FP32:
    case ARM_PATH_INT8:
        return 1; /* Advanced SIMD is mandatory on aarch64 */
    case ARM_PATH_FP16:
    case ARM_PATH_FP16H:
        return (hw & ARM_HWCAP_ASIMDHP) && (hw & ARM_HWCAP_FPHP);
    case ARM_PATH_INT8_DOT:
        return (hw & ARM_HWCAP_ASIMDDP) != 0;
    }
#else
    (void)path;
#endif
    return 0;
}

const char *arm_path_name(int path) {
    static const char *names[] = {"fp32", "fp16", "int8", "int8_dot", "fp16h"};
    return path >= 0 && path <= 4 ? names[path] : "unknown";
}

const arm_fkernels *arm_fkernels_for(int path) {
    if (!arm_path_runnable(path)) return NULL;
    if (path == ARM_PATH_FP32) return &arm_fkernels_fp32;
    if (path == ARM_PATH_FP16) return &arm_fkernels_fp16;
    if (path == ARM_PATH_FP16H) return &arm_fkernels_fp16h;
    return NULL;
}

const arm_qkernels *arm_qkernels_for(int path) {
    if (!arm_path_runnable(path)) return NULL;
    if (path == ARM_PATH_INT8) return &arm_qkernels_int8;
    if (path == ARM_PATH_INT8_DOT) return &arm_qkernels_int8_dot;
    return NULL;
}
