"""The graph IR: values are named tensors, nodes are ops between them.

A value is referred to by its name everywhere (node inputs, outputs, graph
outputs); an empty name marks an absent optional input, as in ONNX. Weights
are initializers: constant numpy arrays keyed by value name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import GraphError
from .symbolic import UNKNOWN, Sym, as_dim, prod

#: numeric dtypes numpy holds natively
NUMPY_DTYPES = (
    "float32",
    "float16",
    "int64",
    "int32",
    "int8",
    "uint8",
    "bool",
    "float64",
    "int16",
    "uint16",
    "uint32",
    "uint64",
)
#: low-precision dtypes (bfloat16, float8, float4, sub-byte integers) by their ml_dtypes name. numpy holds
#: them through the ml_dtypes package (onnx's own dependency), one element per byte (two for bfloat16);
#: the reference backend computes on them, fast backends list the dtypes they take in their KernelSpecs.
LOW_PRECISION_DTYPES = (
    "bfloat16",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn",
    "int4",
    "uint4",
    "int2",
    "uint2",
)
#: dtypes the engine knows, by numpy name (the order is the C ABI's mnn_dtype code).
DTYPES = NUMPY_DTYPES + LOW_PRECISION_DTYPES

#: dtypes of Python objects (numpy dtype object holding str: ONNX string tensors). They cannot live in
#: an arena, so a graph with such values runs eagerly (Graph.is_dynamic); they have no C ABI code.
HOST_DTYPES = ("object",)

_LOW_PRECISION = frozenset(LOW_PRECISION_DTYPES)
_ml_dtypes: object = None  # the ml_dtypes module once imported, False where it is not installed


def low_precision_dtypes() -> bool:
    """Register the low-precision dtypes with numpy (import ml_dtypes, so np.dtype("bfloat16")
    works) on first need: the import costs more than the rest of mnn_core's, and most models never
    use them. False where ml_dtypes is not installed (those dtypes then raise on use)."""
    global _ml_dtypes
    if _ml_dtypes is None:
        try:
            import ml_dtypes

            _ml_dtypes = ml_dtypes
        except ImportError:  # pragma: no cover - mnn runs without it
            _ml_dtypes = False
    return _ml_dtypes is not False


def numpy_dtype(name: str) -> np.dtype:
    """np.dtype(name), the low-precision dtypes registered with numpy first where `name` is one."""
    if name in _LOW_PRECISION:
        low_precision_dtypes()
    return np.dtype(name)


Dim = "int | str"  # a dimension: a size, or a symbol such as "N" (dynamic; graph.symbolic.Sym)


@dataclass(frozen=True)
class TensorInfo:
    """Shape and dtype of a value. A dimension may be a symbol (dynamic).

    `layout` is how a backend keeps the tensor in memory during a run: 0 is dense
    row-major, as everywhere outside a plan; other codes are private to the backend
    that chose them (`Backend.tensor_layouts`), as `mnn_tensor.layout` in the C ABI.

    Before resize a dimension may be symbolic (a `Sym`: "N", "(H//2)", "?" for unknown), and
    `shape` is None where even the rank is unknown; at resize every shape is concrete."""

    shape: tuple
    dtype: str = "float32"
    layout: int = 0

    def __post_init__(self):
        if self.dtype not in DTYPES and self.dtype not in HOST_DTYPES:
            raise GraphError(f"unknown dtype {self.dtype!r}; known: {', '.join(DTYPES + HOST_DTYPES)}")
        if self.dtype in _LOW_PRECISION and not low_precision_dtypes():
            raise GraphError(f"dtype {self.dtype} needs the ml_dtypes package: pip install ml_dtypes")
        if self.shape is not None:
            object.__setattr__(
                self, "shape", tuple(as_dim(d) if isinstance(d, str) or d is None else d for d in self.shape)
            )

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(isinstance(d, (int, np.integer)) for d in self.shape)

    @property
    def size(self) -> int:
        """Elements: an int, or a Sym before resize."""
        if self.shape is None:
            return Sym(UNKNOWN)
        return int(np.prod(self.shape, dtype=np.int64)) if self.is_static else prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(self.dtype).itemsize

    def __str__(self) -> str:
        if self.shape is None:
            return f"{self.dtype}[rank unknown]"
        text = f"{self.dtype}[{', '.join(str(d) for d in self.shape)}]"
        return text + (f" layout {self.layout}" if self.layout else "")


@dataclass(frozen=True)
class SequenceInfo:
    """A value that is an ordered list of tensors (ONNX sequence type), all of one dtype.

    `elem` describes the elements when they share a shape (dims may be symbols), or
    gives only the dtype (shape None). Sequences live outside the arena: the graph
    that holds one runs eagerly on the reference backend (see `Graph.is_dynamic`)."""

    elem: TensorInfo | None = None
    dtype: str = "float32"

    def __str__(self) -> str:
        return f"seq({self.elem if self.elem is not None else self.dtype})"


@dataclass(frozen=True)
class OptionalInfo:
    """A value that is either absent (None) or holds a tensor or a sequence (ONNX optional type)."""

    elem: TensorInfo | SequenceInfo | None = None

    def __str__(self) -> str:
        return f"optional({self.elem})"


#: what a graph value may be: a tensor (the arena's kind), or a sequence / optional (host objects)
ValueInfo = (TensorInfo, SequenceInfo, OptionalInfo)


def symbolic(prefix: str, rank: int) -> tuple:
    """A shape of `rank` fresh symbols: for outputs whose sizes only running the graph tells."""
    return tuple(f"{prefix}_d{i}" for i in range(rank))


@dataclass
class Node:
    op: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    def __repr__(self) -> str:
        return f"Node({self.name or '?'}: {self.op}({', '.join(self.inputs)}) -> {', '.join(self.outputs)})"


def consumers_of(nodes) -> dict[str, list[Node]]:
    """{value: the nodes reading it, in order; a node reading it twice is listed twice}."""
    users: dict[str, list[Node]] = {}
    for n in nodes:
        for name in n.inputs:
            if name:
                users.setdefault(name, []).append(n)
    return users


@dataclass
class Graph:
    """A static dataflow graph in topological order."""

    inputs: dict[str, TensorInfo] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    initializers: dict[str, np.ndarray] = field(default_factory=dict)
    name: str = "graph"
    metadata: dict[str, str] = field(default_factory=dict)

    # -- structure ---------------------------------------------------------

    def producers(self) -> dict[str, Node]:
        return {out: n for n in self.nodes for out in n.outputs}

    def initializer_bytes(self) -> int:
        """Bytes of every constant, released ones too (their placeholders keep shape and dtype)."""
        return sum(np.asarray(a).nbytes for a in self.initializers.values())

    def consumers(self) -> dict[str, list[Node]]:
        return consumers_of(self.nodes)

    def copy(self) -> Graph:
        """A structural copy; initializer arrays are shared (they are constant)."""
        return Graph(
            inputs=dict(self.inputs),
            outputs=list(self.outputs),
            nodes=[Node(n.op, list(n.inputs), list(n.outputs), dict(n.attrs), n.name) for n in self.nodes],
            initializers=dict(self.initializers),
            name=self.name,
            metadata=dict(self.metadata),
        )

    def subgraphs(self) -> list[tuple[Node, str, Graph]]:
        """(node, attribute, graph) of every control-flow body in this graph (not nested ones)."""
        return [(n, k, v) for n in self.nodes for k, v in n.attrs.items() if isinstance(v, Graph)]

    def is_dynamic(self) -> bool:
        """True when the graph cannot be planned once per input shape: it holds sequence or
        optional values, or an op whose output shapes follow input *values* (Loop, NonZero, ...).
        Such a graph runs eagerly, node by node (`mnn_core.graph.evaluate`)."""
        from ..ops import get_schema

        if any(not isinstance(i, TensorInfo) or i.dtype in HOST_DTYPES for i in self.inputs.values()):
            return True
        if any(a.dtype.name in HOST_DTYPES for a in self.initializers.values()):
            return True
        return any(get_schema(n.op).dynamic for n in self.nodes)

    def param_count(self) -> int:
        return int(sum(a.size for a in self.initializers.values()))

    def ops_histogram(self) -> dict[str, int]:
        hist: dict[str, int] = {}
        for n in self.nodes:
            hist[n.op] = hist.get(n.op, 0) + 1
        return dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])))

    # -- checks --------------------------------------------------------------

    def validate(self) -> None:
        """Check names, order and attributes; raise GraphError naming the problem."""
        from ..ops import get_schema

        defined = set(self.inputs) | set(self.initializers)
        clash = set(self.inputs) & set(self.initializers)
        if clash:
            raise GraphError(f"values {sorted(clash)} are both graph inputs and initializers")
        seen_names: set[str] = set()
        for i, node in enumerate(self.nodes):
            if not node.name:
                node.name = f"{node.op.lower()}_{i}"
            if node.name in seen_names:
                raise GraphError(f"two nodes are named {node.name!r}; node names must be unique")
            seen_names.add(node.name)
            schema = get_schema(node.op)  # raises for unknown ops
            schema.check_arity(node)
            node.attrs = schema.check_attrs(node.attrs, node.name, schema.given_attrs(node.inputs))
            for key, body in node.attrs.items():
                if isinstance(body, Graph):  # a body reads only its own inputs: captures are explicit
                    try:
                        body.validate()
                    except GraphError as exc:
                        raise GraphError(f"node {node.name!r} ({node.op}) attribute {key!r}: {exc}") from None
            for name in node.inputs:
                if name and name not in defined:
                    raise GraphError(
                        f"node {node.name!r} ({node.op}) reads {name!r}, which is not a graph input, "
                        "an initializer or the output of an earlier node"
                    )
            for name in node.outputs:
                if not name:
                    raise GraphError(f"node {node.name!r} has an unnamed output")
                if name in defined:
                    raise GraphError(f"value {name!r} is defined twice (again by node {node.name!r})")
                defined.add(name)
        for name in self.outputs:
            if name not in defined:
                raise GraphError(f"graph output {name!r} is never produced")

    # -- shape inference -------------------------------------------------------

    def infer(self, input_infos: dict[str, TensorInfo] | None = None) -> dict[str, TensorInfo]:
        """Shape and dtype of every value, given concrete or symbolic input shapes.

        Symbolic dimensions stay symbols (or expressions over them, or unknown: graph/shapes.py), as
        do sizes that follow values not known here (a Reshape target fed as an input); a mismatch of
        concrete shapes raises GraphError. Session.resize computes every shape for real."""
        from .shapes import walk

        infos = dict(self.inputs if input_infos is None else input_infos)
        return walk(self, infos, symbolic=True).infos


def unique_name(taken: Iterable[str], base: str) -> str:
    taken = set(taken)
    if base not in taken:
        return base
    i = 1
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"
