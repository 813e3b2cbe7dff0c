"""The NC16 layout: which tensors mnn-x86 keeps channel-blocked between its own kernels.

NC16 (csrc/x86.h, X86_LAYOUT_NC16) stores a 4-D float32 tensor as [N][ceil(C/16)][H][W][16]: a
pixel's 16 channels of a block side by side, one AVX-512 vector. The padding lanes of a last
partial block are don't-care. Between a depthwise convolution and a 1x1 one (MobileNetV2's
inverted residual blocks) this spares the depthwise kernel its transposes into and out of its
channels-last scratch and the 1x1 its packing of X^T: each reads and writes the blocks as they are.

The core offers every tensor that never leaves the backend (Backend.tensor_layouts); one is kept in NC16 when
its producer can write NC16 and every consumer can read it (a depthwise or plain 1x1 convolution with constant
weights, also as x86.ConvAdd, or as x86.ConvGlobalAvgPool, which reads it only; a strided 1x1 whose taps reach
no padding, as ResNet's downsampling shortcuts; a 3x3 convolution Winograd runs; one the output-channel direct
kernel runs (ResNet's stride-2 3x3s); a MaxPool or AveragePool; a Concat along the channels whose inputs but
the last fill whole blocks; Add of two same-shape tensors; an activation), and when the sides that must agree
do: the element-wise ops' inputs and output (they walk the blocks as flat arrays), x86.ConvAdd's residual and
output, a pooling's and a Concat's inputs and output, and a Winograd convolution's input and output (measured:
one NC16 side against a dense one lost). So SqueezeNet's fire modules run on blocks from the first squeeze to
the classifier: at batch 1 each Concat is its inputs written in place (concat_in_place). Everything else stays
dense NCHW; a depthwise or 1x1 convolution with one NC16 side converts on the other as it reads or writes.

The session option ``x86.layouts`` ("auto", "on", "off"; else the environment variable
MNN_X86_LAYOUTS) decides whether any tensor is offered NC16:
"auto" chooses it under the AVX-512 kernels only, where a block is one vector and it was measured to
pay (benchmarks/RESULTS.md); the AVX2 and scalar kernels read and write it correctly (two 8-lane
halves, sixteen single lanes of a block) and "on" turns it on there, for tests and measurements.
"""

from __future__ import annotations

import math
import os

import numpy as np

from mnn_core.backend.kit.geometry import conv_geometry
from mnn_core.errors import BackendError
from mnn_core.graph.ir import Node

from ._common import CONV_ADD, CONV_DW, CONV_GAP
from .precision import use_bf16

#: the layout code, as X86_LAYOUT_NC16 in csrc/x86.h
NC16 = 1
BLOCK = 16
OPTION = "x86.layouts"
ENV_VAR = "MNN_X86_LAYOUTS"
#: ISA levels "auto" chooses NC16 under
AUTO_ISAS = ("avx512",)
_ELEMENTWISE = ("Add", "Relu", "Clip")


def enabled(options, isa: str) -> bool:
    """Whether this session keeps any tensor in NC16: the option x86.layouts, else the environment
    variable MNN_X86_LAYOUTS (for benchmark scripts that run sessions in subprocesses), else auto."""
    value = (options or {}).get(OPTION)
    source = f"option {OPTION}"
    if value is None or not str(value).strip():
        value, source = os.environ.get(ENV_VAR, "") or "auto", ENV_VAR
    choice = str(value).strip().lower()
    if choice not in ("auto", "on", "off"):
        raise BackendError(f"x86: {source}={value!r}; use 'auto', 'on' or 'off'")
    return choice == "on" or (choice == "auto" and isa in AUTO_ISAS)


def offered(ctx, isa: str) -> bool:
    """Whether this session offers NC16 at all: enabled(), unless precision="low" runs bf16 GEMMs,
    which read dense NCHW (NC16 would send the 1x1s to the fp32 pointwise kernel) and "on" was not
    asked for."""
    options = getattr(ctx, "options", None) or {}
    if use_bf16(ctx, isa) and str(options.get(OPTION, "")).lower() != "on":
        return False
    return enabled(options, isa)


def channels(c: int) -> int:
    """Channels as an NC16 tensor stores them: rounded up to whole blocks (x86.h: x86_nc16_channels)."""
    return math.ceil(int(c) / BLOCK) * BLOCK


def nbytes(info) -> int:
    """Bytes of a tensor in NC16: its channels rounded up to whole blocks."""
    n, c, h, w = (int(d) for d in info.shape)
    return n * channels(c) * h * w * np.dtype(info.dtype).itemsize


def whole_blocks(parts, axis: int) -> bool:
    """Whether NC16 tensors (TensorInfos) concatenated along `axis` lie end to end in each image of
    the output: along the channels, every one but the last fills whole blocks."""
    return axis == 1 and all(int(p.shape[1]) % BLOCK == 0 for p in parts[:-1])


def _is_4d_float(info) -> bool:
    return info is not None and len(info.shape) == 4 and info.dtype == "float32" and info.is_static


