"""Reverse-mode autodiff over the tape of applied ops.

Each op applied to a Var that requires a gradient leaves a `TapeNode`: the
op, its attributes, its input Vars and (detached) outputs. `grad` walks the
nodes from the outputs back, calling each op schema's `gradient` rule
(mnn_core/express/grad_rules.py), which builds the backward computation out
of ordinary ops. Under an active trace those ops become graph nodes, which is
how a compiled training step gets its backward pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import MnnError
from ..ops import get_schema
from .var import Var, no_grad


class TapeNode:
    __slots__ = ("op", "attrs", "inputs", "outputs")

    def __init__(self, op: str, attrs: dict, inputs: list, outputs: list):
        self.op = op
        self.attrs = attrs
        self.inputs = inputs  # Vars (or None for an absent optional input)
        self.outputs = outputs  # detached copies: no reference cycle through the tape


class GradContext:
    """What a gradient rule sees: the forward op, and the gradients of its outputs."""

    __slots__ = ("op", "attrs", "inputs", "outputs", "grads")

    def __init__(self, node: TapeNode, grads: list):
        self.op = node.op
        self.attrs = node.attrs
        self.inputs = node.inputs
        self.outputs = node.outputs
        self.grads = grads  # one per output, None where nothing flowed back

    @property
    def grad(self) -> Var:
        return self.grads[0]

    def needs(self, i: int) -> bool:
        """Whether input i wants a gradient (rules skip the work otherwise)."""
        return i < len(self.inputs) and self.inputs[i] is not None and self.inputs[i].requires_grad


def record(op: str, attrs: dict, inputs: list, results: list) -> None:
    node = TapeNode(op, attrs, inputs, [r.detach() for r in results])
    for i, r in enumerate(results):
        r._node, r._index = node, i
        r.requires_grad = r.dtype.kind == "f"


def _key(v: Var):
    return (id(v._node), v._index) if v._node is not None else id(v)


def _topological(roots: Sequence[Var]) -> list[TapeNode]:
    """Tape nodes reachable from roots, producers before consumers."""
    order, seen = [], set()
    stack = [(r._node, False) for r in roots if r._node is not None]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for v in node.inputs:
            if v is not None and v._node is not None and id(v._node) not in seen:
                stack.append((v._node, False))
    return order


def _seed(out: Var, grad) -> Var:
    if grad is None:
        if out.size != 1:
            raise MnnError(
                f"backward() of a Var of shape {out.shape} needs a gradient argument "
                "(only a single value has an implicit gradient of 1)"
            )
        return Var._wrap(np.ones(out.shape, out.dtype))
    g = grad if isinstance(grad, Var) else Var._wrap(np.asarray(grad, dtype=out.dtype))
    if g.shape != out.shape:
        raise MnnError(f"gradient of shape {g.shape} given for a Var of shape {out.shape}")
    return g


def _run_backward(outputs: Sequence[Var], grad_outputs: Sequence, wanted: dict) -> dict:
    """Propagate; return {key: gradient} for leaves and for the `wanted` keys."""
    grads: dict = {}
    found: dict = {}
    for out, g in zip(outputs, grad_outputs):
        if not out.requires_grad:
            raise MnnError(
                "backward() of a Var that does not require a gradient: no input it depends on "
                "has requires_grad=True (parameters do; use Var(..., requires_grad=True))"
            )
        k = _key(out)
        grads[k] = _seed(out, g) if k not in grads else grads[k] + _seed(out, g)
    leaves: dict = {}
    with no_grad():
        for node in reversed(_topological(outputs)):
            gouts = [grads.pop((id(node), i), None) for i in range(len(node.outputs))]
            for i, g in enumerate(gouts):
                if g is not None and (id(node), i) in wanted:
                    found[(id(node), i)] = g
            if all(g is None for g in gouts):
                continue
            rule = get_schema(node.op).gradient
            if rule is None:
                raise MnnError(
                    f"op {node.op} has no gradient rule, so nothing before it can be trained; "
                    "detach() its input, or add a rule in mnn_core/express/grad_rules.py"
                )
            gins = rule(GradContext(node, gouts))
            for v, g in zip(node.inputs, gins):
                if v is None or g is None or not v.requires_grad:
                    continue
                if g.shape != v.shape:
                    raise MnnError(f"gradient rule of {node.op} gave shape {g.shape} for an input of shape {v.shape}")
                k = _key(v)
                grads[k] = g if k not in grads else grads[k] + g
                if v._node is None:
                    leaves[k] = v
    found.update({k: grads[k] for k in leaves})
    return found, leaves


def grad(outputs: Var | Sequence[Var], inputs: Var | Sequence[Var], grad_outputs=None) -> list:
    """d(outputs)/d(inputs) as a list (None where an input does not affect the outputs).

    Unlike backward(), nothing is accumulated into `.grad`."""
    outputs = [outputs] if isinstance(outputs, Var) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Var) else list(inputs)
    grad_outputs = [None] * len(outputs) if grad_outputs is None else list(grad_outputs)
    wanted = {_key(v): v for v in inputs if v._node is not None}
    found, _ = _run_backward(outputs, grad_outputs, wanted)
    return [found.get(_key(v)) for v in inputs]


def backward(output: Var, grad=None) -> None:
    found, leaves = _run_backward([output], [grad], {})
    for k, leaf in leaves.items():
        g = found[k]
        leaf.grad = g if leaf.grad is None else leaf.grad + g
