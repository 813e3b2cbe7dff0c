# Cython glue of the int8 kernels (csrc/int8.h): QLinearConv with uint8 activations and int8
# weights, quantized element-wise ops and max pooling. Included by _x86.pyx.

# -- int8 (quantization): QLinearConv with uint8 activations, int8 weights (csrc/int8.h) --------------

cdef extern from "int8.h" nogil:
    ctypedef struct x86_int8_kernels:
        const char* name
        int32_t nb

    ctypedef struct x86_qphase:
        int64_t QH, QW, pstride, QP, C4, taps, Nf
        int32_t shifted
        int32_t window
        int64_t groups

    ctypedef struct x86_qconv_state:
        x86_op op
        const x86_int8_kernels* k8
        int64_t N, O, group, og, ogp, K2, np
        int32_t fc
        x86_conv_geom g
        const int32_t* w
        const int32_t* bias
        const float* mult
        int32_t zx, zy, qmin, qmax
        void* work
        int64_t work_stride
        int32_t kind
        int64_t K4
        const int32_t* bias_eff
        const int8_t* wdw
        const int32_t* wq
        uint8_t* xq
        uint8_t* tmp
        int64_t xq_stride
        int64_t tmp_stride
        x86_qphase q
        uint8_t* ypx

    ctypedef struct x86_qelt_state:
        x86_op op
        const x86_int8_kernels* k8
        int32_t kind, zp
        float scale
        int64_t planes
        x86_pool_geom pg
        x86_conv_geom cg
        x86_qphase q
        uint8_t* xq
        int64_t xq_stride

    int x86_qconv_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_qelt_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    const x86_int8_kernels* x86_int8_kernels_for(const char* isa)
    int x86_int8_vnni(const char* isa)
    int64_t x86_int8_dw_work_bytes(const x86_conv_geom* g)
    int64_t x86_qphase_init(x86_qphase* q, const x86_conv_geom* g, int64_t C4, int depthwise, int shifted,
                            int64_t* tap_off)
    int64_t x86_qphase_tmp_bytes(const x86_qphase* q, const x86_conv_geom* g)


def int8_vnni(str isa):
    """Whether QLinearConv on `isa` can take the AVX-512 VNNI kernels (compiled in and in cpuid)."""
    return bool(x86_int8_vnni(isa.encode()))


cdef const x86_int8_kernels* _int8_table(str isa) except NULL:
    cdef const x86_int8_kernels* k = x86_int8_kernels_for(isa.encode())
    if k == NULL:
        raise RuntimeError(f"x86 int8 kernels for ISA {isa!r} are not runnable on this CPU")
    return k


def qelt(str isa, int threads, str op, float scale, int zp):
    """QuantizeLinear (float32 -> uint8) or DequantizeLinear (uint8 -> float32), per tensor."""
    cdef Execution ex = _execution(f"x86.{op}.int8", sizeof(x86_qelt_state), x86_qelt_run, isa, threads)
    cdef x86_qelt_state* s = <x86_qelt_state*>ex.state
    s.k8 = _int8_table(isa)
    s.kind = 0 if op == "QuantizeLinear" else 1
    s.scale, s.zp = scale, zp
    return ex


def qadd(str isa, int threads):
    """QLinearAdd of two uint8 tensors of one shape; the per-tensor scales and zero points are read at run time
    (the multipliers A_scale / C_scale and B_scale / C_scale are one float32 division each, docs/QUANT.md)."""
    cdef Execution ex = _execution("x86.QLinearAdd.uint8", sizeof(x86_qelt_state), x86_qelt_run, isa, threads)
    cdef x86_qelt_state* s = <x86_qelt_state*>ex.state
    s.k8 = _int8_table(isa)
    s.kind = 3
    return ex


