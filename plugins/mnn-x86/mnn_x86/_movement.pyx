# The Cython glue of the data-movement ops (ops_movement.py, csrc/movement/): fills each op's C
# state at prepare and hands it to the core as an _x86.Execution. Nothing here runs per inference.
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

from mnn_core.abi cimport mnn_run_fn, mnn_tensor

import numpy as np

from mnn_x86.family cimport Buffer, Execution, _copy_array, _execution, attach_pool

attach_pool()

cdef extern from "movement/movement.h" nogil:
    enum:
        MV_DIMS
        MV_MAX_OUTPUTS
        MNN_MAX_DIMS

    ctypedef struct x86_copy_state:
        pass

    ctypedef struct x86_strided_plan:
        int32_t ndim
        int64_t dims[MV_DIMS]
        int64_t stride[MV_DIMS]
        int64_t base

    ctypedef struct x86_strided_state:
        int32_t elsize
        int32_t n_plans
        x86_strided_plan plan[MV_MAX_OUTPUTS]

    ctypedef struct x86_where_state:
        int32_t elsize
        int32_t ndim
        int64_t dims[MV_DIMS]
        int64_t stride[3][MV_DIMS]

    ctypedef struct x86_pad_state:
        int32_t elsize
        int32_t ndim
        int64_t dims[MNN_MAX_DIMS]
        const int64_t* maps[MNN_MAX_DIMS]
        int64_t lo, hi
        unsigned char value[8]

    ctypedef struct x86_cast_state:
        int32_t to "to"
        int32_t src "from"

    ctypedef struct x86_index_state:
        int32_t elsize, reduction, ndim, axis
        int64_t outer, dim, inner
        int64_t dims[MNN_MAX_DIMS]
        int64_t dstride[MNN_MAX_DIMS]
        int64_t ddims[MNN_MAX_DIMS]
        int64_t batch, per_batch, k, batch_stride
        int32_t time_major
        unsigned char value[8]
        int64_t diag
        int32_t upper

    int x86_copy_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_strided_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_where_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_pad_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_cast_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_gather_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_gather_elements_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs,
                                int32_t n_out) noexcept
    int x86_scatter_elements_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs,
                                 int32_t n_out) noexcept
    int x86_gather_nd_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_scatter_nd_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_onehot_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_reverse_sequence_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs,
                                 int32_t n_out) noexcept
    int x86_trilu_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_eyelike_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept

#: the index ops' run functions by kind (they share x86_index_state)
cdef dict INDEX_KINDS = {
    "gather": 0, "gather_elements": 1, "scatter_elements": 2, "gather_nd": 3, "scatter_nd": 4, "onehot": 5,
    "reverse_sequence": 6, "trilu": 7, "eyelike": 8,
}
cdef mnn_run_fn[9] INDEX_RUNS = [x86_gather_run, x86_gather_elements_run, x86_scatter_elements_run,
                                 x86_gather_nd_run, x86_scatter_nd_run, x86_onehot_run, x86_reverse_sequence_run,
                                 x86_trilu_run, x86_eyelike_run]


def copy(str isa, int threads, str name):
    """The input copied to the output (Identity)."""
    return _execution(name, sizeof(x86_copy_state), x86_copy_run, isa, threads)


cdef int _fill_dims(int64_t* dst, seq, int limit) except -1:
    if len(seq) > limit:
        raise ValueError(f"x86 movement: {len(seq)} dims after merging; at most {limit}")
    for i, v in enumerate(seq):
        dst[i] = v
    return 0


def strided(str isa, int threads, str name, int elsize, list plans):
    """Output p = the input read at plans[p] = (dims, element strides, base offset) (csrc/movement/strided.c)."""
    if len(plans) > MV_MAX_OUTPUTS:
        raise ValueError(f"x86 movement: {len(plans)} outputs; at most {MV_MAX_OUTPUTS}")
    cdef Execution ex = _execution(name, sizeof(x86_strided_state), x86_strided_run, isa, threads)
    cdef x86_strided_state* s = <x86_strided_state*>ex.state
    s.elsize = elsize
    s.n_plans = len(plans)
    for p, (dims, strides, base) in enumerate(plans):
        s.plan[p].ndim = len(dims)
        _fill_dims(s.plan[p].dims, dims, MV_DIMS)
        _fill_dims(s.plan[p].stride, strides, MV_DIMS)
        s.plan[p].base = base
    return ex


def where(str isa, int threads, str name, int elsize, list dims, list strides):
    """out = cond ? x : y over `dims` with the three inputs' element `strides` (0 where broadcast)."""
    cdef Execution ex = _execution(name, sizeof(x86_where_state), x86_where_run, isa, threads)
    cdef x86_where_state* s = <x86_where_state*>ex.state
    s.elsize = elsize
    s.ndim = len(dims)
    _fill_dims(s.dims, dims, MV_DIMS)
    for k in range(3):
        _fill_dims(s.stride[k], strides[k], MV_DIMS)
    return ex


def pad(str isa, int threads, str name, int elsize, list dims, list maps, int64_t lo, int64_t hi, bytes value):
    """Pad through per-axis maps of output index -> input element offset or -1 (the constant `value`)."""
    cdef Execution ex = _execution(name, sizeof(x86_pad_state), x86_pad_run, isa, threads)
    cdef x86_pad_state* s = <x86_pad_state*>ex.state
    cdef Buffer buf = _copy_array(np.concatenate([np.asarray(m, np.int64) for m in maps]), np.int64)
    ex.keep.append(buf)
    s.elsize = elsize
    s.ndim = len(dims)
    _fill_dims(s.dims, dims, MNN_MAX_DIMS)
    cdef int64_t at = 0
    for d, m in enumerate(maps):
        s.maps[d] = (<const int64_t*>buf.ptr) + at
        at += len(m)
    s.lo, s.hi = lo, hi
    memcpy(s.value, <const char*>value, min(len(value), 8))
    return ex


def cast(str isa, int threads, str name, int src, int to):
    """Convert dtype code `src` to `to` (abi.h's mnn_dtype; the numeric ones)."""
    cdef Execution ex = _execution(name, sizeof(x86_cast_state), x86_cast_run, isa, threads)
    cdef x86_cast_state* s = <x86_cast_state*>ex.state
    s.src, s.to = src, to
    return ex


def index(str kind, str isa, int threads, str name, int elsize, dict f):
    """An index op (csrc/movement/index.c) of `kind`; `f` holds the x86_index_state fields it reads."""
    cdef Execution ex = _execution(name, sizeof(x86_index_state), INDEX_RUNS[INDEX_KINDS[kind]], isa, threads)
    cdef x86_index_state* s = <x86_index_state*>ex.state
    s.elsize = elsize
    s.reduction, s.ndim, s.axis = f.get("reduction", 0), f.get("ndim", 0), f.get("axis", 0)
    s.outer, s.dim, s.inner = f.get("outer", 1), f.get("dim", 1), f.get("inner", 1)
    _fill_dims(s.dims, f.get("dims", ()), MNN_MAX_DIMS)
    _fill_dims(s.dstride, f.get("dstride", ()), MNN_MAX_DIMS)
    _fill_dims(s.ddims, f.get("ddims", ()), MNN_MAX_DIMS)
    s.batch, s.per_batch, s.k = f.get("batch", 1), f.get("per_batch", 1), f.get("k", 0)
    s.batch_stride = f.get("batch_stride", 0)
    s.time_major = f.get("time_major", 0)
    value = f.get("value", b"")
    memcpy(s.value, <const char*>value, min(len(value), 8))
    s.diag, s.upper = f.get("diag", 0), f.get("upper", 0)
    return ex
