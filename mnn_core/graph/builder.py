"""Build graphs in Python:

    b = GraphBuilder("tiny")
    x = b.input("x", ("N", 3, 32, 32))
    y = b.Conv(x, b.const(w), b.const(bias), pads=[1, 1, 1, 1])
    y = b.Relu(y)
    b.output(y, name="y")
    graph = b.build()

Every op name is a method (`b.Conv`, `b.Add`, ...): inputs positionally
(None for an absent optional input), attributes as keywords. Values are names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import GraphError
from .ir import Graph, Node, TensorInfo, unique_name


class GraphBuilder:
    def __init__(self, name: str = "graph"):
        self.graph = Graph(name=name)
        self._names: set[str] = set()

    def _fresh(self, base: str) -> str:
        name = unique_name(self._names, base)
        self._names.add(name)
        return name

    def input(self, name: str, shape, dtype: str = "float32") -> str:
        name = self._fresh(name)
        self.graph.inputs[name] = TensorInfo(tuple(shape), dtype)
        return name

    def const(self, value: Any, name: str = "const", dtype: str | None = None) -> str:
        arr = np.asarray(value, dtype=dtype)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        name = self._fresh(name)
        self.graph.initializers[name] = arr
        return name

    def op(self, op: str, *inputs: str | None, n_outputs: int = 1, name: str | None = None, **attrs):
        """Add a node; return its output name (a tuple when n_outputs > 1)."""
        for i, value in enumerate(inputs):
            if value is not None and not isinstance(value, str):
                fix = (
                    f"pass the inputs as separate arguments: b.{op}(x, y, ...)"
                    if isinstance(value, (list, tuple))
                    else "pass the name a builder call returned (or None for an absent optional input)"
                )
                raise GraphError(f"{op}: input {i} is a {type(value).__name__}, not a value name; {fix}")
        node_name = self._fresh(name or op.lower())
        # the output takes the node's name (value and node names are separate namespaces)
        outs = [node_name] if n_outputs == 1 else [self._fresh(f"{node_name}:{i}") for i in range(n_outputs)]
        self.graph.nodes.append(Node(op, [i or "" for i in inputs], outs, attrs, node_name))
        return outs[0] if n_outputs == 1 else tuple(outs)

    def output(self, value: str, name: str | None = None) -> str:
        """Mark a value as a graph output, renamed to `name` when given."""
        if name and name != value:
            if name in self._names:
                raise GraphError(f"output name {name!r} is taken")
            self._names.add(name)
            producer = next((n for n in self.graph.nodes if value in n.outputs), None)
            if producer is None:  # an input or a constant: give it a node of its own
                self.graph.nodes.append(Node("Identity", [value], [name], {}, self._fresh(f"{name}_out")))
            else:
                producer.outputs = [name if o == value else o for o in producer.outputs]
                for node in self.graph.nodes:
                    node.inputs = [name if i == value else i for i in node.inputs]
                self.graph.outputs = [name if o == value else o for o in self.graph.outputs]
            value = name
        self.graph.outputs.append(value)
        return value

    def build(self) -> Graph:
        self.graph.validate()
        return self.graph

    def __getattr__(self, op: str):
        if not op[:1].isupper():
            raise AttributeError(op)
        return lambda *inputs, **attrs: self.op(op, *inputs, **attrs)
