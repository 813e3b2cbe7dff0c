/* mnn C ABI: what a compiled backend builds against.
 *
 * The contract between mnn-core and a compiled backend is this header alone.
 * A backend hands the core one `mnn_execution` per prepared op (or per fused
 * segment of ops) inside a PyCapsule named MNN_EXECUTION_CAPSULE; the core's
 * run loop calls `run` through the function pointer without the GIL. Backends
 * never cimport the core's Cython classes, so the core can change inside
 * without breaking compiled plugins. A change to any struct below bumps
 * MNN_ABI_VERSION; the core refuses executions built for another version.
 *
 * Find it with `mnn_core.get_include()`.
 */
#ifndef MNN_CORE_ABI_H
#define MNN_CORE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MNN_ABI_VERSION 1
#define MNN_MAX_DIMS 8
#define MNN_EXECUTION_CAPSULE "mnn_core.execution"

typedef enum mnn_dtype {
    MNN_FLOAT32 = 0,
    MNN_FLOAT16 = 1,
    MNN_INT64 = 2,
    MNN_INT32 = 3,
    MNN_INT8 = 4,
    MNN_UINT8 = 5,
    MNN_BOOL = 6,
    MNN_FLOAT64 = 7,
    MNN_INT16 = 8,
    MNN_UINT16 = 9,
    MNN_UINT32 = 10,
    MNN_UINT64 = 11,
    /* low-precision storage types (ml_dtypes' layouts: one element per byte, bfloat16 two bytes);
     * appended in version 1 without breaking it: a backend only receives the dtypes its
     * KernelSpecs list */
    MNN_BFLOAT16 = 12,
    MNN_FLOAT8_E4M3FN = 13,
    MNN_FLOAT8_E4M3FNUZ = 14,
    MNN_FLOAT8_E5M2 = 15,
    MNN_FLOAT8_E5M2FNUZ = 16,
    MNN_FLOAT8_E8M0FNU = 17,
    MNN_FLOAT4_E2M1FN = 18,
    MNN_INT4 = 19,
    MNN_UINT4 = 20,
    MNN_INT2 = 21,
    MNN_UINT2 = 22
} mnn_dtype;

/* The fused activations: what a Conv/Gemm/MatMul (or a binary op) applies to its result when the
 * core's fuse_activations pass folded the activation after it into it (the node's "activation"
 * attribute, one of mnn_core.ops.elementwise.ACTIVATIONS, with act_alpha and act_beta). Kernels
 * switch on these codes; mnn_core.backend.kit.activation mirrors them for Python. */
typedef enum mnn_activation {  /* numbered from 0, in this order */
    MNN_ACT_NONE,
    MNN_ACT_RELU,
    MNN_ACT_CLIP,         /* alpha: min, beta: max */
    MNN_ACT_LEAKY_RELU,   /* alpha */
    MNN_ACT_SIGMOID,
    MNN_ACT_SILU,
    MNN_ACT_GELU,
    MNN_ACT_TANH,
    MNN_ACT_HARD_SIGMOID, /* alpha, beta */
    MNN_ACT_HARD_SWISH
} mnn_activation;

/* A tensor as the run loop hands it to a kernel. Shapes are fixed at resize;
 * so are data pointers (they point into the plan's arena), which lets a
 * backend pre-compute everything in prepare; the one exception is a graph
 * input read only by executions that set MNN_EXEC_INPUTS_MAY_MOVE. */
typedef struct mnn_tensor {
    void *data;          /* host: the first element; device: the arena's handle */
    int64_t byte_offset; /* device: offset of the tensor in the arena; host: 0 */
    int64_t shape[MNN_MAX_DIMS];
    int32_t ndim;
    int32_t dtype;       /* an mnn_dtype */
    int32_t layout;      /* 0: dense row-major; other values are backend-private */
    int32_t reserved;
} mnn_tensor;

/* Runs one prepared execution. Called without the GIL, possibly from a
 * thread other than the one that prepared it, never concurrently on the same
 * state. Returns 0 on success; anything else stops the run, and the core
 * raises BackendError with `error(state)` when that is set. */
typedef int (*mnn_run_fn)(void *state,
                          const mnn_tensor *inputs, int32_t n_inputs,
                          mnn_tensor *outputs, int32_t n_outputs);

typedef struct mnn_execution {
    uint32_t abi_version;             /* MNN_ABI_VERSION the backend was built with */
    uint32_t flags;                   /* MNN_EXEC_* bits; 0 for none */
    mnn_run_fn run;
    void *state;                      /* owned by the backend's Python object */
    const char *(*error)(void *state);/* optional: message after a failed run */
    const char *name;                 /* optional: kernel name for profiles */
} mnn_execution;

/* mnn_execution.flags (appended in version 1: 0, the old value, keeps the old contract).
 *
 * MNN_EXEC_INPUTS_MAY_MOVE: the execution reads its inputs' data pointers at
 * every run, keeps none from prepare, and needs host inputs aligned to their
 * element size only. Where every execution that reads a graph input says so,
 * run() hands them the caller's array itself instead of copying it into the
 * arena first, so that input's pointer can change from run to run. */
#define MNN_EXEC_INPUTS_MAY_MOVE 1u

static inline int64_t mnn_tensor_numel(const mnn_tensor *t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
}

/* bytes per element of a dtype as a tensor holds it (sub-byte types take one byte each, as above) */
static inline size_t mnn_dtype_size(int32_t dtype) {
    switch (dtype) {
    case MNN_INT64: case MNN_FLOAT64: case MNN_UINT64: return 8;
    case MNN_FLOAT32: case MNN_INT32: case MNN_UINT32: return 4;
    case MNN_FLOAT16: case MNN_INT16: case MNN_UINT16: case MNN_BFLOAT16: return 2;
    default: return 1;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* MNN_CORE_ABI_H */
