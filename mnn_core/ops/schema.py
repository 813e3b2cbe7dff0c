"""Op schemas: what an op takes, how its output shape follows, how to compute it.

Every op the engine knows is one `OpSchema`, registered by the family module
that defines it (`elementwise.py`, `conv.py`, ...). The schema is the single
source of truth for:

- arity and attributes (validated, defaults filled in),
- shape and dtype inference (`infer`: TensorInfos in, TensorInfos out),
- the reference kernel (`reference`: numpy arrays in, numpy arrays out) —
  written for clarity, it is the oracle every backend is tested against,
- a work estimate (`flops`) for the scheduler's cost model,
- `samples`: random test cases (several shapes, odd sizes) that the
  conformance suite in `mnn_core.testing` runs on every backend,
- `inplace`: the output may share the first input's memory,
- `gradient`: the rule training uses to differentiate the op,
- `value_inputs`: inputs whose *values* decide the output shape (a Reshape's
  shape, a Slice's starts). They are bound as attributes at resize, once the
  real input shapes make them known (`graph/shapes.py`); kernels see attributes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import GraphError
from ..graph.ir import Graph, Node, TensorInfo
from ..graph.symbolic import as_dim

REQUIRED = object()  # default of an attribute that must be given

_ATTR_TYPES = {
    "int": (int, np.integer),
    "float": (float, int, np.floating, np.integer),
    "number": (float, int, np.floating, np.integer),  # an int stays an int (Clip's bounds on int64 data)
    "str": (str,),
    "ints": (list, tuple),
    "floats": (list, tuple),
    "strs": (list, tuple),
    "tensor": (np.ndarray,),
    "graph": (Graph,),  # a control-flow body: a closed Graph (what it reads from outside are its inputs)
}


@dataclass(frozen=True)
class Attr:
    kind: str  # one of _ATTR_TYPES
    default: Any = REQUIRED
    choices: tuple = ()
    doc: str = ""

    def check(self, op: str, name: str, value: Any, node: str) -> Any:
        where = f"node {node!r} ({op}) attribute {name!r}"
        if value is None and self.default is None:  # an optional attribute without a default: absent
            return None
        if not isinstance(value, _ATTR_TYPES[self.kind]) or isinstance(value, bool) and self.kind != "int":
            raise GraphError(f"{where} must be {self.kind}, got {type(value).__name__} {value!r}")
        if self.kind == "int":
            value = int(value)
        elif self.kind == "float":
            value = float(value)
        elif self.kind == "number":
            value = int(value) if isinstance(value, (int, np.integer)) else float(value)
        elif self.kind == "ints":
            if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
                raise GraphError(f"{where} must be a list of ints, got {value!r}")
            value = [int(v) for v in value]
        elif self.kind == "strs":
            if not all(isinstance(v, str) for v in value):
                raise GraphError(f"{where} must be a list of strings, got {value!r}")
            value = list(value)
        elif self.kind == "floats":
            if not all(isinstance(v, (int, float, np.number)) for v in value):
                raise GraphError(f"{where} must be a list of numbers, got {value!r}")
            value = [float(v) for v in value]
        if self.choices and value not in self.choices:
            raise GraphError(f"{where} is {value!r}; expected one of {', '.join(map(repr, self.choices))}")
        return value


@dataclass
class Sample:
    """One test case for an op: inputs and attributes (and a tolerance hint)."""

    inputs: list[np.ndarray]
    attrs: dict[str, Any] = field(default_factory=dict)
    label: str = ""


InferFn = Callable[[list, dict], list]
KernelFn = Callable[[list, dict], list]


@dataclass
class OpSchema:
    name: str
    infer: InferFn
    reference: KernelFn
    attrs: dict[str, Attr] = field(default_factory=dict)
    n_inputs: tuple[int, int] = (1, 1)  # min, max (optional inputs may be "")
    n_outputs: int = 1
    flops: Callable[[list, list, dict], float] | None = None
    samples: Callable[[np.random.Generator], Iterator[Sample]] | None = None
    inplace: bool = False
    #: the output is the input's bytes under another shape: every backend "runs" it, as an alias of
    #: the input (no step) or, where aliasing is impossible, a copy (the scheduler and program builder)
    view: bool = False
    doc: str = ""
    #: gradient(ctx) rule used by training (set by mnn_core's autograd rules module)
    gradient: Callable | None = None
    #: the output shapes (or kinds) follow input *values*, or the op takes sequence/optional values:
    #: a graph with such an op runs eagerly on the reference backend (Graph.is_dynamic)
    dynamic: bool = False
    #: {input index: attribute}: an input whose value, once known at resize, is that attribute
    #: (ONNX passes these as tensors, often computed from shapes). Kernels only see the attribute.
    value_inputs: dict[int, str] = field(default_factory=dict)
    #: bind(attrs, values) -> attrs, where binding is more than a conversion (values: {attr: array})
    bind: Callable[[dict, dict], dict] | None = None

    def __post_init__(self):
        if self.value_inputs:
            lo, hi = self.n_inputs
            self.n_inputs = (lo, max(hi, max(self.value_inputs) + 1))

    def given_attrs(self, inputs: Sequence[str]) -> list[str]:
        """The attributes that a node with these inputs gets from its value inputs at resize."""
        return [a for i, a in self.value_inputs.items() if i < len(inputs) and inputs[i]]

    def takes_values(self, node: Node) -> bool:
        """Whether this node reads a value input (it needs binding before a kernel runs it)."""
        return bool(self.given_attrs(node.inputs))

    def bind_values(self, inputs: list[str], attrs: dict, value_of: Callable[[str], Any]):
        """(the inputs kernels take, attrs with the value inputs bound), or None where a value input's
        value is not known (`value_of` returns None). Values may hold symbolic sizes (graph.symbolic)."""
        given = {}
        for i, attr in self.value_inputs.items():
            if i < len(inputs) and inputs[i]:
                value = value_of(inputs[i])
                if value is None:
                    return None
                given[attr] = value
        kept = [n for i, n in enumerate(inputs) if i not in self.value_inputs]
        while kept and not kept[-1]:
            kept.pop()
        if self.bind is not None:
            return kept, self.bind(dict(attrs), given)
        out = dict(attrs)
        for attr, value in given.items():
            out[attr] = _as_attr(self.attrs[attr].kind, value)
        return kept, out

    def check_arity(self, node: Node) -> None:
        lo, hi = self.n_inputs
        if not lo <= len(node.inputs) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise GraphError(f"node {node.name!r} ({self.name}) takes {want} inputs, got {len(node.inputs)}")
        if len(node.outputs) > self.n_outputs or not node.outputs:
            raise GraphError(
                f"node {node.name!r} ({self.name}) has at most {self.n_outputs} output(s), got {len(node.outputs)}"
            )

    def check_attrs(self, attrs: dict[str, Any], node: str = "?", given: Sequence[str] = ()) -> dict[str, Any]:
        """Validate attributes and fill in defaults; return the complete dict. `given`: attributes
        the node's value inputs will give at resize (not required here)."""
        unknown = set(attrs) - set(self.attrs)
        if unknown:
            known = ", ".join(sorted(self.attrs)) or "none"
            raise GraphError(f"node {node!r} ({self.name}) has unknown attribute(s) {sorted(unknown)}; known: {known}")
        out = {}
        for name, spec in self.attrs.items():
            if name in attrs:
                out[name] = spec.check(self.name, name, attrs[name], node)
            elif spec.default is REQUIRED and name in given:
                continue
            elif spec.default is REQUIRED:
                raise GraphError(f"node {node!r} ({self.name}) needs attribute {name!r} ({spec.kind})")
            else:
                out[name] = spec.default
        return out

    def estimate_flops(self, ins: Sequence[TensorInfo], outs: Sequence[TensorInfo], attrs: dict) -> float:
        if self.flops is not None:
            return float(self.flops(list(ins), list(outs), attrs))
        return float(sum(o.size for o in outs))


