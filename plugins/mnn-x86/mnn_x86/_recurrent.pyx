# The Cython glue of the recurrent layers (ops_recurrent.py, csrc/recurrent/): fills an RNN/GRU/LSTM's
# C state at prepare (R^T in panels, the summed biases, the peepholes, scratch) and hands it to the core as an
# _x86.Execution that calls the input projection's MatMul execution. Nothing here runs per inference.
from libc.stdint cimport int32_t, int64_t, uint8_t, uintptr_t
from libc.string cimport memcpy

import numpy as np

from mnn_core.abi cimport mnn_run_fn, mnn_tensor

from mnn_x86._integer import LEVELS
from mnn_x86.family cimport Buffer, Execution, _copy_array, _execution, _floats, _keep, _zeros, attach_pool

attach_pool()

cdef extern from "integer/qgemm.h" nogil:
    ctypedef struct x86_qgemm:
        int32_t path, l_unsigned
        int64_t K4
        const int64_t* roff
    int x86_qgemm_path(int level)
    enum: X86_QG_NR, X86_QG_MR

cdef extern from "recurrent/recurrent.h" nogil:
    ctypedef struct x86_rnn_act:
        int32_t fn
        float alpha, beta

    ctypedef struct x86_inner:
        mnn_run_fn run
        void* state

    ctypedef struct x86_rnn_state:
        int32_t cell, gates, dirs, reverse, layout, lbr, input_forget
        int64_t seq, batch, input, hidden
        float clip
        x86_rnn_act act[2][3]
        int32_t in_w, in_r, in_b, in_p, in_lens, in_h0, in_c0
        x86_inner proj
        float* xw
        float* rt
        float* bias
        float* rbh
        float* peep
        float* work
        int64_t work_row
        int32_t quant
        x86_qgemm gw, gr
        const uint8_t* wp
        const uint8_t* rp
        const int32_t* wsum
        const int32_t* rsum
        const int32_t* wz
        const int32_t* rz
        const float* wscale
        const float* rscale
        int32_t* xq
        int32_t* xu
        int32_t* hq
        int32_t* hu
    int x86_rnn_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    void x86_rnn_pack_rt(const float* r, int64_t gates, int64_t hidden, int64_t k, float* rt) noexcept

CELLS = {"RNN": 0, "GRU": 1, "LSTM": 2}
#: the columns of a weight panel of the u8 x s8 tiles, which ops_recurrent packs a DynamicQuantizeLSTM's W and R in
QG_NR = X86_QG_NR


cdef float* _scratch(Execution ex, int64_t n):
    cdef Buffer buf = _floats(max(n, 1))
    ex.keep.append(buf)
    return <float*>buf.ptr


cdef float* _array(Execution ex, arr):
    """A float32 copy of arr that the execution keeps (the biases, the peepholes)."""
    a = np.ascontiguousarray(arr, dtype=np.float32)
    cdef float* p = _scratch(ex, a.size)
    if a.size:
        memcpy(p, <const void*><uintptr_t>a.ctypes.data, a.nbytes)
    return p


