# RNN / GRU / LSTM (csrc/rnn.h): the state of ops_rnn.py. Included by _arm.pyx.

cdef extern from "rnn.h" nogil:
    ctypedef struct arm_rnn_state:
        arm_op op
        const arm_fkernels* k
        int32_t cell, dirs, reverse, layout, lbr, input_forget
        int64_t seq, batch, input, hidden, gates
        float clip
        int32_t in_lens, in_h0, in_c0
        int64_t hpad, rn
        const void* wT[2]
        const float* rp[2]
        const float* rhp[2]
        const float* hb[2]
        const float* hhb[2]
        const float* xb[2]
        const float* p[2]
        float* xg
        float* hg
        float* hh
        float* h
        float* c
        float* hr
        void* apack
        int64_t* lens
    int ARM_RNN_KS
    int64_t arm_rnn_packed_elems(int64_t N, int64_t K)
    void arm_rnn_pack(const float* w, int64_t N, int64_t K, float* packed)
    int arm_rnn_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


cdef const void* _packed_bt(Execution ex, const arm_fkernels* k, w, int64_t N, int64_t K):
    """B = w^T for w [N][K] (row-major float32), packed for the path's GEMM."""
    wc = np.ascontiguousarray(w, dtype=np.float32)
    cdef Buffer b = Buffer(arm_packed_a_elems(k.nr, N, K) * k.elem_bytes)
    if wc.size:
        k.pack_b(<const void*><size_t>wc.ctypes.data, 1, K, K, N, b.ptr)
    return ex.hold(b)


cdef const float* _packed_gemv(Execution ex, w, int64_t N, int64_t K):
    """w [N][K] (row-major float32) packed for rnn.c's matrix-vector product h w^T."""
    wc = np.ascontiguousarray(w, dtype=np.float32)
    cdef Buffer b = Buffer(arm_rnn_packed_elems(N, K) * 4)
    if wc.size:
        arm_rnn_pack(<const float*><size_t>wc.ctypes.data, N, K, <float*>b.ptr)
    return <const float*>ex.hold(b)


cdef const float* _held_floats(Execution ex, arr):
    """A float32 copy of arr that the execution keeps."""
    return <const float*>ex.hold(_copy_array(arr, np.float32))


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
    gru_split = s.cell == 1 and not s.lbr  # (r * h) Rh^T: R's h rows apart, after r
    s.rn = 2 * H if gru_split else G
    s.hpad = (H + ARM_RNN_KS - 1) // ARM_RNN_KS * ARM_RNN_KS
    for d in range(s.dirs):
        wb, rb = np.asarray(b[d][:G], np.float32), np.asarray(b[d][G:], np.float32)
        start = wb + rb  # where h R^T starts: both biases folded in
        if s.cell == 1 and s.lbr:  # r multiplies h Rh^T + Rbh only; Wbh is added outside
            start[2 * H :] = rb[2 * H :]
            s.xb[d] = _held_floats(ex, wb[2 * H :])
        s.wT[d] = _packed_bt(ex, s.k, w[d], G, s.input)
        s.rp[d] = _packed_gemv(ex, r[d][: s.rn], s.rn, H)
        s.hb[d] = _held_floats(ex, start[: s.rn])
        if gru_split:
            s.rhp[d] = _packed_gemv(ex, r[d][2 * H :], H, H)
            s.hhb[d] = _held_floats(ex, start[2 * H :])
        if peep is not None:
            s.p[d] = _held_floats(ex, peep[d])
    s.xg = <float*>ex.hold(Buffer(max(T * B * G, 1) * 4))
    s.hg = <float*>ex.hold(Buffer(max(B * s.rn, 1) * 4))
    s.hh = <float*>ex.hold(Buffer(max(B * H, 1) * 4))
    s.h = <float*>ex.hold(Buffer(max(B * s.hpad, 1) * 4))
    s.hr = <float*>ex.hold(Buffer(max(B * s.hpad, 1) * 4))
    s.c = <float*>ex.hold(Buffer(max(B * H, 1) * 4))
    s.apack = ex.hold(Buffer(max(arm_packed_a_elems(s.k.mr, T * B, s.input), 1) * s.k.elem_bytes))
    s.lens = <int64_t*>ex.hold(Buffer(max(B, 1) * 8))
    return ex
