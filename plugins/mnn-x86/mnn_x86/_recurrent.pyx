# The Cython glue of the recurrent layers (ops_recurrent.py, csrc/recurrent/): fills an RNN/GRU/LSTM's
# C state at prepare (R^T in panels, the summed biases, the peepholes, scratch) and hands it to the core as an
# _x86.Execution that calls the input projection's MatMul execution. Nothing here runs per inference.
from libc.stdint cimport int16_t, int32_t, int64_t, uintptr_t
from libc.string cimport memcpy

import numpy as np

from mnn_core.abi cimport mnn_run_fn, mnn_tensor

from mnn_x86.family cimport Buffer, Execution, _copy_array, _execution, _floats, attach_pool

attach_pool()

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
        int64_t kp, hp
        const int16_t* wq
        const int16_t* rq
        const float* wscale
        const float* rscale
        int16_t* xq
        int16_t* hq
    int x86_rnn_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    void x86_rnn_pack_rt(const float* r, int64_t gates, int64_t hidden, int64_t k, float* rt) noexcept

CELLS = {"RNN": 0, "GRU": 1, "LSTM": 2}


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
        _quantized(ex, s, quant)
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


cdef void _quantized(Execution ex, x86_rnn_state* s, dict q):
    """wq [dirs][G*H][kp], rq [dirs][G*H][hp] int16 (the weights minus their zero points, transposed and
    padded), wscale and rscale [dirs][G*H] float32; and the scratch of the quantized X and h."""
    cdef Buffer buf
    s.quant = 1
    s.kp, s.hp = q["wq"].shape[2], q["rq"].shape[2]
    for key in ("wq", "rq", "wscale", "rscale"):
        buf = _copy_array(q[key], q[key].dtype)
        ex.keep.append(buf)
        if key == "wq":
            s.wq = <const int16_t*>buf.ptr
        elif key == "rq":
            s.rq = <const int16_t*>buf.ptr
        elif key == "wscale":
            s.wscale = <const float*>buf.ptr
        else:
            s.rscale = <const float*>buf.ptr
    cdef int64_t rows = (s.seq * s.batch + 3) // 4 * 4, mp = (s.batch + 3) // 4 * 4
    buf = Buffer(max(rows * s.kp * 2, 16))
    ex.keep.append(buf)
    s.xq = <int16_t*>buf.ptr
    buf = Buffer(max(s.dirs * mp * s.hp * 2, 16))
    ex.keep.append(buf)
    s.hq = <int16_t*>buf.ptr
