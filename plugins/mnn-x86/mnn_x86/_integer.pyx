# The Cython glue of the integer products (ops_integer.py, csrc/integer/): fills MatMulInteger's and
# ConvInteger's C state at prepare (the constant operand packed by the same C the run uses, zero points,
# scratch) and hands it to the core as an _x86.Execution. Nothing here runs per inference.
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np

from mnn_core.abi cimport mnn_tensor

from mnn_x86.family cimport Buffer, Execution, _copy_array, _execution, _keep, _zeros, attach_pool

attach_pool()

cdef extern from "integer/integer.h" nogil:
    enum:
        X86_QG_NR
        X86_QG_MR
        X86_QG_SCALAR
        X86_QG_AVX2
        X86_QG_VNNI

    ctypedef struct x86_qgemm:
        int32_t path, l_unsigned
        int64_t K4
        const int64_t* roff

    ctypedef struct x86_mmi_state:
        int64_t M, N, K, Mp, panels
        int64_t batch, a_count, b_count
        const int64_t* a_at
        const int64_t* b_at
        int32_t in_za, in_zb, a_signed, b_signed
        int32_t* za
        int32_t* zb
        int32_t* zl
        int32_t* zr
        x86_qgemm g
        int32_t b_ready
        int32_t* ap
        int32_t* u
        uint8_t* bp
        int32_t* bsum

    ctypedef struct x86_convi_state:
        int64_t N, C, H, W, O, group, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl
        int64_t Cg, C4, Og, Ogp
        int64_t QH, QW, pstride, planes, Nf, tiles
        int32_t in_zx, in_zw, x_signed, w_signed
        int32_t zx
        int32_t* zw
        int32_t* zl
        int32_t* u
        int32_t* lsum
        x86_qgemm g
        int32_t w_ready
        int32_t* wp
        uint8_t* xq
        const uint8_t* zero_row

    int x86_qgemm_path(int level)
    int x86_mmi_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    void x86_mmi_pack_b(x86_mmi_state* s, const void* b, int is_signed)
    int x86_convi_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    void x86_convi_pack_weights(x86_convi_state* s, const void* w, int is_signed)

LEVELS = {"scalar": 0, "avx2": 1, "avx512": 2}
PATHS = {X86_QG_SCALAR: "scalar", X86_QG_AVX2: "avx2", X86_QG_VNNI: "vnni"}


def qgemm_path(str isa) -> str:
    """The integer products' tiles at this ISA level on this CPU: "vnni", "avx2" or "scalar"."""
    return PATHS[x86_qgemm_path(LEVELS[isa])]


def _round(int64_t n, int64_t to):
    return (n + to - 1) // to * to


cdef const void* _data(arr):
    return <const void*><size_t>arr.ctypes.data


def matmul_integer(str isa, int threads, str name, dict p, a_at, b_at, za, zb, b):
    """MatMulInteger (p: M, N, K, a_count, b_count, in_za, in_zb, a_signed, b_signed, packed): a_at/b_at the A
    and B matrix of each output; za [M], zb [N] int32 (the constant zero points, or refreshed at run from
    in_za/in_zb); b: the constant B [b_count][K][N] (packed here), or None to pack it at every run."""
    cdef Execution ex = _execution(name, sizeof(x86_mmi_state), x86_mmi_run, isa, threads)
    cdef x86_mmi_state* s = <x86_mmi_state*>ex.state
    s.M, s.N, s.K = p["M"], p["N"], p["K"]
    s.Mp, s.panels = _round(s.M, X86_QG_MR), _round(s.N, X86_QG_NR) // X86_QG_NR
    s.g.path, s.g.l_unsigned, s.g.K4 = x86_qgemm_path(LEVELS[isa]), 1, (s.K + 3) // 4
    s.g.roff = <const int64_t*>_keep(ex, np.arange(s.g.K4, dtype=np.int64) * (X86_QG_NR * 4), np.int64)
    s.batch, s.a_count, s.b_count = len(a_at), p["a_count"], p["b_count"]
    s.a_at = <const int64_t*>_keep(ex, a_at, np.int64)
    s.b_at = <const int64_t*>_keep(ex, b_at, np.int64)
    s.in_za, s.in_zb, s.a_signed, s.b_signed = p["in_za"], p["in_zb"], p["a_signed"], p["b_signed"]
    s.za = <int32_t*>_keep(ex, za, np.int32)
    s.zb = <int32_t*>_keep(ex, zb, np.int32)
    s.zl = <int32_t*>_zeros(ex, s.Mp * 4)
    s.zr = <int32_t*>_zeros(ex, s.panels * X86_QG_NR * 4)
    s.ap = <int32_t*>_zeros(ex, s.a_count * s.Mp * s.g.K4 * 4)
    s.u = <int32_t*>_zeros(ex, s.a_count * s.Mp * 4)
    s.bp = <uint8_t*>_zeros(ex, s.b_count * s.panels * s.g.K4 * X86_QG_NR * 4)
    s.bsum = <int32_t*>_zeros(ex, s.b_count * s.panels * X86_QG_NR * 4)
    s.b_ready = b is not None
    if b is not None:
        b = np.ascontiguousarray(b)
        x86_mmi_pack_b(s, _data(b), s.b_signed)
    ex.packed = tuple(p["packed"])
    return ex


