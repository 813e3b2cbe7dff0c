"""What a graph pass that rewrites chains of nodes asks of the graph again and again: the one node
reading a value (where the chain may be replaced), names no value of the graph already has, and the
graph's node list with the chains swapped for their new nodes."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from .ir import Graph, Node


def sole_reader(consumers: Mapping[str, Sequence[Node]], outputs: Collection[str], value: str) -> Node | None:
    """The one node reading `value`, where it has exactly one and `value` is not a graph output: only
    then may a pass fold the value away into that reader."""
    users = consumers.get(value, ())
    return users[0] if len(users) == 1 and value not in outputs else None


class NewNames:
    """Names for the values and initializers a pass adds: `base`, else `base_`, `base__`, ...; never
    one the graph had or this pass has handed out already."""

    def __init__(self, graph: Graph):
        self.taken = set(graph.producers()) | set(graph.initializers) | set(graph.inputs)

    def __call__(self, base: str) -> str:
        name = base
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name


def splice(graph: Graph, replace: Mapping[int, Sequence[Node]], drop: Collection[int]) -> Graph:
    """`graph` with each node whose id is a key of `replace` swapped for those nodes, in its place, and
    each node whose id is in `drop` left out (a rewritten chain's other members)."""
    if replace:
        out: list[Node] = []
        for node in graph.nodes:
            if id(node) in replace:
                out.extend(replace[id(node)])
            elif id(node) not in drop:
                out.append(node)
        graph.nodes = out
    return graph
