"""Which of its placed ops mnn-x86 runs as one (Backend.fuse; the core's side is mnn_core/runtime/fusion.py).

- A convolution the direct kernel runs (the stems: few input channels) and the max pooling that
  alone reads its output, when that pooling is 2 or 3 wide at stride 2 across with dilation 1
  (SqueezeNet's and ResNet-18's 3x3/2): one op, x86.ConvMaxPool (ops_conv.py), that computes the
  convolution band by band and pools each band while it is in cache (csrc/conv_direct_impl.h), so
  the convolution's output (3.2 MB for those stems) is never written out and read back.
- A plain 1x1 convolution the GEMM runs in fp32 and the global average pooling that alone reads its
  output: one op, x86.ConvGlobalAvgPool, whose register tiles take the pixels as rows and add their
  activated rows into the channels' sums (csrc/conv_gap_impl.h), so the convolution's output is never
  stored. SqueezeNet's classifier (512 -> 1000 on 13x13) and MobileNetV2's last 1x1 (320 -> 1280 on
  7x7) no longer write their output and read it back.
- A plain 1x1 convolution with no activation whose output alone an Add reads, adding a tensor of its
  shape (a residual: MobileNetV2's projections and their shortcuts), and the activation that alone
  reads the sum, if any (ResNet-50's bottlenecks end in one): one op, x86.ConvAdd, when the session
  offers NC16 (layouts.py): the pointwise kernel adds the residual in registers, before the activation
  and the store (csrc/pointwise_impl.h), so the sum is not a second pass over both tensors.

- A plain 1x1 convolution (fp32, constant weights) and the depthwise convolution with constant weights
  that alone reads its output, where that output is at least PWDW_MIN_BYTES and the session offers
  NC16: one op, x86.ConvDepthwise, which computes the 1x1 strip by strip into a scratch laid out for
  the depthwise and runs the depthwise on it while it is in L2 (csrc/pwdw_impl.h), so the expanded
  tensor (MobileNetV2's: 4.8 MB at 112x112, 1.8 MB at 56x56) is never stored and read back.

- A depthwise convolution and the Transpose to channels-last (perm 0, 2, 3, 1) that alone reads its
  output (ConvNeXt's depthwise 7x7 and its permute before the LayerNorm): one op, x86.DepthwiseNHWC,
  whose channels-last kernel stores each pixel's channel vector where the transpose would have put
  it (csrc/depthwise_cl_impl.h), instead of transposing its results back to planes for the Transpose
  to transpose them again.

- MatMul(Q, K^T), its scale, a mask the same for every query row, Softmax over the keys and the MatMul
  by V: one op, x86.Attention (ops_attention.py), block by block of query rows, so the scores
  (M x N per head: 54 MB a layer for a Whisper encoder's 1500 frames) never leave the cache.

- A MatMul, the Add of a constant bias row and the activation that alone reads the sum, if any: one op,
  x86.MatMulBias (ops_matmul.py), bias and activation in the GEMM's epilogue.

The scalar kernels have no fused op (their pooling has no stride-2 register path), so under
x86.isa="scalar" nothing is fused. `Session(fuse=False)` turns fusions off.
"""

from __future__ import annotations

from mnn_core.backend import Fusion
from mnn_core.backend.kit.epilogue import activation_attrs
from mnn_core.backend.kit.geometry import pool_geometry
from mnn_core.graph.ir import Node

from . import layouts as _layouts
from ._common import CONV_ADD, CONV_DW
from .ops_attention import attention_fusion
from .ops_conv import CONV_DW_NHWC, CONV_GAP, CONV_MAXPOOL, runs_direct, runs_plain_gemm_1x1
from .ops_matmul import bias_fusion


def _pooled_plane(pool: Node, op: str, infos):
    """The input's TensorInfo where `pool` is an `op` of one output over a static NCHW float32
    tensor (what both fused kernels read), else None."""
    x = infos.get(pool.inputs[0])
    if pool.op != op or len(pool.outputs) != 1 or x is None or len(x.shape) != 4:
        return None
    return x if x.dtype == "float32" and x.is_static else None


def _stride2_maxpool(pool: Node, infos) -> bool:
    """A MaxPool the fused kernel takes: NCHW float32, dilation 1, stride 2 across, 2 or 3 wide, and
    padding thinner than the window (every window holds an input row)."""
    x = _pooled_plane(pool, "MaxPool", infos)
    if x is None:
        return False
    try:
        geo = pool_geometry(tuple(int(d) for d in x.shape), pool.attrs, "MaxPool")
    except Exception:  # noqa: BLE001 - a malformed pooling is the schema's to report at prepare, unfused
        return False
    (kh, kw), (_, sw), dil = geo["kernel"], geo["strides"], tuple(geo["dilations"])
    pt, _, pb, _ = geo["pads"]
    return dil == (1, 1) and sw == 2 and kw in (2, 3) and max(pt, pb) < kh


def _global_avgpool(pool: Node, infos) -> bool:
    """A GlobalAveragePool of an NCHW float32 plane (never empty: Conv's shape inference refuses a
    kernel larger than its padded input)."""
    return _pooled_plane(pool, "GlobalAveragePool", infos) is not None


def _residual(conv: Node, add: Node, infos) -> str | None:
    """The value `add` adds to the conv's output when it is a 4-D float32 tensor of that output's
    static shape (no broadcasting), else None."""
    y = conv.outputs[0]
    if add.op != "Add" or len(add.inputs) != 2 or len(add.outputs) != 1 or add.inputs.count(y) != 1:
        return None
    res = add.inputs[1 - add.inputs.index(y)]
    a, b = infos.get(y), infos.get(res)
    same = a is not None and b is not None and a.is_static and b.is_static and len(a.shape) == 4
    return res if same and tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype == "float32" else None


