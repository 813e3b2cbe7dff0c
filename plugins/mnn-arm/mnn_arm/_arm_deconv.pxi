# ConvTranspose (csrc/deconv.c): the state of ops_deconv.py. Included by _arm.pyx.

cdef extern from "move.h" nogil:
    ctypedef struct arm_deconv_state:
        arm_op op
        const arm_fkernels* k
        int64_t N, C, H, W, O, OH, OW, group, cg, og, kh, kw, sh, sw, dh, dw, pt, pl
        const void* w
        int64_t w_group_bytes
        const float* bias
        arm_epilogue act
        float* cols
        void* bwork
    int arm_deconv_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def deconv(dict p, weight, bias, str path="fp32"):
    """p: N, C, H, W, O, OH, OW, group, kh, kw, sh, sw, dh, dw, pt, pl, act, act_alpha, act_beta;
    weight [C][O/group][kh][kw] (constant: each group's transpose packed here as the GEMM's A).
    path: fp32, or fp16 (fp16 arithmetic in the GEMM, on fp32 tensors)."""
    if path not in ("fp32", "fp16"):
        raise ValueError(f"arm ConvTranspose runs on the fp32 or fp16 path, not {path}")
    cdef Execution ex = _execution(f"arm.ConvTranspose [{path}]", sizeof(arm_deconv_state), arm_deconv_run)
    cdef arm_deconv_state* s = <arm_deconv_state*>ex.state
    s.k = _ftable(path)
    s.N, s.C, s.H, s.W, s.O, s.OH, s.OW = p["N"], p["C"], p["H"], p["W"], p["O"], p["OH"], p["OW"]
    s.group, s.kh, s.kw, s.sh, s.sw = p["group"], p["kh"], p["kw"], p["sh"], p["sw"]
    s.dh, s.dw, s.pt, s.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    s.cg, s.og = s.C // s.group, s.O // s.group
    _epilogue(&s.act, p["act"], p["act_alpha"], p["act_beta"])
    if bias is not None:
        s.bias = <const float*>ex.hold(_copy_array(bias, np.float32))
    cdef int64_t M = s.og * s.kh * s.kw, gi
    cdef int64_t stride = arm_packed_a_elems(s.k.mr, M, s.cg) * s.k.elem_bytes
    s.w_group_bytes = stride
    s.w = ex.hold(Buffer(stride * s.group))
    wc = np.ascontiguousarray(weight, dtype=np.float32)
    cdef const char* src = <const char*><size_t>wc.ctypes.data
    if wc.size:
        for gi in range(s.group):  # W_g is [cg][M]; the GEMM's A is its transpose: rows strided by 1, K by M
            s.k.pack_a(src + gi * s.cg * M * 4, 1, M, M, s.cg, <char*>s.w + gi * stride)
    s.cols = <float*>ex.hold(Buffer(max(M * s.H * s.W, 1) * 4))
    s.bwork = ex.hold(Buffer(arm_packed_a_elems(s.k.nr, s.H * s.W, s.cg) * s.k.elem_bytes))
    return ex