def fused_conv(node: Node) -> Node:
    """The convolution of x86.ConvAdd (its inputs but the residual) or x86.ConvGlobalAvgPool (its
    attrs under "conv"), or `node`."""
    if node.op in (CONV_ADD, CONV_GAP):
        inputs = node.inputs[:-1] if node.op == CONV_ADD else node.inputs
        return Node("Conv", list(inputs), list(node.outputs), node.attrs["conv"], node.name)
    return node


def conv_kind(node, infos, constants, options=None, isa: str | None = None) -> str | None:
    """The kernel that takes this Conv's (or x86.ConvAdd's) NC16 sides: "depthwise" (x86.h: x86_dw_channels_last),
    "1x1" (pointwise_impl.h: stride 1, no padding, one group, constant weights), "1x1s" (the same at a stride:
    op_conv.c gathers the pixels it reads first) or "winograd" (a 3x3 the session's options give Winograd:
    winograd_impl.h transforms blocks along their channels); "direct_oc" (one the options give the
    output-channel direct kernel under `isa`: conv_direct_oc_impl.h broadcasts from either layout and stores
    either); "gap" for x86.ConvGlobalAvgPool of such a 1x1 (conv_gap_impl.h: an NC16 input, its pooled output
    dense); "pwdw" for x86.ConvDepthwise (pwdw_impl.h: the 1x1 reads its input in either layout, the depthwise
    writes either); None if none."""
    if node.op == CONV_DW:
        return "pwdw"
    if node.op == CONV_GAP:
        return "gap" if conv_kind(fused_conv(node), infos, constants, options) == "1x1" else None
    node = fused_conv(node)
    if node.op != "Conv" or len(node.inputs) < 2:
        return None
    x, w = infos.get(node.inputs[0]), infos.get(node.inputs[1])
    if not _is_4d_float(x) or w is None or len(w.shape) != 4:
        return None
    x_shape, w_shape = tuple(int(d) for d in x.shape), tuple(int(d) for d in w.shape)
    try:
        geo = conv_geometry(x_shape, w_shape, node.attrs)
    except Exception:  # noqa: BLE001 - a malformed Conv is the schema's to report, at prepare; not ours
        return None
    o, cg, kh, kw = w_shape
    if geo["group"] == x_shape[1] == o and cg == 1:
        return "depthwise"
    plain = (kh, kw) == (1, 1) and tuple(geo["strides"]) == (1, 1) and not any(geo["pads"])
    # Every plain 1x1 takes NC16, even where its last block is mostly padding: MobileNetV2's
    # 24-channel projections (32 lanes for 24) run 1.2x slower than dense, but keeping them dense
    # leaves the depthwise before them an NC16 input and a dense output, which costs more
    # (benchmarks/RESULTS.md, x86nc16).
    bias = node.inputs[2] if len(node.inputs) > 2 else ""
    if not (node.inputs[1] in constants and (not bias or bias in constants)):
        return None
    if plain and geo["group"] == 1:
        return "1x1"
    if (kh, kw) == (1, 1) and geo["group"] == 1 and _reads_no_padding(geo, x_shape):
        return "1x1s"
    from .ops_conv import _use_direct_oc, use_winograd  # here, not at the top: ops_conv imports this module

    if isa not in (None, "scalar") and _use_direct_oc(geo, w_shape, True, options, False, False, isa):
        return "direct_oc"
    return "winograd" if use_winograd(geo, x_shape, w_shape, True, options) else None


