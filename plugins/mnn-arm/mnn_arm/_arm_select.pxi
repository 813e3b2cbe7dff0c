# ArgMax / ArgMin, TopK, CumSum / CumProd (csrc/select.h): the states of ops_select.py. Included by _arm.pyx.

cdef extern from "select.h" nogil:
    ctypedef struct arm_arg_state:
        arm_op op
        int32_t dtype, is_max, last_index
        int64_t outer, n, inner
    ctypedef struct arm_topk_pair:
        double key
        int64_t index
    ctypedef struct arm_topk_state:
        arm_op op
        int32_t dtype, largest, slices
        int64_t outer, n, inner, k
        arm_topk_pair* work
    ctypedef struct arm_cum_state:
        arm_op op
        int32_t dtype, prod, exclusive, reverse
        int64_t outer, n, inner
    int arm_arg_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_topk_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_cum_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def arg(str name, int dtype, bint is_max, bint last_index, int64_t outer, int64_t n, int64_t inner):
    cdef Execution ex = _execution(name, sizeof(arm_arg_state), arm_arg_run)
    cdef arm_arg_state* s = <arm_arg_state*>ex.state
    s.dtype, s.is_max, s.last_index = dtype, is_max, last_index
    s.outer, s.n, s.inner = outer, n, inner
    return ex


def topk(str name, int dtype, bint largest, int64_t outer, int64_t n, int64_t inner, int64_t k, int threads=1):
    cdef Execution ex = _execution(name, sizeof(arm_topk_state), arm_topk_run)
    cdef arm_topk_state* s = <arm_topk_state*>ex.state
    s.dtype, s.largest = dtype, largest
    s.outer, s.n, s.inner, s.k = outer, n, inner, k
    s.slices = max(1, threads)
    s.op.threads = s.slices
    s.work = <arm_topk_pair*>ex.hold(Buffer(max(n, 1) * sizeof(arm_topk_pair) * s.slices))
    return ex


def cumulative(str name, int dtype, bint prod, bint exclusive, bint reverse, int64_t outer, int64_t n,
               int64_t inner):
    cdef Execution ex = _execution(name, sizeof(arm_cum_state), arm_cum_run)
    cdef arm_cum_state* s = <arm_cum_state*>ex.state
    s.dtype, s.prod, s.exclusive, s.reverse = dtype, prod, exclusive, reverse
    s.outer, s.n, s.inner = outer, n, inner
    return ex