def recurrent(str isa, int threads, str name, dict p, Execution proj, r, b, peep, dict quant=None):
    """An RNN/GRU/LSTM (p: cell, dirs, seq, batch, input, hidden, direction flags, clip, acts [dirs][3] of
    (code, alpha, beta), input positions in_*). proj: the MatMul execution of X · W^T. r, b, peep: the
    constant R, B and P, or None (B, P absent, or any of them given at run: in_r, in_b, in_p).
    quant: a DynamicQuantizeLSTM's packed weights (see _quantized); proj and r are then None."""
    cdef Execution ex = _execution(name, sizeof(x86_rnn_state), x86_rnn_run, isa, threads)
    cdef x86_rnn_state* s = <x86_rnn_state*>ex.state
    cdef int64_t d, i, dirs = p["dirs"], h = p["hidden"], g = p["gates"]
    s.cell, s.gates, s.dirs = CELLS[p["cell"]], g, dirs
    s.reverse, s.layout, s.lbr, s.input_forget = p["reverse"], p["layout"], p["lbr"], p["input_forget"]
    s.seq, s.batch, s.input, s.hidden, s.clip = p["seq"], p["batch"], p["input"], h, p["clip"]
    for d in range(dirs):
        for i, (code, alpha, beta) in enumerate(p["acts"][d]):
            s.act[d][i].fn, s.act[d][i].alpha, s.act[d][i].beta = code, alpha, beta
    s.in_w, s.in_r, s.in_b, s.in_p = p["in_w"], p["in_r"], p["in_b"], p["in_p"]
    s.in_lens, s.in_h0, s.in_c0 = p["in_lens"], p["in_h0"], p["in_c0"]
    s.xw = _scratch(ex, s.seq * s.batch * dirs * g * h)
    if quant is not None:
        _quantized(ex, s, quant, LEVELS[isa])
    else:
        ex.keep.append(proj)
        s.proj.run, s.proj.state = proj.exe.run, proj.exe.state
        s.rt = _scratch(ex, dirs * h * g * h)
        if r is not None:
            _pack_rt(s, r)
    bias = np.zeros((dirs, 2 * g * h), np.float32) if b is None else np.asarray(b, np.float32)
    s.bias = _array(ex, bias[:, :g * h] + bias[:, g * h:])
    if p["cell"] == "GRU" and p["lbr"]:  # the h gate's Rb is scaled by the reset gate: kept apart
        s.rbh = _array(ex, bias[:, 5 * h:])
        np_bias = bias[:, :g * h].copy()
        np_bias[:, :2 * h] += bias[:, g * h:g * h + 2 * h]
        s.bias = _array(ex, np_bias)
    if peep is not None or p["in_p"] >= 0:
        s.peep = _array(ex, peep) if peep is not None else _scratch(ex, dirs * 3 * h)
    s.work_row = (3 * h + g * h + 15) // 16 * 16
    s.work = _scratch(ex, dirs * s.batch * s.work_row)
    ex.packed = tuple(p["packed"])
    return ex


cdef void _pack_rt(x86_rnn_state* s, r):
    """s.rt = the constant R^T in panels (csrc/recurrent/recurrent.h), a direction at a time."""
    a = np.ascontiguousarray(r, dtype=np.float32)
    cdef const float* src = <const float*><uintptr_t>a.ctypes.data
    cdef int64_t d, n = s.gates * s.hidden * s.hidden
    for d in range(s.dirs):
        x86_rnn_pack_rt(src + d * n, s.gates, s.hidden, s.hidden, s.rt + d * n)


cdef void _quantized(Execution ex, x86_rnn_state* s, dict q, int level):
    """The u8 x s8 tiles of a DynamicQuantizeLSTM (q from ops_recurrent._dq_weights: W and R as int8 panels
    [dirs][panels][K4][NR][4], their column sums and shifted zero points [dirs][panels * NR], the scales
    [dirs][G*H]), and the scratch of the quantized X and h (rows of words, rounded up to X86_QG_MR rows)."""
    s.quant = 1
    s.wp, s.rp = <const uint8_t*>_keep(ex, q["wp"]), <const uint8_t*>_keep(ex, q["rp"])
    s.wsum, s.rsum = <const int32_t*>_keep(ex, q["wsum"]), <const int32_t*>_keep(ex, q["rsum"])
    s.wz, s.rz = <const int32_t*>_keep(ex, q["wz"]), <const int32_t*>_keep(ex, q["rz"])
    s.wscale, s.rscale = <const float*>_keep(ex, q["wscale"]), <const float*>_keep(ex, q["rscale"])
    s.gw.path = s.gr.path = x86_qgemm_path(level)
    s.gw.l_unsigned = s.gr.l_unsigned = 1
    s.gw.K4, s.gr.K4 = q["wp"].shape[2], q["rp"].shape[2]
    s.gw.roff = <const int64_t*>_keep(ex, np.arange(s.gw.K4, dtype=np.int64) * (X86_QG_NR * 4))
    s.gr.roff = <const int64_t*>_keep(ex, np.arange(s.gr.K4, dtype=np.int64) * (X86_QG_NR * 4))
    cdef int64_t rows = (s.seq * s.batch + X86_QG_MR - 1) // X86_QG_MR * X86_QG_MR
    cdef int64_t mp = (s.batch + X86_QG_MR - 1) // X86_QG_MR * X86_QG_MR
    s.xq, s.xu = <int32_t*>_zeros(ex, rows * s.gw.K4 * 4), <int32_t*>_zeros(ex, rows * 4)
    s.hq, s.hu = <int32_t*>_zeros(ex, s.dirs * mp * s.gr.K4 * 4), <int32_t*>_zeros(ex, s.dirs * mp * 4)
