"""What an op handler works with: the graph being built, and what is known about each value.

Every node is shape-inferred as it is added (mnn's own per-node inference), so values computed
from shapes (MNN writes Shape -> Slice -> Concat -> Reshape for a Flatten) are known at import:
such nodes become constants, and a handler can read an input that must be a constant (an axis)."""

from __future__ import annotations

import numpy as np

from ...errors import GraphError, MnnFormatError
from ...graph.ir import Graph, Node, TensorInfo
from ...graph.shapes import infer_node, is_symbolic_value
from ...ops import get_schema


class Context:
    def __init__(self, where: str):
        self.where = where
        self.graph = Graph(name="mnn_official")
        self.infos: dict[str, TensorInfo] = {}
        self.values: dict[str, np.ndarray] = {}
        self._count = 0

    def fail(self, what: str) -> MnnFormatError:
        return MnnFormatError(f"{self.where}: {what}")

    def fresh(self, base: str) -> str:
        self._count += 1
        return f"{base}.mnnx{self._count}"

    def add_input(self, name: str, info: TensorInfo) -> None:
        self.graph.inputs[name] = info
        self.infos[name] = info

    def const(self, value, base: str = "const", name: str | None = None) -> str:
        arr = np.ascontiguousarray(value)
        name = name or self.fresh(base)
        self.graph.initializers[name] = arr
        self.infos[name] = TensorInfo(arr.shape, str(arr.dtype))
        self.values[name] = arr
        return name

    def value(self, name: str, what: str) -> np.ndarray:
        """The value of an input that must be known at import (a constant, or computed from shapes)."""
        v = self.values.get(name)
        if v is None or is_symbolic_value(np.asarray(v)):
            raise self.fail(f"{what} must be a constant (or follow from the input shapes), and {name!r} is not")
        return np.asarray(v)

    def emit(self, op: str, inputs: list[str], outputs: list[str] | None = None, name: str = "", **attrs) -> str:
        """Add a node (or, when its outputs follow from known values, constants); return output 0."""
        outputs = outputs or [self.fresh(name or op.lower())]
        try:
            attrs = get_schema(op).check_attrs(attrs, name or op)  # defaults filled in, as inference expects
        except GraphError as exc:
            raise self.fail(f"op {name or op!r} ({op}): {exc}") from None
        node = Node(op, list(inputs), list(outputs), attrs, name or outputs[0])
        infos = [self.infos.get(n) if n else None for n in inputs]
        values = [self.values.get(n) if n else None for n in inputs]
        try:
            result = infer_node(node, infos, values, symbolic=True)
        except GraphError as exc:
            raise self.fail(f"op {name or op!r} ({op}) does not fit its inputs: {exc}") from None
        known = result.values is not None and all(
            v is not None and not is_symbolic_value(np.asarray(v)) for v in result.values
        )
        if known and not any(o in self.graph.outputs for o in outputs):
            for out, v in zip(outputs, result.values):
                self.const(np.asarray(v), name=out)
            return outputs[0]
        for out, info in zip(outputs, result.infos):
            self.infos[out] = info
        if result.values:
            for out, v in zip(outputs, result.values):
                if v is not None:
                    self.values[out] = v
        self.graph.nodes.append(node)
        return outputs[0]
