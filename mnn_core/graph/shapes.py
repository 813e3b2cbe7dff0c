"""Shapes, and the small values that decide shapes, node by node.

One walk serves two moments:

- **import / load** (`Graph.infer` on symbolic inputs): dimensions may be symbols (`graph.symbolic`);
  a value computed from shapes (Shape -> Gather -> Concat) is known as an array of ints and
  symbols, so a Reshape to it still gets an output shape. Where inference cannot go on without a
  real size, the value's dimensions are unknown; nothing fails because of a symbol.
- **resize** (`specialize`): the real input shapes are known, so every such value is computed
  (MNN's resizeSession does the same). The sub-graphs that computed them are folded into
  constants, and each op's value inputs are bound as its attributes: the backends plan a graph
  of static shapes and attributes only. An inconsistency is reported here, naming the node and
  the real shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import GraphError
from .inline import both_branches, if_condition, inline_if
from .ir import Graph, Node, TensorInfo
from .symbolic import UNKNOWN, Sym, is_sym, prod

#: ops computed from their input's shape alone (the input's data is never read)
SHAPE_OPS = frozenset({"Shape", "Size"})
#: values at most this many elements are computed when all their inputs are known (shape arithmetic)
MAX_VALUE_ELEMENTS = 1 << 16
#: no tensor is larger (bytes): far past any memory, and far from int64's end
MAX_TENSOR_BYTES = 1 << 56


def shape_value(node: Node, info: TensorInfo) -> np.ndarray:
    """The value of a Shape or Size node whose input has this info: int64, or objects holding symbols."""
    dims = list(info.shape)
    if node.op == "Size":
        dims = [prod(dims)]
        return _int_or_object(np.array(dims[0], dtype=object))
    start, end = node.attrs.get("start", 0), node.attrs.get("end")
    return _int_or_object(np.array(dims[slice(start, end)], dtype=object).reshape(-1))


def _int_or_object(a: np.ndarray) -> np.ndarray:
    if all(isinstance(v, (int, np.integer)) for v in a.reshape(-1)):
        return a.astype(np.int64)
    return a


def is_symbolic_value(a: np.ndarray) -> bool:
    return a.dtype == object and any(is_sym(v) for v in a.reshape(-1))


@dataclass
class NodeResult:
    infos: list  # one info per output
    values: list | None = None  # one value per output, where the node's outputs are known values
    bound: tuple[list[str], dict] | None = None  # (inputs, attrs) with the value inputs bound


def infer_node(node: Node, infos: list, values: list, symbolic: bool) -> NodeResult:
    """Output infos (and values, where they follow) of one node.

    infos: the inputs' infos (None for absent inputs); values: the inputs' known values (None where
    unknown). symbolic: shapes may hold symbols and failures leave outputs unknown; otherwise every
    size is real and a failure raises GraphError naming the node."""
    from ..ops import get_schema
    from ..ops.lowp import run_widened

    schema = get_schema(node.op)
    if node.op in SHAPE_OPS and infos[0] is not None:
        if infos[0].shape is None:  # a 1-D shape of unknown length, or a scalar size
            return NodeResult([TensorInfo((Sym(UNKNOWN),) if node.op == "Shape" else (), "int64")])
        value = shape_value(node, infos[0])
        return NodeResult([TensorInfo(value.shape, "int64")], [value])
    present = [i for i, n in enumerate(node.inputs) if n]
    if (
        present
        and not schema.dynamic
        and all(values[i] is not None for i in present)
        and sum(np.asarray(values[i]).size for i in present) <= MAX_VALUE_ELEMENTS
    ):
        outs = _evaluate(node, schema, values, run_widened)
        if outs is not None:
            return NodeResult([TensorInfo(o.shape, _dtype_of(o)) for o in outs], outs)
    by_name = dict(zip(node.inputs, values))
    bound = schema.bind_values(list(node.inputs), node.attrs, lambda n: by_name.get(n))
    if bound is None:
        if not symbolic:
            raise GraphError(
                f"node {node.name!r} ({node.op}): the value of an input that decides its shape "
                "is not known at resize (it follows the data, not the shapes)"
            )
        return NodeResult(_unknown(node, infos))
    inputs, attrs = bound
    ins = [infos[node.inputs.index(n)] if n else None for n in inputs]
    try:
        if not symbolic:
            attrs = schema.check_attrs(attrs, node.name)
        outs = schema.infer(ins, attrs)
    except Exception as exc:  # an infer function rejecting its inputs
        if symbolic and _has_symbols(ins, attrs):
            return NodeResult(_unknown(node, infos), bound=(inputs, attrs))
        shapes = ", ".join(str(i) for i in ins)
        raise GraphError(f"node {node.name!r} ({node.op}) cannot take inputs ({shapes}): {exc}") from None
    if len(outs) < len(node.outputs):
        raise GraphError(f"node {node.name!r} ({node.op}) has more outputs than the op produces")
    for name, info in zip(node.outputs, outs):
        _check_size(node, name, info)
    return NodeResult(list(outs), bound=(inputs, attrs))


def _check_size(node: Node, name: str, info) -> None:
    """A GraphError for an output of a negative size or one no memory could hold: what damaged
    attributes give (pads of 2**63), and sizes past int64 would wrap in the memory planner."""
    if not isinstance(info, TensorInfo) or info.shape is None:
        return
    dims = [int(d) for d in info.shape if isinstance(d, (int, np.integer))]
    if any(d < 0 for d in dims):
        raise GraphError(
            f"node {node.name!r} ({node.op}): output {name!r} would have shape {list(info.shape)}, "
            "with a negative dimension"
        )
    try:
        itemsize = np.dtype(info.dtype).itemsize
    except TypeError:
        itemsize = 8
    if math.prod(dims) * itemsize > MAX_TENSOR_BYTES:
        raise GraphError(
            f"node {node.name!r} ({node.op}): output {name!r} would have shape {list(info.shape)}, "
            f"more than {MAX_TENSOR_BYTES >> 50} PiB"
        )


#: ops that compute on symbolic sizes exactly: they move sizes or add and multiply them, never
#: compare them (a comparison would follow graph.symbolic's assumption, not the real sizes)
SYMBOLIC_EXACT = frozenset(
    {
        "Gather",
        "Concat",
        "Unsqueeze",
        "Squeeze",
        "Reshape",
        "Flatten",
        "Identity",
        "Transpose",
        "Slice",
        "Add",
        "Sub",
        "Mul",
        "Neg",
        "Cast",
    }
)


def _evaluate(node: Node, schema, values: list, run_widened) -> list | None:
    """The node run on known values; None where it cannot run on them (symbols in the values)."""
    symbolic = any(v is not None and is_symbolic_value(np.asarray(v)) for v in values)
    if symbolic and (
        node.op not in SYMBOLIC_EXACT
        or any(
            i in schema.value_inputs and v is not None and is_symbolic_value(np.asarray(v))
            for i, v in enumerate(values)
        )
    ):
        return None  # symbols only as data moved or summed, never as a Slice's end or a shape
    arrays = [None if v is None else np.asarray(v) for v in values]
    try:
        bound = schema.bind_values(list(node.inputs), node.attrs, dict(zip(node.inputs, arrays)).get)
        inputs, attrs = bound
        kernel_in = [arrays[node.inputs.index(n)] if n else None for n in inputs]
        if symbolic:
            outs = schema.reference(kernel_in, attrs)
        else:
            outs = run_widened(node.op, schema.reference, kernel_in, schema.check_attrs(attrs, node.name))
    except Exception:  # noqa: BLE001  symbols a kernel cannot take; or a real error, reported by infer
        return None
    outs = [np.asarray(o) for o in outs]
    if symbolic:
        outs = [_int_or_object(o) if o.dtype == object else o for o in outs]
        if any(
            o.dtype == object and not all(isinstance(v, (int, np.integer, str)) for v in o.reshape(-1)) for o in outs
        ):
            return None  # floats of symbols: unknown
    return outs


def _dtype_of(value: np.ndarray) -> str:
    return "int64" if value.dtype == object else value.dtype.name  # symbolic sizes: shape arithmetic


def _has_symbols(ins: list, attrs: dict) -> bool:
    if any(i is not None and (i.shape is None or not i.is_static) for i in ins):
        return True
    return any(isinstance(v, (list, tuple)) and any(is_sym(x) for x in v) or is_sym(v) for v in attrs.values())


#: ops whose output has the rank of their first input (ONNX's rank rules)
SAME_RANK = frozenset(
    {
        "Conv",
        "ConvTranspose",
        "MaxPool",
        "AveragePool",
        "LpPool",
        "GlobalAveragePool",
        "GlobalMaxPool",
        "BatchNormalization",
        "InstanceNormalization",
        "LayerNormalization",
        "GroupNormalization",
        "Resize",
        "Pad",
        "Slice",
        "Tile",
        "Clip",
        "TopK",
        "CumSum",
        "Trilu",
        "Softmax",
        "LogSoftmax",
        "Cast",
        "Relu",
        "Sigmoid",
        "Tanh",
        "HardSwish",
        "HardSigmoid",
        "LeakyRelu",
        "Gelu",
        "Erf",
        "Sqrt",
        "Exp",
        "Neg",
        "Abs",
        "Identity",
        "LRN",
        "DepthToSpace",
        "SpaceToDepth",
        "Transpose",
        "Concat",
    }
)
#: ops whose output has the broadcast rank of their inputs (MatMul: of its two operands, 2-D and up)
BROADCAST_RANK = frozenset(
    {
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Max",
        "Min",
        "Where",
        "Equal",
        "Less",
        "Greater",
        "And",
        "Or",
        "Mod",
        "PRelu",
        "MatMul",
    }
)


def _unknown(node: Node, infos: list) -> list:
    """Infos for outputs whose sizes are not known before resize: the rank where ONNX's rules give
    it, else unknown; the first input's dtype."""
    first = next((i for i in infos if isinstance(i, TensorInfo)), None)
    dtype = first.dtype if first is not None else "float32"
    ranks = [len(i.shape) for i in infos if isinstance(i, TensorInfo) and i.shape is not None]
    rank = None
    if node.op == "Concat" and ranks:
        rank = max(ranks)  # (any input of known rank tells it)
    elif node.op in SAME_RANK and first is not None and first.shape is not None:
        rank = len(first.shape)
    elif node.op == "Gemm":
        rank = 2
    elif node.op in ("Squeeze", "Unsqueeze") and node.attrs.get("axes") and ranks and first.shape is not None:
        rank = ranks[0] + len(node.attrs["axes"]) * (1 if node.op == "Unsqueeze" else -1)
    elif node.op in BROADCAST_RANK and ranks and len(ranks) == len([i for i in infos if i is not None]):
        rank = max(ranks)
    elif node.op in ("Reshape", "ConstantOfShape", "Expand") and len(infos) > 1 or node.op == "ConstantOfShape":
        target = infos[-1]
        if target is not None and target.shape is not None and len(target.shape) == 1 and not is_sym(target.shape[0]):
            rank = target.shape[0]
            if node.op == "Expand" and first.shape is not None:
                rank = max(rank, len(first.shape))
    shape = None if rank is None else (Sym(UNKNOWN),) * rank
    if node.op == "ConstantOfShape":
        dtype = np.asarray(node.attrs.get("value", np.zeros(1, np.float32))).dtype.name
    return [TensorInfo(shape, dtype) for _ in node.outputs]


