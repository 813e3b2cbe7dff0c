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
- `gradient`: the rule training uses to differentiate the op.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import GraphError
from ..graph.ir import Graph, Node, TensorInfo

REQUIRED = object()  # default of an attribute that must be given

_ATTR_TYPES = {
    "int": (int, np.integer),
    "float": (float, int, np.floating, np.integer),
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
    doc: str = ""
    #: gradient(ctx) rule used by training (set by mnn_core's autograd rules module)
    gradient: Callable | None = None
    #: the output shapes (or kinds) follow input *values*, or the op takes sequence/optional values:
    #: a graph with such an op runs eagerly on the reference backend (Graph.is_dynamic)
    dynamic: bool = False

    def check_arity(self, node: Node) -> None:
        lo, hi = self.n_inputs
        if not lo <= len(node.inputs) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise GraphError(f"node {node.name!r} ({self.name}) takes {want} inputs, got {len(node.inputs)}")
        if len(node.outputs) > self.n_outputs or not node.outputs:
            raise GraphError(f"node {node.name!r} ({self.name}) has at most {self.n_outputs} output(s), "
                             f"got {len(node.outputs)}")

    def check_attrs(self, attrs: dict[str, Any], node: str = "?") -> dict[str, Any]:
        """Validate attributes and fill in defaults; return the complete dict."""
        unknown = set(attrs) - set(self.attrs)
        if unknown:
            known = ", ".join(sorted(self.attrs)) or "none"
            raise GraphError(f"node {node!r} ({self.name}) has unknown attribute(s) {sorted(unknown)}; known: {known}")
        out = {}
        for name, spec in self.attrs.items():
            if name in attrs:
                out[name] = spec.check(self.name, name, attrs[name], node)
            elif spec.default is REQUIRED:
                raise GraphError(f"node {node!r} ({self.name}) needs attribute {name!r} ({spec.kind})")
            else:
                out[name] = spec.default
        return out

    def estimate_flops(self, ins: Sequence[TensorInfo], outs: Sequence[TensorInfo], attrs: dict) -> float:
        if self.flops is not None:
            return float(self.flops(list(ins), list(outs), attrs))
        return float(sum(o.size for o in outs))


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


def run_reference(op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """Run one op on numpy arrays with the reference kernel (attributes completed)."""
    schema = get_schema(op)
    return schema.reference(inputs, schema.check_attrs(attrs, op))