def _reads_no_padding(geo, x_shape) -> bool:
    """Whether a 1x1 convolution's taps all fall inside its input: no leading padding, and no more
    output rows and columns than its strides find in the input (trailing padding unread)."""
    _, _, oh, ow = geo["out"]
    sh, sw = geo["strides"]
    pads = geo["pads"]
    return pads[0] == pads[1] == 0 and (oh, ow) == ((x_shape[2] - 1) // sh + 1, (x_shape[3] - 1) // sw + 1)


def _concat_of_blocks(node, infos) -> bool:
    """A Concat of 4-D float32 tensors along the channels where every input but the last fills whole
    blocks: in NC16 each input's image is then one run of the output's (csrc/op_layout.c copies the
    runs; the core writes them in place where it can: X86Backend.concat_in_place)."""
    if node.op != "Concat" or not node.inputs:
        return False
    parts = [infos.get(v) for v in node.inputs]
    if not all(_is_4d_float(i) for i in parts) or not _is_4d_float(infos.get(node.outputs[0])):
        return False
    return node.attrs.get("axis") in (1, -3) and whole_blocks(parts, 1)  # the channels of a 4-D tensor


def _pool(node, infos) -> bool:
    """A MaxPool (without indices) or AveragePool of a 4-D float32 tensor: the pooling kernel takes NC16
    on both sides (pool_impl.h: pool_nc16_rows), so its input and output are tied."""
    if node.op not in ("MaxPool", "AveragePool") or len([v for v in node.outputs if v]) != 1:
        return False
    return _is_4d_float(infos.get(node.inputs[0])) and _is_4d_float(infos.get(node.outputs[0]))


def _one_pixel_of_blocks(node, infos) -> bool:
    """A pooling (MaxPool, AveragePool, GlobalAveragePool) down to one pixel of whole blocks: its
    output, [N][C][1][1] with C a multiple of 16, is the same bytes in NC16 and dense, so its input's
    layout is free of its output's (ResNet's last average pooling reads the final blocks as they are)."""
    if node.op not in ("MaxPool", "AveragePool", "GlobalAveragePool") or len(node.outputs) != 1:
        return False
    x, y = infos.get(node.inputs[0]), infos.get(node.outputs[0])
    if not (_is_4d_float(x) and _is_4d_float(y)):
        return False
    return tuple(int(d) for d in y.shape[2:]) == (1, 1) and int(x.shape[1]) % BLOCK == 0


def concat_in_place(out, parts, axis: int) -> bool:
    """Whether NC16 inputs laid end to end are their Concat's NC16 output (X86Backend.concat_in_place):
    along the channels of one image, every input but the last whole blocks."""
    tensors = [out, *parts]
    return (
        all(t.layout == NC16 and _is_4d_float(t) for t in tensors)
        and int(out.shape[0]) == 1
        and whole_blocks(parts, axis)
    )


def _elementwise(node, infos) -> bool:
    """An element-wise op that can walk NC16 blocks: its float inputs all of the output's shape."""
    if node.op not in _ELEMENTWISE:
        return False
    out = infos.get(node.outputs[0])
    if not _is_4d_float(out):
        return False
    data = node.inputs[:2] if node.op == "Add" else node.inputs[:1]
    return all(infos.get(v) is not None and tuple(infos[v].shape) == tuple(out.shape) for v in data)


def _tied(node, infos, constants, options, isa) -> list[str]:
    """The values that must share one layout: an element-wise op's data inputs and output, x86.ConvAdd's
    residual and output (both walked by the same offsets), a Concat's or a pooling's inputs and output;
    a Winograd convolution's input and output too, though its kernel reads and writes either layout:
    an NC16 input and a dense output took its transposed output transform, 4 floats a store, which ran
    ResNet-18's 56x56 layers 1.36x slower; none for other ops."""
    if node.op == CONV_ADD:
        return [node.inputs[-1], node.outputs[0]]
    if conv_kind(node, infos, constants, options, isa) == "winograd":
        return [node.inputs[0], node.outputs[0]]
    if _concat_of_blocks(node, infos):
        return [*node.inputs, node.outputs[0]]
    if _pool(node, infos) and not _one_pixel_of_blocks(node, infos):
        return [node.inputs[0], node.outputs[0]]
    if _elementwise(node, infos):
        return [*node.inputs[: 2 if node.op == "Add" else 1], node.outputs[0]]
    return []


def _writes(node, infos, constants, options, isa) -> bool:
    kind = conv_kind(node, infos, constants, options, isa)
    return (
        kind in ("depthwise", "1x1", "1x1s", "winograd", "direct_oc", "pwdw")
        or _elementwise(node, infos)
        or _concat_of_blocks(node, infos)
        or _pool(node, infos)
    )


def _reads(node, index, infos, constants, options, isa) -> bool:
    kind = conv_kind(node, infos, constants, options, isa)
    if kind is not None:  # x86.ConvAdd's residual: in its output's layout, which a 1x1 may write NC16
        return index == 0 or (node.op == CONV_ADD and kind in ("1x1", "1x1s") and index == len(node.inputs) - 1)
    if _concat_of_blocks(node, infos):
        return True
    if _pool(node, infos) or _one_pixel_of_blocks(node, infos):
        return index == 0
    return _elementwise(node, infos) and index < (2 if node.op == "Add" else 1)


def choose(candidates, options, isa: str) -> dict[str, int]:
    """{value: NC16} for the candidates whose producer and consumers all take NC16, with every
    element-wise op's data inputs and output in one layout."""
    if not enabled(options, isa) or not candidates:
        return {}
    infos, constants = candidates[0].infos, candidates[0].constants
    chosen = {
        c.value
        for c in candidates
        if _is_4d_float(c.info)
        and _writes(c.producer, infos, constants, options, isa)
        and all(_reads(node, i, infos, constants, options, isa) for node, i in c.consumers)
    }
    ops = {id(c.producer): c.producer for c in candidates}
    ops.update({id(node): node for c in candidates for node, _ in c.consumers})
    tied = [sides for sides in (_tied(node, infos, constants, options, isa) for node in ops.values()) if sides]
    changed = True
    while changed:  # an element-wise op with a dense side makes all its sides dense
        changed = False
        for sides in tied:
            if any(v in chosen for v in sides) and not all(v in chosen for v in sides):
                chosen.difference_update(sides)
                changed = True
    return {v: NC16 for v in chosen}