# -- whole graphs -------------------------------------------------------------------------------------


@dataclass
class Walk:
    """The infos (and known values) of every value of a graph, and, at resize, the graph to plan."""

    infos: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    graph: Graph | None = None  # the specialized graph (resize only)


def walk(
    graph: Graph, input_infos: dict, symbolic: bool, input_values: dict | None = None, specialize: bool = False
) -> Walk:
    """Infer every value of `graph` from its inputs' infos (and the values of inputs that decide
    shapes). With specialize=True (real sizes), also build the graph the backends plan: shape
    sub-graphs folded into constants, value inputs bound as attributes."""
    out = Walk()
    infos, values = out.infos, out.values
    infos.update(input_infos)
    for name, arr in (input_values or {}).items():
        values[name] = np.asarray(arr)
    inits = dict(graph.initializers)  # and those of the If branches inlined
    for name, arr in inits.items():
        infos[name] = TensorInfo(arr.shape, str(arr.dtype))
    derived = set(values)  # values that follow the input shapes (or the values fed for them)
    folded: set[str] = set()  # derived values the graph holds no node for any more
    nodes: list[Node] = []
    pending = graph.nodes[::-1]  # a stack: an If whose condition is known pushes its branch's nodes
    while pending:
        node = pending.pop()
        if node.op == "If" and (cond := _value(node.inputs[0], values, inits)) is not None and not is_sym(cond):
            branch, branch_inits = inline_if(node, if_condition(cond))
            inits.update(branch_inits)
            infos.update((name, TensorInfo(arr.shape, str(arr.dtype))) for name, arr in branch_inits.items())
            pending.extend(branch[::-1])
            continue
        ins = [infos[n] if n else None for n in node.inputs]
        vals = [_value(n, values, inits) for n in node.inputs]
        res = infer_node(node, ins, vals, symbolic)
        for name, info in zip(node.outputs, res.infos):
            infos[name] = info
        if res.values is None:
            pass
        elif node.op in SHAPE_OPS or any(n in derived for n in node.inputs):
            derived.update(node.outputs)
            values.update(zip(node.outputs, res.values))
        else:  # constants only: the node stays, its value is known for what follows
            values.update(zip(node.outputs, res.values))
        if not specialize:
            continue
        if node.outputs[0] in derived:
            folded.update(node.outputs)  # computed from shapes: a constant of this plan
        elif res.bound is not None and res.bound[0] != node.inputs:
            nodes.append(Node(node.op, res.bound[0], list(node.outputs), res.bound[1], node.name))
        else:
            nodes.append(node)
    if specialize:
        out.graph = _specialized(graph, nodes, folded, values, inits)
    return out


