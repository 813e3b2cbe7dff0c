# The Cython glue of the spatial ops (ops_spatial.py, csrc/spatial/): fills each op's C state at prepare
# (geometry, copied weights, scratch, the inner GEMM execution, Resize's tables) and hands it to the
# core as an _x86.Execution. Nothing here runs per inference.
from libc.stdint cimport int32_t, int64_t

import numpy as np

from mnn_core.abi cimport mnn_run_fn, mnn_tensor

from mnn_x86 import _x86
from mnn_x86.family cimport Buffer, Execution, _copy_array, _execution, _floats, attach_pool

attach_pool()

cdef extern from "spatial/spatial.h" nogil:
    ctypedef struct x86_inner_gemm:
        mnn_run_fn run
        void* state
    ctypedef struct x86_window3:
        int64_t[3] in_ "in"
        int64_t[3] out
        int64_t[3] k
        int64_t[3] s
        int64_t[3] d
        int64_t[3] p
    ctypedef struct x86_deconv_state:
        x86_inner_gemm gemm
        x86_window3 g
        int64_t C, M, group
        const float* weight
        const float* bias
        int32_t bias_input
        float* col
        int32_t act
        float act_alpha, act_beta
    ctypedef struct x86_conv3d_state:
        x86_inner_gemm gemm
        x86_window3 g
        int64_t C, O, group
        const float* weight
        const float* bias
        int32_t bias_input
        float* col
    ctypedef struct x86_resize_state:
        int32_t linear
        int32_t repeat
        int64_t planes, H, W, OH, OW
        const int64_t* row_lo
        const int64_t* row_hi
        const int64_t* col_lo
        const int64_t* col_hi
        const float* row_w
        const float* col_w
        float* work
    int x86_deconv_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_conv3d_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_resize_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int X86_RESIZE_PASSES
    ctypedef struct x86_resize_pass:
        int64_t outer, in_ "in", out, inner
        int32_t taps
        const int32_t* idx
        const float* w
        const int32_t* outside
    ctypedef struct x86_resize_nd_state:
        int32_t n_pass
        float extrapolation
        x86_resize_pass* pass_ "pass"
        float** work
    int x86_resize_nd_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept


cdef void _window(x86_window3* g, dict p):
    """p's per-axis lists (1 to 3 values, padded in front to 3 with unit axes) into g."""
    cdef int i
    for i in range(3):
        g.in_[i], g.out[i], g.k[i] = p["in"][i], p["out"][i], p["k"][i]
        g.s[i], g.d[i], g.p[i] = p["s"][i], p["d"][i], p["p"][i]


cdef void _inner(x86_inner_gemm* inner, Execution owner, str isa, int threads, str name, dict q):
    """An _x86.matmul execution for q (its operands handed over at each call), kept by `owner`."""
    q = {**dict(batch=1, alpha=1.0, beta=1.0, act=0, act_alpha=0.0, act_beta=0.0, bias_rs=0, bias_cs=0), **q}
    cdef Execution gemm = <Execution>_x86.matmul(isa, threads, name, q, None, None, None, None, q.pop("bias_input", -1))
    owner.keep.append(gemm)
    inner.run = gemm.exe.run
    inner.state = gemm.exe.state


cdef const float* _constant(Execution ex, arr):
    """A float32 copy of a constant, kept by ex; NULL for None (read from the input at run)."""
    if arr is None:
        return NULL
    cdef Buffer buf = _copy_array(arr, np.float32)
    ex.keep.append(buf)
    return <const float*>buf.ptr


cdef float* _scratch(Execution ex, int64_t n):
    cdef Buffer buf = _floats(max(n, 1))
    ex.keep.append(buf)
    return <float*>buf.ptr


def deconv(str isa, int threads, dict p, weight, bias, int bias_input):
    """ConvTranspose. p: C, M, group, act, act_alpha, act_beta and the 3-D window (in, out, k, s, d, p);
    weight/bias: constants or None (inputs 1 and bias_input read at run)."""
    cdef Execution ex = _execution("x86.ConvTranspose", sizeof(x86_deconv_state), x86_deconv_run, isa, threads)
    cdef x86_deconv_state* s = <x86_deconv_state*>ex.state
    _window(&s.g, p)
    s.C, s.M, s.group = p["C"], p["M"], p["group"]
    s.act, s.act_alpha, s.act_beta = p["act"], p["act_alpha"], p["act_beta"]
    cdef int64_t K = s.g.k[0] * s.g.k[1] * s.g.k[2], S = s.g.in_[0] * s.g.in_[1] * s.g.in_[2]
    cdef int64_t Cg = s.C // s.group, rows = s.M // s.group * K
    s.weight, s.bias = _constant(ex, weight), _constant(ex, bias)
    s.bias_input = -1 if bias is not None else bias_input
    ex.packed = ((1,) if weight is not None else ()) + ((2,) if bias is not None else ())
    s.col = _scratch(ex, s.group * rows * S)
    # A: the group's weight (Cg, Mg*K) read transposed; B: its input channels (Cg, S)
    _inner(&s.gemm, ex, isa, threads, "x86.ConvTranspose.gemm",
           dict(M=rows, N=S, K=Cg, a_rs=1, a_cs=rows, b_rs=S, b_cs=1))
    return ex


