"""Graph passes: one op written the way another exporter writes it, so that every backend's fusions meet
one spelling. torch's dynamo exporter and its legacy one write the same module differently:

- `x.unbind(0)` / `qkv[0], qkv[1], qkv[2]`: Slices of one tensor, [0:1], [1:2], [2:3] along an axis
  (dynamo), where the legacy exporter writes one Split. `slices_to_split` makes Slices that tile an
  axis exactly one Split (the attention fusions take a packed qkv projection's Split in place).
- `x.mean((-2, -1), keepdim=True)` and `AdaptiveAvgPool2d(1)`: ReduceMean over the last two axes of a
  4-D tensor (dynamo), GlobalAveragePool (legacy). `mean_to_global_pool` makes the first the second
  (the Conv + global pooling fusions take GlobalAveragePool).

Both results compute exactly what they replace, so the passes are sound on every backend. Each needs
shapes only where it finds a candidate: the axis's size or the input's rank, from Graph.infer at
symbolic input shapes; where they are not known, the nodes stay as they are.
"""

from __future__ import annotations

from collections import defaultdict

from .ir import Graph, Node, TensorInfo
from .rewrite import splice

#: the dtypes GlobalAveragePool takes
FLOATS = ("float16", "bfloat16", "float32", "float64")


def _known_shape(infos: dict[str, TensorInfo], value: str) -> tuple | None:
    info = infos.get(value)
    return tuple(info.shape) if isinstance(info, TensorInfo) and info.shape is not None else None


def _shapes(graph: Graph) -> dict[str, TensorInfo]:
    try:
        return graph.infer()
    except Exception:  # noqa: BLE001 - a graph inference cannot follow: no rewrite needs it
        return {}


def _one_axis_slice(node: Node) -> tuple[int, int, int] | None:
    """(axis, start, end) of a Slice along one axis with step 1 and constant bounds (the importer makes
    constant starts, ends, axes and steps attributes); else None."""
    if node.op != "Slice" or len(node.inputs) != 1:
        return None
    starts, ends, steps = node.attrs.get("starts"), node.attrs.get("ends"), node.attrs.get("steps") or [1]
    axes = node.attrs.get("axes") or [0]
    if not starts or len(starts) != 1 or len(ends or ()) != 1 or len(axes) != 1 or list(steps) != [1]:
        return None
    return int(axes[0]), int(starts[0]), int(ends[0])


def _clamped(bound: int, size: int) -> int:
    return min(max(bound + size if bound < 0 else bound, 0), size)


def slices_to_split(graph: Graph) -> Graph:
    """Two or more Slices of one value along one axis whose ranges tile the axis end to end become one
    Split (placed where the first of them was: every reader of a part comes after it)."""
    groups: dict[tuple[str, int], list[Node]] = defaultdict(list)
    for node in graph.nodes:
        sl = _one_axis_slice(node)
        if sl is not None and node.outputs[0] not in graph.outputs:
            groups[(node.inputs[0], sl[0])].append(node)
    groups = {key: nodes for key, nodes in groups.items() if len(nodes) >= 2}
    if not groups:
        return graph
    infos = _shapes(graph)
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    replace, drop = {}, set()
    for (value, axis), nodes in groups.items():
        shape = _known_shape(infos, value)
        if shape is None or not -len(shape) <= axis < len(shape) or not isinstance(shape[axis], int):
            continue
        size = shape[axis]
        ranges = sorted(
            ((_clamped(s, size), _clamped(e, size), n) for n in nodes for _, s, e in [_one_axis_slice(n)]),
            key=lambda r: r[:2],
        )
        ends = [0] + [e for _, e, _ in ranges]
        if any(s != prev or e <= s for (s, e, _), prev in zip(ranges, ends)) or ends[-1] != size:
            continue  # a gap, an overlap, an empty part or a part left over: not a Split
        first = min(nodes, key=lambda n: position[id(n)])
        split = Node(
            "Split",
            [value],
            [n.outputs[0] for _, _, n in ranges],
            {"axis": axis % len(shape), "split": [e - s for s, e, _ in ranges], "num_outputs": 0},
            f"{first.name}/split",
        )
        replace[id(first)] = [split]
        drop.update(id(n) for n in nodes if n is not first)
    return splice(graph, replace, drop)


def _keeps_two_axes(node: Node) -> bool:
    return bool(node.attrs.get("keepdims", 1)) and len(node.attrs.get("axes") or ()) == 2


def mean_to_global_pool(graph: Graph) -> Graph:
    """ReduceMean of a 4-D tensor over its last two axes, dimensions kept, becomes GlobalAveragePool."""
    candidates = [n for n in graph.nodes if n.op == "ReduceMean" and len(n.inputs) == 1 and _keeps_two_axes(n)]
    if not candidates:
        return graph
    infos = _shapes(graph)
    for node in candidates:
        shape = _known_shape(infos, node.inputs[0])
        if shape is None or len(shape) != 4 or sorted(a % 4 for a in node.attrs["axes"]) != [2, 3]:
            continue
        if infos[node.inputs[0]].dtype not in FLOATS:
            continue
        node.op, node.attrs = "GlobalAveragePool", {}
    return graph
