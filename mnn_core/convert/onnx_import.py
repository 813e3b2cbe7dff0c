"""ONNX -> mnn graph.

    graph = import_onnx("model.onnx")              # what mnn_core.load("model.onnx") calls
    graph = import_onnx(model_proto, input_shapes={"x": (1, 3, 224, 224)})

How it works, in one pass over the ONNX nodes in topological order:

- every value gets a TensorInfo from mnn's own shape inference; dynamic
  dimensions (dim_param) stay symbols (graph/symbolic.py), and where inference
  needs a real size the dimensions are left unknown: import never fails on one;
- values computable at import are *constants*: initializers, Constant nodes and
  any node whose inputs are all constants (run with mnn's reference kernels);
  shape arithmetic that cancels its symbols (Shape(x)[1] of an x of 3 channels)
  is a constant too;
- inputs ONNX passes as tensors but mnn takes as attributes (Reshape shape,
  Slice starts, Pad pads, Reduce axes, ...) become attributes where constant;
  otherwise they stay the op's value inputs (OpSchema.value_inputs), computed
  and bound when a Session knows the real input shapes (graph/shapes.py);
- an op mnn lacks but ONNX defines as a function (Celu, LayerNormalization,
  ...) is inlined from the function body in onnx's op schema.

Every problem is collected; a model with any gets one OnnxImportError that
lists them all. onnx is imported inside functions only (an optional extra).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphError, MnnError
from ..graph.ir import DTYPES, HOST_DTYPES, Graph, Node, OptionalInfo, SequenceInfo, TensorInfo
from ..graph.shapes import infer_node
from ..ops import all_schemas
from ..ops.lowp import run_widened
from .onnx_bodies import BodyImport, _Reported
from .onnx_common import (
    DEFAULT_DOMAIN,
    NodeUnsupported,
    OnnxImportError,
    Unsupported,
    attribute_value,
    fresh_name,
    onnx_type_name,
    require_onnx,
)
from .onnx_tensors import SparseBudget, check_text, load_external_data, sparse_array, tensor_array, uses_external_data

MAX_FOLD_BYTES = 64 << 20  # constants larger than this stay nodes


def import_onnx(
    model: Any,
    *,
    input_shapes: dict | None = None,
    constant_inputs: dict | None = None,
    base_dir: str | os.PathLike | None = None,
    name: str | None = None,
) -> Graph:
    """Convert an ONNX model (a path, serialized bytes or a ModelProto) to an mnn Graph.

    input_shapes: {input name: shape} overrides the declared shapes (e.g. to make a
        dynamic batch static, which lets more shape arithmetic fold to constants).
    constant_inputs: {input name: array} binds graph inputs to values: they become
        constants and leave the graph's inputs.
    base_dir: where external data files live, for a ModelProto (a path knows its own).
    """
    proto, source, folder = load_onnx_proto(model, base_dir)
    from ..quant.qdq import fuse_qdq  # int8 QDQ patterns (onnxruntime quantize_static) -> QLinearConv & co

    try:
        proto = fuse_qdq(proto)
    except MnnError as exc:
        raise MnnError(f"{source}: {exc}") from None
    except Exception as exc:  # noqa: BLE001  malformed quantization nodes the rewrite tripped on
        raise MnnError(
            f"{source}: the int8 QDQ rewrite failed on this model ({type(exc).__name__}: {exc}); "
            "its QuantizeLinear/DequantizeLinear nodes are malformed"
        ) from None
    importer = _Importer(proto, source, input_shapes or {}, constant_inputs or {})
    graph = importer.run()
    if name:
        graph.name = name
    return graph


# -- reading the file ----------------------------------------------------------------------


def load_onnx_proto(model: Any, base_dir=None):
    """(ModelProto with external data loaded, a name for messages, its folder).

    External data is read by mnn itself, only after every reference in the model is checked
    to stay inside `folder` (onnx_tensors.load_external_data)."""
    onnx = require_onnx("reading an ONNX model")

    if isinstance(model, onnx.ModelProto):
        proto, source, folder = model, model.graph.name or "ONNX model", base_dir
    elif isinstance(model, (bytes, bytearray, memoryview)):
        proto, source, folder = _parse(onnx, bytes(model), "ONNX bytes"), "ONNX bytes", base_dir
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.exists():
            raise MnnError(f"ONNX model {path} does not exist")
        if not path.is_file():  # (a FIFO or a device would block or never end)
            raise MnnError(f"ONNX model {path} is not a regular file")
        proto, source, folder = _parse(onnx, path.read_bytes(), str(path)), str(path), base_dir or path.parent
    else:
        raise MnnError(f"import_onnx takes a path, bytes or an onnx.ModelProto, got {type(model).__name__}")
    if proto.ir_version == 0 and not proto.graph.node and not proto.graph.output:
        raise MnnError(
            f"{source} is not an ONNX model (no IR version, no graph): is the file damaged or of another format?"
        )
    check_text(proto, source)
    if uses_external_data(proto):
        if folder is None:
            raise MnnError(f"{source} keeps tensors in external data files; pass base_dir= (their folder)")
        load_external_data(proto, folder, source)
    return proto, source, folder


def _parse(onnx, data: bytes, source: str):
    from google.protobuf.message import DecodeError

    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise MnnError(
            f"{source} is not a valid ONNX file (protobuf could not parse it: {exc}); "
            "the file is damaged, truncated or of another format"
        ) from None
    return proto


# -- the importer ----------------------------------------------------------------------------


@dataclass
class OnnxNode:
    """One ONNX node as handlers see it: names resolved, attributes as Python values."""

    op: str
    domain: str
    opset: int
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    proto: Any = None

    def input(self, i: int) -> str:
        return self.inputs[i] if i < len(self.inputs) else ""


class _Importer(BodyImport):
    def __init__(self, proto, source: str, input_shapes: dict, constant_inputs: dict):
        from .onnx_ops import HANDLERS

        self.handlers = HANDLERS
        self.proto = proto
        self.source = source
        self.opsets = {(o.domain or DEFAULT_DOMAIN): o.version for o in proto.opset_import}
        if proto.ir_version and proto.ir_version < 3 and DEFAULT_DOMAIN not in self.opsets:
            self.opsets[DEFAULT_DOMAIN] = 1
        self.functions = {(f.domain, f.name): f for f in proto.functions}
        self.graph = Graph(name=proto.graph.name or "onnx_model")
        self.graph.metadata.update(
            {"source": "onnx", "producer": proto.producer_name or "", "opset": str(self.opsets.get(DEFAULT_DOMAIN, ""))}
        )
        self.infos: dict[str, TensorInfo] = {}  # value -> info (dimensions may be symbols)
        self.consts: dict[str, np.ndarray] = {}
        self.syms: dict[str, np.ndarray] = {}  # value -> its value in ints and symbols (shape arithmetic)
        self.deps: dict[str, frozenset] = {}  # value -> graph inputs it depends on
        self.rename: dict[str, str] = {}  # value -> the value it is an alias of
        self.unknown: set[str] = set()  # values produced by unsupported nodes
        self.fills: dict[str, Any] = {}  # ConstantOfShape of a dynamic shape -> its fill value
        self.problems: list[Unsupported] = []
        self.needs: set[str] = set()
        self.scopes: list[dict] = []  # name mappings of the function bodies being inlined
        self.taken = self._all_names(proto)
        self.node_names: set[str] = set()
        self.input_shapes = dict(input_shapes)
        self.constant_inputs = dict(constant_inputs)
        self.schemas = all_schemas()
        #: a control-flow body: it runs eagerly, so an op may take a value-dependent input as it is
        self.eager = False
        #: what sparse tensors may still expand to (one budget for a model and its bodies;
        #: its external data is loaded by now, so it counts too)
        self.budget = SparseBudget(proto.ByteSize())

    @staticmethod
    def _all_names(proto) -> set:
        g = proto.graph
        names = {v.name for v in list(g.input) + list(g.output)} | {t.name for t in g.initializer}
        for n in g.node:
            names.update(n.input)
            names.update(n.output)
        return names

    # -- top level ---------------------------------------------------------------------

    def run(self) -> Graph:
        g = self.proto.graph
        for tensor in g.initializer:
            self.consts[tensor.name] = self._tensor(tensor)
        for tensor in g.sparse_initializer:
            self.consts[tensor.values.name] = self._sparse(tensor)
        for value in g.input:
            if value.name not in self.consts:
                self._declare_input(value)
        unknown_bind = set(self.constant_inputs) - {v.name for v in g.input}
        if unknown_bind:
            raise MnnError(f"constant_inputs names {sorted(unknown_bind)}, which are not inputs of {self.source}")
        for node in g.node:
            self.import_node(node)
        self._finish_outputs(g)
        if self.problems:
            raise OnnxImportError(self.source, self.problems, frozenset(self.needs))
        self._prune()
        self._collect_initializers()
        try:
            self.graph.validate()
        except GraphError as exc:
            raise GraphError(f"{self.source}: the imported graph is invalid: {exc}") from None
        return self.graph

    def _tensor(self, tensor) -> np.ndarray:
        return tensor_array(tensor, self.source)

    def _sparse(self, sparse) -> np.ndarray:
        return sparse_array(sparse, self.source, self.budget)

    def _declare_input(self, value) -> None:
        name = value.name
        if name in self.constant_inputs:
            self.consts[name] = np.asarray(self.constant_inputs[name])
            return
        kind = value.type.WhichOneof("value")
        if kind in ("sequence_type", "optional_type"):
            try:
                info = self._value_kind(value.type, name)
            except NodeUnsupported as exc:
                self._problem("input", "", 0, name, str(exc))
                self.unknown.add(name)
                return
            self.graph.inputs[name] = info
            self.infos[name] = info
            self.deps[name] = frozenset([name])
            return
        if kind != "tensor_type":
            self._problem(
                "input",
                "",
                0,
                name,
                f"graph input {name!r} is a {kind}; mnn graphs take tensors, sequences and optionals",
            )
            self.unknown.add(name)
            return
        tt = value.type.tensor_type
        dtype = onnx_type_name(tt.elem_type)
        if dtype not in DTYPES + HOST_DTYPES:
            self._problem("input", "", 0, name, f"graph input {name!r} has dtype {dtype}; mnn has {', '.join(DTYPES)}")
            self.unknown.add(name)
            return
        if name in self.input_shapes:
            shape = tuple(self.input_shapes[name])
        elif tt.HasField("shape"):
            shape = tuple(_onnx_dim(d, f"{name}_dim{i}") for i, d in enumerate(tt.shape.dim))
        else:
            self._problem(
                "input", "", 0, name, f"graph input {name!r} has no shape (rank unknown); give it with input_shapes="
            )
            self.unknown.add(name)
            return
        info = TensorInfo(shape, dtype)
        self.graph.inputs[name] = info
        self.infos[name] = info
        self.deps[name] = frozenset([name])

    def _value_kind(self, tp, name: str):
        """A sequence or optional TypeProto as SequenceInfo / OptionalInfo (dims as symbols)."""
        kind = tp.WhichOneof("value")
        if kind == "tensor_type":
            dtype = onnx_type_name(tp.tensor_type.elem_type)
            if dtype not in DTYPES + HOST_DTYPES:
                raise NodeUnsupported(f"value {name!r} holds dtype {dtype}; mnn has {', '.join(DTYPES)}")
            if not tp.tensor_type.HasField("shape"):
                return _RankUnknown(dtype)
            dims = tuple(_onnx_dim(d, f"{name}_dim{i}") for i, d in enumerate(tp.tensor_type.shape.dim))
            return TensorInfo(dims, dtype)
        if kind == "sequence_type":
            elem = self._value_kind(tp.sequence_type.elem_type, name)
            if isinstance(elem, _RankUnknown):
                return SequenceInfo(None, elem.dtype)
            if not isinstance(elem, TensorInfo):
                raise NodeUnsupported(f"value {name!r} is a sequence of {elem}; mnn sequences hold tensors")
            return SequenceInfo(elem, elem.dtype)
        if kind == "optional_type":
            elem = self._value_kind(tp.optional_type.elem_type, name)
            if isinstance(elem, _RankUnknown):
                raise NodeUnsupported(f"value {name!r} is an optional tensor of unknown rank")
            return OptionalInfo(elem)
        raise NodeUnsupported(f"value {name!r} is a {kind}; mnn takes tensors, sequences and optionals")

    def _problem(self, op, domain, opset, node, reason, needs=()) -> None:
        self.problems.append(Unsupported(op, domain, opset, node, reason, tuple(sorted(needs))))

    # -- nodes --------------------------------------------------------------------------

    def import_node(self, proto, opset_override: dict | None = None, prefix: str = "", depth: int = 0) -> None:
        domain = proto.domain or DEFAULT_DOMAIN
        opsets = opset_override or self.opsets
        opset = opsets.get(domain, 0)
        name = proto.name or f"{prefix}{proto.op_type}_{len(self.graph.nodes)}"
        inputs = [self.resolve(i) for i in proto.input]
        outputs = list(proto.output)
        while outputs and not outputs[-1]:
            outputs.pop()
        outputs = [o or self.fresh(f"{name}.unused{i}") for i, o in enumerate(outputs)]
        if any(i in self.unknown for i in inputs if i):
            self.unknown.update(outputs)  # downstream of a problem already reported
            known = (domain, proto.op_type) in self.handlers or proto.op_type in self.schemas
            if not known and self._function(proto, opset) is None:
                self._problem(proto.op_type, domain, opset, name, "no mnn op or importer for it")
            return
        try:
            attrs = {a.name: attribute_value(a) for a in proto.attribute}
        except Exception as exc:
            self._problem(proto.op_type, domain, opset, name, f"unreadable attribute: {exc}")
            self.unknown.update(outputs)
            return
        node = OnnxNode(proto.op_type, domain, opset, name, inputs, outputs, attrs, proto)
        handler = self.handlers.get((domain, proto.op_type))
        if handler is None and domain == DEFAULT_DOMAIN and proto.op_type in self.schemas:
            from .onnx_ops import generic as handler
        try:
            if handler is not None:
                try:
                    handler(self, node)
                except (NodeUnsupported, GraphError) as exc:
                    # the op's ONNX function body may still be importable (extra outputs, attributes,
                    # ...), unless the trouble is an input whose value is not known at import
                    if getattr(exc, "needs", None) or not self._inline_function(node, depth):
                        raise
            elif not self._inline_function(node, depth):
                raise NodeUnsupported(f"no mnn op or importer for {domain}::{proto.op_type}")
        except _Reported:
            self.unknown.update(outputs)
        except NodeUnsupported as exc:
            self._problem(node.op, domain, opset, name, str(exc), exc.needs)
            self.needs.update(exc.needs)
            self.unknown.update(outputs)
        except MnnError as exc:  # (a GraphError; or a damaged tensor in a sub-graph's body)
            self._problem(node.op, domain, opset, name, str(exc))
            self.unknown.update(outputs)
        except Exception as exc:  # noqa: BLE001  a bug in a handler or kernel: report it as this node's problem
            self._problem(node.op, domain, opset, name, f"the importer failed: {type(exc).__name__}: {exc}")
            self.unknown.update(outputs)

    def _node_name(self, base: str) -> str:
        return fresh_name(base, self.node_names)

    def fresh(self, base: str) -> str:
        name, i = base, 1
        while name in self.taken:
            name = f"{base}_{i}"
            i += 1
        self.taken.add(name)
        return name

    def resolve(self, name: str) -> str:
        while name in self.rename:
            name = self.rename[name]
        return name

    # -- what handlers use ------------------------------------------------------------------

    def const(self, name: str) -> np.ndarray | None:
        return self.consts.get(name) if name else None

    def sym(self, name: str) -> np.ndarray | None:
        if name in self.consts:
            return self.consts[name].astype(object)
        return self.syms.get(name)

    def info(self, name: str) -> TensorInfo:
        if name in self.consts:
            arr = self.consts[name]
            return TensorInfo(arr.shape, _mnn_dtype(arr.dtype, name))
        try:
            return self.infos[name]
        except KeyError:
            raise GraphError(f"value {name!r} is read before it is defined") from None

    def dtype(self, name: str) -> str:
        if name in self.consts:
            return self.consts[name].dtype.name
        return self.info(name).dtype

    def shape(self, name: str) -> tuple:
        """The shape (dimensions may be symbols); NodeUnsupported where not even the rank is known."""
        if name in self.consts:
            return self.consts[name].shape
        shape = self.info(name).shape
        if shape is None:
            raise NodeUnsupported(f"the rank of {name!r} is not known before the input shapes are")
        return shape

    def rank(self, name: str) -> int:
        return len(self.shape(name))

    def is_static(self, name: str) -> bool:
        return name in self.consts or self.info(name).is_static

    def set_const(self, name: str, value: np.ndarray) -> None:
        self.consts[name] = np.asarray(value)

    def alias(self, out: str, src: str) -> None:
        """`out` is the same value as `src` (an Identity, a no-op Cast, ...)."""
        if out != src:
            self.rename[out] = src

    def depends(self, names) -> frozenset:
        out: set = set()
        for n in names:
            if n:
                out |= self.deps.get(self.resolve(n), frozenset())
        return frozenset(out)

    def static_input(self, node: OnnxNode, index: int, what: str) -> np.ndarray | None:
        """The constant value of an input mnn takes as an attribute (None when absent)."""
        name = node.input(index)
        if not name:
            return None
        value = self.const(name)
        if value is not None:
            return value
        raise NodeUnsupported(
            f"unsupported: dynamic {what} of {node.op} (mnn needs it constant)", needs=self.depends([name])
        )

    def emit(
        self,
        op: str,
        inputs: list[str],
        outputs: list[str],
        attrs: dict | None = None,
        name: str | None = None,
        fold: bool = True,
    ) -> list[str]:
        """Add an mnn node (or its constant result). Value inputs that are constants become
        attributes; the others stay inputs, bound when a Session knows the input shapes."""
        schema = self.schemas.get(op)
        if schema is None:
            raise NodeUnsupported(f"mnn has no op {op}")
        inputs, attrs = self._bind_constants(schema, list(inputs), dict(attrs or {}))
        attrs = schema.check_attrs(attrs, name or op, schema.given_attrs(inputs))
        present = [i for i in inputs if i]
        name = self._node_name(name) if name else self._node_name(f"{op.lower()}_{len(self.graph.nodes)}")
        if fold and (present or schema.value_inputs) and not schema.dynamic and all(i in self.consts for i in present):
            arrays = [self.consts[i] if i else None for i in inputs]
            if sum(a.nbytes for a in arrays if a is not None) <= MAX_FOLD_BYTES:
                kernel_in, bound = schema.bind_values(inputs, attrs, self.consts.get)
                kernel_in = [self.consts[i] if i else None for i in kernel_in]
                results = run_widened(op, schema.reference, kernel_in, schema.check_attrs(bound, name))
                for out, value in zip(outputs, results):
                    self.consts[out] = np.asarray(value)
                return outputs
        node = Node(op, list(inputs), list(outputs), attrs, name)
        schema.check_arity(node)
        values = self._infer(node)
        if fold and values is not None and all(v.dtype != object for v in values):
            for out, value in zip(outputs, values):  # shape arithmetic whose symbols cancelled out
                self.consts[out] = value
            return outputs
        self.graph.nodes.append(node)
        deps = self.depends(inputs)
        for out in outputs:
            self.deps[out] = deps
        return outputs

    def _bind_constants(self, schema, inputs: list[str], attrs: dict) -> tuple[list[str], dict]:
        """Constant value inputs as attributes (the input left empty); the others stay."""
        for i in schema.value_inputs:
            if i < len(inputs) and inputs[i] in self.consts:
                bound = schema.bind_values(["" if j != i else n for j, n in enumerate(inputs)], attrs, self.consts.get)
                attrs = bound[1]
                inputs[i] = ""
        if not any(i < len(inputs) and inputs[i] for i in schema.value_inputs):
            inputs = [n for i, n in enumerate(inputs) if i not in schema.value_inputs]  # the kernels' inputs
        while inputs and not inputs[-1]:
            inputs.pop()
        return inputs, attrs

    def _infer(self, node: Node) -> list | None:
        """Record the outputs' infos (and their values, where shape arithmetic gives them)."""
        infos = [self.info(i) if i else None for i in node.inputs]
        values = [self.sym(i) if i else None for i in node.inputs]
        try:
            res = infer_node(node, infos, values, symbolic=True)
        except GraphError as exc:
            shapes = ", ".join(str(i) for i in infos)
            raise GraphError(f"mnn {node.op} cannot take inputs ({shapes}) with {node.attrs}: {exc}") from None
        if len(res.infos) < len(node.outputs):
            raise GraphError(f"mnn {node.op} gives {len(res.infos)} outputs, the ONNX node has {len(node.outputs)}")
        for out, info in zip(node.outputs, res.infos):
            self.infos[out] = info
        if res.values is None:
            return None
        for out, value in zip(node.outputs, res.values):
            self.syms[out] = value
        return res.values

    # -- the end -------------------------------------------------------------------------------

    def _finish_outputs(self, g) -> None:
        for value in g.output:
            name = value.name
            src = self.resolve(name)
            if src in self.unknown or name in self.unknown:
                continue
            if src not in self.consts and src not in self.infos:
                self._problem("output", "", 0, name, f"graph output {name!r} is never produced")
                continue
            if src != name:
                if src in self.consts:
                    self.consts[name] = self.consts[src]
                else:
                    self.emit("Identity", [src], [name], name=f"{name}_output", fold=False)
            self.graph.outputs.append(name)  # (an input may be an output as it is)

    def _prune(self) -> None:
        """Drop nodes nothing reads (left behind by folding or by a fallback to a function body)."""
        live = set(self.graph.outputs)
        kept = []
        for node in reversed(self.graph.nodes):
            if any(o in live for o in node.outputs):
                kept.append(node)
                live.update(i for i in node.inputs if i)
        self.graph.nodes = kept[::-1]

    def _collect_initializers(self) -> None:
        used = {i for n in self.graph.nodes for i in n.inputs if i} | set(self.graph.outputs)
        for name in sorted(used):
            if name in self.consts:
                arr = np.asarray(self.consts[name], order="C")  # (ascontiguousarray makes 0-d 1-d)
                if arr.dtype.name not in DTYPES + HOST_DTYPES:
                    self._problem(
                        "constant", "", 0, name, f"constant {name!r} has dtype {arr.dtype}; mnn has {', '.join(DTYPES)}"
                    )
                self.graph.initializers[name] = arr
        if self.problems:
            raise OnnxImportError(self.source, self.problems, frozenset(self.needs))


def _onnx_dim(d, label: str):
    """An ONNX dimension: its size, or its symbol (a named one, else `label`; -1 sizes are symbols too)."""
    if d.HasField("dim_value") and d.dim_value >= 0:
        return d.dim_value
    return d.dim_param or label


@dataclass(frozen=True)
class _RankUnknown:
    """A tensor type without a shape, inside a sequence type (the elements may differ in rank)."""

    dtype: str


def _mnn_dtype(dtype: np.dtype, name: str) -> str:
    if dtype.name not in DTYPES + HOST_DTYPES:
        raise NodeUnsupported(f"value {name!r} has dtype {dtype.name}; mnn has {', '.join(DTYPES)}")
    return dtype.name
