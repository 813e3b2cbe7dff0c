"""Conv on x86: depthwise kernel, Winograd F(4x4, 3x3), or im2col into packed panels + packed GEMM.

Every geometry the schema allows runs here: groups, strides, dilations, pads,
auto_pad, bias and every fused activation (applied in the GEMM epilogue). A 1-D convolution runs as
the 2-D one of a plane one row high; a 3-D one in the spatial module (ops_spatial.py).
Constant weights are packed once at prepare into the ISA's MR-row panels;
weights computed by the graph are packed at each run. Stride-1 3x3
convolutions with constant weights run as Winograd F(4x4, 3x3) (weights
transformed once at prepare) where that pays; the session option
``x86.winograd`` ("auto", "on", "off") overrides the choice. Small output planes
(7x7, 14x14) run the GEMM transposed, pixels along the register tile's rows and
output channels along its vectors, where that uses more of the tiles
(``x86.conv_t``: "auto", "on", "off"). Convolutions with few input channels (the stems that read
the image: 3 -> 64, 7x7 or 3x3, stride 2) run as a direct convolution instead (csrc/conv_direct_impl.h:
no im2col panel; a register tile of output channels x pixels of one row, the input rows copied with
their padding); ``x86.direct`` ("auto", "on", "off") overrides the choice, which otherwise takes it for
at most DIRECT_MAX_CHANNELS (8; a 1x1: 4; on AVX-512 a stride-2 kernel: 32) input channels, and for stride-1
1-D kernels (3x1, 1x3) of any channel count (_wide_1d_direct), where Winograd does not take the
convolution ("on" wins over Winograd too); under "auto" on AVX-512, a stride-1 one whose register tile would be mostly
empty (few output channels, short rows: ROWS_MAX_LANE_USE) runs as the row GEMM of ops_conv_train.py
instead. It takes one group, constant weights, dilation 1 and a horizontal stride of
1 or 2 (others keep the GEMM, "on" or not); it computes in fp32, so under precision="low" with bf16
GEMMs "auto" leaves the convolutions to them (and "on" keeps them fp32).
On AVX-512 a stride-2 kernel of 3x3 or more, of more input channels (YOLOv8's downsampling 3x3s), runs as a
direct convolution with the output channels along the vectors (csrc/conv_direct_oc_impl.h; ``x86.direct_oc``).
A 1x1 convolution that writes NC16 (the pointwise kernel) streams its stores past the caches when its
output is at least a quarter of the L3 cache (``x86.stream``: "auto", "on", "off").
Under precision="low" on a CPU with AVX-512 BF16 the GEMM path with constant weights and
Winograd's GEMMs run on bf16 operands instead (precision.py).
"""

from __future__ import annotations

from mnn_core.backend.kit.geometry import conv_geometry, pool_geometry
from mnn_core.errors import BackendError
from mnn_core.graph.ir import Node, TensorInfo

from . import _x86
from ._common import CONV_ADD, CONV_DW, CONV_GAP, conv_params, fused_activation, kernel, pool_params, static_shape
from .isa import l3_cache_bytes
from .layouts import NC16, fused_conv
from .layouts import nbytes as nc16_nbytes
from .ops_spatial import lift_1d, prepare_conv3d
from .precision import use_bf16, winograd_bf16

#: the op of a Conv the direct kernel runs and the max pooling after it, fused (fuse.py)
CONV_MAXPOOL = "x86.ConvMaxPool"
#: the op of a depthwise Conv and the Transpose to channels-last (perm 0, 2, 3, 1) that alone reads its
#: output, fused (fuse.py): ConvNeXt's depthwise convolution and its permute before the LayerNorm
CONV_DW_NHWC = "x86.DepthwiseNHWC"


def _supports(node, ins):
    if len(ins[0].shape) not in (3, 4, 5) or len(ins[1].shape) != len(ins[0].shape):
        return "only 1-D to 3-D convolution ((N, C, D1, ...) input, (O, C/group, k1, ...) weight)"
    return True


