# The Cython glue of the integer products (ops_integer.py, csrc/integer/): fills MatMulInteger's and
# ConvInteger's C state at prepare (the operands' packed copies, zero points, scratch) and hands it to
# the core as an _x86.Execution. Nothing here runs per inference.
from libc.stdint cimport int16_t, int32_t, int64_t

import numpy as np

from mnn_core.abi cimport mnn_tensor

from mnn_x86.family cimport Buffer, Execution, _copy_array, _execution, attach_pool

attach_pool()

cdef extern from "integer/integer.h" nogil:
    enum:
        X86_IK
        X86_IT

    ctypedef struct x86_mmi_state:
        int64_t M, N, K, Kp, Mp, Np
        int64_t batch, a_count, b_count
        const int64_t* a_at
        const int64_t* b_at
        int32_t in_za, in_zb
        int32_t* za
        int32_t* zb
        int32_t b_ready
        int16_t* ap
        int16_t* bp

    ctypedef struct x86_convi_state:
        int64_t N, C, H, W, O, group, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl
        int64_t Kp, Mgp, Pp
        int32_t in_zx, in_zw
        int32_t zx
        int32_t* zw
        int32_t w_ready
        int16_t* wp
        int16_t* xs
        int16_t* patches

    int x86_mmi_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_convi_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept

#: K (the depth of the dot products) is padded to a multiple of IK, rows of the operands to one of IT
IK, IT = X86_IK, X86_IT


cdef void* _keep(Execution ex, arr, dtype):
    """A copy of arr the execution keeps (one byte at least, zeroed)."""
    a = np.ascontiguousarray(arr, dtype=dtype)
    cdef Buffer buf = _copy_array(a, dtype) if a.nbytes else Buffer(16)
    ex.keep.append(buf)
    return buf.ptr


cdef void* _zeros(Execution ex, int64_t nbytes):
    cdef Buffer buf = Buffer(max(nbytes, 16))
    ex.keep.append(buf)
    return buf.ptr


def _round(int64_t n, int64_t to):
    return (n + to - 1) // to * to


def matmul_integer(str isa, int threads, str name, dict p, a_at, b_at, za, zb, bp):
    """MatMulInteger (p: M, N, K, a_count, b_count, in_za, in_zb, packed): a_at/b_at the A and B matrix of
    each output; za [M], zb [N] int32 (the constant zero points, or zeros refreshed at run from in_za/in_zb);
    bp: (B - zb)^T packed [b_count][Np][Kp] int16, or None to pack at every run."""
    cdef Execution ex = _execution(name, sizeof(x86_mmi_state), x86_mmi_run, isa, threads)
    cdef x86_mmi_state* s = <x86_mmi_state*>ex.state
    s.M, s.N, s.K = p["M"], p["N"], p["K"]
    s.Kp, s.Mp, s.Np = _round(s.K, IK), _round(s.M, IT), _round(s.N, IT)
    s.batch, s.a_count, s.b_count = len(a_at), p["a_count"], p["b_count"]
    s.a_at = <const int64_t*>_keep(ex, a_at, np.int64)
    s.b_at = <const int64_t*>_keep(ex, b_at, np.int64)
    s.in_za, s.in_zb = p["in_za"], p["in_zb"]
    s.za = <int32_t*>_keep(ex, np.resize(za, s.Mp), np.int32)
    s.zb = <int32_t*>_keep(ex, np.resize(zb, s.Np), np.int32)
    s.ap = <int16_t*>_zeros(ex, s.a_count * s.Mp * s.Kp * 2)
    s.b_ready = bp is not None
    s.bp = <int16_t*>(_keep(ex, bp, np.int16) if bp is not None else _zeros(ex, s.b_count * s.Np * s.Kp * 2))
    ex.packed = tuple(p["packed"])
    return ex


def conv_integer(str isa, int threads, str name, dict p, int zx, zw, wp):
    """ConvInteger (p: conv_params' geometry, in_zx, in_zw, packed): zx and zw [O] the constant zero points
    (or refreshed at run from in_zx/in_zw); wp: (W - zw) packed [group][Mgp][Kp] int16, or None to pack at
    every run."""
    cdef Execution ex = _execution(name, sizeof(x86_convi_state), x86_convi_run, isa, threads)
    cdef x86_convi_state* s = <x86_convi_state*>ex.state
    s.N, s.C, s.H, s.W, s.O, s.group = p["N"], p["C"] * p["group"], p["H"], p["W"], p["O"], p["group"]
    s.OH, s.OW, s.kh, s.kw = p["OH"], p["OW"], p["kh"], p["kw"]
    s.sh, s.sw, s.dh, s.dw, s.pt, s.pl = p["sh"], p["sw"], p["dh"], p["dw"], p["pt"], p["pl"]
    s.Kp, s.Mgp, s.Pp = _round(p["C"] * s.kh * s.kw, IK), _round(s.O // s.group, IT), _round(s.OH * s.OW, IT)
    s.in_zx, s.in_zw, s.zx = p["in_zx"], p["in_zw"], zx
    s.zw = <int32_t*>_keep(ex, zw, np.int32)
    s.w_ready = wp is not None
    s.wp = <int16_t*>(_keep(ex, wp, np.int16) if wp is not None else _zeros(ex, s.group * s.Mgp * s.Kp * 2))
    s.xs = <int16_t*>_zeros(ex, s.C * s.H * s.W * 2)
    s.patches = <int16_t*>_zeros(ex, s.Pp * s.Kp * 2)
    ex.packed = tuple(p["packed"])
    return ex