def _conv_add(conv: Node, add: Node, offer, ctx, isa: str) -> Fusion | None:
    """x86.ConvAdd of `conv`, the Add that alone reads it and the activation that alone reads the sum
    (if any): where the conv is a plain 1x1 with no activation that the pointwise kernel can run (the
    session offers NC16)."""
    res = _residual(conv, add, offer.infos)
    if (
        res is None
        or conv.attrs.get("activation", "none") != "none"
        or not _layouts.offered(ctx, isa)
        or _layouts.conv_kind(conv, offer.infos, offer.constants) != "1x1"
    ):
        return None
    act = offer.sole_reader(add.outputs[0])
    act_attrs = activation_attrs(act)
    group = (conv, add, act) if act_attrs else (conv, add)
    node = Node(
        CONV_ADD,
        [*conv.inputs, res],
        [group[-1].outputs[0]],
        {"conv": dict(conv.attrs), **(act_attrs or {})},
        "+".join(n.name for n in group),
    )
    return Fusion(node, tuple(n.name for n in group), "the residual added in registers")


#: x86.ConvDepthwise only where the 1x1's output is at least this large: smaller ones stay in L2
#: between the two kernels anyway
PWDW_MIN_BYTES = 1 << 20


def _conv_depthwise(conv: Node, dw: Node, offer, ctx, isa: str) -> Fusion | None:
    """x86.ConvDepthwise of `conv` and the depthwise Conv `dw` that alone reads it: where the conv is a
    plain fp32 1x1 the pointwise kernel runs (the session offers NC16), dw's weights (and bias) are
    constants, and the 1x1's output is at least PWDW_MIN_BYTES."""
    infos, constants = offer.infos, offer.constants
    mid = infos.get(conv.outputs[0])
    if (
        dw.op != "Conv"
        or dw.inputs[0] != conv.outputs[0]
        or len(dw.outputs) != 1
        or mid is None
        or not mid.is_static
        or not _layouts.offered(ctx, isa)
        or _layouts.conv_kind(conv, infos, constants) != "1x1"
        or _layouts.conv_kind(dw, infos, constants) != "depthwise"
        or not all(v in constants for v in dw.inputs[1:] if v)
        or mid.size * 4 < PWDW_MIN_BYTES
    ):
        return None
    attrs = {"conv": dict(conv.attrs), "dw": dict(dw.attrs), "conv_inputs": len(conv.inputs)}
    node = Node(CONV_DW, [*conv.inputs, *dw.inputs[1:]], [dw.outputs[0]], attrs, f"{conv.name}+{dw.name}")
    return Fusion(node, (conv.name, dw.name), "the expanded rows kept in L2")


def _depthwise_nhwc(conv: Node, transpose: Node, infos) -> Fusion | None:
    """x86.DepthwiseNHWC of the depthwise `conv` (a 4-D float32 input of static shape) and the
    Transpose (0, 2, 3, 1) that alone reads its output."""
    x = infos.get(conv.inputs[0])
    if (
        transpose.op != "Transpose"
        or len(transpose.outputs) != 1
        or list(transpose.attrs.get("perm", [])) != [0, 2, 3, 1]
        or x is None
        or len(x.shape) != 4
        or x.dtype != "float32"
        or not x.is_static
        or _layouts.conv_kind(conv, infos, {}) != "depthwise"
    ):
        return None
    attrs = {"conv": dict(conv.attrs)}
    node = Node(CONV_DW_NHWC, list(conv.inputs), [transpose.outputs[0]], attrs, f"{conv.name}+{transpose.name}")
    return Fusion(node, (conv.name, transpose.name), "the pixels written channels-last")


def fusions(offer, ctx, isa: str) -> list[Fusion]:
    if isa == "scalar":
        return []
    found, claimed = [], set()

    def keep(fusion: Fusion) -> None:  # two convolutions may read into one Add: the first claims it
        if claimed.isdisjoint(fusion.replaces):
            claimed.update(fusion.replaces)
            found.append(fusion)

    for node in offer.nodes:
        if fusion := attention_fusion(node, offer):
            keep(fusion)
    for node in offer.nodes:
        if fusion := bias_fusion(node, offer, activation_attrs):
            keep(fusion)
    for conv in offer.nodes:
        if conv.op != "Conv" or len(conv.outputs) != 1:
            continue
        reader = offer.sole_reader(conv.outputs[0])
        if reader is None:
            continue
        ins = [offer.infos[n] if n else None for n in conv.inputs]
        if _stride2_maxpool(reader, offer.infos) and runs_direct(conv, ins, offer.constants, ctx, isa):
            op, why = CONV_MAXPOOL, "pooled band by band, in cache"
            attrs = {"conv": dict(conv.attrs), "pool": dict(reader.attrs)}
        elif _global_avgpool(reader, offer.infos) and runs_plain_gemm_1x1(conv, ins, offer.constants, ctx, isa):
            op, why, attrs = CONV_GAP, "averaged in registers", {"conv": dict(conv.attrs)}
        else:
            if fusion := (
                _conv_depthwise(conv, reader, offer, ctx, isa)
                or _conv_add(conv, reader, offer, ctx, isa)
                or _depthwise_nhwc(conv, reader, offer.infos)
            ):
                keep(fusion)
            continue
        node = Node(op, list(conv.inputs), [reader.outputs[0]], attrs, f"{conv.name}+{reader.name}")
        keep(Fusion(node, (conv.name, reader.name), why))
    return found