def _value(name: str, values: dict, inits: dict):
    if not name:
        return None
    if name in values:
        return values[name]
    arr = inits.get(name)
    return None if arr is None or arr.size > MAX_VALUE_ELEMENTS else arr


def _specialized(graph: Graph, nodes: list[Node], folded: set[str], values: dict, inits: dict) -> Graph:
    if not folded and len(nodes) == len(graph.nodes) and all(a is b for a, b in zip(nodes, graph.nodes)):
        return graph
    read = set(graph.outputs)
    live = []
    for node in reversed(nodes):  # constant nodes only the folded ones read are dropped too
        if any(o in read for o in node.outputs):
            live.append(node)
            read.update(n for n in node.inputs if n)
    nodes = live[::-1]
    inits = {name: arr for name, arr in inits.items() if name in graph.initializers or name in read}
    for name in folded & read:
        inits[name] = np.ascontiguousarray(values[name]) if np.ndim(values[name]) else np.asarray(values[name])
    return Graph(
        inputs=dict(graph.inputs),
        outputs=list(graph.outputs),
        nodes=nodes,
        initializers=inits,
        name=graph.name,
        metadata=dict(graph.metadata),
    )


def value_sources(graph: Graph) -> tuple[set[str], set[str]]:
    """(graph inputs whose values decide shapes, nodes whose values must be computed at resize).

    A value input's producers (and an If condition's: the If is inlined at resize, graph/inline.py)
    are followed back to constants, Shape/Size nodes and graph inputs.
    A node on that path must compute from those alone; one that reads data (a Conv's output) makes
    the graph's shapes follow its data: raises GraphError, and the caller runs it eagerly."""
    from ..ops import get_schema

    graph, stack = both_branches(graph)
    stack += [
        n for node in graph.nodes for i, n in enumerate(node.inputs) if n and i in get_schema(node.op).value_inputs
    ]
    return _trace(graph, stack)


