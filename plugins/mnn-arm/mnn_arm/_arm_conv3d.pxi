# 3-D convolution (csrc/conv3d.h): the state of ops_conv.py's rank-5 Conv. Included by _arm.pyx.

cdef extern from "conv3d.h" nogil:
    ctypedef struct arm_conv3d_state:
        arm_op op
        const arm_fkernels* k
        int64_t N, O, group, og
        int64_t C, D, H, W, OD, OH, OW
        int64_t kd, kh, kw, sd, sh, sw, dd, dh, dw, pd, pt, pl
        const void* w
        int64_t w_group_bytes
        const float* bias
        int32_t bias_input, slices
        arm_epilogue epi
        void* work
        int64_t work_bytes, chunk_cols
    int arm_conv3d_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept

#: bytes of packed im2col columns per chunk (as conv.c's CHUNK_BYTES)
CONV3D_CHUNK_BYTES = 128 * 1024


def conv3d(str path, dict p, weight, bias, int bias_input, int threads=1):
    """Float 3-D Conv; p: N, O, group, C (one group's), D, H, W, OD, OH, OW, kd.., sd.., dd.., pd, pt, pl,
    act, act_alpha, act_beta. Weights packed per group here; scratch for `threads` threads."""
    cdef Execution ex = _execution(f"arm.Conv.3d [{path}]", sizeof(arm_conv3d_state), arm_conv3d_run)
    cdef arm_conv3d_state* s = <arm_conv3d_state*>ex.state
    s.k = _ftable(path)
    s.N, s.O, s.group = p["N"], p["O"], p["group"]
    s.og = s.O // s.group
    s.C, s.D, s.H, s.W, s.OD, s.OH, s.OW = p["C"], p["D"], p["H"], p["W"], p["OD"], p["OH"], p["OW"]
    s.kd, s.kh, s.kw, s.sd, s.sh, s.sw = p["kd"], p["kh"], p["kw"], p["sd"], p["sh"], p["sw"]
    s.dd, s.dh, s.dw, s.pd, s.pt, s.pl = p["dd"], p["dh"], p["dw"], p["pd"], p["pt"], p["pl"]
    s.bias_input = bias_input if bias is None else -1
    s.slices = max(1, threads)
    s.op.threads = s.slices
    _epilogue(&s.epi, p["act"], p["act_alpha"], p["act_beta"])
    if bias is not None:
        s.bias = <const float*>ex.hold(_copy_array(bias, np.float32))
    cdef int64_t K = s.C * s.kd * s.kh * s.kw, cols = s.OD * s.OH * s.OW, gi
    cdef int64_t stride = arm_packed_a_elems(s.k.mr, s.og, K) * s.k.elem_bytes
    s.w_group_bytes = stride
    s.w = ex.hold(Buffer(stride * s.group))
    wc = np.ascontiguousarray(weight, dtype=np.float16 if s.k.io_bytes == 2 else np.float32)
    cdef const char* src = <const char*><size_t>wc.ctypes.data
    if wc.size:
        for gi in range(s.group):
            s.k.pack_a(src + gi * s.og * K * s.k.io_bytes, K, 1, s.og, K, <char*>s.w + gi * stride)
    cdef int64_t nr = s.k.nr
    cdef int64_t chunk = max(nr, CONV3D_CHUNK_BYTES // (max(K, 1) * s.k.elem_bytes) // nr * nr)
    chunk = min(chunk, max(nr, (cols + nr - 1) // nr * nr))
    s.chunk_cols = _split_cols(chunk, cols, nr, s.slices)
    s.work_bytes = _round64(K * s.chunk_cols * s.k.io_bytes) + _round64(K * s.chunk_cols * s.k.elem_bytes) + 64
    s.work = ex.hold(Buffer(s.work_bytes * s.slices))
    return ex