def qmaxpool(str isa, int threads, int64_t planes, dict p, bint vnni=True):
    """MaxPool of uint8 planes (padding never wins a max of uint8); vnni: on phase planes where the CPU has
    AVX-512 VNNI (the int8 convolutions' machinery), else plain loops."""
    cdef Execution ex = _execution("x86.MaxPool.uint8", sizeof(x86_qelt_state), x86_qelt_run, isa, threads)
    cdef x86_qelt_state* s = <x86_qelt_state*>ex.state
    s.k8 = _int8_table(isa)
    s.kind = 2
    s.planes = planes
    s.pg.H, s.pg.W, s.pg.OH, s.pg.OW = p["H"], p["W"], p["OH"], p["OW"]
    s.pg.kh, s.pg.kw, s.pg.sh, s.pg.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    s.pg.dh, s.pg.dw, s.pg.pt, s.pg.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    if not vnni or not x86_int8_vnni(isa.encode()) or s.pg.sh * s.pg.sw > 64:
        return ex
    # AVX-512 VNNI CPUs: the window over phase planes (the depthwise kernel's), 64 outputs per max
    _conv_geom(&s.cg, dict(p, C=1))
    cdef int64_t taps = s.pg.kh * s.pg.kw
    cdef Buffer tap_off = Buffer((taps + 3) // 4 * 4 * 8)
    s.xq_stride = (x86_qphase_init(&s.q, &s.cg, 1, 1, 0, <int64_t*>tap_off.ptr) + 63) // 64 * 64
    cdef Buffer xq = Buffer(max(threads, 1) * s.xq_stride)  # zeroed: the slack past the planes is read, never written
    ex.keep.extend([tap_off, xq])
    s.xq = <uint8_t*>xq.ptr
    return ex


def qconv(str isa, int threads, dict p, weight, bias, mult, int zx, int zy, str path="pairs", int shifted=-1,
          int px=-1):
    """QLinearConv, uint8 -> uint8. p: N, O, group, fc and the geometry of one group (as conv).
    weight: int8 [O, C/group, kh, kw]; bias: int32 [O]; mult: float32 [O] requantization multipliers.
    path: "pairs" (int16-pair GEMM, every ISA), "depthwise" (group == C == O, every ISA), or with AVX-512 VNNI
    (see int8_vnni) "u8" (u8 x s8 on phase planes, no im2col), "dw_vnni" and "fc_vnni" (the fc form).
    shifted ("u8"): 1 planes per kernel column (int8.h x86_qphase.shifted), 0 the sw column phases, -1 the one
    _qconv_u8 estimates cheaper; px ("u8", group 1): 1 conv_px (output channels in the lanes), 0 conv_c4, -1 the
    one estimated cheaper."""
    cdef Execution ex = _execution(f"x86.QLinearConv.int8.{path}", sizeof(x86_qconv_state), x86_qconv_run, isa,
                                   threads)
    cdef x86_qconv_state* s = <x86_qconv_state*>ex.state
    s.k8 = _int8_table(isa)
    _conv_geom(&s.g, p)
    if path in ("u8", "dw_vnni", "fc_vnni") and not x86_int8_vnni(isa.encode()):
        raise RuntimeError(f"the {path} int8 path needs AVX-512 VNNI, which ISA {isa!r} here has not")
    if path == "depthwise":
        return _qconv_depthwise(ex, s, threads, p, weight, bias, mult, zx, zy)
    if path == "dw_vnni":
        return _qconv_dw_vnni(ex, s, threads, p, weight, bias, mult, zx, zy)
    if path == "u8":
        return _qconv_u8(ex, s, threads, p, weight, bias, mult, zx, zy, shifted, px)
    if path == "fc_vnni":
        return _qconv_fc_vnni(ex, s, threads, p, weight, bias, mult, zx, zy)
    s.N, s.O, s.group, s.fc = p["N"], p["O"], p["group"], p["fc"]
    s.og = s.O // s.group
    s.ogp = (s.og + 3) // 4 * 4
    cdef int64_t K = s.g.C * s.g.kh * s.g.kw
    s.K2 = (K + 1) // 2
    cdef int64_t nb = s.k8.nb
    cdef int64_t cols = min(s.N, 256) if s.fc else s.g.OH * s.g.OW
    s.np = (cols + nb - 1) // nb * nb
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    # weights as int16 pairs in int32 words, rows padded to a multiple of 4 per group
    w16 = np.zeros((s.group, s.ogp, s.K2 * 2), np.int16)
    w16[:, :s.og, :K] = np.asarray(weight, np.int8).reshape(s.group, s.og, K)
    cdef Buffer wb = _copy_array(w16.view(np.int32), np.int32)
    cdef Buffer bb = _copy_array(np.zeros(s.O, np.int32) if bias is None else bias, np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    ex.keep.extend([wb, bb, mb])
    s.w, s.bias, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.work_stride = s.K2 * s.np * 2
    cdef Buffer work = Buffer(max(threads, 1) * s.work_stride * 2)  # zeroed: padding columns and rows stay 0
    ex.keep.append(work)
    s.work = work.ptr
    return ex


cdef _qconv_depthwise(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy):
    s.kind = 2
    s.N, s.O, s.group, s.og = p["N"], p["O"], p["group"], 1
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    cdef Buffer wb = _copy_array(np.asarray(weight, np.int8).reshape(s.O, -1), np.int8)
    cdef Buffer bb = _copy_array(np.zeros(s.O, np.int32) if bias is None else bias, np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    ex.keep.extend([wb, bb, mb])
    s.wdw, s.bias, s.mult = <const int8_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.work_stride = (x86_int8_dw_work_bytes(&s.g) + 63) // 64 * 32  # in int16
    cdef Buffer work = Buffer(max(threads, 1) * s.work_stride * 2)
    ex.keep.append(work)
    s.work = work.ptr
    return ex


def _bias_eff(bias, w8, int o, int zx):
    """bias - zx * sum(w) per output channel, int32 (wrapping like C): the zero point out of the sums."""
    b64 = np.zeros(o, np.int64) if bias is None else np.asarray(bias, np.int64).reshape(o)
    b64 = b64 - zx * np.asarray(w8, np.int64).reshape(o, -1).sum(axis=1)
    return ((b64 + 2**31) % 2**32 - 2**31).astype(np.int32)


cdef _qconv_u8(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy,
               int shifted, int use_px):
    s.kind = 1
    s.N, s.O, s.group, s.fc = p["N"], p["O"], p["group"], 0
    s.og = s.O // s.group
    s.ogp = (s.og + 7) // 8 * 8  # QC_MR
    cdef int64_t C = s.g.C, taps = s.g.kh * s.g.kw, C4 = (C + 3) // 4, P = s.g.OH * s.g.OW
    if s.g.sh * s.g.sw > 64:
        raise RuntimeError("the int8 VNNI convolution takes strides with sh * sw <= 64")
    cdef Buffer tap_off = Buffer(max(taps, 4) * 8)
    if shifted < 0:
        shifted = _shifted_pays(s, C4)
    # conv_px where conv_c4's tiles of flattened outputs (8 channels a row block; 32 wide, the last one 16) would
    # compute at least 15% more than conv_px's 6-pixel x 64-channel tiles (its pixel-major copy of the planes and
    # transpose cost a few percent; measured equal at 14x14, 256 channels, where the ratio is 0.95)
    cdef int64_t PW = (s.g.OW - 1) * s.g.sw + (s.g.kw - 1) * s.g.dw + 1
    cdef int64_t nf = P if shifted else (s.g.OH - 1) * ((PW + s.g.sw - 1) // s.g.sw) + s.g.OW
    cdef int64_t c4_work = (nf + 15) // 16 * 16 * s.ogp
    cdef int64_t px_work = (P + 5) // 6 * 6 * ((s.og + 63) // 64 * 64)
    cdef bint px = s.group == 1 and (px_work < 0.87 * c4_work if use_px < 0 else use_px > 0)
    if px:  # no thrown-away columns either way: the planes whose packing is cheaper (one vector a row)
        shifted = int(s.g.pl + s.g.W <= 64 and PW <= 64 and s.g.sw <= 2)
    cdef int64_t xq_bytes = x86_qphase_init(&s.q, &s.g, C4, 0, shifted, <int64_t*>tap_off.ptr)
    s.K4 = taps * C4
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    s.tmp_stride = (x86_qphase_tmp_bytes(&s.q, &s.g) + 63) // 64 * 64
    cdef Buffer tmp = Buffer(max(threads, 1) * s.tmp_stride)
    s.xq_stride = (xq_bytes + 63) // 64 * 64
    cdef Buffer xq = Buffer(s.xq_stride * (2 if px else 1))  # conv_px: then the planes pixel-major (px_pack)
    ex.keep.extend([tap_off, xq, tmp])
    s.xq, s.tmp = <uint8_t*>xq.ptr, <uint8_t*>tmp.ptr
    if px:
        return _qconv_px(ex, s, threads, weight, bias, mult, zx)
    # weights [group][ogp / 8][tap][C4][8 rows] words of 4 channels' int8 (channels past C and rows past og: 0)
    w = np.asarray(weight, np.int8).reshape(s.group, s.og, C, taps)
    w8 = np.zeros((s.group, s.ogp, taps, C4 * 4), np.int8)
    w8[:, :s.og, :, :C] = w.transpose(0, 1, 3, 2)
    blocks = w8.view(np.int32).reshape(s.group, s.ogp // 8, 8, taps * C4).transpose(0, 1, 3, 2)
    cdef Buffer wb = _copy_array(blocks, np.int32)
    cdef Buffer bb = _copy_array(_bias_eff(bias, w, s.O, zx), np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    ex.keep.extend([wb, bb, mb])
    s.w, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    return ex


cdef int _shifted_pays(x86_qconv_state* s, int64_t C4):
    """1 where the planes per kernel column (no thrown-away columns, one 16-wide last tile) save more dpbusd work
    than their extra packing costs (kw copies of each row instead of the sw phases: ~1 dpbusd per 16 bytes)."""
    cdef x86_conv_geom* g = &s.g
    cdef int64_t PH = (g.OH - 1) * g.sh + (g.kh - 1) * g.dh + 1, PW = (g.OW - 1) * g.sw + (g.kw - 1) * g.dw + 1
    cdef int64_t QH = (PH + g.sh - 1) // g.sh, QP = (PW + g.sw - 1) // g.sw
    cdef int64_t nf_old = (g.OH - 1) * QP + g.OW, nf_new = g.OH * g.OW
    if g.kw == 1 and g.sw == 1 or g.sh * g.kw > 64:
        return 0
    cdef int64_t saved = ((nf_old + 15) // 16 - (nf_new + 15) // 16) * s.ogp * g.kh * g.kw * C4
    cdef int64_t extra = (g.sh * g.kw * QH * g.OW - g.sh * min(g.sw, g.kw) * QH * QP) * C4 * 4 // 16
    return 1 if saved > extra else 0


cdef _qconv_px(Execution ex, x86_qconv_state* s, int threads, weight, bias, mult, int zx):
    """conv_px (int8_vnni_impl.h): weights [Mp / 16][tap][C4][16 channels] words; bias and mult padded to Mp."""
    s.kind = 5
    cdef int64_t C = s.g.C, taps = s.g.kh * s.g.kw, C4 = (C + 3) // 4, P = s.g.OH * s.g.OW
    cdef int64_t Mp = (s.O + 63) // 64 * 64
    s.ogp = Mp
    w = np.asarray(weight, np.int8).reshape(s.O, C, taps)
    w8 = np.zeros((Mp, taps, C4 * 4), np.int8)
    w8[:s.O, :, :C] = w.transpose(0, 2, 1)
    cdef Buffer wb = _copy_array(w8.view(np.int32).reshape(Mp // 16, 16, taps * C4).transpose(0, 2, 1), np.int32)
    beff = np.zeros(Mp, np.int32)
    beff[:s.O] = _bias_eff(bias, w, s.O, zx)
    mpad = np.zeros(Mp, np.float32)
    mpad[:s.O] = np.asarray(mult, np.float32).reshape(-1)
    cdef Buffer bb = _copy_array(beff, np.int32)
    cdef Buffer mb = _copy_array(mpad, np.float32)
    cdef Buffer ypx = Buffer(P * Mp)
    ex.keep.extend([wb, bb, mb, ypx])
    s.wq, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.ypx = <uint8_t*>ypx.ptr
    return ex


cdef _qconv_dw_vnni(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy):
    s.kind = 3
    s.N, s.O, s.group, s.og = p["N"], p["O"], p["group"], 1
    if s.g.sh * s.g.sw > 64:
        raise RuntimeError("the int8 VNNI depthwise convolution takes strides with sh * sw <= 64")
    cdef int64_t taps = s.g.kh * s.g.kw
    cdef Buffer tap_off = Buffer((taps + 3) // 4 * 4 * 8)
    s.xq_stride = (x86_qphase_init(&s.q, &s.g, 1, 1, 0, <int64_t*>tap_off.ptr) + 63) // 64 * 64
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    w = np.asarray(weight, np.int8).reshape(s.O, taps)
    if s.q.window:  # one word per kernel row: its kw (<= 4) weights, then 0
        wq = np.zeros((s.O, s.g.kh, 4), np.int8)
        wq[:, :, :s.g.kw] = w.reshape(s.O, s.g.kh, s.g.kw)
    else:  # one word per 4 taps in order, 0 past the last
        wq = np.zeros((s.O, s.q.groups * 4), np.int8)
        wq[:, :taps] = w
    cdef Buffer wb = _copy_array(wq.view(np.int32), np.int32)
    cdef Buffer bb = _copy_array(_bias_eff(bias, w, s.O, zx), np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    cdef Buffer xq = Buffer(max(threads, 1) * s.xq_stride)  # zeroed: the slack past the planes is read, never written
    ex.keep.extend([tap_off, wb, bb, mb, xq])
    s.wq, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.xq = <uint8_t*>xq.ptr
    return ex


cdef _qconv_fc_vnni(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy):
    s.kind = 4
    s.N, s.O, s.group, s.fc, s.og = p["N"], p["O"], 1, 1, p["O"]
    cdef int64_t K = s.g.C, K4 = (K + 3) // 4, OB = (s.O + 15) // 16
    s.K4 = K4
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    w = np.asarray(weight, np.int8).reshape(s.O, K)
    w8 = np.zeros((OB * 16, K4 * 4), np.int8)
    w8[:s.O, :K] = w
    cdef Buffer wb = _copy_array(w8.view(np.int32).reshape(OB, 16, K4).transpose(0, 2, 1), np.int32)
    cdef Buffer bb = _copy_array(_bias_eff(bias, w, s.O, zx), np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    s.xq_stride = (K4 * 4 + 63) // 64 * 64
    cdef Buffer xq = Buffer(max(threads, 1) * s.xq_stride)  # a padded image row per thread
    ex.keep.extend([wb, bb, mb, xq])
    s.wq, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.xq = <uint8_t*>xq.ptr
    return ex
