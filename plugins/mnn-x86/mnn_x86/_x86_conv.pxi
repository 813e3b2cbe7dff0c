# Cython glue of the convolutions (csrc/op_conv.c and the Winograd, pointwise and depthwise paths):
# included by _x86.pyx, whose Execution, Buffer and helpers it uses.

def _gemm_depth(str kind, dict p) -> int:
    """K of a convolution's GEMMs, for the tile rules (_table); 0 where they do not apply: it runs no
    GEMM, or it is Winograd on at most WINO_T14_MAX_TILES tiles."""
    if kind.startswith("winograd") and p["N"] * -(-p["OH"] // 4) * -(-p["OW"] // 4) <= WINO_T14_MAX_TILES:
        return 0
    if kind.startswith(("pointwise", "winograd")):  # Winograd: 36 GEMMs over the input channels
        return p["C"]
    if kind.startswith(("gemm", "gap")):
        return p["C"] * p["kh"] * p["kw"]
    return 0


#: Winograd on so few tiles (13x13 and 14x14 planes at batch 1: 16) keeps the 14x32 tile whatever
#: its K: its 36 GEMMs have the tiles as rows (16: a 14-row panel and a 2-row one) and no bias or
#: activation to finish. On more tiles the K rule decides again (the measurements: RESULTS.md,
#: "Notes moved from the code").
WINO_T14_MAX_TILES = 16


def _gemm_rows_cols(str kind, dict p) -> tuple:
    """M x N of a plain fp32 convolution GEMM (output channels of a group x output pixels of an
    image), which may pick its tile by them (_table); (0, 0) for other kinds."""
    if kind == "gemm":
        return p["O"] // p["group"], p["OH"] * p["OW"]
    return 0, 0


def conv(str isa, int threads, dict p, weight, bias, int weight_input, int bias_input):
    """Conv. p: N, O, group, depthwise, act, act_alpha, act_beta and the geometry
    of one group (C = channels per group, ...). weight/bias: constant arrays or
    None when they arrive at run (weight_input/bias_input then name the input)."""
    cdef const x86_kernels* kt = x86_kernels_for(isa.encode())
    # an NC16 side (layouts.py chose it): the depthwise kernel, Winograd (its transforms read and write
    # blocks), the output-channel direct kernel (it reads and writes either), or a plain 1x1 by the
    # pointwise kernel
    gap = bool(p.get("gap"))
    blocked = bool(p.get("in_nc16") or p.get("out_nc16"))
    wino_blocked = (blocked and bool(p.get("winograd")) and weight is not None and p["group"] == 1
                    and not p["depthwise"] and not gap)
    # p["direct_oc"]: the direct kernel with the output channels along the vectors (conv_direct_oc_impl.h;
    # ops_conv.py chose it), any stride
    direct_oc = (bool(p.get("direct_oc")) and weight is not None and p["group"] == 1 and not p["depthwise"]
                 and not gap and kt != NULL and kt.dco_conv != NULL and p["dh"] == 1 and p["dw"] == 1)
    pointwise = blocked and not p["depthwise"] and not gap and not wino_blocked and not direct_oc
    if pointwise and not ((_plain_1x1(p) or _strided_1x1(p)) and p["group"] == 1 and weight is not None):
        raise ValueError("x86: an NC16 tensor reaches a Conv that is neither depthwise, nor Winograd, nor the "
                         "output-channel direct kernel's, nor an unpadded 1x1 with constant weights "
                         "(mnn_x86/layouts.py should not have chosen it)")
    # p["gap"]: a plain 1x1 whose output a global average pooling alone reads (x86.ConvGlobalAvgPool):
    # register tiles of pixels x output channels, each tile's rows added into the channels' sums
    # (conv_gap_impl.h); the convolution's output is never stored. Its input may be NC16 (layouts.py)
    if gap and not (_plain_1x1(p) and p["group"] == 1 and weight is not None and not p["depthwise"]
                    and not p.get("out_nc16") and not p.get("bf16") and not p.get("direct")):
        raise ValueError("x86: a global average pooling fused after a convolution that is not a plain fp32 1x1 "
                         "of one group with constant weights (mnn_x86/fuse.py should not have fused them)")
    # a batch whose rows are independent (kh = sh = 1, no vertical padding: 1-D convolutions) runs, when
    # transposed, as one image of N * H rows (op_conv.c: merge_h): short sequences then fill the row tiles
    mergeable = (p["N"] > 1 and p["kh"] == 1 and p["sh"] == 1 and p["pt"] == 0 and p["OH"] == p["H"]
                 and not _plain_1x1(p))
    # p["transposed"]: None lets the lane rule choose, True/False force it (option x86.conv_t)
    transposed = (not gap and not p["depthwise"] and not pointwise and weight is not None and p["group"] == 1 and not p.get("winograd")
                  and kt != NULL and (_transposed_pays(p["OH"] * p["OW"], p["O"], p["C"] * p["kh"] * p["kw"],
                                                       _plain_1x1(p), kt.mr, kt.nr, kt.vlen,
                                                       p["N"] if mergeable else 1)
                                      if p.get("transposed") is None else bool(p["transposed"])))
    # p["direct"]: few input channels, by the direct kernel (conv_direct_impl.h; ops_conv.py chose it),
    # which takes no dilation and a horizontal stride of 1 or 2 (its strip's columns: plain or split)
    direct = (bool(p.get("direct")) and weight is not None and p["group"] == 1 and not p["depthwise"]
              and not blocked and kt != NULL and p["dh"] == 1 and p["dw"] == 1 and p["sw"] in (1, 2))
    direct_oc = direct_oc and not direct
    direct = direct or direct_oc
    if direct:
        transposed = False
    winograd = bool(p.get("winograd")) and weight is not None and p["group"] == 1 and not pointwise and not direct
    # p["bf16"]: precision="low" on a CPU with AVX-512 BF16 (precision.py); the GEMM path with constant
    # weights then runs on bf16 operands, in the usual orientation, and so do Winograd's 36 GEMMs unless
    # p["bf16_winograd"] is false (x86.bf16="direct"). A 1x1 with an NC16 side stays fp32 (layouts.py
    # offers no NC16 when bf16 runs, so this only happens under x86.layouts="on")
    bf16 = (bool(p.get("bf16")) and weight is not None and not p["depthwise"] and not pointwise
            and not direct and (not winograd or bool(p.get("bf16_winograd"))))
    if bf16:
        transposed = False
    kind = ("depthwise" if p["depthwise"] else "gap" if gap else "pointwise" if pointwise else
            "direct_oc" if direct_oc else "direct" if direct else "winograd" if winograd else
            "gemm_t" if transposed else "gemm") + ("_bf16" if bf16 else "") + ("_maxpool" if p.get("pool") else "")
    if pointwise and p.get("pwdw") is not None:  # x86.ConvDepthwise
        kind += "_dw"
    gemm_rows, gemm_cols = _gemm_rows_cols(kind, p)
    # p["res"]: the input added to the result before the activation (x86.ConvAdd, a residual)
    res_input = p.get("res", -1)
    cdef Execution ex = _execution(f"x86.Conv.{kind}" + ("+add" if res_input >= 0 else ""), sizeof(x86_conv_state),
                                   x86_conv_run, isa, threads, _gemm_depth(kind, p), gemm_rows, gemm_cols)
    cdef x86_conv_state* s = <x86_conv_state*>ex.state
    cdef const x86_kernels* k = s.op.k
    cdef Buffer w, work, b
    cdef int64_t gi, Kg, panels
    cdef bint fresh
    ex.packed = tuple(i for i, c in ((weight_input, weight), (bias_input, bias)) if c is not None and i >= 0)
    _conv_geom(&s.g, p)
    s.N, s.O, s.group = p["N"], p["O"], p["group"]
    s.og = s.O // s.group
    s.depthwise = p["depthwise"]
    s.weight_input = -1 if weight is not None else weight_input
    s.bias_input = -1 if bias is not None or bias_input < 0 else bias_input
    _epilogue(&s.epi, p["act"], p["act_alpha"], p["act_beta"])
    s.res_input = res_input
    _epilogue(&s.res_act, 0, 0.0, 0.0)
    if res_input >= 0 and not pointwise:  # other paths add the residual after, then activate (op_conv.c)
        s.res_act, s.epi.act = s.epi, 0
    if bias is not None:
        b = _copy_array(bias, np.float32)
        ex.keep.append(b)
        s.bias = <const float*>b.ptr
    Kg = s.g.C * s.g.kh * s.g.kw
    if p.get("pool") is not None and (not direct or direct_oc):
        raise ValueError("x86: a max pooling fused after a convolution the direct kernel does not run "
                         "(mnn_x86/fuse.py should not have fused it)")
    if direct:
        if p.get("pool") is not None:
            _pool_geom(&s.pg, p["pool"])
            s.pool = 1
        _direct_weights(ex, s, weight, threads, direct_oc)
        return ex
    if winograd:
        _winograd_weights(ex, s, weight, threads, isa if bf16 else None)
        return ex
    if gap:  # pixels as the tiles' rows: W^T in pack_b panels, no scratch (csrc/conv_gap_impl.h)
        _transposed_weights(ex, s, weight, threads, scratch=False)
        s.transposed, s.gap = 0, 1
        return ex
    if transposed or pointwise:  # the pointwise kernel reads X^T in place and needs no scratch
        if transposed and mergeable and not pointwise:
            s.merge_h, s.g.H, s.g.OH = p["H"], p["H"] * p["N"], p["OH"] * p["N"]
        _transposed_weights(ex, s, weight, threads, scratch=not pointwise)
        s.transposed, s.pointwise = not pointwise, pointwise
        if p.get("pwdw") is not None:
            _pointwise_dw(ex, s, p["pwdw"], threads)
        elif pointwise and not _plain_1x1(p):  # a strided 1x1: its pixels gathered first (op_conv.c)
            work = _floats(max((s.g.C + 15) // 16 * 16 * s.g.OH * s.g.OW, 1))  # whole blocks
            ex.keep.append(work)
            s.work = <float*>work.ptr
        return ex
    if s.depthwise:
        if weight is not None:
            w = _copy_array(weight, np.float32)  # [C][1][kh][kw] is already [C][kh*kw]
            ex.keep.append(w)
            s.w = <float*>w.ptr
        work = _floats(max(threads, 1) * x86_depthwise_work_floats(&s.g, k.vlen))
    else:
        if not bf16:
            panels = (s.og + k.mr - 1) // k.mr
            s.w_group_stride = panels * k.mr * Kg
            if weight is not None:
                w = _packed(weight, ("gemm", <bytes>k.name, s.group), s.group * s.w_group_stride, &fresh)
            else:  # packed at each run
                w = _floats(s.group * s.w_group_stride)
            ex.keep.append(w)
            s.w = <float*>w.ptr
            if weight is not None and fresh:
                wc = np.ascontiguousarray(weight, dtype=np.float32)
                _pack_a_groups(k, wc, s.group, s.og, Kg, s.w, s.w_group_stride, threads)
        x86_conv_plan(k, &s.g, s.N * s.group, s.og, threads, &s.chunk_cols, &s.per_item)
        s.chunk_floats = s.chunk_cols * Kg
        work = _floats((max(threads, 1) if s.per_item else 1) * s.chunk_floats)
        if bf16:
            _bf16_conv(ex, s, isa, weight, threads)
    ex.keep.append(work)
    s.work = <float*>work.ptr
    return ex


cdef void _pointwise_dw(Execution ex, x86_conv_state* s, dict d, int threads) except *:
    """x86.ConvDepthwise: the depthwise convolution d (its geometry, act, act_alpha, act_beta and constant
    weight and bias) after this op's 1x1, which writes it NC16 rows (csrc/pwdw_impl.h)."""
    cdef Buffer w = _copy_array(d["weight"], np.float32)  # [C][1][kh][kw] is already [C][kh*kw]
    cdef Buffer b
    ex.keep.append(w)
    s.dw_w = <const float*>w.ptr
    s.dw_bias = NULL
    if d.get("bias") is not None:
        b = _copy_array(d["bias"], np.float32)
        ex.keep.append(b)
        s.dw_bias = <const float*>b.ptr
    _conv_geom(&s.dg, d)
    _epilogue(&s.dw_epi, d["act"], d["act_alpha"], d["act_beta"])
    cdef Buffer work = _floats(max(threads, 1) * x86_pwdw_floats(&s.dg))
    ex.keep.append(work)
    s.work = <float*>work.ptr
    s.pwdw = 1


# -- the transposed orientation (X^T as the A panels): when it pays -------------------------

#: The transposed orientation packs X^T and transposes C^T back; it must use clearly more of the
#: tiles to pay for that. A plain 1x1 reads its input in place otherwise, so it needs the larger
#: gain and small planes; an im2col convolution copies its input either way, so a small gain
#: suffices while the output is small or K long enough to hide the transpose (RESULTS.md, "small planes").
TRANSPOSED_1X1_MIN_GAIN = 1.10
TRANSPOSED_IM2COL_MIN_GAIN = 1.04
TRANSPOSED_1X1_MAX_PIXELS = 64
TRANSPOSED_MAX_PIXELS = 1024
TRANSPOSED_SMALL_PIXELS = 256
TRANSPOSED_LONG_K = 256


def _plain_1x1(dict p):
    """A 1x1 convolution of stride 1 without padding: its GEMM reads the NCHW input as it is."""
    return (p["kh"], p["kw"], p["sh"], p["sw"], p["pt"], p["pl"], p["OH"], p["OW"]) == (
        1, 1, 1, 1, 0, 0, p["H"], p["W"])


def _strided_1x1(dict p):
    """A 1x1 convolution at a stride whose taps reach no padding: every sh-th row and sw-th column of
    the input, read by the pointwise kernel once gathered."""
    return (p["kh"], p["kw"], p["pt"], p["pl"]) == (1, 1, 0, 0) and (p["OH"], p["OW"]) == (
        (p["H"] - 1) // p["sh"] + 1, (p["W"] - 1) // p["sw"] + 1)


def _lanes_used(int64_t n, int64_t tile, int64_t vlen=0):
    """The part of the computed rows (or columns) that is real work when n of them are cut into tiles
    of `tile`. With `vlen` given (columns), a last panel of at most vlen costs one vector, not the
    whole panel (gemm_impl.h: tile_b with nv = 1)."""
    if n <= 0:
        return 0.0
    cdef int64_t tail = n % tile
    cdef int64_t done = n - tail + (0 if tail == 0 else (vlen if 0 < vlen < tile and tail <= vlen else tile))
    return <double>n / done


def _transposed_pays(int64_t pixels, int64_t out_channels, int64_t taps, bint plain_1x1, int mr, int nr,
                     int vlen=0, int64_t images=1):
    """The one rule for a convolution's GEMM orientation (op_conv.c: conv_transposed), by lane use.
    The usual orientation runs the output channels along the register tile's MR rows and the pixels
    along its NR columns (vectors); the transposed one swaps them. Each wastes the padding of its
    last row panel and of its last column panel: 49 pixels fill 64 columns on AVX-512 (6x32 tiles)
    but 54 rows; 196 fill 208 columns but 198 rows; 128 output channels fill 132 rows but 4 column
    panels. `taps` is K = C * kh * kw; `plain_1x1`: stride 1, no padding (the usual
    orientation reads the input in place). The thresholds above say why each is where it is. `images` > 1:
    the transposed orientation takes that many images' pixels as one run of rows (merge_h), the usual
    one still one image at a time."""
    if pixels <= 0 or out_channels <= 0 or pixels * images > TRANSPOSED_MAX_PIXELS:
        return False
    usual = _lanes_used(out_channels, mr) * _lanes_used(pixels, nr, vlen)
    if images > 1 and pixels < nr:
        # images of less than one column panel each: measured, the per-image GEMMs lose far more than
        # their lanes say (deepcut's 1-D convolutions of 15-16 pixels, 8 images: 95-109 us against 56-64
        # merged), so count the whole panel
        usual = _lanes_used(out_channels, mr) * pixels / nr
    pixels *= images
    swapped = _lanes_used(pixels, mr) * _lanes_used(out_channels, nr, vlen)
    if plain_1x1:
        return pixels <= TRANSPOSED_1X1_MAX_PIXELS and swapped > TRANSPOSED_1X1_MIN_GAIN * usual
    return swapped > TRANSPOSED_IM2COL_MIN_GAIN * usual and (
        pixels <= TRANSPOSED_SMALL_PIXELS or taps >= TRANSPOSED_LONG_K)


cdef void _transposed_weights(Execution ex, x86_conv_state* s, weight, int threads, bint scratch=True) except *:
    """State of a transposed convolution: W^T packed as the GEMM's B (B[k][o] = W[o][k]) and, with
    `scratch`, the scratch (the padded input, X^T of a chunk of pixels packed, its C^T)."""
    cdef const x86_kernels* k = s.op.k
    cdef int64_t Kg = s.g.C * s.g.kh * s.g.kw
    s.transposed = 1
    cdef bint fresh
    cdef Buffer w = _packed(weight, ("w_t", <bytes>k.name), max((s.O + k.nr - 1) // k.nr * k.nr * Kg, 1), &fresh)
    ex.keep.append(w)
    s.w = <float*>w.ptr
    wc = np.ascontiguousarray(weight, dtype=np.float32)
    cdef const float* src = <const float*><size_t>wc.ctypes.data
    if wc.size and fresh:
        k.pack_b(src, 1, Kg, Kg, s.O, s.w, 1)
    if not scratch:
        return
    cdef int64_t work_floats
    x86_conv_transposed_plan(k, &s.g, s.O, max(threads, 1), s.merge_h > 0, &s.chunk_cols, &s.per_item,
                             &work_floats)
    cdef Buffer work = _floats(max(work_floats, 1))
    ex.keep.append(work)
    s.t_work = <float*>work.ptr
    s.work = s.t_work

cdef void _direct_weights(Execution ex, x86_conv_state* s, weight, int threads, bint oc=False) except *:
    """State of a direct convolution (conv_direct_impl.h; oc: conv_direct_oc_impl.h, the output channels
    along the vectors): its plan, the weights packed in blocks of the tile's output channels, a strip of
    padded input rows per thread."""
    cdef const x86_kernels* k = s.op.k
    cdef int64_t Kg = s.g.C * s.g.kh * s.g.kw, w_floats
    s.direct = 2 if oc else 1
    if oc:
        k.dco_plan(&s.g, s.N, s.O, max(threads, 1), &s.d_rows, &s.d_parts, &s.d_worker_floats, &w_floats)
    else:
        k.direct_plan(&s.g, s.N, s.O, max(threads, 1), &s.d_rows, &s.d_parts, &s.d_worker_floats, &w_floats)
    if s.pool:  # the fused pooling's bands instead of rows (conv_direct_impl.h)
        if k.direct_pool_plan == NULL:
            raise ValueError(f"x86: the {k.name.decode()} kernels have no fused convolution and max pooling")
        k.direct_pool_plan(&s.g, &s.pg, s.N, s.O, max(threads, 1), &s.d_rows, &s.d_parts, &s.d_worker_floats)
    cdef Buffer w = _floats(max(w_floats, 1))
    ex.keep.append(w)
    s.w = <float*>w.ptr
    wc = np.ascontiguousarray(weight, dtype=np.float32)
    if wc.size and oc:
        k.dco_pack(<const float*><size_t>wc.ctypes.data, s.O, Kg, s.w)
    elif wc.size:
        k.direct_pack(<const float*><size_t>wc.ctypes.data, s.O, Kg, s.w)
    cdef Buffer work = _floats(max(threads, 1) * s.d_worker_floats)
    ex.keep.append(work)
    s.work = <float*>work.ptr


#: G of Winograd F(4x4, 3x3): U = G w G^T turns a 3x3 filter into its 6x6 transform
#: (float literals: with cdivision, Cython folds 1 / 4 as C integer division)
_WINO_G = np.array([[1.0 / 4, 0.0, 0.0], [-1.0 / 6, -1.0 / 6, -1.0 / 6], [-1.0 / 6, 1.0 / 6, -1.0 / 6],
                    [1.0 / 24, 1.0 / 12, 1.0 / 6], [1.0 / 24, -1.0 / 12, 1.0 / 6], [0.0, 0.0, 1.0]],
                   dtype=np.float64)


cdef void _winograd_weights(Execution ex, x86_conv_state* s, weight, int threads, bf16_isa=None) except *:
    """Winograd F(4x4, 3x3) state: the 36 transformed weight matrices (O x C, in float64
    then rounded) packed as GEMM A operands, the chunk plan and its scratch. bf16_isa: the 36
    GEMMs run on bf16 (precision="low"; _bf16_winograd)."""
    cdef const x86_kernels* k = s.op.k
    cdef int64_t xi, O = s.O, C = s.g.C, work_floats
    cdef Buffer buf
    cdef bint fresh
    s.winograd = 1
    x86_wino_plan(k, s.N, C, O, s.g.OH, s.g.OW, threads, s.g.in_nc16 or s.g.out_nc16, &s.chunk_cols, &s.per_item,
                  &s.wino_gemm_t, &work_floats)
    s.chunk_floats = work_floats
    buf = _floats(work_floats)
    ex.keep.append(buf)
    s.work = <float*>buf.ptr
    if bf16_isa is not None:
        w = np.asarray(weight, dtype=np.float64)
        u = np.ascontiguousarray(np.einsum("ai,ocij,bj->aboc", _WINO_G, w, _WINO_G).reshape(36, O, C),
                                 dtype=np.float32)
        _bf16_winograd(ex, s, bf16_isa, u, threads)
        return
    if s.wino_gemm_t:  # U^T as the GEMM's B: B[c][o] = U[o][c]
        s.w_group_stride = (O + k.nr - 1) // k.nr * k.nr * C
    else:
        s.w_group_stride = (O + k.mr - 1) // k.mr * k.mr * C
    buf = _packed(weight, ("winograd", <bytes>k.name, s.wino_gemm_t), 36 * s.w_group_stride, &fresh)
    ex.keep.append(buf)
    s.w = <float*>buf.ptr
    cdef const float* src
    cdef int64_t o0, ob, n, unit = k.nr if s.wino_gemm_t else k.mr
    if O * C == 0 or not fresh:  # nothing to pack, or packed already for another session
        return
    # a block of output channels at a time, a whole number of panels (a panel of rows, or of B's
    # columns, starts at o0 * C): all of the layer at once in float64 took 3x the packed weights'
    # memory at prepare (ResNet-18's 512-channel layers: 38 MB packed, 75 MB passing through)
    ob = max(1, 64 // unit) * unit
    for o0 in range(0, O, ob):
        wb = np.asarray(weight[o0:o0 + ob], dtype=np.float64)
        n = wb.shape[0]
        u = np.ascontiguousarray(np.einsum("ai,ocij,bj->aboc", _WINO_G, wb, _WINO_G), dtype=np.float32)
        src = <const float*><size_t>u.ctypes.data
        for xi in range(36):
            if s.wino_gemm_t:
                k.pack_b(src + xi * n * C, 1, C, C, n, s.w + xi * s.w_group_stride + o0 * C, threads)
            else:
                k.pack_a(src + xi * n * C, C, 1, n, C, s.w + xi * s.w_group_stride + o0 * C, threads)


cdef void _bf16_winograd(Execution ex, x86_conv_state* s, str isa, u, int threads) except *:
    """Winograd's 36 GEMMs on bf16 (csrc/winograd_impl.h: wino_gemm_bf16): the transformed weights
    u (36 x O x C, fp32) packed as bf16 pairs (A operands, or B of U^T for gemm_t), w_group_stride
    words apart, and a bf16 scratch per thread for each position's V (B panels, or V^T as A)."""
    cdef Buffer st = Buffer(sizeof(x86_bf16_conv))
    ex.keep.append(st)
    cdef x86_bf16_conv* b = <x86_bf16_conv*>st.ptr
    cdef int64_t xi, O = s.O, C = s.g.C
    b.kb = _bf16_table(isa)
    s.w_group_stride = x86_bf16_words(O, b.kb.nr if s.wino_gemm_t else b.kb.mr, C)
    cdef uint32_t* w = _words(ex, 36 * s.w_group_stride)
    cdef const float* src = <const float*><size_t>u.ctypes.data
    if u.size:
        for xi in range(36):
            if s.wino_gemm_t:  # B[c][o] = U[o][c]
                b.kb.pack_b(src + xi * O * C, 1, C, C, O, w + xi * s.w_group_stride, threads)
            else:
                b.kb.pack_a(src + xi * O * C, C, 1, O, C, w + xi * s.w_group_stride, threads)
    b.w = w
    cdef int64_t tcp = (s.chunk_cols + b.kb.nr - 1) // b.kb.nr * b.kb.nr
    b.bp_words = (max(x86_bf16_words(tcp, b.kb.mr, C), x86_bf16_words(tcp, b.kb.nr, C)) + 15) // 16 * 16
    b.bp = _words(ex, max(threads, 1) * b.bp_words)
    s.bf16 = b


cdef const x86_bf16_kernels* _bf16_table(str isa) except NULL:
    cdef const x86_bf16_kernels* kb = x86_bf16_kernels_for(isa.encode())
    if kb == NULL:
        raise RuntimeError(f"x86: no bf16 GEMM under ISA {isa!r} on this CPU (it needs AVX-512 BF16)")
    return kb


cdef uint32_t* _words(Execution ex, int64_t n) except NULL:
    """n zeroed 32-bit words (bf16 pairs) that live as long as the execution."""
    cdef Buffer buf = Buffer(max(n, 1) * 4)
    ex.keep.append(buf)
    return <uint32_t*>buf.ptr


cdef void _bf16_conv(Execution ex, x86_conv_state* s, str isa, weight, int threads) except *:
    """A GEMM convolution on bf16 (precision="low", csrc/bf16.h): every group's weights packed as bf16
    pairs (rounded once, here) and a bf16 chunk of B per thread beside the fp32 one (s.work)."""
    cdef Buffer st = Buffer(sizeof(x86_bf16_conv))
    ex.keep.append(st)
    cdef x86_bf16_conv* b = <x86_bf16_conv*>st.ptr
    cdef int64_t gi, Kg = s.g.C * s.g.kh * s.g.kw
    b.kb = _bf16_table(isa)
    b.w_group_stride = x86_bf16_words(s.og, b.kb.mr, Kg)
    cdef uint32_t* w = _words(ex, s.group * b.w_group_stride)
    wc = np.ascontiguousarray(weight, dtype=np.float32)
    cdef const float* src = <const float*><size_t>wc.ctypes.data
    if wc.size:
        for gi in range(s.group):
            b.kb.pack_a(src + gi * s.og * Kg, Kg, 1, s.og, Kg, w + gi * b.w_group_stride, threads)
    b.w = w
    b.bp_words = (x86_bf16_words(s.chunk_cols, b.kb.nr, Kg) + 15) // 16 * 16  # 64-byte aligned parts
    b.bp = _words(ex, (max(threads, 1) if s.per_item else 1) * b.bp_words)
    s.bf16 = b


cdef void _bf16_matmul(Execution ex, x86_matmul_state* s, str isa, b_const, int threads) except *:
    """A MatMul / Gemm with a constant B on bf16 (precision="low", csrc/bf16.h): B packed as bf16
    pairs here (every batch of it), A packed at each run."""
    cdef Buffer st = Buffer(sizeof(x86_bf16_matmul))
    ex.keep.append(st)
    cdef x86_bf16_matmul* b = <x86_bf16_matmul*>st.ptr
    cdef int64_t t, words
    b.kb = _bf16_table(isa)
    words = x86_bf16_words(s.N, b.kb.nr, s.K)
    b.b_stride = words if s.b_off != NULL else 0
    cdef int64_t copies = s.batch if s.b_off != NULL else 1
    cdef uint32_t* bp = _words(ex, words * copies)
    bc = np.ascontiguousarray(b_const, dtype=np.float32)
    cdef const float* src = <const float*><size_t>bc.ctypes.data
    if bc.size:
        for t in range(copies):
            b.kb.pack_b(src + (s.b_off[t] if s.b_off != NULL else 0), s.b_rs, s.b_cs, s.K, s.N, bp + t * words,
                        threads)
    b.b = bp
    b.a = _words(ex, x86_bf16_words(s.M, b.kb.mr, s.K))
    s.bf16 = b


cdef void _pack_a_groups(const x86_kernels* k, wc, int64_t group, int64_t og, int64_t Kg, float* dst,
                         int64_t stride, int threads):
    cdef const float* src = <const float*><size_t>wc.ctypes.data
    cdef int64_t gi
    if wc.size == 0:
        return
    for gi in range(group):
        k.pack_a(src + gi * og * Kg, Kg, 1, og, Kg, dst + gi * stride, threads)
