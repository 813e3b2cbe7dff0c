"""The ONNX exporter's writer: the state of one graph being written (fresh names, the constants it
adds as initializers, the non-default domains it uses), one node emitted with its attributes checked
against the target opset, and a node's fused activation written back as separate ONNX nodes.

Which function writes an mnn op is data: WRITERS, filled by onnx_export_ops.py (per-op forms) and
onnx_export_control.py (bodies of control flow). An op with no entry passes its attributes through
(write_plain); a node reading value inputs gets constants at ONNX's input positions
(write_value_inputs).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..errors import MnnError
from ..graph.ir import Graph, Node, OptionalInfo, SequenceInfo
from .onnx_common import fresh_name, numpy_to_onnx

#: mnn ops used only for training; they have no ONNX form
TRAINING_OPS_SUFFIX = ("Grad", "Update")
NO_ONNX_FORM = frozenset({"SoftmaxCrossEntropy", "SumToShape", "BatchNormTraining"})
FUSED = ("activation", "act_alpha", "act_beta")
#: the reductions whose axes ONNX takes as an input from opset 18 on (ReduceSum's: from 13)
REDUCE_AXES_18 = (
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
#: mnn op -> the function writing it as ONNX nodes: (writer, node, output names) -> None
WRITERS: dict[str, Callable] = {}


class OnnxWriter:
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
        return fresh_name(base, self.taken)

    def const(self, value, base: str, dtype="int64") -> str:
        name = self.fresh(base)
        self.constants[name] = np.asarray(value, dtype=dtype)
        return name

    def emit(self, op: str, inputs: list, outputs: list, name: str = "", **attrs) -> None:
        attrs = {k: v for k, v in attrs.items() if not is_empty(v)}
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
        writer = write_value_inputs if reads_values(node) else WRITERS.get(node.op, write_plain)
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


def is_empty(v) -> bool:
    """Left out of the ONNX node: empty lists and strings, and None (an optional attribute not given)."""
    return v is None or (isinstance(v, (list, tuple)) and not v) or (isinstance(v, str) and v == "")


def node_attrs(node: Node, drop=()) -> dict:
    return {k: v for k, v in node.attrs.items() if k not in drop and k not in FUSED}


def write_plain(w: OnnxWriter, node: Node, outputs) -> None:
    w.emit(node.op, node.inputs, outputs, node.name, **node_attrs(node))


def reads_values(node: Node) -> bool:
    from ..ops import get_schema

    return node.op in ("Range", "ConstantOfShape") or get_schema(node.op).takes_values(node)


#: mnn's value inputs where ONNX has its inputs in another order: {op: ONNX input i = mnn input order[i]}
_ONNX_ORDER = {"OneHot": (0, 2, 1), "STFT": (0, 2, 1, 3)}
#: ops whose axes ONNX takes as an input only from this opset on
_AXES_INPUT_SINCE = {"ReduceSum": 13, **{op: 18 for op in REDUCE_AXES_18}}


def write_value_inputs(w: OnnxWriter, node: Node, outputs) -> None:
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
        if ins[i] or is_empty(value):
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
    attrs = node_attrs(node, tuple(schema.value_inputs.values()))
    if node.op == "ConstantOfShape":
        attrs["value"] = w.helper.make_tensor(
            "value",
            numpy_to_onnx(np.asarray(attrs["value"]).dtype.name),
            [1],
            np.asarray(attrs["value"]).reshape(-1).tolist(),
        )
    w.emit(node.op, ins, outputs, node.name, **attrs)


def value_info(helper, name, info):
    if isinstance(info, SequenceInfo):
        dims = None if info.elem is None else onnx_dims(info.elem)
        return helper.make_tensor_sequence_value_info(name, numpy_to_onnx(info.dtype), dims)
    if isinstance(info, OptionalInfo):
        inner = value_info(helper, name, info.elem)
        return helper.make_value_info(name, helper.make_optional_type_proto(inner.type))
    return helper.make_tensor_value_info(name, numpy_to_onnx(info.dtype), onnx_dims(info))


def onnx_dims(info) -> list | None:
    if info.shape is None:  # rank unknown
        return None
    return [d if isinstance(d, (int, np.integer)) else (None if str(d).startswith("?") else str(d)) for d in info.shape]
