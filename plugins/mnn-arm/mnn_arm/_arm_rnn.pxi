# RNN / GRU / LSTM (csrc/rnn.h): the state of ops_rnn.py. Included by _arm.pyx.

cdef extern from "rnn.h" nogil:
    ctypedef struct arm_rnn_state:
        arm_op op
        const arm_fkernels* k
        int32_t cell, dirs, reverse, layout, lbr, input_forget
        int64_t seq, batch, input, hidden, gates
        float clip
        int32_t in_lens, in_h0, in_c0
        const void* wT[2]
        const void* rT[2]
        const void* rhT[2]
        const float* wb[2]
        const float* rb[2]
        const float* p[2]
        float* xg
        float* hg
        float* hr
        float* hh
        float* h
        float* c
        void* apack
        int64_t* lens
    int arm_rnn_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


cdef const void* _packed_bt(Execution ex, const arm_fkernels* k, w, int64_t N, int64_t K):
    """B = w^T for w [N][K] (row-major float32), packed for the path's GEMM."""
    wc = np.ascontiguousarray(w, dtype=np.float32)
    cdef Buffer b = Buffer(arm_packed_a_elems(k.nr, N, K) * k.elem_bytes)
    if wc.size:
        k.pack_b(<const void*><size_t>wc.ctypes.data, 1, K, K, N, b.ptr)
    return ex.hold(b)


def rnn(str name, dict p, w, r, b, peep):
    """p: cell (0 RNN, 1 GRU, 2 LSTM), dirs, reverse, layout, lbr, input_forget, seq, batch, input, hidden,
    gates, clip, in_lens, in_h0, in_c0; w [dirs][G*H][I], r [dirs][G*H][H], b [dirs][2*G*H], peep [dirs][3H] or None."""
    cdef Execution ex = _execution(name, sizeof(arm_rnn_state), arm_rnn_run)
    cdef arm_rnn_state* s = <arm_rnn_state*>ex.state
    s.k = _ftable("fp32")
    s.cell, s.dirs, s.reverse, s.layout = p["cell"], p["dirs"], p["reverse"], p["layout"]
    s.lbr, s.input_forget, s.clip = p["lbr"], p["input_forget"], p["clip"]
    s.seq, s.batch, s.input, s.hidden, s.gates = p["seq"], p["batch"], p["input"], p["hidden"], p["gates"]
    s.in_lens, s.in_h0, s.in_c0 = p["in_lens"], p["in_h0"], p["in_c0"]
    cdef int64_t H = s.hidden, G = s.gates * H, T = s.seq, B = s.batch
    for d in range(s.dirs):
        s.wT[d] = _packed_bt(ex, s.k, w[d], G, s.input)
        s.rT[d] = _packed_bt(ex, s.k, r[d], G, H)
        if s.cell == 1 and not s.lbr:
            s.rhT[d] = _packed_bt(ex, s.k, r[d][2 * H:], H, H)
        s.wb[d] = <const float*>ex.hold(_copy(b[d][:G], np.float32))
        s.rb[d] = <const float*>ex.hold(_copy(b[d][G:], np.float32))
        if peep is not None:
            s.p[d] = <const float*>ex.hold(_copy(peep[d], np.float32))
    s.xg = <float*>ex.hold(Buffer(max(T * B * G, 1) * 4))
    s.hg = <float*>ex.hold(Buffer(max(B * G, 1) * 4))
    s.hr = <float*>ex.hold(Buffer(max(B * H, 1) * 4))
    s.hh = <float*>ex.hold(Buffer(max(B * H, 1) * 4))
    s.h = <float*>ex.hold(Buffer(max(B * H, 1) * 4))
    s.c = <float*>ex.hold(Buffer(max(B * H, 1) * 4))
    s.apack = ex.hold(Buffer(max(arm_packed_a_elems(s.k.mr, T * B, s.input), arm_packed_a_elems(s.k.mr, B, H))
                             * s.k.elem_bytes))
    s.lens = <int64_t*>ex.hold(Buffer(max(B, 1) * 8))
    return ex
