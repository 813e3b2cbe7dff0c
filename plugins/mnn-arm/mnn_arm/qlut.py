"""Float ops between a DequantizeLinear and a QuantizeLinear, run as one byte table (arm.QLinearLUT).

A post-training-quantized graph leaves the activations it has no int8 op for in float: QLinearConv ->
DequantizeLinear -> HardSwish (or Sigmoid and Mul: a SiLU) -> QuantizeLinear -> the next QLinearConv,
three passes over a float32 tensor of the activation's size. With per-tensor scales, every output byte
is a function of one input byte, so the group is 256 results: computed at prepare by the reference's
own ops (so they are the reference's results, bit for bit) and looked up 16 bytes an instruction
(csrc/qlinear.c, `tbl` / `tbx`; the kernel is ops_qlinear.py's). The group is an element-wise function
of the DequantizeLinear's output alone: its ops are element-wise, read only group values and constant
scalars, and nothing outside it reads a value it writes but the QuantizeLinear's output. Where no
QuantizeLinear ends it (an EfficientNet's SiLU feeding its squeeze-excite in float), one float32 value
read outside is the output instead: arm.DequantizeLUT, 256 float32 by input byte (looked up as four byte
tables, the four bytes of each float stored interleaved by `st4`).
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend import Fusion
from mnn_core.graph.ir import Node
from mnn_core.ops import run_reference

#: the ops of a fused group: uint8 / int8 out (it ends at a QuantizeLinear), float32 out
QLINEAR_LUT = "arm.QLinearLUT"
DEQUANTIZE_LUT = "arm.DequantizeLUT"
#: element-wise float ops a group may hold (inputs: group values or constant scalars)
ELEMENTWISE = frozenset(
    {
        "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Silu", "Gelu", "Tanh", "Elu",
        "Selu", "Softplus", "Mish", "Erf", "Exp", "Neg", "Abs", "Add", "Sub", "Mul", "Div", "Max", "Min",
    }
)  # fmt: skip
MAX_GROUP = 8


def _per_tensor_constant(offer, value: str) -> bool:
    info = offer.infos.get(value)
    return value in offer.constants and info is not None and info.is_static and all(d == 1 for d in info.shape)


def _quant_params_ok(offer, node: Node) -> bool:
    """Scale and zero point (if any) are per-tensor constants; no blocked quantization."""
    if node.attrs.get("block_size", 0) or len(node.inputs) < 2:
        return False
    return all(_per_tensor_constant(offer, v) for v in node.inputs[1:3] if v)


def _joins(offer, node: Node, written: set, size: int) -> bool:
    """An element-wise op here whose inputs are all group values or constant scalars."""
    if offer.placed.get(node.name) != offer.backend or node.op not in ELEMENTWISE or len(node.outputs) != 1:
        return False
    return size < MAX_GROUP and all(not v or v in written or _per_tensor_constant(offer, v) for v in node.inputs)


def _grow(dq: Node, offer) -> tuple[list, set, Node | None]:
    """The element-wise ops that take the DequantizeLinear's output in (until nothing more joins: an op can
    read two group values, a SiLU's Mul), and the QuantizeLinear reading one of them, if any."""
    group, written, end = [dq], set(dq.outputs), None
    grown = True
    while grown:
        grown = False
        for value in list(written):
            for reader in offer.readers.get(value, ()):
                if reader in group or reader is end:
                    continue
                if (
                    end is None
                    and reader.op == "QuantizeLinear"
                    and reader.inputs[0] == value
                    and offer.placed.get(reader.name) == offer.backend
                    and _quant_params_ok(offer, reader)
                ):
                    end, grown = reader, True
                elif _joins(offer, reader, written, len(group)):
                    group.append(reader)
                    written.update(reader.outputs)
                    grown = True
    return group, written, end


def _read_outside(offer, group: list, written: set, end: Node | None) -> list:
    """The group's values that a node outside it (or the graph's outputs) reads."""
    inside = {n.name for n in group} | ({end.name} if end is not None else set())
    return [v for v in written if v in offer.outputs or any(r.name not in inside for r in offer.readers.get(v, ()))]


def qlinear_lut(dq: Node, offer) -> Fusion | None:
    """arm.QLinearLUT from a DequantizeLinear, the element-wise float ops fed by it alone and the
    QuantizeLinear that ends them; or arm.DequantizeLUT (float32 out) where no QuantizeLinear ends them
    and one of their values is read outside; or None."""
    if dq.op != "DequantizeLinear" or not _quant_params_ok(offer, dq):
        return None
    x_info = offer.infos.get(dq.inputs[0])
    if x_info is None or x_info.dtype not in ("uint8", "int8") or not x_info.is_static:
        return None
    group, written, end = _grow(dq, offer)
    if len(group) < 2:
        return None
    exits = _read_outside(offer, group, written, end)
    if exits and end is not None:  # the QuantizeLinear stays its own op, reading the float output
        end = None
        exits = _read_outside(offer, group, written, end)
    if end is not None:
        out, op = end.outputs[0], QLINEAR_LUT
    elif len(exits) == 1 and offer.infos[exits[0]].dtype == "float32":
        out, op = exits[0], DEQUANTIZE_LUT
    else:
        return None
    if offer.infos[out].shape != x_info.shape:
        return None  # a broadcast somewhere in the group
    order = {n.name: i for i, n in enumerate(offer.nodes)}
    group = sorted(group, key=lambda n: order[n.name]) + ([end] if end is not None else [])
    inputs = list(dict.fromkeys(v for n in group for v in n.inputs if v and v not in written))
    name = "+".join(n.name for n in group)
    fused = Node(op, inputs, [out], {"group": tuple(group), "out": out}, name)
    return Fusion(fused, tuple(n.name for n in group), "one table of 256 values for the float ops")


def lut_table(node: Node, in_dtype: str, constants) -> np.ndarray:
    """The group's 256 outputs (bytes or float32), by input byte, from the reference's kernels."""
    group = node.attrs["group"]
    ramp = np.arange(256, dtype=np.uint8).view(np.dtype(in_dtype))
    values = {group[0].inputs[0]: ramp}
    for n in group:
        ins = [None if not v else (values[v] if v in values else np.asarray(constants[v])) for v in n.inputs]
        for v, out in zip(n.outputs, run_reference(n.op, ins, dict(n.attrs))):
            values[v] = np.asarray(out)
    out = np.ascontiguousarray(values[node.attrs["out"]]).reshape(256)
    return out if out.dtype == np.float32 else out.view(np.uint8)
