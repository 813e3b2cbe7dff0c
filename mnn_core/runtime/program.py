"""The program builder: from a placement to steps, arenas and a compiled Program.

Session.resize places the ops (scheduler.py), lets backends fuse theirs (fusion.py), then hands the
result to a ProgramBuilder, which walks the ops in run order once: it inserts a copy where a value
crosses memory domains, elides views and in-place Concats, records every value's lifetime per
domain, lets backends choose private layouts, packs each domain's lifetimes into one arena
(memory/planner.py), prepares each op on its backend (or each segment of ops on a backend with
prepare_segment) and compiles the steps into the run loop's Program (_runloop.pyx). Constants that
every kernel reading them packed are released as it goes (weights.py).

This module is the walk (copies, lifetimes, layouts, aliases and in-place Concats); the compiling
half, from arenas to the Program, is program_steps.py; what a plan records is plan.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..backend import HOST, LayoutCandidate, PrepareContext
from ..errors import BackendError
from ..graph.ir import Graph, Node, TensorInfo, consumers_of
from ..memory.planner import ALIGNMENT, TensorUse
from ..ops import get_schema
from ..ops.schema import is_view
from .plan import Plan, PreparedPlan, Slot
from .program_steps import StepCompiler
from .scheduler import Candidate, Placement
from .weights import ReleasedWeights

__all__ = ["FOREVER", "Plan", "PreparedPlan", "ProgramBuilder", "Slot"]

FOREVER = 1 << 40  # a lifetime end past the last step


class ProgramBuilder(StepCompiler):
    """Turns a placement into steps, arenas and a compiled Program."""

    def __init__(
        self,
        graph: Graph,
        infos: dict[str, TensorInfo],
        placements: list[Placement],
        nodes: list[Node],
        candidates: Mapping[str, Candidate],
        ctx: PrepareContext,
        released: ReleasedWeights | None = None,
        model: Graph | None = None,
        pinned: frozenset = frozenset(),
        max_arena_bytes: int | None = None,
        fallback: bool = False,
    ):
        """`candidates`: the session's backends by name; `released`, `model` and `pinned`: where
        packed weights are released (the session's ReleasedWeights, the graph they are released
        from, the constants some earlier plan reads at run and that must stay); `max_arena_bytes`:
        the most the plan's arenas may take together (LimitError before any is allocated); `fallback`:
        the session's (_prepare_on_reference)."""
        self.candidates = candidates
        self.fallback = fallback  # a node its backend declines at prepare may still run on the reference
        self.max_arena_bytes = max_arena_bytes
        self.ctx = ctx
        self.released = released
        self.model = model
        self.session_pinned = pinned
        self.graph = graph  # the session's graph at these shapes (graph/shapes.py: specialize)
        self.nodes = nodes  # the graph's nodes in run order, with backends' fusions (fusion.py)
        self.infos = dict(infos)  # values given a backend-private layout get their own TensorInfo
        self.placements = {p.node: p for p in placements}
        self.plan = Plan(placements)
        self.slots: dict[tuple[str, str], Slot] = {}  # (value, domain) -> slot
        self.uses: dict[str, dict[str, TensorUse]] = {}  # domain -> value -> its use
        self.steps: list[tuple] = []  # (name, kind, payload) before compiling
        self.aliases: dict[tuple[str, str], tuple[str, str]] = {}
        self.layout_owner: dict[str, Any] = {}  # value in a backend-private layout -> that backend
        self.pinned: set[str] = set()  # constants a step reads in host memory at run (or a view returns)
        self.freed: list[str] = []  # constants released (weights.py) as this plan was built

    def domain_of(self, backend: str) -> str:
        return self.candidates[backend].domain

    def backend_of_domain(self, domain: str):
        for c in self.candidates.values():
            if c.domain == domain:
                return c.backend
        raise BackendError(f"no backend owns memory domain {domain!r}")

    # -- values and lifetimes -----------------------------------------------------

    def _use(self, value: str, domain: str, step: int) -> None:
        use = self.uses.get(domain, {}).get(value)
        if use is not None:  # constants in host memory have no use: they need no arena
            use.last = max(use.last, step)

    def _nbytes(self, value: str, domain: str) -> int:
        info = self.infos[value]
        if info.layout:  # sized by the backend whose private layout it is
            return self._with_ctx(self.layout_owner[value].tensor_nbytes, info)
        if domain == HOST:
            return info.nbytes
        return self._with_ctx(self.backend_of_domain(domain).tensor_nbytes, info)

    def _define(self, value: str, domain: str, step: int, alias: str | None = None) -> Slot:
        info = self.infos[value]
        nbytes = self._nbytes(value, domain)
        slot = Slot(domain, info, nbytes=nbytes)
        self.slots[(value, domain)] = slot
        self.uses.setdefault(domain, {})[value] = TensorUse(value, nbytes, step, step, alias)
        return slot

    def _locate(self, value: str, domain: str) -> Slot:
        """The slot of `value` in `domain`, inserting a copy step if it lives elsewhere."""
        if (value, domain) in self.slots:
            return self.slots[(value, domain)]
        if value in self.graph.initializers:
            arr = np.asarray(self.graph.initializers[value], order="C")  # keeps 0-d 0-d
            if domain == HOST:
                slot = Slot(HOST, self.infos[value], constant=arr, name=value)
                self.slots[(value, domain)] = slot
                return slot
            # device constants: uploaded once at resize, alive for the whole plan
            slot = self._define(value, domain, -1)
            slot.constant, slot.name = arr, value
            self.uses[domain][value].last = FOREVER
            return slot
        src = next(d for (v, d) in self.slots if v == value)
        step = len(self.steps)
        self._use(value, src, step)
        slot = self._define(value, domain, step)
        self.steps.append((f"copy:{value}:{src}->{domain}", "copy", (value, src, domain)))
        self.plan.copies.append(f"{value} {src}->{domain}")
        return slot

    # -- build ----------------------------------------------------------------------------

    def build(self) -> PreparedPlan:
        graph = self.graph
        for name in graph.inputs:
            self._define(name, HOST, -1)
        consumers = consumers_of(self.nodes)
        self._assign_layouts(consumers)
        for node in self.nodes:
            backend = self.placements[node.name].backend
            domain = self.domain_of(backend)
            present = [name for name in node.inputs if name]
            for name in present:  # copies to this domain come first: they are earlier steps
                self._locate(name, domain)
            step = len(self.steps)
            for name in present:
                self._use(name, domain, step)
            if self._concat_in_place(node, domain, step, consumers):
                self.plan.elided.append(node.name)
                continue
            alias = self._alias_target(node, domain, backend, consumers)
            if alias is not None and is_view(node.op):
                self._define(node.outputs[0], domain, step, alias=alias)
                self.plan.elided.append(node.name)
                continue
            for i, name in enumerate(node.outputs):
                self._define(name, domain, step, alias=alias if i == 0 else None)
            self.steps.append((node.name, "op", (node, backend)))
        for name in graph.outputs:
            self._locate(name, HOST)
            self._use(name, HOST, FOREVER)  # outputs are read after the run
        return self._compile()

    def _assign_layouts(self, consumers: dict[str, list[Node]]) -> None:
        """Ask each backend with `tensor_layouts` which of its inside tensors it keeps in a layout of its own."""
        offers: dict[str, list[LayoutCandidate]] = {}
        graph = self.graph
        constants = frozenset(graph.initializers)
        for node in self.nodes:
            backend = self.placements[node.name].backend
            for value in node.outputs:
                users = consumers.get(value, [])
                if not users or value in graph.outputs or not self.infos[value].is_static:
                    continue
                if any(self.placements[u.name].backend != backend or is_view(u.op) for u in users):
                    continue
                readers = {id(u): u for u in users}.values()  # a node reading the value twice is listed twice
                uses = tuple((u, i) for u in readers for i, n in enumerate(u.inputs) if n == value)
                offers.setdefault(backend, []).append(
                    LayoutCandidate(value, self.infos[value], node, uses, self.infos, constants)
                )
        for backend_name, cands in offers.items():
            backend = self.candidates[backend_name].backend
            choose = getattr(backend, "tensor_layouts", None)  # backends not derived from Backend lack it
            if not callable(choose):
                continue
            chosen = choose(cands, self.ctx) or {}
            offered = {c.value for c in cands}
            for value, code in chosen.items():
                if value not in offered:
                    raise BackendError(
                        f"backend {backend_name} chose a layout for {value!r}, which is not one of "
                        "the tensors it was offered (they must stay inside the backend)"
                    )
                if not isinstance(code, (int, np.integer)) or not 0 <= code < 2**31:
                    raise BackendError(
                        f"backend {backend_name} chose layout {code!r} for {value!r}; a layout is "
                        "an int code, 0 for dense row-major, others private to the backend"
                    )
                if code:
                    self.infos[value] = TensorInfo(self.infos[value].shape, self.infos[value].dtype, int(code))
                    self.layout_owner[value] = backend
                    self.plan.layouts[value] = int(code)

    def _alias_target(self, node: Node, domain: str, backend: str, consumers) -> str | None:
        """The input whose memory the output may reuse (in-place op), or None."""
        if not node.inputs or not node.inputs[0] or len(node.outputs) != 1:
            return None
        src = node.inputs[0]
        spec = self.candidates[backend].kernels.get(node.op)
        in_place = is_view(node.op) or (spec is not None and spec.inplace and get_schema(node.op).inplace)
        if not in_place:
            return None
        if src in self.graph.initializers or src in self.graph.outputs or (src, domain) not in self.slots:
            return None
        src_info, out_info = self.infos[src], self.infos[node.outputs[0]]
        if src_info.nbytes != out_info.nbytes or src_info.layout != out_info.layout:
            return None
        if len(consumers.get(src, [])) != 1:  # someone else still reads the input
            return None
        if src in self.graph.inputs and domain == HOST:
            return None  # keep input slots intact so a run can be repeated
        return src

    def _concat_in_place(self, node: Node, domain: str, step: int, consumers) -> bool:
        """Elide a Concat whose inputs can be written straight into its output: each input then
        lives at its byte offset inside the output, so its producer writes it in place.

        That needs each input to be one contiguous run of the output (every dim before the axis is
        1, as at batch 1 along channels), host memory, offsets the kernels' alignment allows, and
        inputs that nothing else reads (so none is overwritten by an in-place consumer of the
        output while still wanted) and that are not graph inputs, outputs or constants. Tensors in a
        backend-private layout must all share it, and its backend must say the inputs laid end to
        end are the output in it (Backend.concat_in_place)."""
        if node.op != "Concat" or domain != HOST or len(node.outputs) != 1:
            return False
        out = node.outputs[0]
        out_info = self.infos[out]
        axis = node.attrs.get("axis", 0)
        axis = axis + len(out_info.shape) if axis < 0 else axis
        if not out_info.is_static or any(d != 1 for d in out_info.shape[:axis]):
            return False
        names = list(node.inputs)
        uses = self.uses.get(HOST, {})
        if len(set(names)) != len(names):  # concat(x, x): one buffer cannot sit at two offsets
            return False
        for name in names:
            if (
                not name
                or name in self.graph.inputs
                or name in self.graph.outputs
                or name not in uses
                or len(consumers.get(name, [])) != 1
            ):
                return False
        if not self._layout_concat_in_place(out, names, axis):
            return False
        roots, offset = [], 0
        for name in names:
            root, at = name, 0
            while uses[root].alias_of is not None:  # an in-place chain: move its first buffer
                at += uses[root].at
                root = uses[root].alias_of
            if at or offset % ALIGNMENT or root in roots:
                return False
            roots.append(root)
            offset += uses[name].nbytes
        if offset != self._nbytes(out, domain):
            return False
        self._define(out, domain, step)
        offset = 0
        for name, root in zip(names, roots):
            uses[root].alias_of, uses[root].at = out, offset
            offset += uses[name].nbytes
        return True

    def _layout_concat_in_place(self, out: str, names: list[str], axis: int) -> bool:
        """Whether the Concat's tensors are all dense, or all in one backend's private layout that the
        backend says concatenates in place."""
        values = [out, *names]
        codes = {self.infos[v].layout for v in values}
        if codes == {0}:
            return True
        owners = {id(self.layout_owner.get(v)) for v in values}
        if len(codes) != 1 or len(owners) != 1:
            return False
        ask = getattr(self.layout_owner[out], "concat_in_place", None)  # backends not derived from Backend
        return callable(ask) and bool(ask(self.infos[out], [self.infos[n] for n in names], axis))
