# The Cython glue of the reductions and the ops along one axis (ops_reduce.py, csrc/reduce/): fills
# each op's C state at prepare and hands it to the core as an _x86.Execution.
from libc.stdint cimport int32_t, int64_t

from mnn_core.abi cimport mnn_run_fn, mnn_tensor

from mnn_x86.family cimport Buffer, Execution, _execution, _floats, attach_pool, x86_op

attach_pool()

cdef extern from "reduce/reduce.h" nogil:
    ctypedef struct x86_reduction_state:
        x86_op op
        int32_t dtype, kind, fin, nk, nr
        int64_t kdim[4]
        int64_t kstr[4]
        int64_t rdim[4]
        int64_t rstr[4]
        int64_t inner, run, n_out, n_red, parts
        double count, power
        void* partial
        double* shift
    int x86_reduction_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept

    ctypedef struct x86_axis_state:
        x86_op op
        int32_t dtype, mode, last, reverse
        int64_t outer, axis, inner, k
        double alpha, beta, bias
        int64_t* work
    int x86_arg_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_hardmax_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_cumulative_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs,
                           int32_t n_out) noexcept
    int x86_topk_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_lpnorm_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_lrn_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept

    ctypedef struct x86_layernorm_state:
        x86_op op
        int32_t dtype, nd, scale_input, bias_input
        int64_t rows, n
        int64_t dim[8]
        int64_t sstr[8]
        int64_t bstr[8]
        double eps
    int x86_layernorm_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs,
                          int32_t n_out) noexcept


cdef void* _scratch(Execution ex, int64_t n_doubles) except NULL:
    """Zeroed scratch of n 8-byte elements that lives as long as the execution."""
    cdef Buffer buf = _floats(2 * max(n_doubles, 1))
    ex.keep.append(buf)
    return buf.ptr


def reduce(str isa, int threads, str name, dict p):
    """A reduction laid out as reduce.h says; p: ops_reduce.reduce_layout's fields and kind/fin/parts/lse."""
    cdef Execution ex = _execution(name, sizeof(x86_reduction_state), x86_reduction_run, isa, threads)
    cdef x86_reduction_state* s = <x86_reduction_state*>ex.state
    s.kind, s.fin = p["kind"], p["fin"]
    s.nk, s.nr = len(p["kdim"]), len(p["rdim"])
    for i in range(s.nk):
        s.kdim[i], s.kstr[i] = p["kdim"][i], p["kstr"][i]
    for i in range(s.nr):
        s.rdim[i], s.rstr[i] = p["rdim"][i], p["rstr"][i]
    s.inner, s.run, s.n_out, s.n_red, s.count = p["inner"], p["run"], p["n_out"], p["n_red"], p["count"]
    s.parts, s.power = p["parts"], p.get("power", 1.0)
    if s.parts > 1:
        s.partial = _scratch(ex, s.parts * s.n_out)
    if p["lse"]:
        s.shift = <double*>_scratch(ex, s.n_out)
    return ex


def along_axis(str op, str isa, int threads, str name, int64_t outer, int64_t axis, int64_t inner,
               int mode=0, int last=0, int reverse=0, int64_t k=0, double alpha=0, double beta=0, double bias=0):
    """ArgMax/ArgMin ("arg"), Hardmax, CumSum/CumProd ("cumulative"), TopK, LpNormalization ("lpnorm") and
    LRN along the middle axis of [outer][axis][inner]."""
    runs = {"arg": <size_t>x86_arg_run, "hardmax": <size_t>x86_hardmax_run,
            "cumulative": <size_t>x86_cumulative_run, "topk": <size_t>x86_topk_run,
            "lpnorm": <size_t>x86_lpnorm_run, "lrn": <size_t>x86_lrn_run}
    cdef Execution ex = _execution(name, sizeof(x86_axis_state), <mnn_run_fn><size_t>runs[op], isa, threads)
    cdef x86_axis_state* s = <x86_axis_state*>ex.state
    s.mode, s.last, s.reverse = mode, last, reverse
    s.outer, s.axis, s.inner, s.k = outer, axis, inner, k
    s.alpha, s.beta, s.bias = alpha, beta, bias
    if op == "topk":
        s.work = <int64_t*>_scratch(ex, max(threads, 1) * axis)
    return ex


def layernorm(str isa, int threads, int64_t rows, int64_t n, list dims, list scale_strides, list bias_strides,
              double eps, int scale_input, int bias_input):
    """LayerNormalization of rows of n over the merged normalized axes `dims`, its scale and bias
    (inputs scale_input / bias_input, -1: absent) walked by their strides (0: broadcast)."""
    cdef Execution ex = _execution("x86.LayerNormalization.broadcast", sizeof(x86_layernorm_state),
                                   x86_layernorm_run, isa, threads)
    cdef x86_layernorm_state* s = <x86_layernorm_state*>ex.state
    s.rows, s.n, s.eps, s.nd = rows, n, eps, len(dims)
    s.scale_input, s.bias_input = scale_input, bias_input
    for i in range(s.nd):
        s.dim[i], s.sstr[i], s.bstr[i] = dims[i], scale_strides[i], bias_strides[i]
    return ex
