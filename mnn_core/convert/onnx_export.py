"""mnn graph -> ONNX.

    proto = to_onnx(graph)                 # onnx.ModelProto, opset 17 by default
    save_onnx(graph, "model.onnx")         # large weights go to model.onnx.data

The inverse of the importer: mnn attributes that ONNX passes as tensors
(Reshape shape, Slice starts, Pad pads, Clip min/max, Resize scales, ...)
become constant inputs; fused activations on Conv/Gemm/MatMul/ConvTranspose
become separate ONNX nodes again; mnn ops ONNX lacks at the target opset are
written as small sub-graphs (Silu = x * Sigmoid(x), Gelu before opset 20).
Training-only mnn ops (gradients, optimizer updates) have no ONNX form and
give a clear error.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import MnnError
from ..graph.ir import Graph, Node, OptionalInfo, SequenceInfo
from .onnx_common import numpy_to_onnx, require_onnx

DEFAULT_OPSET = 17
MIN_OPSET = 13
EXTERNAL_DATA_BYTES = 1 << 30  # save_onnx keeps weights in the .onnx file below this total


def to_onnx(graph: Graph, opset: int = DEFAULT_OPSET, producer: str = "mnn") -> onnx.ModelProto:  # noqa: F821
    """The mnn graph as an ONNX model of `opset` (13 or newer)."""
    onnx = require_onnx("exporting to ONNX")
    from onnx import helper, numpy_helper

    if not isinstance(opset, int) or isinstance(opset, bool):  # to_onnx(graph, "model.onnx"), say
        raise MnnError(
            f"to_onnx(graph, opset) takes an int opset, not {opset!r}; it returns the ModelProto: "
            "save_onnx(graph, path) writes a file"
        )
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise MnnError(f"to_onnx writes opsets {MIN_OPSET} to {onnx.defs.onnx_opset_version()}, not {opset}")
    graph.validate()
    infos = graph.infer()
    writer = _Writer(graph, opset, infos)
    for node in graph.nodes:
        writer.node(node)
    inputs = [_value_info(helper, n, i) for n, i in graph.inputs.items()]
    outputs = [_value_info(helper, n, infos[n]) for n in graph.outputs]
    initializers = [numpy_helper.from_array(np.asarray(a), n) for n, a in graph.initializers.items()]
    initializers += [numpy_helper.from_array(np.asarray(a), n) for n, a in writer.constants.items()]
    g = helper.make_graph(writer.nodes, graph.name or "mnn_graph", inputs, outputs, initializers)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in sorted(writer.domains)]
    model = helper.make_model(
        g,
        opset_imports=opsets,
        producer_name=producer,
        ir_version=min(helper.VERSION_TABLE[-1][1], _ir_version(helper, opset)),
    )
    for key, value in graph.metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = str(key), str(value)
    return model


def save_onnx(graph: Graph, path: str | os.PathLike, opset: int = DEFAULT_OPSET) -> Path:
    """Write the graph as an .onnx file (weights in `<name>.data` beside it when over 1 GiB)."""
    onnx = require_onnx("exporting to ONNX")
    model = to_onnx(graph, opset)
    path = Path(path)
    external = graph.initializer_bytes() > EXTERNAL_DATA_BYTES
    onnx.save_model(
        model, str(path), save_as_external_data=external, all_tensors_to_one_file=True, location=path.name + ".data"
    )
    return path


def _ir_version(helper, opset: int) -> int:
    for _, ir, op, *_ in helper.VERSION_TABLE:
        if op >= opset:
            return ir
    return helper.VERSION_TABLE[-1][1]


def _value_info(helper, name, info):
    if isinstance(info, SequenceInfo):
        dims = None if info.elem is None else _dims(info.elem)
        return helper.make_tensor_sequence_value_info(name, numpy_to_onnx(info.dtype), dims)
    if isinstance(info, OptionalInfo):
        inner = _value_info(helper, name, info.elem)
        return helper.make_value_info(name, helper.make_optional_type_proto(inner.type))
    return helper.make_tensor_value_info(name, numpy_to_onnx(info.dtype), _dims(info))


def _dims(info) -> list | None:
    if info.shape is None:  # rank unknown
        return None
    return [d if isinstance(d, (int, np.integer)) else (None if str(d).startswith("?") else str(d)) for d in info.shape]


# -- node writers --------------------------------------------------------------------------------------

#: mnn ops used only for training; they have no ONNX form
TRAINING_OPS_SUFFIX = ("Grad", "Update")


class _Writer:
    def __init__(self, graph: Graph, opset: int, infos: dict):
        from onnx import helper

        self.infos = infos
        self.helper = helper
        self.graph = graph
        self.opset = opset
        self.nodes: list = []
        self.constants: dict[str, np.ndarray] = {}
        self.domains: set[str] = set()  # non-default domains used (com.microsoft for QLinearAdd)
        self.taken = set(graph.inputs) | set(graph.initializers) | {o for n in graph.nodes for o in n.outputs}

    def fresh(self, base: str) -> str:
        name, i = base, 1
        while name in self.taken:
            name = f"{base}_{i}"
            i += 1
        self.taken.add(name)
        return name

    def const(self, value, base: str, dtype="int64") -> str:
        name = self.fresh(base)
        self.constants[name] = np.asarray(value, dtype=dtype)
        return name

    def emit(self, op: str, inputs: list, outputs: list, name: str = "", **attrs) -> None:
        attrs = {k: v for k, v in attrs.items() if not _is_empty(v)}
        known = self.onnx_attributes(op)
        for key in [k for k in attrs if known is not None and k not in known]:
            if attrs[key] not in (0, 0.0, "none", "NOTSET", "stretch"):  # newer than the target opset, not default
                raise MnnError(
                    f"node {name!r}: {op} attribute {key}={attrs[key]!r} needs a newer opset than {self.opset}"
                )
            del attrs[key]
        self.nodes.append(self.helper.make_node(op, list(inputs), list(outputs), name=name or None, **attrs))

    def node(self, node: Node) -> None:
        if node.op.endswith(TRAINING_OPS_SUFFIX) or node.op in NO_ONNX_FORM:
            raise MnnError(
                f"node {node.name!r}: mnn op {node.op} is used for training and has no ONNX form; "
                "export the inference graph"
            )
        writer = _with_value_inputs if _reads_values(node) else WRITERS.get(node.op, _plain)
        activation = node.attrs.get("activation", "none")
        if activation == "none":
            return writer(self, node, node.outputs)
        raw = self.fresh(f"{node.outputs[0]}.pre_{activation}")
        writer(self, node, [raw] + node.outputs[1:])
        self.activation(
            activation,
            node.attrs.get("act_alpha", 0.0),
            node.attrs.get("act_beta", 0.0),
            raw,
            node.outputs[0],
            f"{node.name}.{activation}",
        )

    def onnx_attributes(self, op: str):
        from onnx import defs

        try:
            return set(defs.get_schema(op, self.opset, "").attributes)
        except Exception:  # noqa: BLE001  not an ONNX op at this opset: the checker will say so
            return None

    def dtype(self, value: str) -> str:
        info = self.infos.get(value)
        return info.dtype if info is not None else "float32"

    def activation(self, kind, alpha, beta, x, y, name) -> None:
        if kind == "relu":
            self.emit("Relu", [x], [y], name)
        elif kind == "clip":
            dtype = self.dtype(x)
            lo, hi = self.const(alpha, f"{name}.min", dtype), self.const(beta, f"{name}.max", dtype)
            self.emit("Clip", [x, lo, hi], [y], name)
        elif kind == "leaky_relu":
            self.emit("LeakyRelu", [x], [y], name, alpha=float(alpha))
        elif kind == "sigmoid":
            self.emit("Sigmoid", [x], [y], name)
        elif kind == "tanh":
            self.emit("Tanh", [x], [y], name)
        elif kind == "hard_sigmoid":
            self.emit("HardSigmoid", [x], [y], name, alpha=float(alpha), beta=float(beta))
        elif kind == "hard_swish" and self.opset >= 14:
            self.emit("HardSwish", [x], [y], name)
        elif kind == "hard_swish":
            s = self.fresh(f"{name}.gate")
            self.emit("HardSigmoid", [x], [s], f"{name}.gate", alpha=1.0 / 6.0, beta=0.5)
            self.emit("Mul", [x, s], [y], name)
        elif kind == "silu":
            s = self.fresh(f"{name}.sigmoid")
            self.emit("Sigmoid", [x], [s], f"{name}.sigmoid")
            self.emit("Mul", [x, s], [y], name)
        elif kind == "gelu":
            self.gelu(x, y, name)
        else:
            raise MnnError(f"{name}: no ONNX form for fused activation {kind!r}")

    def gelu(self, x, y, name) -> None:
        if self.opset >= 20:
            return self.emit("Gelu", [x], [y], name)
        dtype = self.dtype(x)
        # 0.5 * x * (1 + erf(x / sqrt(2)))
        t = [self.fresh(f"{name}.{k}") for k in ("scaled", "erf", "plus1", "half")]
        self.emit("Div", [x, self.const(math.sqrt(2.0), f"{name}.sqrt2", dtype)], [t[0]])
        self.emit("Erf", [t[0]], [t[1]])
        self.emit("Add", [t[1], self.const(1.0, f"{name}.one", dtype)], [t[2]])
        self.emit("Mul", [x, self.const(0.5, f"{name}.half", dtype)], [t[3]])
        self.emit("Mul", [t[3], t[2]], [y], name)


NO_ONNX_FORM = frozenset({"SoftmaxCrossEntropy", "SumToShape", "BatchNormTraining"})
FUSED = ("activation", "act_alpha", "act_beta")


def _is_empty(v) -> bool:
    """Left out of the ONNX node: empty lists and strings, and None (an optional attribute not given)."""
    return v is None or (isinstance(v, (list, tuple)) and not v) or (isinstance(v, str) and v == "")


def _attrs(node: Node, drop=()) -> dict:
    return {k: v for k, v in node.attrs.items() if k not in drop and k not in FUSED}


def _microsoft(w: _Writer, node: Node, outputs) -> None:
    """An ONNX Runtime contrib op (domain com.microsoft, version 1): runs in ONNX Runtime only."""
    w.domains.add(MICROSOFT_DOMAIN)
    w.nodes.append(
        w.helper.make_node(node.op, list(node.inputs), list(outputs), name=node.name or None, domain=MICROSOFT_DOMAIN)
    )


MICROSOFT_DOMAIN = "com.microsoft"


def _plain(w: _Writer, node: Node, outputs) -> None:
    w.emit(node.op, node.inputs, outputs, node.name, **_attrs(node))


def _as_inputs(*names: str, dtypes: dict | None = None, since: int = 0, scalar=()) -> Callable:
    """A writer passing mnn attributes `names` as (constant) trailing ONNX inputs, in order."""

    def write(w: _Writer, node: Node, outputs) -> None:
        if w.opset < since:
            return _plain(w, node, outputs)
        extra = []
        for name in names:
            value = node.attrs.get(name)
            if value is None or _is_empty(value):
                extra.append("")
                continue
            dtype = (dtypes or {}).get(name, "int64")
            arr = np.asarray(value, dtype=dtype)
            extra.append(w.const(arr.reshape(()) if name in scalar else arr.reshape(-1), f"{node.name}.{name}", dtype))
        while extra and not extra[-1]:
            extra.pop()
        w.emit(node.op, list(node.inputs) + extra, outputs, node.name, **_attrs(node, names))

    return write


def _reads_values(node: Node) -> bool:
    from ..ops import get_schema

    return node.op in ("Range", "ConstantOfShape") or get_schema(node.op).takes_values(node)


#: mnn's value inputs where ONNX has its inputs in another order: {op: ONNX input i = mnn input order[i]}
_ONNX_ORDER = {"OneHot": (0, 2, 1), "STFT": (0, 2, 1, 3)}
#: ops whose axes ONNX takes as an input only from this opset on
_AXES_INPUT_SINCE = {
    "ReduceSum": 13,
    **{
        op: 18
        for op in (
            "ReduceMean",
            "ReduceMax",
            "ReduceMin",
            "ReduceProd",
            "ReduceL1",
            "ReduceL2",
            "ReduceLogSum",
            "ReduceLogSumExp",
            "ReduceSumSquare",
        )
    },
}


def _with_value_inputs(w: _Writer, node: Node, outputs) -> None:
    """A node reading value inputs (values a Session binds at resize): ONNX takes those as inputs at the
    same positions; the ones mnn holds as attributes become constants there."""
    from ..ops import get_schema

    schema = get_schema(node.op)
    if w.opset < _AXES_INPUT_SINCE.get(node.op, 0):
        raise MnnError(
            f"node {node.name!r}: {node.op} with axes computed in the graph needs opset "
            f"{_AXES_INPUT_SINCE[node.op]} or newer (to_onnx(graph, opset=...))"
        )
    ins = list(node.inputs) + [""] * (max(schema.value_inputs) + 1 - len(node.inputs))
    for i, attr in schema.value_inputs.items():
        value = node.attrs.get(attr)
        if ins[i] or _is_empty(value):
            continue
        kind = schema.attrs[attr].kind
        dtype = (
            np.asarray(value).dtype
            if kind == "tensor"
            else "int64"
            if kind.startswith("int")
            else w.dtype(node.inputs[0])
            if node.inputs and node.inputs[0]
            else "float32"
        )
        arr = np.asarray(value, dtype=dtype)
        ins[i] = w.const(
            arr.reshape(-1) if kind in ("ints", "floats") or node.op == "TopK" else arr.reshape(()),
            f"{node.name}.{attr}",
            dtype,
        )
    order = _ONNX_ORDER.get(node.op)
    if order is not None:
        ins = [ins[j] for j in order]
    while ins and not ins[-1]:
        ins.pop()
    attrs = _attrs(node, tuple(schema.value_inputs.values()))
    if node.op == "ConstantOfShape":
        attrs["value"] = w.helper.make_tensor(
            "value",
            numpy_to_onnx(np.asarray(attrs["value"]).dtype.name),
            [1],
            np.asarray(attrs["value"]).reshape(-1).tolist(),
        )
    w.emit(node.op, ins, outputs, node.name, **attrs)


def _shape(w: _Writer, node: Node, outputs) -> None:
    attrs = {k: v for k, v in node.attrs.items() if v not in (None, 0)}  # start 0, end None: the defaults
    w.emit("Shape", node.inputs, outputs, node.name, **attrs)


def _clip(w: _Writer, node: Node, outputs) -> None:
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


def _cast(w: _Writer, node: Node, outputs) -> None:
    extra = {}
    if not node.attrs.get("saturate", 1):  # ONNX's default is 1; the attribute exists from opset 19
        extra["saturate"] = 0
    if node.attrs.get("to") == "float8_e8m0fnu" and node.attrs.get("round_mode", "up") != "up":
        extra["round_mode"] = node.attrs["round_mode"]
    w.emit("Cast", node.inputs, outputs, node.name, to=numpy_to_onnx(node.attrs["to"]), **extra)


def _pad(w: _Writer, node: Node, outputs) -> None:
    ins = [node.inputs[0], w.const(node.attrs["pads"], f"{node.name}.pads")]
    if node.attrs.get("mode", "constant") == "constant" and node.attrs.get("value", 0.0):
        ins.append(w.const(node.attrs["value"], f"{node.name}.value", w.dtype(node.inputs[0])))
    w.emit("Pad", ins, outputs, node.name, mode=node.attrs.get("mode", "constant"))


#: Resize attributes ONNX has from opset 18 on, and their defaults (left out when default)
_RESIZE_18 = {"antialias": 0, "axes": [], "keep_aspect_ratio_policy": "stretch"}


def _resize(w: _Writer, node: Node, outputs) -> None:
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
    w.emit("Resize", ins, outputs, node.name, **_attrs(node, ("scales", "sizes", "roi", *_RESIZE_18)), **newer)


def _split(w: _Writer, node: Node, outputs) -> None:
    ins = list(node.inputs)
    if node.attrs.get("split"):
        ins.append(w.const(node.attrs["split"], f"{node.name}.split"))
    attrs = {"axis": node.attrs.get("axis", 0)}
    if w.opset >= 18 and not node.attrs.get("split"):
        attrs["num_outputs"] = len(outputs)
    w.emit("Split", ins, outputs, node.name, **attrs)


def _reduce(since: int):
    def write(w: _Writer, node: Node, outputs) -> None:
        if w.opset < since:  # axes still an attribute
            return w.emit(node.op, node.inputs, outputs, node.name, **_attrs(node, ("noop_with_empty_axes",)))
        ins = list(node.inputs)
        if node.attrs.get("axes"):
            ins.append(w.const(node.attrs["axes"], f"{node.name}.axes"))
        w.emit(node.op, ins, outputs, node.name, **_attrs(node, ("axes",)))

    return write


def _silu(w: _Writer, node: Node, outputs) -> None:
    w.activation("silu", 0, 0, node.inputs[0], outputs[0], node.name)


def _gelu(w: _Writer, node: Node, outputs) -> None:
    w.gelu(node.inputs[0], outputs[0], node.name)


def _layer_norm(w: _Writer, node: Node, outputs) -> None:
    ins = list(node.inputs) + [""] * (3 - len(node.inputs))
    if not ins[1]:  # ONNX requires the scale
        shape = w.infos[node.inputs[0]].shape
        normalized = shape[node.attrs.get("axis", -1) % len(shape) :]
        if not all(isinstance(d, (int, np.integer)) for d in normalized):
            raise MnnError(f"node {node.name!r}: LayerNormalization without a scale over dynamic axes")
        ins[1] = w.const(np.ones(normalized), f"{node.name}.scale", w.dtype(node.inputs[0]))
    while ins and not ins[-1]:
        ins.pop()
    w.emit("LayerNormalization", ins, outputs, node.name, **_attrs(node))


def _batchnorm(w: _Writer, node: Node, outputs) -> None:
    w.emit(
        "BatchNormalization",
        node.inputs,
        outputs,
        node.name,
        epsilon=node.attrs.get("epsilon", 1e-5),
        momentum=node.attrs.get("momentum", 0.9),
    )


def _recurrent(w: _Writer, node: Node, outputs) -> None:
    attrs = _attrs(node, ("activation_names",))
    if not attrs.get("layout"):
        attrs.pop("layout", None)
    if node.attrs.get("activation_names"):
        attrs["activations"] = node.attrs["activation_names"].split(",")
    if not attrs.get("clip"):
        attrs.pop("clip", None)
    w.emit(node.op, node.inputs, outputs, node.name, **attrs)


def _onehot(w: _Writer, node: Node, outputs) -> None:
    dtype = w.dtype(node.inputs[0])  # (ONNX Runtime implements OneHot with the indices' dtype for depth)
    depth = w.const(node.attrs["depth"], f"{node.name}.depth", dtype if np.dtype(dtype).kind in "iu" else "int64")
    w.emit("OneHot", [node.inputs[0], depth, node.inputs[1]], outputs, node.name, axis=node.attrs["axis"])


def _eyelike(w: _Writer, node: Node, outputs) -> None:
    attrs = {"k": node.attrs.get("k", 0)}
    if node.attrs.get("dtype"):
        attrs["dtype"] = numpy_to_onnx(node.attrs["dtype"])
    w.emit("EyeLike", node.inputs, outputs, node.name, **attrs)


def _dft(w: _Writer, node: Node, outputs) -> None:
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


def _stft(w: _Writer, node: Node, outputs) -> None:
    ins = [
        node.inputs[0],
        w.const(node.attrs["frame_step"], f"{node.name}.step"),
        node.inputs[1] if len(node.inputs) > 1 else "",
    ]
    if node.attrs.get("frame_length"):
        ins.append(w.const(node.attrs["frame_length"], f"{node.name}.length"))
    w.emit("STFT", ins, outputs, node.name, onesided=node.attrs.get("onesided", 1))


def _dtype_attr(*names: str) -> Callable:
    """A writer turning numpy dtype names of attributes into ONNX type codes."""

    def write(w: _Writer, node: Node, outputs) -> None:
        attrs = _attrs(node)
        for name in names:
            if attrs.get(name):
                attrs[name] = numpy_to_onnx(attrs[name])
            else:
                attrs.pop(name, None)
        w.emit(node.op, node.inputs, outputs, node.name, **attrs)

    return write


WRITERS: dict[str, Callable] = {
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
    "QuantizeLinear": _dtype_attr("output_dtype"),
    "DequantizeLinear": _dtype_attr("output_dtype"),
    "BitCast": _dtype_attr("to"),
    "EyeLike": _eyelike,
}
for _op in (
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
):
    WRITERS[_op] = _reduce(18)


# -- control flow and sequences ---------------------------------------------------------------------------


def _body(w: _Writer, body: Graph, n_formal: int, outer: list[str], name: str):
    """A closed mnn body as an ONNX GraphProto: its capture inputs become reads of the outer values."""
    from onnx import numpy_helper

    infos = body.infer()
    sub = _Writer(body, w.opset, infos)
    sub.taken |= w.taken
    names = list(body.inputs)
    for inner, src in zip(names[n_formal:], outer):
        if inner != src:  # ONNX bodies read enclosing values by name
            sub.emit("Identity", [src], [inner], f"{name}.capture.{inner}")
    for node in body.nodes:
        sub.node(node)
    w.taken |= sub.taken
    inputs = [_value_info(w.helper, n, body.inputs[n]) for n in names[:n_formal]]
    outputs = [_value_info(w.helper, n, infos[n]) for n in body.outputs]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in {**body.initializers, **sub.constants}.items()]
    return w.helper.make_graph(sub.nodes, name, inputs, outputs, inits)


def _split_captures(node: Node) -> tuple[list[str], list[str]]:
    n = node.attrs.get("num_captures", 0)
    return (
        (list(node.inputs[: len(node.inputs) - n]), list(node.inputs[len(node.inputs) - n :]))
        if n
        else (list(node.inputs), [])
    )


def _loop(w: _Writer, node: Node, outputs) -> None:
    own, caps = _split_captures(node)
    body = _body(w, node.attrs["body"], len(own), caps, f"{node.name}_body")
    w.emit("Loop", own, outputs, node.name, body=body)


def _scan(w: _Writer, node: Node, outputs) -> None:
    own, caps = _split_captures(node)
    body = _body(w, node.attrs["body"], len(own), caps, f"{node.name}_body")
    attrs = {k: v for k, v in node.attrs.items() if k not in ("body", "num_captures")}
    w.emit("Scan", own, outputs, node.name, body=body, **attrs)


def _sequence_map(w: _Writer, node: Node, outputs) -> None:
    own, caps = _split_captures(node)
    body = _body(w, node.attrs["body"], len(own), caps, f"{node.name}_body")
    w.emit("SequenceMap", own, outputs, node.name, body=body)


def _if(w: _Writer, node: Node, outputs) -> None:
    caps = list(node.inputs[1:])
    branches = {key: _body(w, node.attrs[key], 0, caps, f"{node.name}_{key}") for key in ("then_branch", "else_branch")}
    w.emit("If", node.inputs[:1], outputs, node.name, **branches)


def _slice_dynamic(w: _Writer, node: Node, outputs) -> None:
    ins = list(node.inputs) + [""] * (5 - len(node.inputs))
    if node.attrs.get("axes"):
        ins[3] = w.const(node.attrs["axes"], f"{node.name}.axes")
    while ins and not ins[-1]:
        ins.pop()
    w.emit("Slice", ins, outputs, node.name)


WRITERS["QLinearAdd"] = _microsoft
WRITERS.update(
    {
        "SliceDynamic": _slice_dynamic,
        "Loop": _loop,
        "Scan": _scan,
        "If": _if,
        "SequenceMap": _sequence_map,
        "SequenceEmpty": _dtype_attr("dtype"),
    }
)
