"""The program builder: from a placement to steps, arenas and a compiled Program.

Session.resize places the ops (scheduler.py), lets backends fuse theirs (fusion.py), then hands the
result to a ProgramBuilder, which walks the ops in run order once: it inserts a copy where a value
crosses memory domains, elides views and in-place Concats, records every value's lifetime per
domain, lets backends choose private layouts, packs each domain's lifetimes into one arena
(memory/planner.py), prepares each op on its backend (or each segment of ops on a backend with
prepare_segment) and compiles the steps into the run loop's Program (_runloop.pyx). Constants that
every kernel reading them packed are released as it goes (weights.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backend import (
    HOST,
    Arena,
    CExecution,
    LayoutCandidate,
    PrepareContext,
    PyExecution,
    SegmentOp,
    TensorRef,
    takes_context,
)
from ..errors import BackendError, LimitError, MnnError, UnsupportedOpError
from ..graph.ir import Graph, Node, TensorInfo, consumers_of
from ..memory.planner import ALIGNMENT, MemoryReport, TensorUse, plan_arena
from ..ops import get_schema
from ..ops.schema import is_view
from ._runloop import Program
from .scheduler import REFERENCE, Candidate, Placement
from .weights import ReleasedWeights

FOREVER = 1 << 40  # a lifetime end past the last step


@dataclass
class Plan:
    """Where every op runs and why, plus the copies between domains."""

    placements: list[Placement]
    copies: list[str] = field(default_factory=list)
    elided: list[str] = field(default_factory=list)
    layouts: dict[str, int] = field(default_factory=dict)  # value -> layout code its backend chose
    fused: dict[str, list[str]] = field(default_factory=dict)  # fused node -> the nodes it runs (fusion.py)

    def __iter__(self):
        return iter(self.placements)

    def __len__(self) -> int:
        return len(self.placements)

    def backends(self) -> dict[str, int]:
        count: dict[str, int] = {}
        for p in self.placements:
            count[p.backend] = count.get(p.backend, 0) + 1
        return count

    def to_dict(self) -> dict:
        return {
            "placements": [p.__dict__ for p in self.placements],
            "copies": list(self.copies),
            "elided": list(self.elided),
            "layouts": dict(self.layouts),
            "fused": {k: list(v) for k, v in self.fused.items()},
        }

    def __str__(self) -> str:
        rows = [("node", "op", "backend", "est ms", "why")]
        rows += [(p.node, p.op, p.backend, f"{p.est_ms:.4f}", p.reason) for p in self.placements]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]
        if self.copies:
            lines.append(f"copies between memory domains: {', '.join(self.copies)}")
        if self.elided:
            lines.append(
                f"no step (views alias their input; concatenations are written in place): {', '.join(self.elided)}"
            )
        if self.fused:
            fused = (f"{k} ({' + '.join(v)})" for k, v in self.fused.items())
            lines.append("fused by their backend: " + ", ".join(fused))
        if self.layouts:
            lines.append("backend-private layouts: " + ", ".join(f"{v} ({c})" for v, c in self.layouts.items()))
        return "\n".join(lines)


@dataclass
class Slot:
    """Where one value lives for this plan."""

    domain: str
    info: TensorInfo
    offset: int = -1  # in the domain's arena; -1: outside (a constant)
    constant: np.ndarray | None = None
    nbytes: int = 0  # its size in the arena
    name: str = ""  # the value's name


class PreparedPlan:
    """Everything resize produced for one set of input shapes."""

    def __init__(self):
        self.program: Program | None = None
        self.plan: Plan | None = None
        self.memory: dict[str, MemoryReport] = {}
        self.arenas: dict[str, Any] = {}
        self.input_views: dict[str, np.ndarray] = {}
        self.output_views: dict[str, np.ndarray] = {}
        self.infos: dict[str, TensorInfo] = {}
        self.values: dict[str, np.ndarray] = {}  # the values of Session.value_inputs it was planned for
        self.graph: Graph | None = None  # the graph at these shapes (it owns the constants folded for them)
        self.move_index: dict[str, int] = {}  # movable input -> its position in program.run's `moved`


class ProgramBuilder:
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

    def _compile(self) -> PreparedPlan:
        out = PreparedPlan()
        out.plan = self.plan
        out.infos = self.infos
        offsets: dict[tuple[str, str], int] = {}
        arena_plans = {domain: plan_arena(domain, list(uses.values())) for domain, uses in self.uses.items()}
        self._check_arena_limit(arena_plans)
        for domain, arena_plan in arena_plans.items():
            out.memory[domain] = arena_plan.report
            out.arenas[domain] = self._allocate(domain, arena_plan.report.arena_bytes)
            for key, off in arena_plan.offsets.items():
                offsets[(key, domain)] = off
        for (value, domain), slot in self.slots.items():
            if slot.constant is None or domain != HOST:
                slot.offset = offsets[(value, domain)]
            if slot.constant is not None and domain != HOST:
                out.arenas[domain].write(slot.offset, slot.constant)  # weights uploaded once
        host = out.arenas.get(HOST)
        for name in self.graph.inputs:
            out.input_views[name] = self._host_view(host, self.slots[(name, HOST)])
        for name in self.graph.outputs:
            out.output_views[name] = self._host_view(host, self.slots[(name, HOST)])
        steps = []
        last_reader = {
            n: payload[0]
            for _, kind, payload in self.steps
            if kind == "op"
            for n in payload[0].inputs
            if n in self.graph.initializers
        }
        for kind, group in self._group_segments():
            if kind == "copy":
                steps.append(self._copy_step(group[0], group[1], out.arenas))
            elif kind == "segment":
                steps.append(self._segment_step(group, out.arenas))
            else:
                steps.append(self._op_step(group, out.arenas))
                self._free_packed(group[0], last_reader)
        out.program = Program(steps, [name if self._may_move(name) else None for name in self.graph.inputs])
        out.move_index = {name: j for j, name in enumerate(self.graph.inputs) if out.program.movable[j]}
        return out

    def _check_arena_limit(self, arena_plans) -> None:
        total = sum(p.report.arena_bytes for p in arena_plans.values())
        if self.max_arena_bytes is None or total <= self.max_arena_bytes:
            return
        parts = ", ".join(f"{d} {p.report.arena_bytes:,}" for d, p in arena_plans.items())
        raise LimitError(
            f"the plan needs {total:,} bytes of arenas ({parts}), more than max_arena_bytes="
            f"{self.max_arena_bytes:,} (Session(max_arena_bytes=) or MNN_MAX_ARENA_BYTES): "
            "use smaller inputs or raise the limit"
        )

    def _may_move(self, name: str) -> bool:
        """Whether run() may hand the steps the caller's array for this input, as far as the plan goes
        (the Program checks its readers): it is in host memory, not an output, and no value lives
        inside its bytes."""
        uses = self.uses.get(HOST, {})
        return (
            name not in self.graph.outputs
            and (name, HOST) in self.slots
            and not any(u.alias_of == name for u in uses.values())
        )

    def _free_packed(self, node: Node, last_reader: dict[str, Node]) -> None:
        """Release the constants this node was the last to read, where every step so far packed
        them (weights.py): freed now, before the next prepare packs its own weights, so even the
        session's peak memory holds each weight about once."""
        released, model = self.released, self.model
        if released is None or model is None:
            return
        for name in node.inputs:
            if last_reader.get(name) is not node or name in self.pinned or name in self.session_pinned:
                continue
            if name in model.initializers and released.release(model, name):
                self.graph.initializers[name] = model.initializers[name]  # (a specialized copy's too)
                self.freed.append(name)
                for (value, _), slot in self.slots.items():
                    if value == name:
                        slot.constant = self.graph.initializers[name]  # the placeholder

    def _group_segments(self):
        """Steps in order; consecutive ops on a backend with prepare_segment become one."""
        pending: list = []
        for name, kind, payload in self.steps:
            backend = self.candidates[payload[1]].backend if kind == "op" else None
            if backend is not None and callable(getattr(backend, "prepare_segment", None)):
                if pending and pending[-1][1] != payload[1]:
                    yield "segment", pending
                    pending = []
                pending.append(payload)
                continue
            if pending:
                yield "segment", pending
                pending = []
            yield kind, (name, payload) if kind == "copy" else payload
        if pending:
            yield "segment", pending

    def _segment_step(self, group, arenas) -> tuple:
        backend_name = group[0][1]
        backend = self.candidates[backend_name].backend
        domain = self.candidates[backend_name].domain

        def ref(value):
            slot = self.slots[(value, domain)]
            if slot.constant is not None:  # a segment may keep whatever it was handed
                self.pinned.add(value)
            return TensorRef(
                value, slot.info, slot.offset if slot.constant is None or domain != HOST else -1, slot.constant
            )

        ops, in_names, in_descs, out_descs, seen = [], [], [], [], set()
        for node, _ in group:
            ops.append(
                SegmentOp(
                    node,
                    [ref(n) if n else None for n in node.inputs],
                    [ref(n) for n in node.outputs],
                    {n: self.graph.initializers[n] for n in node.inputs if n in self.graph.initializers},
                )
            )
            for n in node.inputs:
                if n and n not in seen:
                    seen.add(n)
                    in_names.append(n)
                    in_descs.append(self._desc(arenas, self.slots[(n, domain)]))
            out_descs += [self._desc(arenas, self.slots[(n, domain)]) for n in node.outputs]
        name = f"segment:{backend_name}:{group[0][0].name}..{group[-1][0].name}"
        try:
            execution = backend.prepare_segment(ops, arenas.get(domain), self.ctx)
        except MnnError:
            raise
        except Exception as exc:
            raise BackendError(f"backend {backend_name} failed to prepare {name}: {exc}") from exc
        if isinstance(execution, PyExecution):
            return (name, execution.fn, in_descs, out_descs, in_names)
        if isinstance(execution, CExecution):
            return (name, execution, in_descs, out_descs, in_names)
        raise BackendError(f"backend {backend_name}: prepare_segment returned {type(execution).__name__}")

    def _with_ctx(self, method, arg):
        """method(arg, ctx), or method(arg) for a backend whose method predates the context."""
        return method(arg, self.ctx) if takes_context(method) else method(arg)

    def _allocate(self, domain: str, nbytes: int):
        if domain == HOST:
            try:
                raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)
            except MemoryError:
                raise MnnError(
                    f"the plan for these input shapes needs a {nbytes}-byte arena, more memory than "
                    "this process can allocate: use smaller inputs (or check the model's shapes)"
                ) from None
            start = (-raw.ctypes.data) % ALIGNMENT
            return raw[start : start + nbytes]
        arena = self._with_ctx(self.backend_of_domain(domain).allocate_arena, nbytes)
        if not isinstance(arena, Arena):
            raise BackendError(f"allocate_arena of domain {domain!r} must return an mnn_core.backend.Arena")
        return arena

    def _host_view(self, host: np.ndarray, slot: Slot) -> np.ndarray:
        if slot.constant is not None:
            self.pinned.add(slot.name)  # a pointer to it or a view of it outlives the plan's build
            return slot.constant
        info = slot.info
        if info.layout:  # bytes only its backend can read
            return np.ndarray((slot.nbytes,), dtype=np.uint8, buffer=host, offset=slot.offset)
        return np.ndarray(info.shape, dtype=info.dtype, buffer=host, offset=slot.offset)

    def _view(self, arenas, slot: Slot) -> np.ndarray:
        if slot.domain == HOST:
            return self._host_view(arenas.get(HOST), slot)
        try:
            return arenas[slot.domain].view(slot.offset, slot.info)
        except NotImplementedError as exc:
            raise BackendError(f"a Python execution cannot reach memory domain {slot.domain!r}: {exc}") from None

    def _desc(self, arenas, slot: Slot) -> tuple:
        if slot.domain == HOST:
            view = self._host_view(arenas.get(HOST), slot)
            return (view.ctypes.data, 0, slot.info.shape, slot.info.dtype, slot.info.layout)
        return (arenas[slot.domain].handle, slot.offset, slot.info.shape, slot.info.dtype, slot.info.layout)

    @staticmethod
    def _packed_desc(slot: Slot) -> tuple:
        """A constant the execution packed: no data pointer (it may be freed, weights.py)."""
        return (0, 0, slot.info.shape, slot.info.dtype, slot.info.layout)

    def _prepare_on_reference(self, node: Node, backend_name: str, ins, outs, constants, exc: Exception):
        """A backend that took a node at placement declines it at prepare (an input it needs constant
        arrives at run, say): with fallback on, the reference runs it in the same host memory, and the
        plan says so. Not where the node's tensors are in a layout only that backend reads."""
        ref = self.candidates.get(REFERENCE)
        slots = [s for s in ins + outs if s is not None]
        if (
            not self.fallback
            or ref is None
            or backend_name == REFERENCE
            or ref.domain != self.candidates[backend_name].domain
            or node.op not in ref.kernels
            or any(s.info.layout for s in slots)
        ):
            raise exc
        execution = ref.backend.prepare(
            node, [s.info if s else None for s in ins], [s.info for s in outs], constants, self.ctx
        )
        old = self.placements[node.name]
        moved = Placement(node.name, node.op, REFERENCE, f"fallback (declined at prepare: {exc})", old.est_ms)
        self.placements[node.name] = moved
        self.plan.placements[self.plan.placements.index(old)] = moved
        return execution

    def _op_step(self, payload, arenas) -> tuple:
        node, backend_name = payload
        cand: Candidate = self.candidates[backend_name]
        domain = cand.domain
        ins = [self.slots[(n, domain)] if n else None for n in node.inputs]
        outs = [self.slots[(n, domain)] for n in node.outputs]
        constants = {n: self.graph.initializers[n] for n in node.inputs if n in self.graph.initializers}
        if is_view(node.op) and node.op not in cand.kernels:
            return self._view_copy_step(node, ins[0], outs[0], arenas)
        try:
            execution = cand.backend.prepare(
                node, [s.info if s else None for s in ins], [s.info for s in outs], constants, self.ctx
            )
        except UnsupportedOpError as exc:
            execution = self._prepare_on_reference(node, backend_name, ins, outs, constants, exc)
        except MnnError:
            raise
        except Exception as exc:
            raise BackendError(f"backend {backend_name} failed to prepare {node.op} ({node.name}): {exc}") from exc
        packed = execution.packed if isinstance(execution, CExecution) else frozenset()
        in_descs = [
            self._packed_desc(s)
            if i in packed and s.constant is not None and s.domain == HOST
            else self._desc(arenas, s)
            for i, s in enumerate(ins)
            if s is not None
        ]
        out_descs = [self._desc(arenas, s) for s in outs]
        in_names = [n for n in node.inputs if n]
        if isinstance(execution, CExecution):
            return (node.name, execution, in_descs, out_descs, in_names)
        if isinstance(execution, PyExecution):
            in_views = [self._view(arenas, s) if s else None for s in ins]
            out_views = [self._view(arenas, s) for s in outs]
            fn = execution.fn
            return (node.name, lambda: fn(in_views, out_views), in_descs, out_descs, in_names)
        raise BackendError(
            f"backend {backend_name} returned {type(execution).__name__} from prepare; "
            "expected CExecution or PyExecution"
        )

    def _view_copy_step(self, node: Node, src: Slot, dst: Slot, arenas) -> tuple:
        """A view op that could not alias its input: the core copies the bytes."""
        if src.domain != HOST:
            raise BackendError(
                f"{node.op} ({node.name}) on domain {src.domain!r} cannot alias its input "
                "and the backend has no kernel for it"
            )
        a, b = self._host_view(arenas[HOST], src), self._host_view(arenas[HOST], dst)
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        return (
            node.name,
            lambda: np.copyto(flat_b, flat_a),
            [self._desc(arenas, src)],
            [self._desc(arenas, dst)],
            [node.inputs[0]],
        )

    def _copy_step(self, name: str, payload, arenas) -> tuple:
        value, src, dst = payload
        s_slot, d_slot = self.slots[(value, src)], self.slots[(value, dst)]
        if dst == HOST:
            view = self._host_view(arenas[HOST], d_slot)
            arena, off = arenas[src], s_slot.offset
            fn = lambda: arena.read(off, view)
        elif src == HOST:
            view = self._host_view(arenas[HOST], s_slot)
            arena, off = arenas[dst], d_slot.offset
            fn = lambda: arena.write(off, view)
        else:  # device to device goes through host memory
            tmp = np.empty(s_slot.info.shape, s_slot.info.dtype)
            a_src, a_dst, o_src, o_dst = arenas[src], arenas[dst], s_slot.offset, d_slot.offset

            def fn():
                a_src.read(o_src, tmp)
                a_dst.write(o_dst, tmp)

        return (name, fn, [self._desc(arenas, s_slot)], [self._desc(arenas, d_slot)], [value])