def follows_data(graph: Graph, name: str) -> bool:
    """Whether value `name` of `graph` (with no If) depends on tensor data, not only on constants,
    shapes and small inputs: value_sources would refuse it as a value input."""
    try:
        _trace(graph, [name])
    except GraphError:
        return True
    return False


def value_nodes(graph: Graph, names: list[str]) -> set[str]:
    """Names of the nodes on value_sources' path back from values `names` of `graph` (with no If),
    the path passing over what follows data (a dynamic op, a large input) instead of refusing it."""
    producer = graph.producers()
    return {producer[name].name for name in _trace(graph, list(names), strict=False)[1]}


def _trace(graph: Graph, stack: list[str], strict: bool = True) -> tuple[set[str], set[str]]:
    """(small graph inputs, values computed) on the path back from `stack` to constants and Shape/Size;
    what follows data raises GraphError when `strict`, else ends the path there."""
    from ..ops import get_schema

    producer = graph.producers()
    inputs: set[str] = set()
    needed: set[str] = set()
    while stack:
        name = stack.pop()
        if name in graph.initializers or name in needed:
            continue
        if name in graph.inputs:
            info = graph.inputs[name]
            if isinstance(info, TensorInfo) and len(info.shape) <= 1:
                inputs.add(name)
            elif strict:
                raise GraphError(f"a shape in this graph follows the data of input {name!r} ({info})")
            continue
        node = producer.get(name)
        if node is None:
            continue
        if node.op not in SHAPE_OPS and get_schema(node.op).dynamic:
            if strict:
                raise GraphError(f"a shape in this graph follows the data of {node.op} node {node.name!r}")
            continue
        needed.add(name)
        if node.op not in SHAPE_OPS:
            stack.extend(n for n in node.inputs if n)
    return inputs, needed


__all__ = [
    "SHAPE_OPS",
    "Sym",
    "UNKNOWN",
    "Walk",
    "follows_data",
    "infer_node",
    "shape_value",
    "value_nodes",
    "value_sources",
    "walk",
]