def take_values(op: str, inputs: dict[int, str], bind: Callable | None = None) -> None:
    """Declare inputs of a registered op that carry attributes (OpSchema.value_inputs), for ops
    registered in a loop."""
    schema = _REGISTRY[op]
    schema.value_inputs, schema.bind = dict(inputs), bind
    schema.__post_init__()


def _as_attr(kind: str, value) -> Any:
    """An input's value (an array; symbolic sizes as objects) as an attribute of this kind."""
    flat = np.asarray(value).reshape(-1).tolist()
    if kind == "ints":  # (symbolic sizes before resize)
        return [int(v) if isinstance(v, (int, np.integer)) else as_dim(v) for v in flat]
    if kind == "floats":
        return [float(v) for v in flat]
    if kind in ("int", "float"):
        if len(flat) != 1:
            raise GraphError(f"a {kind} attribute takes one value, got {len(flat)}")
        v = flat[0]
        if kind == "float":
            return float(v)
        return int(v) if isinstance(v, (int, np.integer, bool, float, np.floating)) else v  # (a float depth)
    return np.asarray(value)


_REGISTRY: dict[str, OpSchema] = {}


def register(schema: OpSchema) -> OpSchema:
    if schema.name in _REGISTRY:
        raise ValueError(f"op {schema.name!r} registered twice")
    _REGISTRY[schema.name] = schema
    return schema


def get_schema(op: str) -> OpSchema:
    try:
        return _REGISTRY[op]
    except KeyError:
        raise GraphError(f"unknown op {op!r}; mnn knows: {', '.join(sorted(_REGISTRY))}") from None


def all_schemas() -> dict[str, OpSchema]:
    return dict(sorted(_REGISTRY.items()))


def view_ops() -> frozenset[str]:
    """The ops whose schema says they are views (OpSchema.view)."""
    return frozenset(name for name, schema in _REGISTRY.items() if schema.view)


def is_view(op: str) -> bool:
    """Whether `op` is a view (OpSchema.view); False for an op with no schema (a backend's fused op)."""
    schema = _REGISTRY.get(op)
    return schema is not None and schema.view


def run_reference(op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """Run one op on numpy arrays with the reference kernel (attributes completed; the arrays at
    value-input positions bound as their attributes)."""
    schema = get_schema(op)
    if any(i < len(inputs) and inputs[i] is not None for i in schema.value_inputs):
        names = ["" if a is None else str(i) for i, a in enumerate(inputs)]
        kept, attrs = schema.bind_values(names, attrs, lambda n: inputs[int(n)])
        inputs = [inputs[int(n)] if n else None for n in kept]
    return schema.reference(inputs, schema.check_attrs(attrs, op))
