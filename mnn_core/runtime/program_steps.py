"""The program builder's second half: from the walked steps, slots and lifetimes to arenas and a
compiled Program. Packs each domain's lifetimes into one arena (memory/planner.py) under the session's
byte limit, prepares each op on its backend (or each run of ops on a backend with prepare_segment; on
the reference where fallback allows and the backend declines at prepare), turns copies between
domains and views that cannot alias into steps, and releases packed constants as it goes
(weights.py). A mixin of ProgramBuilder (program.py), whose state (slots, uses, steps, candidates)
its methods share.
"""

from __future__ import annotations

import numpy as np

from ..backend import HOST, Arena, CExecution, PyExecution, SegmentOp, TensorRef, takes_context
from ..errors import BackendError, LimitError, MnnError, UnsupportedOpError
from ..graph.inline import branch_guard, branch_guards
from ..graph.ir import Node
from ..memory.planner import ALIGNMENT, plan_arena
from ..ops.schema import is_view
from ._runloop import Program
from .plan import PreparedPlan, Slot
from .scheduler import REFERENCE, Candidate, Placement


class StepCompiler:
    """ProgramBuilder's compiling half (see the module docstring)."""

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
        written = []  # each step's output values
        for kind, group in self._group_segments():
            if kind == "copy":
                steps.append(self._copy_step(group[0], group[1], out.arenas))
                written.append([group[1][0]])
            elif kind == "segment":
                steps.append(self._segment_step(group, out.arenas))
                written.append([n for node, _ in group for n in node.outputs])
            else:
                steps.append(self._op_step(group, out.arenas))
                written.append(list(group[0].outputs))
                self._free_packed(group[0], last_reader)
        out.program = Program(
            steps,
            [name if self._may_move(name) else None for name in self.graph.inputs],
            self._guards(written, out.arenas),
        )
        out.move_index = {name: j for j, name in enumerate(self.graph.inputs) if out.program.movable[j]}
        return out

    def _guards(self, written: list[list[str]], arenas) -> dict[int, tuple[int, bool]]:
        """{step: (address of a bool, the value it must hold for the step to run)} for the steps that
        compute a branch of an If that lower_data_ifs inlined (graph/inline.py), guarded by its
        condition where that is a host bool written by an earlier step (or an input)."""
        guards = branch_guards(self.graph)
        if not guards:
            return {}
        producers, elided = self.graph.producers(), set(self.plan.elided)
        ready: dict[str, int] = {}  # value -> the step that writes it
        for i, values in enumerate(written):
            for v in values:
                ready.setdefault(v, i)

        def written_at(value: str) -> int | None:
            """The step after which `value` holds its data; a view elided into its input: the input's."""
            while value not in ready and value not in self.graph.inputs:
                node = producers.get(value)
                if node is None or node.name not in elided or not is_view(node.op):
                    return None
                value = node.inputs[0]
            return ready.get(value, -1)

        found = {}
        for i, values in enumerate(written):
            guard = branch_guard(guards, values)
            if guard is None:
                continue
            cond, when = guard
            slot, at = self.slots.get((cond, HOST)), written_at(cond)
            if slot is None or slot.constant is not None or slot.info.dtype != "bool" or at is None or at >= i:
                continue
            found[i] = (self._host_view(arenas[HOST], slot).ctypes.data, when)
        return found

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
                    in_names.append(_host_name(n, domain))
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
        in_names = [_host_name(n, domain) for n in node.inputs if n]
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
        descs = [self._desc(arenas, s_slot)], [self._desc(arenas, d_slot)]
        if HOST in (src, dst) and src != dst:
            # a device arena may run its host copies in C (Arena.copy_execution): no interpreter in the
            # run, and an upload that reads its input where the caller has it makes the input movable
            device, host_slot, device_slot = (src, d_slot, s_slot) if dst == HOST else (dst, s_slot, d_slot)
            make = getattr(arenas[device], "copy_execution", None)
            view = self._host_view(arenas[HOST], host_slot)
            execution = None if make is None else make(src == HOST, device_slot.offset, view)
            if execution is not None:
                return (name, execution, *descs, [value])
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

        return (name, fn, *descs, [value])


def _host_name(value: str, domain: str) -> str | None:
    """The name a step gives the run loop for an input it reads: a graph input moves only in host
    memory, so a step on another domain reads that domain's copy, never the caller's array."""
    return value if domain == HOST else None
