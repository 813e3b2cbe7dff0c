"""Run a graph eagerly, node by node, on the reference kernels.

    outputs = evaluate(graph, {"x": x, "seq": [a, b]})

This is how graphs that cannot be planned once per input shape run (`Graph.is_dynamic`):
those holding sequence or optional values, or ops whose output shapes follow input
values (Loop, Scan, If, NonZero, Unique, ...). There is no arena: every value is a
numpy array, a list of arrays (a sequence) or None (an empty optional), and each
node's reference kernel runs on the values as they are. Control-flow kernels run
their bodies through this same function. A Session on other backends runs such a graph
as planned pieces between its dynamic ops instead (runtime/eager.py), each host node
through run_node here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import BackendError, InputError, LimitError, MnnError
from ..runtime.cancel import current_limits
from .ir import Graph, Node, OptionalInfo, SequenceInfo, TensorInfo


def evaluate(graph: Graph, feeds: dict[str, Any]) -> dict[str, Any]:
    """{output name: value} of one run of `graph` on `feeds` ({input name: value})."""
    env: dict[str, Any] = dict(graph.initializers)
    missing = [n for n in graph.inputs if n not in feeds]
    if missing:
        raise InputError(f"graph {graph.name!r}: inputs missing: {', '.join(missing)}")
    for name, info in graph.inputs.items():
        env[name] = check_feed(name, info, feeds[name])
    limits = current_limits.get()
    for node in graph.nodes:
        if limits is not None:
            limits.check(f"node {node.name!r} ({node.op})")
        env.update(zip(node.outputs, run_node(node, env)))
    return {n: env[n] for n in graph.outputs}


def run_node(node: Node, env: dict[str, Any], kernel: Callable | None = None) -> list:
    """One node's outputs from the values in `env`, by `kernel(inputs, attrs)` (its reference kernel
    when None; the arrays that decide shapes bound as attributes first); errors name the node."""
    from ..ops import get_schema
    from ..ops.lowp import run_widened

    schema = get_schema(node.op)
    inputs, attrs = node.inputs, node.attrs
    if schema.takes_values(node):  # values that decide shapes, as attributes
        inputs, attrs = schema.bind_values(inputs, attrs, env.get)
        attrs = schema.check_attrs(attrs, node.name)
    ins = [env[n] if n else None for n in inputs]
    try:
        if kernel is not None:
            return kernel(ins, attrs)
        return run_widened(node.op, schema.reference, ins, attrs)
    except LimitError as exc:  # which node (and, in a body, which enclosing nodes) reached it
        raise type(exc)(f"node {node.name!r} ({node.op}): {exc}") from None
    except MnnError:
        raise
    except Exception as exc:
        raise BackendError(f"node {node.name!r} ({node.op}) failed: {type(exc).__name__}: {exc}") from exc


def check_feed(name: str, info, value):
    """A fed value in the kind (and, for tensors, the dtype) the graph declares."""
    if isinstance(info, TensorInfo):
        if isinstance(value, (list, tuple)) or value is None:
            raise InputError(f"input {name!r} is a tensor {info}, got a {type(value).__name__}")
        arr = np.asarray(value)
        if arr.ndim != len(info.shape):
            raise InputError(f"input {name!r} must have shape {info}, got {tuple(arr.shape)}")
        return arr.astype(info.dtype, copy=False)
    if isinstance(info, SequenceInfo):
        if not isinstance(value, (list, tuple)):
            raise InputError(f"input {name!r} is a sequence (a list of arrays), got {type(value).__name__}")
        return [np.asarray(v) for v in value]
    if isinstance(info, OptionalInfo):
        return None if value is None else check_feed(name, info.elem, value) if info.elem is not None else value
    raise InputError(f"input {name!r} has an unknown kind {info!r}")
