# The C side: kernels behind mnn's C ABI (mnn_core/abi.h).
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, int64_t

from mnn_core.abi cimport (MNN_ABI_VERSION, MNN_EXEC_INPUTS_MAY_MOVE, MNN_EXECUTION_CAPSULE, MNN_FLOAT32, mnn_execution,
                           mnn_tensor, mnn_tensor_numel)


cdef const char* _bad_dtype(void* state) noexcept nogil:
    return b"template kernels take float32 only"


cdef int relu(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept nogil:
    cdef const float* x = <const float*>ins[0].data
    cdef float* y = <float*>outs[0].data
    cdef int64_t i, n = mnn_tensor_numel(&ins[0])
    if ins[0].dtype != MNN_FLOAT32:
        return 1
    for i in range(n):
        y[i] = x[i] if x[i] > 0 else 0.0
    return 0


cdef int add(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept nogil:
    cdef const float* a = <const float*>ins[0].data
    cdef const float* b = <const float*>ins[1].data
    cdef float* y = <float*>outs[0].data
    cdef int64_t i
    for i in range(mnn_tensor_numel(&outs[0])):
        y[i] = a[i] + b[i]
    return 0


cdef int mul(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept nogil:
    cdef const float* a = <const float*>ins[0].data
    cdef const float* b = <const float*>ins[1].data
    cdef float* y = <float*>outs[0].data
    cdef int64_t i
    for i in range(mnn_tensor_numel(&outs[0])):
        y[i] = a[i] * b[i]
    return 0


cdef int matmul(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept nogil:
    cdef const float* a = <const float*>ins[0].data
    cdef const float* b = <const float*>ins[1].data
    cdef float* y = <float*>outs[0].data
    cdef int64_t m = ins[0].shape[0], k = ins[0].shape[1], n = ins[1].shape[1], i, j, p
    cdef float acc
    for i in range(m):
        for j in range(n):
            acc = 0
            for p in range(k):
                acc += a[i * k + p] * b[p * n + j]
            y[i * n + j] = acc
    return 0


cdef class Kernel:
    """Owns one mnn_execution; the capsule points into this object."""
    cdef mnn_execution exe

    def capsule(self):
        return PyCapsule_New(&self.exe, MNN_EXECUTION_CAPSULE, NULL)


def make(str op):
    cdef Kernel k = Kernel()
    k.exe.abi_version = MNN_ABI_VERSION
    # these kernels read their pointers at every run and need float alignment only, so a graph
    # input read only by them is read from the caller's array, without a copy (abi.h)
    k.exe.flags = MNN_EXEC_INPUTS_MAY_MOVE
    k.exe.state = NULL
    k.exe.error = _bad_dtype
    if op == "Relu":
        k.exe.run = relu
    elif op == "Add":
        k.exe.run = add
    elif op == "Mul":
        k.exe.run = mul
    elif op == "MatMul":
        k.exe.run = matmul
    else:
        raise ValueError(f"template backend has no {op} kernel")
    return k
