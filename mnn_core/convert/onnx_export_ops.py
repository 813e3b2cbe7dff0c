"""The ONNX exporter's per-op forms: mnn attributes that ONNX takes as constant inputs (Reshape's
shape, Slice's starts, Pad's pads, Clip's bounds, Resize's scales, the reductions' axes from the
opset that made them inputs), ops ONNX writes differently (Resize over the leading axes too,
LayerNormalization's required scale, DFT's axis input from opset 20, dtype names as ONNX type codes),
ops ONNX lacks written as small sub-graphs (Silu, HardSwish and Gelu by the writer's activations),
and the com.microsoft contrib ops. Each registered in WRITERS at the bottom.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..errors import MnnError
from ..graph.ir import Node
from .onnx_common import numpy_to_onnx
from .onnx_export_writer import REDUCE_AXES_18, WRITERS, OnnxWriter, is_empty, node_attrs, write_plain

MICROSOFT_DOMAIN = "com.microsoft"


def _microsoft(w: OnnxWriter, node: Node, outputs) -> None:
    """An ONNX Runtime contrib op (domain com.microsoft, version 1): runs in ONNX Runtime only."""
    w.domains.add(MICROSOFT_DOMAIN)
    w.nodes.append(
        w.helper.make_node(node.op, list(node.inputs), list(outputs), name=node.name or None, domain=MICROSOFT_DOMAIN)
    )


def _as_inputs(*names: str, dtypes: dict | None = None, since: int = 0, scalar=()) -> Callable:
    """A writer passing mnn attributes `names` as (constant) trailing ONNX inputs, in order."""

    def write(w: OnnxWriter, node: Node, outputs) -> None:
        if w.opset < since:
            return write_plain(w, node, outputs)
        extra = []
        for name in names:
            value = node.attrs.get(name)
            if value is None or is_empty(value):
                extra.append("")
                continue
            dtype = (dtypes or {}).get(name, "int64")
            arr = np.asarray(value, dtype=dtype)
            extra.append(w.const(arr.reshape(()) if name in scalar else arr.reshape(-1), f"{node.name}.{name}", dtype))
        while extra and not extra[-1]:
            extra.pop()
        w.emit(node.op, list(node.inputs) + extra, outputs, node.name, **node_attrs(node, names))

    return write


def _shape(w: OnnxWriter, node: Node, outputs) -> None:
    attrs = {k: v for k, v in node.attrs.items() if v not in (None, 0)}  # start 0, end None: the defaults
    w.emit("Shape", node.inputs, outputs, node.name, **attrs)


def _clip(w: OnnxWriter, node: Node, outputs) -> None:
    dtype = w.dtype(node.inputs[0])
    lo, hi = node.attrs.get("min", -math.inf), node.attrs.get("max", math.inf)
    ins = [
        node.inputs[0],
        "" if lo == -math.inf else w.const(lo, f"{node.name}.min", dtype),
        "" if hi == math.inf else w.const(hi, f"{node.name}.max", dtype),
    ]
    while ins and not ins[-1]:
        ins.pop()
    w.emit("Clip", ins, outputs, node.name)


def _cast(w: OnnxWriter, node: Node, outputs) -> None:
    extra = {}
    if not node.attrs.get("saturate", 1):  # ONNX's default is 1; the attribute exists from opset 19
        extra["saturate"] = 0
    if node.attrs.get("to") == "float8_e8m0fnu" and node.attrs.get("round_mode", "up") != "up":
        extra["round_mode"] = node.attrs["round_mode"]
    w.emit("Cast", node.inputs, outputs, node.name, to=numpy_to_onnx(node.attrs["to"]), **extra)


def _pad(w: OnnxWriter, node: Node, outputs) -> None:
    ins = [node.inputs[0], w.const(node.attrs["pads"], f"{node.name}.pads")]
    if node.attrs.get("mode", "constant") == "constant" and node.attrs.get("value", 0.0):
        ins.append(w.const(node.attrs["value"], f"{node.name}.value", w.dtype(node.inputs[0])))
    w.emit("Pad", ins, outputs, node.name, mode=node.attrs.get("mode", "constant"))


#: Resize attributes ONNX has from opset 18 on, and their defaults (left out when default)
_RESIZE_18 = {"antialias": 0, "axes": [], "keep_aspect_ratio_policy": "stretch"}


def _resize(w: OnnxWriter, node: Node, outputs) -> None:
    scales, sizes, roi = node.attrs.get("scales"), node.attrs.get("sizes"), node.attrs.get("roi")
    shape = w.infos[node.inputs[0]].shape
    lead = not node.attrs.get("axes")  # mnn may give the axes after N and C only
    if lead and scales and len(scales) == len(shape) - 2:
        scales = [1.0, 1.0] + list(scales)
    if lead and sizes and len(sizes) == len(shape) - 2:
        if not all(isinstance(d, (int, np.integer)) for d in shape[:2]):
            raise MnnError(f"node {node.name!r}: Resize to sizes {sizes} of a dynamic batch needs scales in ONNX")
        sizes = list(shape[:2]) + list(sizes)
    newer = {k: v for k, v in node.attrs.items() if k in _RESIZE_18 and v != _RESIZE_18[k]}
    if newer and w.opset < 18:
        raise MnnError(
            f"node {node.name!r}: Resize with {sorted(newer)} needs ONNX opset 18 or newer (to_onnx(graph, opset=18))"
        )
    ins = [
        node.inputs[0],
        w.const(roi, f"{node.name}.roi", "float32") if roi else "",
        w.const(scales, f"{node.name}.scales", "float32") if scales else "",
    ]
    if sizes:
        ins.append(w.const(sizes, f"{node.name}.sizes"))
    w.emit("Resize", ins, outputs, node.name, **node_attrs(node, ("scales", "sizes", "roi", *_RESIZE_18)), **newer)


def _split(w: OnnxWriter, node: Node, outputs) -> None:
    ins = list(node.inputs)
    if node.attrs.get("split"):
        ins.append(w.const(node.attrs["split"], f"{node.name}.split"))
    attrs = {"axis": node.attrs.get("axis", 0)}
    if w.opset >= 18 and not node.attrs.get("split"):
        attrs["num_outputs"] = len(outputs)
    w.emit("Split", ins, outputs, node.name, **attrs)


def _reduce(since: int):
    def write(w: OnnxWriter, node: Node, outputs) -> None:
        if w.opset < since:  # axes still an attribute
            return w.emit(node.op, node.inputs, outputs, node.name, **node_attrs(node, ("noop_with_empty_axes",)))
        ins = list(node.inputs)
        if node.attrs.get("axes"):
            ins.append(w.const(node.attrs["axes"], f"{node.name}.axes"))
        w.emit(node.op, ins, outputs, node.name, **node_attrs(node, ("axes",)))

    return write


def _silu(w: OnnxWriter, node: Node, outputs) -> None:
    w.activation("silu", 0, 0, node.inputs[0], outputs[0], node.name)


def _gelu(w: OnnxWriter, node: Node, outputs) -> None:
    w.gelu(node.inputs[0], outputs[0], node.name)


def _layer_norm(w: OnnxWriter, node: Node, outputs) -> None:
    ins = list(node.inputs) + [""] * (3 - len(node.inputs))
    if not ins[1]:  # ONNX requires the scale
        shape = w.infos[node.inputs[0]].shape
        normalized = shape[node.attrs.get("axis", -1) % len(shape) :]
        if not all(isinstance(d, (int, np.integer)) for d in normalized):
            raise MnnError(f"node {node.name!r}: LayerNormalization without a scale over dynamic axes")
        ins[1] = w.const(np.ones(normalized), f"{node.name}.scale", w.dtype(node.inputs[0]))
    while ins and not ins[-1]:
        ins.pop()
    w.emit("LayerNormalization", ins, outputs, node.name, **node_attrs(node))


def _batchnorm(w: OnnxWriter, node: Node, outputs) -> None:
    w.emit(
        "BatchNormalization",
        node.inputs,
        outputs,
        node.name,
        epsilon=node.attrs.get("epsilon", 1e-5),
        momentum=node.attrs.get("momentum", 0.9),
    )


def _recurrent(w: OnnxWriter, node: Node, outputs) -> None:
    attrs = node_attrs(node, ("activation_names",))
    if not attrs.get("layout"):
        attrs.pop("layout", None)
    if node.attrs.get("activation_names"):
        attrs["activations"] = node.attrs["activation_names"].split(",")
    if not attrs.get("clip"):
        attrs.pop("clip", None)
    w.emit(node.op, node.inputs, outputs, node.name, **attrs)


def _onehot(w: OnnxWriter, node: Node, outputs) -> None:
    dtype = w.dtype(node.inputs[0])  # (ONNX Runtime implements OneHot with the indices' dtype for depth)
    depth = w.const(node.attrs["depth"], f"{node.name}.depth", dtype if np.dtype(dtype).kind in "iu" else "int64")
    w.emit("OneHot", [node.inputs[0], depth, node.inputs[1]], outputs, node.name, axis=node.attrs["axis"])


def _eyelike(w: OnnxWriter, node: Node, outputs) -> None:
    attrs = {"k": node.attrs.get("k", 0)}
    if node.attrs.get("dtype"):
        attrs["dtype"] = numpy_to_onnx(node.attrs["dtype"])
    w.emit("EyeLike", node.inputs, outputs, node.name, **attrs)


def _dft(w: OnnxWriter, node: Node, outputs) -> None:
    length = node.attrs.get("dft_length")
    ins = [node.inputs[0], w.const(length, f"{node.name}.length") if length else ""]
    attrs = {"inverse": node.attrs.get("inverse", 0), "onesided": node.attrs.get("onesided", 0)}
    if w.opset >= 20:
        ins.append(w.const(node.attrs.get("axis", 1), f"{node.name}.axis"))
    else:
        attrs["axis"] = node.attrs.get("axis", 1)
    while ins and not ins[-1]:
        ins.pop()
    w.emit("DFT", ins, outputs, node.name, **attrs)


def _stft(w: OnnxWriter, node: Node, outputs) -> None:
    ins = [
        node.inputs[0],
        w.const(node.attrs["frame_step"], f"{node.name}.step"),
        node.inputs[1] if len(node.inputs) > 1 else "",
    ]
    if node.attrs.get("frame_length"):
        ins.append(w.const(node.attrs["frame_length"], f"{node.name}.length"))
    w.emit("STFT", ins, outputs, node.name, onesided=node.attrs.get("onesided", 1))


def dtype_attr(*names: str) -> Callable:
    """A writer turning numpy dtype names of attributes into ONNX type codes."""

    def write(w: OnnxWriter, node: Node, outputs) -> None:
        attrs = node_attrs(node)
        for name in names:
            if attrs.get(name):
                attrs[name] = numpy_to_onnx(attrs[name])
            else:
                attrs.pop(name, None)
        w.emit(node.op, node.inputs, outputs, node.name, **attrs)

    return write


WRITERS.update(
    {
        "Reshape": _as_inputs("shape"),
        "Expand": _as_inputs("shape"),
        "Tile": _as_inputs("repeats"),
        "Squeeze": _as_inputs("axes"),
        "Unsqueeze": _as_inputs("axes"),
        "Slice": _as_inputs("starts", "ends", "axes", "steps"),
        "TopK": _as_inputs("k"),
        "Trilu": _as_inputs("k", scalar=("k",)),
        "CumSum": _as_inputs("axis", scalar=("axis",)),
        "CumProd": _as_inputs("axis", scalar=("axis",)),
        "ReduceSum": _reduce(13),
        "Clip": _clip,
        "Shape": _shape,
        "Cast": _cast,
        "Pad": _pad,
        "Resize": _resize,
        "Split": _split,
        "Silu": _silu,
        "HardSwish": lambda w, node, outputs: w.activation("hard_swish", 0, 0, node.inputs[0], outputs[0], node.name),
        "Gelu": _gelu,
        "BatchNormalization": _batchnorm,
        "LayerNormalization": _layer_norm,
        "RNN": _recurrent,
        "GRU": _recurrent,
        "LSTM": _recurrent,
        "OneHot": _onehot,
        "Col2Im": _as_inputs("image_shape", "block_shape"),
        "MaxUnpool": _as_inputs("output_shape"),
        "DFT": _dft,
        "STFT": _stft,
        "QuantizeLinear": dtype_attr("output_dtype"),
        "DequantizeLinear": dtype_attr("output_dtype"),
        "BitCast": dtype_attr("to"),
        "EyeLike": _eyelike,
        "QLinearAdd": _microsoft,
    }
)
for _op in REDUCE_AXES_18:
    WRITERS[_op] = _reduce(18)