#: Winograd F(4x4, 3x3) below these sizes loses to the direct GEMM: too few 4x4
#: tiles to amortize the transforms, or too few channels to fill the tiles
WINO_MIN_CHANNELS = 8
WINO_MIN_OUT = 8  # output height and width
#: ... unless the batch brings the tiles: they are one sequence over the images (winograd_impl.h), so
#: ResNet-18's 7x7 layers (512 channels, 4 tiles an image) run in 8.3 instead of 20 ms at batch 8 and 3.3
#: instead of 5.3 at batch 2 (1 thread; 4.7 instead of 16 at batch 8, 2 threads), while at batch 1 they
#: were level (RESULTS.md, "Winograd over the batch")
WINO_MIN_OUT_BATCHED = 7
WINO_MIN_TILES = 8


def _choice(options, name: str) -> str:
    """The session option `name`, one of "auto" (its default), "on" and "off"; anything else is an error."""
    choice = str((options or {}).get(name, "auto")).lower()
    if choice not in ("auto", "on", "off"):
        raise BackendError(f"x86: option {name}={choice!r}; use 'auto', 'on' or 'off'")
    return choice


def use_winograd(geo, x_shape, w_shape, weight, options) -> bool:
    """Whether this convolution runs as Winograd F(4x4, 3x3) (option x86.winograd; weight: its constant
    weight, or anything but None where only its being constant is known)."""
    choice = _choice(options, "x86.winograd")
    o, cg, kh, kw = w_shape
    depthwise = cg == 1 and o == 1  # one channel in, one out: the depthwise kernel's case
    eligible = (
        weight is not None
        and geo["group"] == 1
        and not depthwise
        and (kh, kw) == (3, 3)
        and tuple(geo["strides"]) == (1, 1)
        and tuple(geo["dilations"]) == (1, 1)
    )
    if not eligible or choice == "off":
        return False
    if choice == "on":
        return True
    n, _, oh, ow = geo["out"]
    tiles = n * -(-oh // 4) * -(-ow // 4)
    big_enough = min(oh, ow) >= WINO_MIN_OUT or (min(oh, ow) >= WINO_MIN_OUT_BATCHED and tiles >= WINO_MIN_TILES)
    return min(cg, o) >= WINO_MIN_CHANNELS and big_enough


#: The direct kernel against im2col + GEMM, measured on Zen 4 (RESULTS.md, "direct convolution for the
#: stems"): 1.2-1.6x faster on the 3-channel stems, 1.1-1.2x with 8 input channels (3x3 stride 2), 1.1x
#: with 16 at stride 2; but at stride 1 Winograd is faster from 8 channels on (0.95x), so the rule leaves
#: Winograd's convolutions to it, and a 1x1 of 8 channels (the GEMM reads its input in place) was 1.4x
#: faster on AVX-512 but 0.9x on AVX2, so above DIRECT_MAX_CHANNELS_1X1 a 1x1 keeps the GEMM
DIRECT_MAX_CHANNELS = 8
DIRECT_MAX_CHANNELS_1X1 = 4
#: On AVX-512 a stride-2 kernel larger than 1x1 (YOLOv8's downsampling 3x3s) keeps the direct kernel up to
#: this many input channels: on Zen 5, 16 -> 32 (160x160) and 32 -> 32, 24 -> 48, 32 -> 64 (80x80) took
#: 1.2-1.6x less CPU time than im2col + GEMM at batch 8 (1.07-1.3x at batch 1); 48 -> 96 and 64 -> 64
#: (40x40) were level (benchmarks/RESULTS_ZOO.md, 2026-12-07)
DIRECT_MAX_CHANNELS_S2 = 32
#: A 1-D kernel (3x1, 1x3: kh or kw 1) at stride 1 takes the direct kernel with any channel count: its
#: output rows run as one (conv_direct_impl.h, dc_flat), where im2col would copy K = C * 3 floats a pixel
#: for a short GEMM. Measured up to K = 288, so bounded a little above; on fewer than DIRECT_MIN_PIXELS_1D
#: outputs, and on AVX2 for horizontal kernels (rows of 8 already fill its vectors), the GEMM stays faster
#: (benchmarks/RESULTS_ZOO.md, 2026-12-07).
DIRECT_MAX_TAPS_1D = 512
DIRECT_MIN_PIXELS_1D = 8


def _wide_1d_direct(geo, w_shape, isa: str) -> bool:
    """Whether a convolution of many input channels takes the direct kernel under auto: a 1-D kernel at
    stride 1 (on AVX2 a vertical one), K = C * taps at most DIRECT_MAX_TAPS_1D, at least
    DIRECT_MIN_PIXELS_1D outputs an image."""
    cg, kh, kw = w_shape[1], w_shape[2], w_shape[3]
    _, _, oh, ow = geo["out"]
    return (
        (isa == "avx512" or (isa == "avx2" and kw == 1))
        and min(kh, kw) == 1
        and max(kh, kw) > 1
        and tuple(geo["strides"]) == (1, 1)
        and cg * kh * kw <= DIRECT_MAX_TAPS_1D
        and oh * ow >= DIRECT_MIN_PIXELS_1D
    )


def _use_direct(geo, x_shape, w_shape, weight, options, winograd: bool, bf16: bool, isa: str) -> bool:
    """The option x86.direct ("auto", "on", "off") and the rule for the direct kernel (auto: at most
    DIRECT_MAX_CHANNELS input channels, DIRECT_MAX_CHANNELS_S2 for a stride-2 kernel on AVX-512, or a 1-D
    kernel (_wide_1d_direct), unless Winograd takes the
    convolution, another path is forced on, or the GEMMs run on bf16: precision="low" asked for them)."""
    choice = _choice(options, "x86.direct")
    cg, kh, kw = w_shape[1], w_shape[2], w_shape[3]
    eligible = (
        weight is not None and geo["group"] == 1 and tuple(geo["dilations"]) == (1, 1) and geo["strides"][1] in (1, 2)
    )
    if not eligible or choice == "off":
        return False
    if choice == "on":
        return True
    # another path forced on keeps its convolutions
    forced = any(_choice(options, k) == "on" for k in ("x86.winograd", "x86.conv_t"))
    limit = DIRECT_MAX_CHANNELS_1X1 if (kh, kw) == (1, 1) else DIRECT_MAX_CHANNELS
    if isa == "avx512" and (kh, kw) != (1, 1) and tuple(geo["strides"]) == (2, 2):
        limit = DIRECT_MAX_CHANNELS_S2
    return not forced and not winograd and not bf16 and (cg <= limit or _wide_1d_direct(geo, w_shape, isa))


#: A stride-2 kernel of at least 3x3 with more than DIRECT_OC_MIN_CHANNELS input channels takes, on AVX-512,
#: the direct kernel with the output channels along the vectors (csrc/conv_direct_oc_impl.h): no im2col
#: panel, and rows of 7-80 output pixels fill its tiles, where the one above runs pixels along the vectors
#: and GEMM panels leave lanes empty. On Zen 5 it took 1.1-1.7x less CPU time than the GEMM paths on YOLOv8n's
#: downsampling 3x3s and ResNet-50's stride-2 3x3s, at batch 1 and 8. With 16 input channels (16 -> 32 on
#: 160x160) the pixel-vector kernel was level at batch 1 and 1.13x faster at batch 8; on ConvNeXt-T's 2x2
#: downsampling (K = 4C, no tap read twice) the GEMM was level or faster (benchmarks/RESULTS_ZOO.md, 2026-12-08)
DIRECT_OC_STRIDES = ((2, 2),)
DIRECT_OC_MIN_CHANNELS = 16
DIRECT_OC_MIN_TAPS = 3  # kernel height and width, at least


def _use_direct_oc(geo, w_shape, weight, options, depthwise: bool, bf16: bool, isa: str) -> bool:
    """The option x86.direct_oc ("auto", "on", "off") and its rule: one group, constant weights, dilation 1;
    under auto on AVX-512 a kernel of at least DIRECT_OC_MIN_TAPS x DIRECT_OC_MIN_TAPS at a stride of
    DIRECT_OC_STRIDES, more than DIRECT_OC_MIN_CHANNELS input channels, unless another path is forced on or
    the GEMMs run on bf16."""
    choice = _choice(options, "x86.direct_oc")
    cg, kh, kw = w_shape[1], w_shape[2], w_shape[3]
    eligible = weight is not None and geo["group"] == 1 and not depthwise and tuple(geo["dilations"]) == (1, 1)
    if not eligible or choice == "off":
        return False
    if choice == "on":
        return True
    forced = any(_choice(options, k) == "on" for k in ("x86.winograd", "x86.conv_t", "x86.direct"))
    return (
        isa == "avx512"
        and not forced
        and not bf16
        and min(kh, kw) >= DIRECT_OC_MIN_TAPS
        and tuple(geo["strides"]) in DIRECT_OC_STRIDES
        and cg > DIRECT_OC_MIN_CHANNELS
    )


#: The direct kernel's AVX-512 register tile: output channels x pixels of one output row
DIRECT_TILE_AVX512 = (8, 32)
#: Below this share of that tile's lanes in use (few output channels, short output rows), a stride-1
#: convolution with constant weights runs faster as the training forward's row GEMM (ops_conv_train.py:
#: no lanes padded along the rows, an image per thread). Measured per shape on Zen 5
#: (benchmarks/RESULTS_ZOO.md, 2026-12-07): the row GEMM faster at 75 % of the lanes and below (LeNet's
#: 1->6 5x5 at 28x28: 66 %, its 6->16 at 10x10: 31 %), the direct kernel at 87 % and above (the stems).
ROWS_MAX_LANE_USE = 0.8


def direct_lane_use(o: int, ow: int) -> float:
    """The share of the AVX-512 direct tile's lanes a convolution of o output channels and rows of ow
    output pixels fills."""
    oc, px = DIRECT_TILE_AVX512
    return (o / (-(-o // oc) * oc)) * (ow / (-(-ow // px) * px))


def prefers_row_gemm(node, ins, constant_names, ctx, isa) -> bool:
    """Whether this Conv, which the direct kernel would run (option x86.direct "auto"), runs as the row GEMM
    of ops_conv_train.py instead: on AVX-512, a kernel larger than 1x1 at stride 1 with no activation or
    ReLU, its direct tile less than ROWS_MAX_LANE_USE full, and an image for every thread (the row GEMM
    splits the batch only)."""
    x_shape, w_shape = static_shape(ins[0]), static_shape(ins[1])
    if isa != "avx512" or len(x_shape) != 4 or len(w_shape) != 4 or tuple(w_shape[2:]) == (1, 1):
        return False
    if node.attrs.get("activation", "none") not in ("none", "relu"):
        return False
    if _choice(getattr(ctx, "options", None), "x86.direct") != "auto":
        return False
    p = _setup_before_prepare(node, ins, constant_names, ctx, isa)
    if not p["direct"] or (p["sh"], p["sw"]) != (1, 1) or p["N"] < max(ctx.threads, 1):
        return False
    if p["C"] > DIRECT_MAX_CHANNELS:  # a 1-D kernel of many channels (_wide_1d_direct): its rows run as one
        return False
    return direct_lane_use(p["O"], p["OW"]) < ROWS_MAX_LANE_USE


#: A 1x1 convolution writing NC16 stores its output around the caches (streaming stores) when the
#: output is at least this fraction of the L3 cache: a tensor that large (MobileNetV2's 112x112 and 56x56
#: expansions at batch 8: 38 and 14 MB) would evict itself before its consumer reads it, and a plain store
#: first reads each line it writes. Measured on Zen 4 with a 32 MB L3 (RESULTS.md, "streaming stores"):
#: 5.3 -> 4.6 ms on the 38 MB layer, 2.5 -> 2.2 ms on the 14 MB ones; below a quarter of L3 it did not pay.
STREAM_MIN_L3_FRACTION = 0.25


def _use_stream(out_bytes: int, options) -> bool:
    """The option x86.stream ("auto", "on", "off"): whether the pointwise kernel's NC16 output is
    written by streaming stores (auto: outputs of at least STREAM_MIN_L3_FRACTION of the L3 cache)."""
    choice = _choice(options, "x86.stream")
    if choice != "auto":
        return choice == "on"
    return out_bytes >= STREAM_MIN_L3_FRACTION * l3_cache_bytes()


def _transposed_choice(options):
    """The option x86.conv_t: "auto" (None: the lane rule in _x86.pyx decides), "on" or "off" (for
    a constant-weight, one-group, non-depthwise, non-Winograd convolution)."""
    choice = _choice(options, "x86.conv_t")
    return None if choice == "auto" else choice == "on"


#: the AVX-512 tile's rows _stride2_transposed was measured with (isa_avx512_t14.c, Zen 5's)
STRIDE2_TRANSPOSED_MR = 14


def _stride2_transposed(geo, w_shape, isa: str) -> bool | None:
    """True for a stride-2 kernel larger than 1x1 on AVX-512's 14-row tile that fills at least as many of the register
    tile's lanes transposed as in the usual orientation, within the lane rule's bounds on pixels and taps;
    else None (the lane rule of _x86_conv.pxi decides, which asks for TRANSPOSED_IM2COL_MIN_GAIN, 4 % more
    lanes). Both orientations copy the input (im2col), so at stride 2 even lanes pay: on Zen 5, 48 -> 96
    and 80 -> 80 on 40x40 and 128 -> 256 on 20x20 (1.005-1.04 the lanes) ran 1.24-1.35x faster transposed
    at batch 8, and from 0.96x to 1.24x at batch 1 (benchmarks/RESULTS_ZOO.md, 2026-12-07)."""
    o, cg, kh, kw = w_shape
    if isa != "avx512" or _x86 is None or (kh, kw) == (1, 1) or tuple(geo["strides"]) != (2, 2):
        return None
    t = _x86.table_info(isa)
    if t["mr"] != STRIDE2_TRANSPOSED_MR:
        return None
    pixels, taps = geo["out"][2] * geo["out"][3], cg * kh * kw
    if not 0 < pixels <= _x86.TRANSPOSED_MAX_PIXELS or (
        pixels > _x86.TRANSPOSED_SMALL_PIXELS and taps < _x86.TRANSPOSED_LONG_K
    ):
        return None
    usual = _x86._lanes_used(o, t["mr"]) * _x86._lanes_used(pixels, t["nr"], t["vlen"])
    swapped = _x86._lanes_used(pixels, t["mr"]) * _x86._lanes_used(o, t["nr"], t["vlen"])
    return True if swapped >= usual else None


def _conv_setup(node, ins, outs, constants, ctx, isa):
    """The parameters _x86.conv takes for this Conv (p, its weight and bias, whether it has a bias)."""
    x_shape, w_shape = static_shape(ins[0]), static_shape(ins[1])
    geo = conv_geometry(x_shape, w_shape, node.attrs)
    c, o = x_shape[1], w_shape[0]
    act, act_alpha, act_beta = fused_activation(node.attrs)
    depthwise = geo["group"] == c and o == c  # one filter per channel
    p = dict(
        conv_params(x_shape, w_shape, geo), depthwise=int(depthwise), act=act, act_alpha=act_alpha, act_beta=act_beta
    )
    if depthwise:
        p["C"] = c  # the depthwise kernel walks all C planes
    has_bias = len(node.inputs) > 2 and bool(node.inputs[2])
    weight = constants.get(node.inputs[1])
    bias = constants.get(node.inputs[2]) if has_bias else None
    options = getattr(ctx, "options", None)
    p["winograd"] = use_winograd(geo, x_shape, w_shape, weight, options)
    p["transposed"] = _transposed_choice(options)
    if p["transposed"] is None:
        p["transposed"] = _stride2_transposed(geo, w_shape, isa)
    p["bf16"] = use_bf16(ctx, isa)  # precision="low": the GEMMs on bf16 (precision.py)
    p["direct"] = _use_direct(geo, x_shape, w_shape, weight, options, p["winograd"], p["bf16"], isa) and not depthwise
    # x86.direct_oc=on wins over Winograd too (under auto they never meet: Winograd is stride 1)
    # NC16 sides (layouts.py chose them): the depthwise and the pointwise kernels read/write them
    p["in_nc16"], p["out_nc16"] = int(ins[0].layout == NC16), int(outs[0].layout == NC16)
    # layouts.py gives NC16 sides to a convolution of this kernel knowing nothing of bf16
    blocked = p["in_nc16"] or p["out_nc16"]
    p["direct_oc"] = _use_direct_oc(geo, w_shape, weight, options, depthwise, p["bf16"] and not blocked, isa)
    if p["direct_oc"]:
        p["direct"] = p["winograd"] = False
    p["bf16_winograd"] = p["bf16"] and winograd_bf16(ctx)
    # only the pointwise kernel (an NC16 1x1) streams its stores: its output vectors are whole blocks
    p["out_stream"] = int(p["out_nc16"] and not depthwise and _use_stream(nc16_nbytes(outs[0]), options))
    return p, weight, bias, has_bias


def _setup_before_prepare(node, ins, constant_names, ctx, isa) -> dict:
    """_conv_setup's p for this Conv, its output dense, knowing only which inputs are constants (all
    the choices need of them): what fuse.py asks before prepare."""
    x_shape, w_shape = static_shape(ins[0]), static_shape(ins[1])
    out = TensorInfo(conv_geometry(x_shape, w_shape, node.attrs)["out"], "float32")
    known = {n: True for n in node.inputs[1:] if n in constant_names}
    return _conv_setup(node, ins, [out], known, ctx, isa)[0]


def _fused_conv_setup(node, ins, constants, ctx, isa):
    """A fused op's Conv (its attrs under "conv"): its output's TensorInfo and _conv_setup's
    (p, weight, bias, has_bias)."""
    conv = Node("Conv", list(node.inputs), ["conv"], node.attrs["conv"], node.name)
    conv_out = TensorInfo(conv_geometry(static_shape(ins[0]), static_shape(ins[1]), conv.attrs)["out"], "float32")
    return conv_out, _conv_setup(conv, ins, [conv_out], constants, ctx, isa)


def runs_direct(node, ins, constant_names, ctx, isa) -> bool:
    """Whether this Conv, its output dense, runs by the direct kernel (fuse.py asks, before prepare)."""
    p = _setup_before_prepare(node, ins, constant_names, ctx, isa)
    # _use_direct holds _x86.conv's conditions (constant weights, one group, ...)
    return bool(p["direct"]) and not prefers_row_gemm(node, ins, constant_names, ctx, isa)


@kernel("Conv", supports=_supports, efficiency=0.6)
def prepare_conv(node, ins, outs, constants, ctx, isa):
    rank = len(static_shape(ins[0]))
    if rank == 5:  # 3-D: im2col and the GEMM in the spatial module
        return prepare_conv3d(node, ins, outs, constants, ctx, isa)
    if rank == 3:  # 1-D (audio encoders): the 2-D convolution of a plane one row high
        node, ins, outs, constants = lift_1d(node, ins, outs, constants)
    p, weight, bias, has_bias = _conv_setup(node, ins, outs, constants, ctx, isa)
    return _x86.conv(isa, ctx.threads, p, weight, bias, 1, 2 if has_bias else -1)


@kernel(CONV_MAXPOOL)
def prepare_conv_maxpool(node, ins, outs, constants, ctx, isa):
    """x86.ConvMaxPool (fuse.py): a Conv the direct kernel runs, then a MaxPool of its output; the
    node's attrs hold each one's ("conv", "pool")."""
    conv_out, (p, weight, bias, has_bias) = _fused_conv_setup(node, ins, constants, ctx, isa)
    geo = pool_geometry(conv_out.shape, node.attrs["pool"], "MaxPool")
    p["pool"] = pool_params(conv_out.shape, geo)
    if tuple(geo["out"]) != tuple(outs[0].shape) or not p["direct"]:
        raise BackendError(
            f"x86: {node.name} is not a convolution by the direct kernel and a max pooling of "
            "its output (mnn_x86/fuse.py should not have fused them)"
        )
    return _x86.conv(isa, ctx.threads, p, weight, bias, 1, 2 if has_bias else -1)


def runs_plain_gemm_1x1(node, ins, constant_names, ctx, isa) -> bool:
    """Whether this Conv is a 1x1 (stride 1, no padding, one group) with constant weights that a GEMM
    would run in fp32 (not the direct kernel, not on bf16), in either orientation: what
    x86.ConvGlobalAvgPool runs (fuse.py asks, before prepare)."""
    x_shape, w_shape = static_shape(ins[0]), static_shape(ins[1])
    geo = conv_geometry(x_shape, w_shape, node.attrs)
    if (
        tuple(w_shape[2:]) != (1, 1)
        or geo["group"] != 1
        or tuple(geo["strides"]) != (1, 1)
        or any(geo["pads"])
        or node.inputs[1] not in constant_names
    ):
        return False
    p = _setup_before_prepare(node, ins, constant_names, ctx, isa)
    return not (p["direct"] or p["bf16"] or p["depthwise"])


@kernel(CONV_ADD)
def prepare_conv_add(node, ins, outs, constants, ctx, isa):
    """x86.ConvAdd (fuse.py): a Conv with no activation of its own (its attrs under "conv", its inputs
    all but the last), plus the last input (a residual of its output's shape and layout), then the
    node's own activation. The pointwise kernel (a 1x1 with an NC16 side) adds the residual in
    registers; any other path adds it in a pass after (csrc/op_conv.c: x86_conv_run)."""
    conv, res = fused_conv(node), ins[-1]
    p, weight, bias, has_bias = _conv_setup(conv, ins[:-1], outs, constants, ctx, isa)
    conv_out = conv_geometry(static_shape(ins[0]), static_shape(ins[1]), conv.attrs)["out"]
    if (
        tuple(outs[0].shape) != tuple(conv_out)
        or tuple(res.shape) != tuple(conv_out)
        or res.dtype != "float32"
        or res.layout != outs[0].layout
        or p["act"]
    ):
        raise BackendError(
            f"x86: {node.name} is not a convolution with no activation and the Add of a tensor of "
            "its output's shape and layout (mnn_x86/fuse.py should not have fused them)"
        )
    act, act_alpha, act_beta = fused_activation(node.attrs)
    p.update(act=act, act_alpha=act_alpha, act_beta=act_beta, res=len(node.inputs) - 1)
    return _x86.conv(isa, ctx.threads, p, weight, bias, 1, 2 if has_bias else -1)


@kernel(CONV_GAP)
def prepare_conv_gap(node, ins, outs, constants, ctx, isa):
    """x86.ConvGlobalAvgPool (fuse.py): a plain 1x1 Conv, then a GlobalAveragePool of its output; the
    node's attrs hold the Conv's ("conv"). The output is the pooling's, [N, O, 1, 1], dense; the input
    may be NC16 (layouts.py)."""
    conv_out, (p, weight, bias, has_bias) = _fused_conv_setup(node, ins, constants, ctx, isa)
    if tuple(outs[0].shape) != tuple(conv_out.shape[:2]) + (1, 1) or outs[0].layout == NC16:
        raise BackendError(
            f"x86: {node.name} is not a 1x1 convolution and a global average pooling of its "
            "output (mnn_x86/fuse.py should not have fused them)"
        )
    p["gap"], p["transposed"] = 1, False
    return _x86.conv(isa, ctx.threads, p, weight, bias, 1, 2 if has_bias else -1)


@kernel(CONV_DW)
def prepare_conv_depthwise(node, ins, outs, constants, ctx, isa):
    """x86.ConvDepthwise (fuse.py): a plain 1x1 Conv (its attrs under "conv", its inputs the first
    "conv_inputs"), then a depthwise Conv of its output (attrs under "dw", its weight and bias the
    inputs after). The 1x1 writes the depthwise's padded rows in NC16, strip by strip
    (csrc/pwdw_impl.h); the input and the output may be NC16 (layouts.py)."""
    n = node.attrs["conv_inputs"]
    conv_part = Node(CONV_DW, list(node.inputs[:n]), list(node.outputs), node.attrs, node.name)
    mid, (p, weight, bias, has_bias) = _fused_conv_setup(conv_part, ins[:n], constants, ctx, isa)
    dw = Node("Conv", ["expanded", *node.inputs[n:]], list(node.outputs), node.attrs["dw"], node.name)
    q, dw_weight, dw_bias, _ = _conv_setup(dw, [mid, *ins[n:]], outs, constants, ctx, isa)
    plain = (p["kh"], p["kw"], p["sh"], p["sw"], p["pt"], p["pl"], p["group"]) == (1, 1, 1, 1, 0, 0, 1)
    out = conv_geometry(mid.shape, static_shape(ins[n]), dw.attrs)["out"]
    if not plain or weight is None or not q["depthwise"] or dw_weight is None or tuple(out) != tuple(outs[0].shape):
        raise BackendError(
            f"x86: {node.name} is not a plain 1x1 convolution and a depthwise convolution of its "
            "output, both with constant weights (mnn_x86/fuse.py should not have fused them)"
        )
    q.update(weight=dw_weight, bias=dw_bias)
    p.update(pwdw=q, out_nc16=1, out_stream=0, transposed=False, winograd=False, bf16=False, direct=False)
    ex = _x86.conv(isa, ctx.threads, p, weight, bias, 1, 2 if has_bias else -1)
    ex.packed += tuple(range(n, len(node.inputs)))  # the depthwise's weight and bias, copied too
    return ex


@kernel(CONV_DW_NHWC)
def prepare_depthwise_nhwc(node, ins, outs, constants, ctx, isa):
    """x86.DepthwiseNHWC (fuse.py): a depthwise Conv (its attrs under "conv") whose output is written
    channels-last, [N, OH, OW, C], as the Transpose (0, 2, 3, 1) after it would have laid it out: the
    channels-last depthwise kernel stores its pixels' channel vectors there instead of transposing them
    back to planes (csrc/depthwise_cl_impl.h); its input is dense NCHW."""
    conv_out, (p, weight, bias, has_bias) = _fused_conv_setup(node, ins, constants, ctx, isa)
    n, c, oh, ow = conv_out.shape
    if not p["depthwise"] or p["in_nc16"] or tuple(outs[0].shape) != (n, oh, ow, c) or outs[0].layout == NC16:
        raise BackendError(
            f"x86: {node.name} is not a depthwise convolution of a dense input and the transpose of its "
            "output to channels-last (mnn_x86/fuse.py should not have fused them)"
        )
    p.update(out_cl=1, out_nc16=0, out_stream=0)
    return _x86.conv(isa, ctx.threads, p, weight, bias, 1, 2 if has_bias else -1)
