# QuantizeLinear, DequantizeLinear, QLinearAdd, uint8 / int8 MaxPool, the byte table lookup (csrc/qlinear.h):
# the states of ops_qlinear.py and qlut.py. Included by _arm.pyx.

cdef extern from "qlinear.h" nogil:
    ctypedef struct arm_quant_state:
        arm_op op
        int32_t qdtype
        int64_t outer, C, inner
        float* scale
        int32_t* zp
        int32_t scale_input, zp_input
    ctypedef struct arm_qadd_state:
        arm_op op
        int32_t qdtype, ndim, runtime
        float ma, mb
        int32_t za, zb, zc
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]
    int arm_quantize_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_dequantize_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_qadd_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    ctypedef struct arm_qmaxpool_state:
        arm_op op
        int32_t qdtype
        int64_t planes
        arm_pool_geom g
    int arm_qmaxpool_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    ctypedef struct arm_qlut_state:
        arm_op op
        int32_t float_out
        uint8_t table[256]
        uint8_t planes[4][256]
    int arm_qlut_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def quant(str name, bint dequantize, int qdtype, int64_t outer, int64_t C, int64_t inner, scale, zp,
          int scale_input=-1, int zp_input=-1):
    """QuantizeLinear (float32 -> qdtype) or DequantizeLinear (qdtype -> float32) about x [outer][C][inner];
    scale and zp: C values each, or None with scale_input / zp_input: read from that input at run."""
    cdef Execution ex = _execution(name, sizeof(arm_quant_state), arm_dequantize_run if dequantize else arm_quantize_run)
    cdef arm_quant_state* s = <arm_quant_state*>ex.state
    s.qdtype, s.outer, s.C, s.inner = qdtype, outer, C, inner
    s.scale_input = scale_input if scale is None else -1
    s.zp_input = zp_input if zp is None else -1
    scale = np.ones(C, np.float32) if scale is None else scale
    zp = np.zeros(C, np.int64) if zp is None else zp
    s.scale = <float*>ex.hold(_copy_array(np.broadcast_to(np.asarray(scale, np.float32).ravel(), (C,)), np.float32))
    s.zp = <int32_t*>ex.hold(_copy_array(np.broadcast_to(np.asarray(zp, np.int64).ravel(), (C,)), np.int32))
    return ex


def qadd(str name, int qdtype, dims, sa, sb, float ma, float mb, int za, int zb, int zc, bint runtime=False):
    """runtime: the scales and zero points are read from the inputs at run (ma .. zc unused)."""
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"arm QLinearAdd takes 1 to 8 collapsed dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(arm_qadd_state), arm_qadd_run)
    cdef arm_qadd_state* s = <arm_qadd_state*>ex.state
    s.qdtype, s.ndim, s.ma, s.mb, s.za, s.zb, s.zc = qdtype, len(dims), ma, mb, za, zb, zc
    s.runtime = runtime
    for i in range(s.ndim):
        s.dims[i], s.sa[i], s.sb[i] = dims[i], sa[i], sb[i]
    return ex


def qmaxpool(str name, int qdtype, int64_t planes, dict p, int threads=1):
    """MaxPool on [planes][H][W] uint8 / int8 (qdtype); p: the window (kit.window.pool_params)."""
    cdef Execution ex = _execution(name, sizeof(arm_qmaxpool_state), arm_qmaxpool_run)
    cdef arm_qmaxpool_state* s = <arm_qmaxpool_state*>ex.state
    s.qdtype, s.planes = qdtype, planes
    s.g.H, s.g.W, s.g.OH, s.g.OW = p["H"], p["W"], p["OH"], p["OW"]
    s.g.kh, s.g.kw, s.g.sh, s.g.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    s.g.dh, s.g.dw, s.g.pt, s.g.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    s.op.threads = max(1, threads)
    return ex


def qlut(str name, table):
    """y = table[x] over the bytes of a uint8 / int8 tensor; table: 256 values by input byte, uint8 (y of
    bytes) or float32 (y float32)."""
    t = np.ascontiguousarray(table).reshape(256)
    cdef Execution ex = _execution(name, sizeof(arm_qlut_state), arm_qlut_run)
    cdef arm_qlut_state* s = <arm_qlut_state*>ex.state
    cdef const uint8_t[:, :] planes
    cdef const uint8_t[:] bytes_
    s.float_out = t.dtype == np.float32
    if s.float_out:  # byte b of every float, as its own table
        planes = np.ascontiguousarray(t.astype("<f4").view(np.uint8).reshape(256, 4).T)
        for b in range(4):
            for i in range(256):
                s.planes[b][i] = planes[b, i]
    else:
        bytes_ = t.astype(np.uint8)
        for i in range(256):
            s.table[i] = bytes_[i]
    return ex
