"""What a backend's `fuse` is offered and what it answers (the core's side, which applies and checks
the answers, is mnn_core/runtime/fusion.py).

After placement, a backend may run a few of the ops placed on it as one op of its own: what one
backend does better fused (mnn-x86's stem convolution and the max pooling after it, run band by band
so the convolution's output never leaves the cache) is only known once the ops are placed on it. So
at each plan the core offers every backend with a `fuse` method the ops placed on it (a
`FusionOffer`), and the backend answers with `Fusion`s: a new node, of an op its own `prepare` knows,
that replaces some of those ops.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..graph.ir import Node, TensorInfo


@dataclass(frozen=True)
class FusionOffer:
    """The ops placed on one backend in one plan, offered to `Backend.fuse`."""

    backend: str
    nodes: tuple  # the Nodes placed on this backend, in run order
    infos: Mapping[str, TensorInfo]  # every value's TensorInfo in the plan
    constants: frozenset  # the graph's constant names
    outputs: frozenset  # the graph's output names
    readers: Mapping[str, tuple] = field(default_factory=dict)  # value -> the Nodes reading it, any backend
    placed: Mapping[str, str] = field(default_factory=dict)  # node name -> its backend

    def sole_reader(self, value: str) -> Node | None:
        """The one node reading `value`, if it runs on this backend and `value` is not a graph output:
        the case in which the value's producer and that reader can be fused into one op."""
        users = self.readers.get(value, ())
        if value in self.outputs or len(users) != 1 or self.placed.get(users[0].name) != self.backend:
            return None
        return users[0]


@dataclass(frozen=True)
class Fusion:
    """A backend's answer: `node` runs in place of the placed nodes named in `replaces`."""

    node: Node
    replaces: tuple
    reason: str = ""
