# ScatterElements (csrc/scatter.h): the state of ops_scatter.py. Included by _arm.pyx.

cdef extern from "scatter.h" nogil:
    ctypedef struct arm_scatter_state:
        arm_op op
        int32_t ndim, axis, reduction, dtype, elem
        int64_t data_numel
        int64_t idx_dims[8]
        int64_t data_strides[8]
        int64_t axis_size
    int arm_scatter_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def scatter_elements(str name, int axis, int reduction, int dtype, int elem, data_shape, idx_shape):
    cdef Execution ex = _execution(name, sizeof(arm_scatter_state), arm_scatter_run)
    cdef arm_scatter_state* s = <arm_scatter_state*>ex.state
    s.ndim, s.axis, s.reduction, s.dtype, s.elem = len(data_shape), axis, reduction, dtype, elem
    s.data_numel = int(np.prod(data_shape, dtype=np.int64))
    s.axis_size = data_shape[axis]
    cdef int64_t stride = 1
    for d in reversed(range(s.ndim)):
        s.idx_dims[d], s.data_strides[d] = idx_shape[d], stride
        stride *= data_shape[d]
    return ex
