# QuantizeLinear, DequantizeLinear, QLinearAdd (csrc/qlinear.h): the states of ops_qlinear.py.
# Included by _arm.pyx.

cdef extern from "qlinear.h" nogil:
    ctypedef struct arm_quant_state:
        arm_op op
        int32_t qdtype
        int64_t outer, C, inner
        const float* scale
        const int32_t* zp
    ctypedef struct arm_qadd_state:
        arm_op op
        int32_t qdtype, ndim
        float ma, mb
        int32_t za, zb, zc
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]
    int arm_quantize_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_dequantize_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_qadd_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def quant(str name, bint dequantize, int qdtype, int64_t outer, int64_t C, int64_t inner, scale, zp):
    """QuantizeLinear (float32 -> qdtype) or DequantizeLinear (qdtype -> float32) about x [outer][C][inner];
    scale and zp: C values each."""
    cdef Execution ex = _execution(name, sizeof(arm_quant_state), arm_dequantize_run if dequantize else arm_quantize_run)
    cdef arm_quant_state* s = <arm_quant_state*>ex.state
    s.qdtype, s.outer, s.C, s.inner = qdtype, outer, C, inner
    s.scale = <const float*>ex.hold(_copy(np.broadcast_to(np.asarray(scale, np.float32).ravel(), (C,)), np.float32))
    s.zp = <const int32_t*>ex.hold(_copy(np.broadcast_to(np.asarray(zp, np.int64).ravel(), (C,)), np.int32))
    return ex


def qadd(str name, int qdtype, dims, sa, sb, float ma, float mb, int za, int zb, int zc):
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"arm QLinearAdd takes 1 to 8 collapsed dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(arm_qadd_state), arm_qadd_run)
    cdef arm_qadd_state* s = <arm_qadd_state*>ex.state
    s.qdtype, s.ndim, s.ma, s.mb, s.za, s.zb, s.zc = qdtype, len(dims), ma, mb, za, zb, zc
    for i in range(s.ndim):
        s.dims[i], s.sa[i], s.sb[i] = dims[i], sa[i], sb[i]
    return ex
