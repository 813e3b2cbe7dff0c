"""Ops that are one dispatch of a shared shader (kit/shaders), recorded the same way on every API
that runs those shaders (mnn-vulkan, and mnn-metal through MSL made from them): the bindings,
parameter bytes and grid follow from the op and the shader alone. `rec` is a SegmentRecorder; each
`record_*` takes (op, rec) like a KernelTable entry, each `*_supports` takes (node, inputs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .codes import BINARY, unary_code
from .layout import broadcast_plan, concat_copies
from .params import ConvPlan, binary_params, conv_plan, pack, pad_params, pool_params, reduce_params
from .recorder import MAX_GROUPS, Binding, SegmentRecorder, copy_words, record_copy, row_groups

if TYPE_CHECKING:
    from ...graph.ir import Node, TensorInfo
    from ..api import SegmentOp

#: dtypes a copy of 32-bit words moves (copy.comp), and those the views move as whole words of bytes
WORDS = ("float32", "int32", "int64")
BYTES = ("bool", "uint8", "int8")
NO_ACTIVATION = (0, 0.0, 0.0)


#: broadcast dims the shaders index (binary.comp, compare.comp, where.comp)
MAX_BROADCAST_DIMS = 6


def binary_supports(node: Node, ins: Sequence[TensorInfo | None]) -> bool | str:
    """The shaders index up to MAX_BROADCAST_DIMS dims once the inputs' broadcast (absent optional
    inputs left out) is collapsed."""
    shapes = [i.shape for i in ins if i is not None]
    dims, _ = broadcast_plan(tuple(np.broadcast_shapes(*shapes)), *shapes)
    if len(dims) <= MAX_BROADCAST_DIMS:
        return True
    return f"broadcast pattern needs {len(dims)} dims after collapsing (max {MAX_BROADCAST_DIMS})"


def record_binary(op: SegmentOp, rec: SegmentRecorder, act: tuple[int, float, float] = NO_ACTIVATION) -> None:
    """Float binary arithmetic with broadcasting (binary.comp), `act` applied as it writes."""
    a, b = op.inputs
    y = op.outputs[0]
    params = binary_params(BINARY[op.node.op], y.info.shape, a.info.shape, b.info.shape, act)
    rec.elementwise("binary", [rec.tensor(a), rec.tensor(b), rec.output(y)], params, y.info.size)


def record_unary(op: SegmentOp, rec: SegmentRecorder) -> None:
    """Unary math and activations (unary.comp, the codes of act.glsl)."""
    x, y = op.inputs[0], op.outputs[0]
    params = pack(y.info.size, *unary_code(op.node.op, op.node.attrs))
    rec.elementwise("unary", [rec.tensor(x), rec.output(y)], params, y.info.size)


def operand_bindings(op: SegmentOp, rec: SegmentRecorder, stand_in: int) -> list[Binding]:
    """[A, B, bias, Y] of a Gemm (stand_in 0) or Conv (stand_in 1) for gemm.comp, conv2d.comp and
    conv_dw.comp: without a bias the shader never reads binding 2, which then repeats input
    `stand_in` (a binding must name some buffer)."""
    bias = op.inputs[2] if len(op.inputs) > 2 else op.inputs[stand_in]
    return [rec.tensor(op.inputs[0]), rec.tensor(op.inputs[1]), rec.tensor(bias), rec.output(op.outputs[0])]


def conv_operands(op: SegmentOp, rec: SegmentRecorder) -> tuple[ConvPlan, list[Binding]] | None:
    """A Conv's plan and bindings [X, W, bias, Y] for the backend's GEMM paths; a depthwise Conv is
    recorded here instead (conv_dw.comp: one invocation per output) and gives None. Under float16
    storage the weights and bias are float16 in the arena too, and dispatch() picks the *_h variants."""
    p = conv_plan(op)
    bindings = operand_bindings(op, rec, stand_in=1)
    if p.depthwise:
        rec.elementwise("conv_dw", bindings, p.dw_params(), op.outputs[0].info.size)
        return None
    return p, bindings


def conv_supports(node: Node, ins: list[TensorInfo]) -> bool | str:
    """2-D convolutions, one grid layer per group."""
    if len(ins[0].shape) != 4:
        return f"2-D convolution only (NCHW input), got rank {len(ins[0].shape)}"
    groups = node.attrs.get("group", 1)
    return True if groups <= MAX_GROUPS else f"{groups} groups exceed the work-group grid"


def record_pool(op: SegmentOp, rec: SegmentRecorder) -> None:
    """MaxPool and AveragePool (pool2d.comp)."""
    x, y = op.inputs[0], op.outputs[0]
    rec.elementwise("pool2d", [rec.tensor(x), rec.output(y)], pool_params(op), y.info.size)


def pool_supports(node: Node, ins: list[TensorInfo]) -> bool | str:
    return True if len(ins[0].shape) == 4 else "2-D pooling over NCHW only"


def reduce_local(length: int) -> int:
    """Invocations of the work group that shares one reduced row of `length` elements (reduce.comp,
    argreduce.comp): what the dispatch asks for, and what a loop-pass count divides by."""
    return 64 if length <= 1024 else 256


def record_reduce(op: SegmentOp, rec: SegmentRecorder) -> None:
    """Reduce* and the global pools (reduce.comp): one work group per output element."""
    x, y = op.inputs[0], op.outputs[0]
    params, r = reduce_params(op)
    rec.dispatch("reduce", [rec.tensor(x), rec.output(y)], params, row_groups(y.info.size), (reduce_local(r), 1, 1))


def record_view(op: SegmentOp, rec: SegmentRecorder) -> None:
    """A reshape the core did not alias (it aliases most), or Identity: one flat copy."""
    x, y = op.inputs[0], op.outputs[0]
    if x.info.dtype in BYTES:  # whole words: the arena gives every tensor a multiple of 4 bytes
        record_copy(rec, rec.tensor(x), rec.output(y), (-(-x.info.nbytes // 4),), [1], [1])
        return
    record_copy(rec, rec.tensor(x), rec.output(y), (y.info.size,), [1], [1], words=copy_words(x, rec))


def record_concat(op: SegmentOp, rec: SegmentRecorder) -> None:
    """One strided copy per input into its slab of the output (copy.comp)."""
    y = op.outputs[0]
    axis = op.node.attrs["axis"] % len(y.info.shape)
    out = rec.output(y)
    for x, plan in zip(op.inputs, concat_copies(y.info.shape, [x.info.shape for x in op.inputs], axis)):
        record_copy(rec, rec.tensor(x), out, *plan, copy_words(x, rec))


def record_pad(op: SegmentOp, rec: SegmentRecorder) -> None:
    """Pad (or crop: negative pads) in four modes (pad.comp, which has no float16 variant: under
    float16 storage it runs on float32 copies)."""
    x, y = op.inputs[0], op.outputs[0]
    rec.elementwise("pad", [rec.tensor(x), rec.output(y)], pad_params(op), y.info.size)


def rank6(node: Node, ins: list[TensorInfo]) -> bool | str:
    """The copy and pad shaders index up to 6 dims."""
    return True if len(ins[0].shape) <= 6 else f"rank {len(ins[0].shape)} above 6"