def conv3d(str isa, int threads, dict p, weight, bias, int bias_input):
    """Conv over 3 spatial axes. p: C, O, group, act, act_alpha, act_beta and the window; weight/bias
    as deconv's."""
    cdef Execution ex = _execution("x86.Conv3D", sizeof(x86_conv3d_state), x86_conv3d_run, isa, threads)
    cdef x86_conv3d_state* s = <x86_conv3d_state*>ex.state
    _window(&s.g, p)
    s.C, s.O, s.group = p["C"], p["O"], p["group"]
    cdef int64_t K = s.g.k[0] * s.g.k[1] * s.g.k[2], OS = s.g.out[0] * s.g.out[1] * s.g.out[2]
    cdef int64_t depth = s.C // s.group * K
    s.weight, s.bias = _constant(ex, weight), _constant(ex, bias)
    s.bias_input = -1 if bias is not None else bias_input
    ex.packed = ((1,) if weight is not None else ()) + ((2,) if bias is not None else ())
    s.col = _scratch(ex, depth * OS)
    has_bias = bias is not None or bias_input >= 0
    # A: the group's weight (Og, Cg*K); B: the columns (Cg*K, OS); a bias per row, then the activation
    _inner(&s.gemm, ex, isa, threads, "x86.Conv3D.gemm",
           dict(M=s.O // s.group, N=OS, K=depth, a_rs=depth, a_cs=1, b_rs=OS, b_cs=1, bias_rs=1, bias_cs=0,
                act=p["act"], act_alpha=p["act_alpha"], act_beta=p["act_beta"], bias_input=2 if has_bias else -1))
    return ex


cdef const int64_t* _indices(Execution ex, arr):
    cdef Buffer buf = _copy_array(arr, np.int64)
    ex.keep.append(buf)
    return <const int64_t*>buf.ptr


def resize(str isa, int threads, str name, dict p, rows, cols):
    """Resize of p["planes"] planes H x W -> OH x OW. rows/cols: (lo, hi, weight of hi) per output row
    and column (nearest: hi and the weight unused); p["linear"]: blend (float32), else pick; p["repeat"]: the
    whole factor f of a nearest column table that is ow // f over whole rows, else 0."""
    cdef Execution ex = _execution(name, sizeof(x86_resize_state), x86_resize_run, isa, threads)
    cdef x86_resize_state* s = <x86_resize_state*>ex.state
    s.linear, s.repeat = p["linear"], p["repeat"]
    s.planes, s.H, s.W, s.OH, s.OW = p["planes"], p["H"], p["W"], p["OH"], p["OW"]
    s.row_lo, s.row_hi, s.row_w = _indices(ex, rows[0]), _indices(ex, rows[1]), _constant(ex, rows[2])
    s.col_lo, s.col_hi, s.col_w = _indices(ex, cols[0]), _indices(ex, cols[1]), _constant(ex, cols[2])
    s.work = _scratch(ex, max(threads, 1) * 2 * s.OW)
    return ex


cdef const int32_t* _int32s(Execution ex, arr):
    cdef Buffer buf = _copy_array(arr, np.int32)
    ex.keep.append(buf)
    return <const int32_t*>buf.ptr


def resize_nd(str isa, int threads, str name, list passes, float extrapolation):
    """Resize as separable passes (float32). passes: one dict per resized axis, in order: outer, in, out,
    inner (the tensor seen as (outer, in, inner) before it) and its table: idx (out, taps) input
    positions, w (out, taps) weights, outside (out,) bool or None (those positions take `extrapolation`)."""
    if not 1 <= len(passes) <= X86_RESIZE_PASSES:
        raise ValueError(f"x86 Resize takes 1 to {X86_RESIZE_PASSES} passes, got {len(passes)}")
    cdef Execution ex = _execution(name, sizeof(x86_resize_nd_state), x86_resize_nd_run, isa, threads)
    cdef x86_resize_nd_state* s = <x86_resize_nd_state*>ex.state
    cdef x86_resize_pass* q
    cdef int64_t biggest = 1
    s.n_pass, s.extrapolation = len(passes), extrapolation
    for i, p in enumerate(passes):
        q = &s.pass_[i]
        q.outer, q.in_, q.out, q.inner, q.taps = p["outer"], p["in"], p["out"], p["inner"], p["idx"].shape[1]
        q.idx, q.w = _int32s(ex, p["idx"]), _constant(ex, p["w"])
        q.outside = NULL if p["outside"] is None else _int32s(ex, p["outside"])
        if i < len(passes) - 1:
            biggest = max(biggest, q.outer * q.out * q.inner)
    s.work[0], s.work[1] = _scratch(ex, biggest), _scratch(ex, biggest)
    return ex