def conv_integer(str isa, int threads, str name, dict p, int zx, zw, w):
    """ConvInteger (p: conv_params' geometry, in_zx, in_zw, x_signed, w_signed, packed): zx and zw [O] the
    constant zero points (or refreshed at run from in_zx/in_zw); w: the constant weights (packed here), or
    None to pack them at every run."""
    cdef Execution ex = _execution(name, sizeof(x86_convi_state), x86_convi_run, isa, threads)
    cdef x86_convi_state* s = <x86_convi_state*>ex.state
    s.N, s.C, s.H, s.W, s.O, s.group = p["N"], p["C"] * p["group"], p["H"], p["W"], p["O"], p["group"]
    s.OH, s.OW, s.kh, s.kw = p["OH"], p["OW"], p["kh"], p["kw"]
    s.sh, s.sw, s.dh, s.dw, s.pt, s.pl = p["sh"], p["sw"], p["dh"], p["dw"], p["pt"], p["pl"]
    s.Cg, s.Og = p["C"], s.O // s.group
    s.C4, s.Ogp = (s.Cg + 3) // 4, _round(s.Og, X86_QG_MR)
    s.QH, s.QW = s.OH + (s.kh - 1) * s.dh // s.sh, s.OW + (s.kw - 1) * s.dw // s.sw
    s.pstride, s.planes = s.QH * s.QW + X86_QG_NR, s.sh * s.sw
    s.Nf = (s.OH - 1) * s.QW + s.OW
    s.tiles = (s.Nf + X86_QG_NR - 1) // X86_QG_NR
    # tap (i, j), channel quad c4: plane ((i*dh) % sh, (j*dw) % sw), the tap's row and column in it
    roff = [
        (((i * s.dh % s.sh * s.sw + j * s.dw % s.sw) * s.C4 + c4) * s.pstride
         + i * s.dh // s.sh * s.QW + j * s.dw // s.sw) * 4
        for i in range(s.kh) for j in range(s.kw) for c4 in range(s.C4)
    ]
    s.g.path, s.g.l_unsigned, s.g.K4 = x86_qgemm_path(LEVELS[isa]), 0, len(roff)
    s.g.roff = <const int64_t*>_keep(ex, roff, np.int64)
    s.in_zx, s.in_zw, s.x_signed, s.w_signed, s.zx = p["in_zx"], p["in_zw"], p["x_signed"], p["w_signed"], zx
    s.zw = <int32_t*>_keep(ex, zw, np.int32)
    s.zl = <int32_t*>_zeros(ex, s.group * s.Ogp * 4)
    s.u = <int32_t*>_zeros(ex, s.group * s.Ogp * 4)
    s.lsum = <int32_t*>_zeros(ex, s.group * s.Ogp * 4)
    s.wp = <int32_t*>_zeros(ex, s.group * s.Ogp * s.g.K4 * 4)
    s.xq = <uint8_t*>_zeros(ex, s.group * s.planes * s.C4 * s.pstride * 4)
    s.zero_row = <const uint8_t*>_zeros(ex, s.W)
    s.w_ready = w is not None
    if w is not None:
        w = np.ascontiguousarray(w)
        x86_convi_pack_weights(s, _data(w), s.w_signed)
    ex.packed = tuple(p["packed"])
    return ex
