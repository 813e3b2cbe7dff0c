# Element-wise math and Cast (csrc/math.c): the states of ops_math.py. Included by _arm.pyx.

cdef extern from "move.h" nogil:
    ctypedef struct arm_math_state:
        arm_op op
        int32_t kind
        float alpha, gamma
    ctypedef struct arm_bin2_state:
        arm_op op
        int32_t kind, dtype, ndim, in_elem, out_elem
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]
    ctypedef struct arm_cast_state:
        arm_op op
        int32_t to "to"
        int32_t from_ "from"
    int arm_math_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_bin2_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_cast_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def math(str name, int kind, float alpha=0.0, float gamma=0.0):
    cdef Execution ex = _execution(name, sizeof(arm_math_state), arm_math_run)
    cdef arm_math_state* s = <arm_math_state*>ex.state
    s.kind, s.alpha, s.gamma = kind, alpha, gamma
    return ex


def bin2(str name, int kind, int dtype, int in_elem, int out_elem, dims, sa, sb):
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"arm {name}: 1 to 8 merged dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(arm_bin2_state), arm_bin2_run)
    cdef arm_bin2_state* s = <arm_bin2_state*>ex.state
    s.kind, s.dtype, s.ndim, s.in_elem, s.out_elem = kind, dtype, len(dims), in_elem, out_elem
    for i in range(s.ndim):
        s.dims[i], s.sa[i], s.sb[i] = dims[i], sa[i], sb[i]
    return ex


def cast(str name, int src, int dst):
    cdef Execution ex = _execution(name, sizeof(arm_cast_state), arm_cast_run)
    cdef arm_cast_state* s = <arm_cast_state*>ex.state
    s.from_, s.to = src, dst
    return ex
