# The int8 convolutions and matrix products (QLinearConv / ConvInteger, QLinearMatMul / MatMulInteger):
# their states (declared in _arm.pyx's ops.h block) filled and their weights packed. Included by _arm.pyx.


def qconv(str path, dict p, weight, int is_uint8, int w_uint8, int zx, zw, mult, double zy, int out_kind, bias, int bias_input,
          int zx_input=-1):
    """QLinearConv (out_kind 1 uint8 / 2 int8) or ConvInteger (out_kind 0). zw, mult: per output channel.
    zx_input >= 0: x's zero point is read from that input at run (zx unused)."""
    zw = np.broadcast_to(np.asarray(zw, np.int64), (p["O"],))
    in_place = not p["depthwise"] and _reads_in_place(path, p, p["O"] // p["group"], (128 if w_uint8 else 0) - zw)
    cdef Execution ex = _execution(f"arm.{'QLinearConv' if out_kind else 'ConvInteger'}"
                                   f"{'.in_place' if in_place else ''} [{path}]", sizeof(arm_qconv_state), arm_qconv_run)
    cdef arm_qconv_state* s = <arm_qconv_state*>ex.state
    s.k = arm_qkernels_for(PATHS[path])
    if s.k == NULL:
        raise RuntimeError(f"arm: the {path} path is not runnable on this CPU")
    _geom(&s.g, p)
    s.N, s.O, s.group = p["N"], p["O"], p["group"]
    s.og = s.O // s.group
    s.depthwise = p["depthwise"]
    s.is_uint8, s.zx, s.zx_input = is_uint8, zx, zx_input
    s.out_bytes = 4 if out_kind == 0 else 1
    s.bias_input = bias_input if bias is None else -1
    s.slices = max(1, int(p.get("threads", 1)))
    s.op.threads = s.slices
    cdef int64_t Kg = s.g.C * s.g.kh * s.g.kw, K4 = arm_k4(Kg), gi, stride
    offset = 128 if is_uint8 else 0
    s.epi.K = Kg
    s.epi.da = <const int32_t*>ex.hold(_copy_array((128 if w_uint8 else 0) - zw, np.int32))
    s.epi.da_rs = 1
    s.epi.db = <const int32_t*>ex.hold(_copy_array(np.array([offset - zx]), np.int32))
    s.epi.db_cs = 0
    s.epi.out_kind = out_kind
    s.epi.mult = <const double*>ex.hold(_copy_array(np.broadcast_to(np.asarray(mult, np.float64), (s.O,)), np.float64))
    s.epi.mult_rs, s.epi.mult_cs = 1, 0
    s.epi.zy = zy
    if bias is not None:
        s.epi.bias = <const int32_t*>ex.hold(_copy_array(bias, np.int32))
    wc = np.ascontiguousarray(weight)
    if s.depthwise:
        w16 = wc.reshape(s.O, -1).astype(np.int64) - zw.reshape(-1, 1)
        s.w16 = <const int16_t*>ex.hold(_copy_array(w16, np.int16))
        s.dwork_elems = (arm_q_depthwise_work_elems(&s.g) + 31) // 32 * 32
        s.dwork = <int16_t*>ex.hold(Buffer(s.dwork_elems * 2 * s.slices))
        s.acc_elems = (s.g.C * s.g.OH * s.g.OW + 15) // 16 * 16
        s.acc = <int32_t*>ex.hold(Buffer(s.acc_elems * 4 * s.slices))
        return ex
    if in_place:
        return _qconv3x3_in_place(ex, s, wc, w_uint8)
    stride = (s.og + ARM_Q_MR - 1) // ARM_Q_MR * ARM_Q_MR * K4
    s.w_group_bytes = stride
    s.w = <const int8_t*>ex.hold(Buffer(stride * s.group))
    rowsum = Buffer(s.O * 4)
    s.epi.rowsum = <const int32_t*>ex.hold(rowsum)
    if wc.size:
        for gi in range(s.group):
            arm_q_pack_a(<const char*><size_t>wc.ctypes.data + gi * s.og * Kg, w_uint8, Kg, 1, s.og, Kg,
                         <int8_t*>s.w + gi * stride, <int32_t*>rowsum.ptr + gi * s.og)
    s.chunk_cols = _split_cols(arm_qconv_chunk_cols(&s.g), s.g.OH * s.g.OW, ARM_Q_NR, s.slices)
    s.bwork_bytes = _round64(s.chunk_cols * K4)
    s.bwork = <int8_t*>ex.hold(Buffer(s.bwork_bytes * s.slices))
    s.colsum = <int32_t*>ex.hold(Buffer(s.chunk_cols * 4 * s.slices))
    s.acc_elems = (s.og * s.chunk_cols + 15) // 16 * 16
    s.acc = <int32_t*>ex.hold(Buffer(s.acc_elems * 4 * s.slices))
    return ex


def _reads_in_place(str path, dict p, int64_t og, da) -> bool:
    """3x3, stride 1, dilation 1, pads 1, one group, on the sdot path, weights without a zero point (da 0: the
    padded quads have no column sums), where it counts fewer instructions than im2col (U-Net's layers under
    qemu, benchmarks/RESULTS_ARM.md): im2col's share of a layer grows as its output channels shrink (a third
    of it at 16), the in-place read's as its rows narrow (2 columns a row computed and dropped); on planes
    under 64 wide, layers that widen the channels kept im2col's fewer instructions."""
    shape = (p["kh"], p["kw"], p["sh"], p["sw"], p["dh"], p["dw"], p["pt"], p["pl"]) == (3, 3, 1, 1, 1, 1, 1, 1)
    same = p["OH"] == p["H"] and p["OW"] == p["W"]
    w = p["W"]
    pays = w >= 8 and (og <= 32 or w >= 64 or (w >= 16 and p["C"] >= og))
    return path == "int8_dot" and shape and same and p["group"] == 1 and pays and not np.any(da)


cdef object _qconv3x3_in_place(Execution ex, arm_qconv_state* s, wc, int w_uint8):
    """arm_q_conv3x3_tiles' state: the weights in its k order (tap, channel quad, channel in the quad), the
    channels past C as weights equal to their zero point (0 once shifted: nothing added to the row sums),
    the quads' padded planes, the taps' offsets in them and the step from one quad to the next"""
    cdef int64_t Q = (s.g.C + 3) // 4, Wp = s.g.W + 2, KQ = Q * 36
    w4 = np.full((s.O, Q * 4, 3, 3), 128 if w_uint8 else 0, wc.dtype)
    w4[:, : s.g.C] = wc.reshape(s.O, s.g.C, 3, 3)
    wq = np.ascontiguousarray(w4.reshape(s.O, Q, 4, 9).transpose(0, 3, 1, 2).reshape(s.O, KQ))
    s.w = <const int8_t*>ex.hold(Buffer((s.O + ARM_Q_MR - 1) // ARM_Q_MR * ARM_Q_MR * KQ))
    rowsum = Buffer(s.O * 4)
    s.epi.rowsum = <const int32_t*>ex.hold(rowsum)
    arm_q_pack_a(<const void*><size_t>wq.ctypes.data, w_uint8, KQ, 1, s.O, KQ, <int8_t*>s.w, <int32_t*>rowsum.ptr)
    s.groups = Q * 9
    s.plane = (s.g.H + 2) * Wp + 16  # the last tile reads up to 13 pixels past the grid
    s.xq = <int8_t*>ex.hold(Buffer(Q * s.plane * 4))
    off = [4 * (ky * Wp + kx) for ky in range(3) for kx in range(3)] + [Q, 4 * s.plane]
    s.off = <const int64_t*>ex.hold(_copy_array(np.array(off), np.int64))
    s.chunk_cols = max(ARM_Q_NR, 8192 // max(s.og, 1) // ARM_Q_NR * ARM_Q_NR)  # 32 KB of sums
    s.acc_elems = (s.og * s.chunk_cols + 15) // 16 * 16
    s.acc = <int32_t*>ex.hold(Buffer(s.acc_elems * 4 * s.slices))
    s.direct = 1
    return ex


def qmatmul(str path, int64_t M, int64_t K, int64_t N, int a_uint8, int za, b, int b_uint8, zb, mult, int zy,
            int out_kind, str name="arm.QLinearMatMul", int b_input=-1, int za_input=-1, int zb_input=-1,
            bias_col=None):
    """QLinearMatMul (out_kind 1 uint8 / 2 int8) or MatMulInteger (out_kind 0: int32) with B [K][N]: zb and mult
    per column (float32 multipliers held in float64), A's batch (its leading dims) folded into repeated
    M x K products. b_input / za_input / zb_input >= 0: B / A's / B's zero point read from that input at run
    (b, za, zb are then placeholders). bias_col: an int32 bias per column, or None."""
    cdef Execution ex = _execution(f"{name} [{path}]", sizeof(arm_qmatmul_state), arm_qmatmul_run)
    cdef arm_qmatmul_state* s = <arm_qmatmul_state*>ex.state
    s.k = arm_qkernels_for(PATHS[path])
    if s.k == NULL:
        raise RuntimeError(f"arm: the {path} path is not runnable on this CPU")
    s.M, s.K, s.N, s.a_uint8, s.out_bytes = M, K, N, a_uint8, 4 if out_kind == 0 else 1
    s.b_input, s.za_input, s.zb_input, s.b_uint8 = b_input, za_input, zb_input, b_uint8
    cdef int64_t K4 = arm_k4(K)
    bc = np.ascontiguousarray(b)
    bp = Buffer((N + ARM_Q_NR - 1) // ARM_Q_NR * ARM_Q_NR * K4)
    colsum = Buffer(N * 4)
    if bc.size and b_input < 0:
        arm_q_pack_b(<const void*><size_t>bc.ctypes.data, b_uint8, N, 1, K, N, <int8_t*>bp.ptr, <int32_t*>colsum.ptr)
    s.bp = <const int8_t*>ex.hold(bp)
    s.epi.K = K
    s.epi.da = <const int32_t*>ex.hold(_copy_array(np.array([(128 if a_uint8 else 0) - za]), np.int32))
    s.epi.da_rs = 0
    zb = np.broadcast_to(np.asarray(zb, np.int64), (N,))
    s.epi.db = <const int32_t*>ex.hold(_copy_array((128 if b_uint8 else 0) - zb, np.int32))
    s.epi.db_cs = 1
    s.epi.colsum = <const int32_t*>ex.hold(colsum)
    s.epi.out_kind = out_kind
    s.epi.mult = <const double*>ex.hold(_copy_array(np.broadcast_to(np.asarray(mult, np.float64), (N,)), np.float64))
    s.epi.mult_rs, s.epi.mult_cs = 0, 1
    s.epi.zy = zy
    if bias_col is not None:
        s.epi.bias_col = <const int32_t*>ex.hold(_copy_array(np.broadcast_to(np.asarray(bias_col), (N,)), np.int32))
    s.ap = <int8_t*>ex.hold(Buffer((M + ARM_Q_MR - 1) // ARM_Q_MR * ARM_Q_MR * K4))
    s.rowsum = <int32_t*>ex.hold(Buffer(max(M, 1) * 4))
    s.acc = <int32_t*>ex.hold(Buffer(max(M * N, 1) * 4))
    return ex
