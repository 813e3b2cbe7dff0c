# DynamicQuantizeLSTM (csrc/qlstm.h): the state of ops_qlstm.py. Included by _arm.pyx.

cdef extern from "qlstm.h" nogil:
    ctypedef struct arm_qlstm_weights:
        const int8_t* packed
        const int32_t* colsum
        int32_t db
        const float* scale
    ctypedef struct arm_qlstm_state:
        arm_op op
        const arm_qkernels* k
        int32_t row_product
        int32_t dirs, reverse, input_forget
        int64_t seq, batch, input, hidden
        float clip
        int32_t in_h0, in_c0
        arm_qlstm_weights w[2]
        arm_qlstm_weights r[2]
        const float* bias[2]
        const float* peep[2]
        int8_t* q
        int8_t* ap
        int32_t* rowsum
        int32_t* acc
        float* xw
        float* gates
        float* h
        double* c
    int arm_qlstm_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


cdef void _qlstm_weights(Execution ex, arm_qlstm_weights* out, w, int32_t zero_point, scale):
    """w [K][N] int8 or uint8 packed as the int8 GEMM's B, with what makes its products true."""
    wc = np.ascontiguousarray(w)
    cdef int64_t K = wc.shape[0], N = wc.shape[1]
    cdef int is_uint8 = wc.dtype == np.uint8
    cdef Buffer bp = Buffer((N + ARM_Q_NR - 1) // ARM_Q_NR * ARM_Q_NR * arm_k4(K))
    cdef Buffer colsum = Buffer(N * 4)
    if wc.size:
        arm_q_pack_b(<const void*><size_t>wc.ctypes.data, is_uint8, N, 1, K, N, <int8_t*>bp.ptr, <int32_t*>colsum.ptr)
    out.packed = <const int8_t*>ex.hold(bp)
    out.colsum = <const int32_t*>ex.hold(colsum)
    out.db = (128 if is_uint8 else 0) - zero_point
    out.scale = <const float*>ex.hold(_copy_array(np.broadcast_to(np.asarray(scale, np.float32), (N,)), np.float32))


def qlstm(str path, str name, dict p, list w, list r, list bias, peep):
    """p: dirs, reverse, input_forget, seq, batch, input, hidden, clip, in_h0, in_c0; w and r per direction:
    (weights [K][4H], zero point, scale [1] or [4H]); bias per direction [4H] (Wb + Rb); peep per direction
    [3H] or None."""
    cdef Execution ex = _execution(f"{name} [{path}]", sizeof(arm_qlstm_state), arm_qlstm_run)
    cdef arm_qlstm_state* s = <arm_qlstm_state*>ex.state
    s.k = arm_qkernels_for(PATHS[path])
    if s.k == NULL:
        raise RuntimeError(f"arm: the {path} path is not runnable on this CPU")
    s.row_product = 1 if path == "int8" else 2
    s.dirs, s.reverse, s.input_forget, s.clip = p["dirs"], p["reverse"], p["input_forget"], p["clip"]
    s.seq, s.batch, s.input, s.hidden = p["seq"], p["batch"], p["input"], p["hidden"]
    s.in_h0, s.in_c0 = p["in_h0"], p["in_c0"]
    cdef int d
    for d in range(s.dirs):
        _qlstm_weights(ex, &s.w[d], w[d][0], w[d][1], w[d][2])
        _qlstm_weights(ex, &s.r[d], r[d][0], r[d][1], r[d][2])
        s.bias[d] = <const float*>ex.hold(_copy_array(bias[d], np.float32))
        s.peep[d] = NULL if peep is None else <const float*>ex.hold(_copy_array(peep[d], np.float32))
    cdef int64_t rows = s.seq * s.batch, N = 4 * s.hidden, K = max(s.input, s.hidden)
    cdef int64_t padded = (max(rows, s.batch) + ARM_Q_MR - 1) // ARM_Q_MR * ARM_Q_MR
    s.q = <int8_t*>ex.hold(Buffer(max(rows, 1) * K))
    s.ap = <int8_t*>ex.hold(Buffer(padded * arm_k4(K)))
    s.rowsum = <int32_t*>ex.hold(Buffer(padded * 4))
    s.acc = <int32_t*>ex.hold(Buffer(max(rows, 1) * N * 4))
    s.xw = <float*>ex.hold(Buffer(max(rows, 1) * N * 4))
    s.gates = <float*>ex.hold(Buffer(max(s.batch, 1) * N * 4))
    s.h = <float*>ex.hold(Buffer(max(s.batch, 1) * s.hidden * 4))
    s.c = <double*>ex.hold(Buffer(max(s.batch, 1) * s.hidden * 8))
    return ex
