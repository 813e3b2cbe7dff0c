# The Cython glue of the element-wise math ops (ops_math.py, csrc/math/): picks each op's C kernel for
# its dtypes and fills its state at prepare. Nothing here runs per inference.
from libc.stdint cimport int32_t, int64_t

from mnn_core.abi cimport mnn_tensor

from mnn_x86.family cimport Execution, _execution, attach_pool, x86_op

attach_pool()

cdef extern from "math/mathops.h" nogil:
    ctypedef struct x86_math_params:
        double a, b, c
        int64_t ia, ib
    ctypedef void (*x86_math_map_fn)(const void*, void*, int64_t, const x86_math_params*) noexcept
    ctypedef void (*x86_math_row_fn)(const void*, int64_t, const void*, int64_t, void*, int64_t,
                                     const x86_math_params*) noexcept
    ctypedef struct x86_math_unary_state:
        x86_op op
        x86_math_map_fn map
        int32_t size_x, size_y
        x86_math_params p
    ctypedef struct x86_math_binary_state:
        x86_op op
        x86_math_row_fn row
        int32_t ndim, size_a, size_b, size_y
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]
        x86_math_params p
        int32_t pow_f32
    x86_math_map_fn x86_math_unary_kernel(int kind, int dtype) noexcept
    x86_math_row_fn x86_math_binary_kernel(int kind, int dtype_a, int dtype_b) noexcept
    int x86_math_unary_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_math_binary_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs,
                            int32_t n_out) noexcept
    enum:
        XM_POW


cdef void _params(x86_math_params* p, tuple attrs):
    p.a, p.b, p.c, p.ia, p.ib = attrs


def has_unary(int kind, int dtype):
    """Whether csrc/math has unary op `kind` (enum x86_math_unary) for an mnn_dtype."""
    return x86_math_unary_kernel(kind, dtype) != NULL


def has_binary(int kind, int dtype_a, int dtype_b):
    """Whether csrc/math has binary op `kind` (enum x86_math_binary) for these input dtypes."""
    return x86_math_binary_kernel(kind, dtype_a, dtype_b) != NULL


def unary(str isa, int threads, str name, int kind, int dtype, int size_x, int size_y, tuple attrs):
    """y = f(x) element by element; attrs: (a, b, c, ia, ib) as csrc/math/mathops.h's x86_math_params."""
    cdef x86_math_map_fn fn = x86_math_unary_kernel(kind, dtype)
    if fn == NULL:
        raise ValueError(f"{name}: no x86 math kernel {kind} for dtype code {dtype}")
    cdef Execution ex = _execution(name, sizeof(x86_math_unary_state), x86_math_unary_run, isa, threads)
    cdef x86_math_unary_state* s = <x86_math_unary_state*>ex.state
    s.map = fn
    s.size_x, s.size_y = size_x, size_y
    _params(&s.p, attrs)
    return ex


def binary(str isa, int threads, str name, int kind, tuple dtypes, tuple sizes, dims, sa, sb, tuple attrs):
    """y = a op b over 1 to 8 collapsed dims with element strides sa/sb (0: broadcast); dtypes: the mnn_dtype
    of a and b; sizes: bytes per element of a, b and y."""
    cdef x86_math_row_fn fn = x86_math_binary_kernel(kind, dtypes[0], dtypes[1])
    if fn == NULL:
        raise ValueError(f"{name}: no x86 math kernel {kind} for dtype codes {dtypes}")
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"{name}: x86 binary ops take 1 to 8 collapsed dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(x86_math_binary_state), x86_math_binary_run, isa, threads)
    cdef x86_math_binary_state* s = <x86_math_binary_state*>ex.state
    cdef int i
    s.row = fn
    s.ndim = len(dims)
    s.size_a, s.size_b, s.size_y = sizes
    for i in range(s.ndim):
        s.dims[i], s.sa[i], s.sb[i] = dims[i], sa[i], sb[i]
    _params(&s.p, attrs)
    s.pow_f32 = kind == XM_POW and dtypes[0] == 0  # MNN_FLOAT32
    return ex
