"""Backend fusions: after placement, a backend may run a few of its placed ops as one op of its own.

A graph pass (graph/passes.py, or a plugin's through mnn_register_passes) runs before placement and
for every backend alike, so it can only fuse what every backend runs. What one backend does better
fused (mnn-x86's direct stem convolution and the max pooling after it, run band by band so the
convolution's output never leaves the cache) is only known once the ops are placed on it. So at each
plan the core offers every backend with a `fuse` method the ops placed on it (a `FusionOffer`), and
the backend answers with `Fusion`s: a new node, of an op its own `prepare` knows, that replaces some
of those ops (the types are the contract's: mnn_core/backend/fusion.py). The plan then has that
node where the last op it replaces was; the memory planner, the layouts and the steps are built on
the fused list, so lifetimes stay exact.

The core checks each answer (a backend bug is a clear BackendError, never a wrong result):

- the replaced ops run on that backend, and none is replaced twice;
- a value written inside the group and read outside it, or a graph output, is an output of the
  fused node, and every output of the fused node was written inside the group;
- the fused node reads only values the group read that it did not write itself;
- every reader outside the group of a fused output runs after the group's last op (the fused node
  takes that op's place, so nothing may need its outputs earlier).

`Session(fuse=False)` turns fusions off (to compare, or to debug a backend's fused kernel).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..backend.fusion import Fusion, FusionOffer
from ..errors import BackendError, MnnError
from ..graph.ir import Node, TensorInfo
from .scheduler import Placement

__all__ = ["Fusion", "FusionOffer", "fuse_placed"]


def fuse_placed(
    nodes: Sequence[Node],
    placements: Sequence[Placement],
    backends: Mapping[str, object],
    infos: Mapping[str, TensorInfo],
    constants,
    outputs,
    ctx,
):
    """Offer each backend its placed ops; apply and check the fusions it returns.

    Returns (nodes, placements, fused): the run order and placements with each fusion's node in the
    place of the last op it replaces, and {fused node name: the names it replaces}."""
    placed = {p.node: p.backend for p in placements}
    readers: dict[str, list[Node]] = {}
    for node in nodes:
        for name in dict.fromkeys(n for n in node.inputs if n):  # a node reading a value twice counts once
            readers.setdefault(name, []).append(node)
    readers_t = {v: tuple(r) for v, r in readers.items()}
    fusions: list[tuple[str, Fusion]] = []
    for name, backend in backends.items():
        fuse = getattr(backend, "fuse", None)  # backends not derived from Backend lack it
        mine = tuple(n for n in nodes if placed.get(n.name) == name)
        if not callable(fuse) or not mine:
            continue
        offer = FusionOffer(name, mine, infos, frozenset(constants), frozenset(outputs), readers_t, placed)
        try:
            proposed = list(fuse(offer, ctx) or ())
        except MnnError:
            raise
        except Exception as exc:
            raise BackendError(f"backend {name} failed to propose fusions: {type(exc).__name__}: {exc}") from exc
        fusions += [(name, fusion) for fusion in proposed]
    if not fusions:
        return list(nodes), list(placements), {}
    order = {n.name: i for i, n in enumerate(nodes)}
    by_name = {n.name: n for n in nodes}
    taken: set[str] = set()
    at_last: dict[str, tuple[str, Fusion]] = {}  # the last replaced node -> its fusion
    names: set[str] = set()  # the fused nodes' names
    for backend, fusion in fusions:
        last = _check(backend, fusion, by_name, order, placed, readers, set(outputs), taken)
        if fusion.node.name in names:
            raise BackendError(f"backend {backend} named two fused nodes {fusion.node.name!r}; names must be unique")
        names.add(fusion.node.name)
        taken.update(fusion.replaces)
        at_last[last] = (backend, fusion)
    by_placement = {p.node: p for p in placements}
    new_nodes, new_placements, fused = [], [], {}
    for node in nodes:
        if node.name in at_last:
            backend, fusion = at_last[node.name]
            est = sum(by_placement[r].est_ms for r in fusion.replaces)
            why = f"fused: {' + '.join(fusion.replaces)}" + (f" ({fusion.reason})" if fusion.reason else "")
            new_nodes.append(fusion.node)
            new_placements.append(Placement(fusion.node.name, fusion.node.op, backend, why, est))
            fused[fusion.node.name] = list(fusion.replaces)
        elif node.name not in taken:
            new_nodes.append(node)
            new_placements.append(by_placement[node.name])
    return new_nodes, new_placements, fused


def _check(backend, fusion, by_name, order, placed, readers, outputs, taken) -> str:
    """The name of the last node the fusion replaces, after checking the fusion is sound."""
    node, replaces = fusion.node, tuple(fusion.replaces)

    def bad(why: str) -> BackendError:
        return BackendError(
            f"backend {backend} proposed an unsound fusion {node.name!r} of {', '.join(replaces) or 'nothing'}: {why}"
        )

    if not isinstance(node, Node) or not replaces:
        raise bad("a Fusion needs a Node and the names of the nodes it replaces")
    for name in replaces:
        if name not in by_name or placed.get(name) != backend:
            raise bad(f"{name!r} is not a node placed on {backend}")
        if name in taken:
            raise bad(f"{name!r} is already replaced by another fusion")
    if len(set(replaces)) != len(replaces):
        raise bad("a node is named twice")
    if node.name in by_name and node.name not in replaces:
        raise bad("its name is already another node's")
    group = [by_name[n] for n in replaces]
    inside = set(replaces)
    written = {v for n in group for v in n.outputs}
    read = {v for n in group for v in n.inputs if v}
    visible = {v for v in written if v in outputs or any(r.name not in inside for r in readers.get(v, ()))}
    if missing := visible - set(node.outputs):
        raise bad(f"{', '.join(sorted(missing))} is read outside the group but not an output of the fused node")
    if extra := set(node.outputs) - written:
        raise bad(f"{', '.join(sorted(extra))} is not written by the nodes it replaces")
    if wrong := {v for v in node.inputs if v} - (read - written):
        raise bad(f"it reads {', '.join(sorted(wrong))}, which is not an input of the group")
    last = max(replaces, key=order.__getitem__)
    for value in node.outputs:
        early = [r.name for r in readers.get(value, ()) if r.name not in inside and order[r.name] < order[last]]
        if early:
            raise bad(f"{value!r} is read by {', '.join(early)} before {last!r}, where the fused node runs")
    return last
