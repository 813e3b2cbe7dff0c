# Cython mirror of abi.h, for backends written in Cython:
#   from mnn_core.abi cimport mnn_tensor, mnn_execution
# (compile with include_dirs=[mnn_core.get_include()])
# or copy these declarations; the header is the contract, not this file.
from libc.stdint cimport int32_t, int64_t, uint32_t

cdef extern from "mnn_core/abi.h" nogil:
    enum: MNN_ABI_VERSION
    enum: MNN_MAX_DIMS
    enum: MNN_EXEC_INPUTS_MAY_MOVE
    const char* MNN_EXECUTION_CAPSULE

    ctypedef enum mnn_dtype:
        MNN_FLOAT32
        MNN_FLOAT16
        MNN_INT64
        MNN_INT32
        MNN_INT8
        MNN_UINT8
        MNN_BOOL
        MNN_FLOAT64
        MNN_INT16
        MNN_UINT16
        MNN_UINT32
        MNN_UINT64
        MNN_BFLOAT16
        MNN_FLOAT8_E4M3FN
        MNN_FLOAT8_E4M3FNUZ
        MNN_FLOAT8_E5M2
        MNN_FLOAT8_E5M2FNUZ
        MNN_FLOAT8_E8M0FNU
        MNN_FLOAT4_E2M1FN
        MNN_INT4
        MNN_UINT4
        MNN_INT2
        MNN_UINT2

    ctypedef enum mnn_activation:
        MNN_ACT_NONE
        MNN_ACT_RELU
        MNN_ACT_CLIP
        MNN_ACT_LEAKY_RELU
        MNN_ACT_SIGMOID
        MNN_ACT_SILU
        MNN_ACT_GELU
        MNN_ACT_TANH
        MNN_ACT_HARD_SIGMOID
        MNN_ACT_HARD_SWISH

    ctypedef struct mnn_tensor:
        void* data
        int64_t byte_offset
        int64_t shape[8]
        int32_t ndim
        int32_t dtype
        int32_t layout
        int32_t reserved

    ctypedef int (*mnn_run_fn)(void* state, const mnn_tensor* inputs, int32_t n_inputs,
                              mnn_tensor* outputs, int32_t n_outputs) noexcept nogil

    ctypedef struct mnn_execution:
        uint32_t abi_version
        uint32_t flags
        mnn_run_fn run
        void* state
        const char* (*error)(void* state) noexcept nogil
        const char* name

    int64_t mnn_tensor_numel(const mnn_tensor* t)
