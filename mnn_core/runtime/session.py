"""Session: plan once per input shape (resize), execute many times (run).

    sess = mnn_core.Session(graph, backend="auto", threads=2)
    outputs = sess.run({"input": x})
    print(sess.plan)       # where each op runs, and why
    print(sess.memory)     # arena size against the naive sum and lower bound

Resize runs the control path in Python: shapes computed from the real input shapes (and the
values of shape sub-graphs, folded into constants: graph/shapes.py), placement, copies
between memory domains, lifetimes, one arena per domain, and each backend's
`prepare`. Run copies the inputs into the arena and walks the compiled
program; it allocates nothing (pass copy=False to also skip copying outputs).

With batch_parallel="auto" (the default) on host backends, a batch of a model that treats its images
independently runs as single images, one per thread at a time, each on a one-image plan, where an
image's activations outweigh the model's weights (batch_split.py says why and what it measured);
"off" keeps one plan for the whole batch.

A model that cannot be planned once per shape (control flow, sequences, outputs sized by values) runs
as an eager program (eager.py): its stretches between those ops, and its Loop, Scan and If bodies, as
child sessions on the same backends, planned per the shapes that reach them; only the control runs on
the host, so fallback=False takes such a model where its backends have every other op's kernel.

At each plan a backend may run some of the ops placed on it as one op of its own (fusion.py;
Session(fuse=False) keeps every op apart). The steps, arenas and compiled program of a plan are
built by program.py. The Session's arguments are checked in session_args.py, its backends chosen in
backend_choice.py, and a run's inputs checked in feeds.py.

Weights that every kernel reading them copied at prepare (CExecution.packed: x86's GEMM panels) are
freed from the session's graph as the plan is built, and derived again from the model when
another input shape needs a plan (weights.py; release_weights=False keeps them).

Threads and processes (docs/RELIABILITY.md): a session serialises its runs and plans with one lock,
so threads may share it (each run then waits for the one before; for runs in parallel, give each
thread its own session). In a child forked from this process the lock and the batch split's
thread pools are made anew. Limits: the plans kept (`max_plans`, least recently used dropped
first), the arena bytes of one plan (`max_arena_bytes`) and a Loop's iterations
(`max_loop_iterations`), each also from an environment variable.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backend import HOST, PrepareContext
from ..backend.plugins import get_plugins
from ..errors import GraphError, InputError, LimitError, MnnError
from ..graph.batch import not_separable
from ..graph.inline import map_branches, resolvable_ifs
from ..graph.ir import Graph, TensorInfo
from ..graph.shapes import value_sources, walk
from ..memory.planner import MemoryReport
from ..ops.control_flow import loop_limit
from ._runloop import bind_inputs
from .backend_choice import backend_names, candidates, check_eager
from .batch_split import BatchSplit, split_pays
from .cancel import CancelToken, RunLimits, current_limits
from .eager import EagerProgram, has_dynamic_ops
from .feeds import FastFeeds, check_feeds, readable_in_place
from .fusion import fuse_placed
from .plan import Plan, PreparedPlan
from .program import ProgramBuilder
from .scheduler import REFERENCE, make_candidate, place_auto, place_listed
from .session_args import (
    BATCH_PARALLEL,
    LIMIT_ENV,
    MAX_PLANS,
    PRECISIONS,
    check_arguments,
    check_options,
    fix_input_shapes,
    session_limit,
)
from .weights import ReleasedWeights, give_back_freed

#: names other modules and tests take from here: the Session's argument values and limits, and the
#: in-place check of an input array (feeds.py)
__all__ = ["BATCH_PARALLEL", "LIMIT_ENV", "MAX_PLANS", "PRECISIONS", "Session"]
_readable_in_place = readable_in_place


class Session:
    """A model bound to backends, planned per input shape."""

    def __init__(
        self,
        model: Graph | str | os.PathLike,
        backend: str | Sequence[str] = "auto",
        threads: int = 1,
        precision: str = "normal",
        fallback: bool = True,
        options: dict | None = None,
        optimize: bool = True,
        batch_parallel: str = "auto",
        release_weights: bool = True,
        fuse: bool = True,
        input_shapes: dict | None = None,
        max_plans: int | None = None,
        max_arena_bytes: int | None = None,
        max_loop_iterations: int | None = None,
    ):
        from ..graph.passes import optimize as run_passes
        from .loader import load

        graph = model if isinstance(model, Graph) else load(model)
        graph.validate()
        if input_shapes:
            graph = fix_input_shapes(graph, input_shapes)
        check_arguments(precision, threads, batch_parallel)
        self.threads = threads
        self.max_plans = session_limit("max_plans", max_plans, MAX_PLANS)
        self.max_arena_bytes = session_limit("max_arena_bytes", max_arena_bytes)  # None: no limit
        self.max_loop_iterations = session_limit("max_loop_iterations", max_loop_iterations)
        self._lock = threading.RLock()  # one run or plan at a time (module docstring)
        self._limits: RunLimits | None = None  # the run in progress's, for cancel()
        self._idle_limits = RunLimits.make(None, None)  # reused by runs with no token and no timeout
        #: the last checked run's inputs (fast_feeds): a run with arrays alike skips the checks
        self._fast: FastFeeds | None = None
        _SESSIONS.add(self)
        self.fuse = bool(fuse)  # backends' fusions of their placed ops, at each plan (fusion.py)
        self.precision = precision
        self.fallback = fallback
        self.batch_parallel = batch_parallel
        self._backend_arg = backend
        self._splits: OrderedDict[tuple, BatchSplit | None] = OrderedDict()  # per input shapes: batches as images
        self._split_shapes: dict | None = None  # the last run's shapes when it ran as images (_need_plan)
        self.ctx = PrepareContext(threads=threads, precision=precision, options=dict(options or {}))
        plugins = get_plugins()
        check_options(self.ctx.options, plugins.backends)
        self._auto = backend == "auto"
        names = backend_names(backend, plugins)
        self._candidates = candidates(names, plugins, self.ctx, self._auto)
        self._by_name = {c.backend.name: c for c in self._candidates}
        self._reference = self._by_name.get(REFERENCE) or make_candidate(plugins.backends[REFERENCE], self.ctx)
        self._by_name.setdefault(REFERENCE, self._reference)
        limit = self.max_loop_iterations  # constant folding runs Loops too: under the same cap
        passes = plugins.passes_for(self._by_name)  # the chosen backends' plugins' passes only

        def derive(g: Graph) -> Graph:
            if not optimize:
                return g.copy()
            token = loop_limit.set(limit)
            try:
                out = run_passes(g, extra=passes)
                # the branches of an If inlined at resize are planned too: optimized like the graph
                return map_branches(out, lambda b: run_passes(b, extra=passes)) if resolvable_ifs(out) else out
            finally:
                loop_limit.reset(token)

        self.graph = derive(graph)  # a copy even unoptimized: released weights leave the model intact
        self._released = ReleasedWeights(model, derive) if release_weights else None
        self._pinned: set[str] = set()  # constants a step of some plan reads at run: never released
        self.input_names = list(self.graph.inputs)
        self.output_names = list(self.graph.outputs)
        self._plans: OrderedDict[tuple, PreparedPlan] = OrderedDict()  # least recently used first
        self._current: PreparedPlan | None = None
        self._eager: EagerProgram | None = None  # an eager graph with dynamic ops: its program (eager.py)
        # an If whose condition follows only input values and shapes is inlined at resize (graph/inline.py)
        self.eager = self.graph.is_dynamic() and not resolvable_ifs(self.graph)
        #: graph inputs whose values decide shapes (a Reshape's target fed at run) or an If's branch: plans
        #: are per value too
        self.value_inputs: list[str] = []
        if not self.eager:
            try:
                self.value_inputs = sorted(value_sources(self.graph)[0])
            except GraphError:  # shapes that follow the data: no plan can hold for every run
                self.eager = True
        if self.eager:  # sequences, optionals, control flow: no plan per shape (runtime/eager.py)
            if has_dynamic_ops(self.graph):  # planned pieces between the dynamic ops
                self._eager = EagerProgram(self.graph, self._child)
            check_eager(self.graph, names, fallback, self._candidates if self._eager else None)
            return
        if all(info.is_static for info in self.graph.inputs.values()) and not self.value_inputs:
            shapes = {n: i.shape for n, i in self.graph.inputs.items()}
            if self._split_for(shapes) is None:  # a batch run as images needs no plan for the whole batch
                self.resize(shapes)

    # -- planning ----------------------------------------------------------------------

    def resize(self, shapes: dict[str, Sequence[int]], values: dict[str, Any] | None = None) -> None:
        """Plan for these input shapes (or reuse the plan made for them before). `values`: the
        values of the inputs that decide shapes (`value_inputs`), which key the plan too."""
        missing = [n for n in self.input_names if n not in shapes]
        if missing:
            raise InputError(f"resize() needs the shape of every input; missing: {', '.join(missing)}")
        values = {n: np.asarray((values or {})[n]) for n in self.value_inputs if n in (values or {})}
        if len(values) != len(self.value_inputs):
            raise InputError(
                f"inputs {', '.join(self.value_inputs)} decide shapes (or If branches) in this model: "
                "pass their values to resize(shapes, values=...), or call run()"
            )
        key = (
            tuple(tuple(int(d) for d in shapes[n]) for n in self.input_names),
            tuple((v.dtype.str, v.tobytes()) for v in values.values()),
        )
        with self._lock:  # one plan at a time: restoring and releasing weights must not interleave
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                self._current = plan
                return
            infos = {}
            for name, shape in zip(self.input_names, key[0]):
                declared = self.graph.inputs[name]
                infos[name] = TensorInfo(shape, declared.dtype)
            if self._released is not None:
                self._released.restore(self.graph)
            resized = walk(self.graph, infos, False, values, specialize=True)
            try:
                plan = self._prepare(resized.infos, resized.graph)
            except LimitError as exc:
                shown = ", ".join(f"{n} {list(s)}" for n, s in zip(self.input_names, key[0]))
                raise LimitError(f"inputs {shown}: {exc}") from None
            plan.values = values
            plan.graph = resized.graph  # its folded constants: kernels read them in place
            self._plans[key] = plan
            while len(self._plans) > self.max_plans:  # the least recently used plan goes
                self._plans.popitem(last=False)
            self._current = plan

    def _prepare(self, infos: dict[str, TensorInfo], graph: Graph) -> PreparedPlan:
        listed = [c for c in self._candidates if c.backend.name != REFERENCE or not self._auto]
        if self._auto:
            placements = place_auto(graph, infos, self._candidates or [self._reference], self.threads)
        else:
            placements = place_listed(graph, infos, listed, self._reference, self.fallback, self.threads)
        nodes, fused = graph.nodes, {}
        if self.fuse:
            placed = {p.backend for p in placements}
            backends = {n: c.backend for n, c in self._by_name.items() if n in placed}
            nodes, placements, fused = fuse_placed(
                graph.nodes, placements, backends, infos, graph.initializers, graph.outputs, self.ctx
            )
        builder = ProgramBuilder(
            graph,
            infos,
            placements,
            nodes,
            self._by_name,
            self.ctx,
            released=self._released,
            model=self.graph,
            pinned=frozenset(self._pinned),
            max_arena_bytes=self.max_arena_bytes,
            fallback=self.fallback,
        )
        builder.plan.fused = fused
        plan = builder.build()
        self._pinned |= builder.pinned
        if builder.freed:
            give_back_freed()
        return plan

    # -- running -----------------------------------------------------------------------

    def run(
        self,
        feeds: dict[str, Any],
        copy: bool = True,
        profile: bool = False,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> dict[str, np.ndarray]:
        """Run once. Returns {output name: array}; with copy=False the arrays are
        views into the session's memory, valid until the next run (by any thread).
        Threads may share a session: their runs take turns (module docstring).
        timeout (seconds, from the call) raises RunTimeout and a cancelled `cancel` token
        RunCancelled; either stops the run between two ops (runtime/cancel.py)."""
        if cancel is None and timeout is None:
            with self._lock:  # the idle token is taken under the lock: cancel() marks the run it stops
                limits = self._idle_limits
                if limits.token.cancelled:  # cancel() stopped the run that held it
                    limits = self._idle_limits = RunLimits.make(None, None)
                return self.run_limited(feeds, copy, profile, limits)
        return self.run_limited(feeds, copy, profile, RunLimits.make(cancel, timeout))

    def run_limited(self, feeds: dict[str, Any], copy: bool, profile: bool, limits: RunLimits) -> dict[str, np.ndarray]:
        """run() under limits made by the caller: a batch split's images share the whole run's."""
        with self._lock:
            self._limits = limits
            try:
                return self._run(feeds, copy, profile, limits)
            finally:
                self._limits = None

    def cancel(self) -> bool:
        """Stop the run in progress at its next op (it raises RunCancelled); False when none was."""
        limits = self._limits
        if limits is None:
            return False
        limits.token.cancel()
        return True

    def _run(self, feeds: dict[str, Any], copy: bool, profile: bool, limits: RunLimits) -> dict[str, np.ndarray]:
        if self.eager:
            from ..graph.evaluate import evaluate

            token, bound = loop_limit.set(self.max_loop_iterations), current_limits.set(limits)
            try:
                return evaluate(self.graph, feeds) if self._eager is None else self._eager.run(feeds)
            finally:
                current_limits.reset(bound)
                loop_limit.reset(token)
        fast = self._fast
        if fast is not None and not profile and fast.plan is self._current:
            arrays = fast.match(feeds)
            if arrays is not None:  # the inputs of the last run again: checked, planned, not split
                cur = fast.plan
                cur.program.run(
                    False,
                    bind_inputs(arrays, fast.views, fast.move_at, fast.lo, fast.hi, fast.n_movable),
                    limits.token.address,
                    limits.deadline_ms,
                )
                if copy:
                    return {n: v.copy() for n, v in cur.output_views.items()}
                return dict(cur.output_views)
        given = feeds
        feeds = check_feeds(feeds, self.graph.inputs)
        shapes = {n: a.shape for n, a in feeds.items()}
        split = None if profile else self._split_for(shapes)  # a profile is of the whole-batch plan
        if split is not None:
            self._split_shapes = shapes
            return split.run(feeds, copy, limits)
        cur = self._current
        if (
            cur is None
            or any(cur.input_views[n].shape != s for n, s in shapes.items())
            or any(not np.array_equal(cur.values[n], feeds[n]) for n in self.value_inputs)
        ):
            self.resize(shapes, {n: feeds[n] for n in self.value_inputs})
            cur = self._current
        moved = None
        for name, arr in feeds.items():
            view = cur.input_views[name]
            j = cur.move_index.get(name)
            if j is not None and readable_in_place(arr, view.dtype, cur.arenas.get(HOST)):
                moved = moved or [0] * len(cur.program.movable)
                moved[j] = arr.ctypes.data  # read where it is: no copy into the arena
            else:
                np.copyto(view, arr, casting="unsafe")  # kinds checked above
        cur.program.run(profile, None if moved is None else tuple(moved), limits.token.address, limits.deadline_ms)
        if not self.value_inputs:
            self._fast = FastFeeds.make(given, self.input_names, cur)
        if copy:
            return {n: v.copy() for n, v in cur.output_views.items()}
        return dict(cur.output_views)

    def _split_for(self, shapes: dict[str, Sequence[int]]) -> BatchSplit | None:
        """How a batch of these shapes runs as images (batch_split.py), or None: batch_parallel="off",
        one image, a model that mixes its images (graph/batch.py), or under "auto" a backend that is
        not on the host (a GPU runs a batch in one go) or a model whose split would not pay."""
        if self.batch_parallel == "off" or self.eager or not self.input_names or self.value_inputs:
            return None
        # tuples from lists, not generators: a generator's tuple is resized, and each run would leave
        # one more tuple on the interpreter's free list (every run of an "auto" session comes here)
        key = tuple([tuple([int(d) for d in shapes[n]]) for n in self.input_names])
        if key in self._splits:
            self._splits.move_to_end(key)
            return self._splits[key]
        split, batch = None, key[0][0] if key[0] else 1
        forced = self.batch_parallel == "on"
        if batch >= 2 and (forced or all(c.domain == HOST for c in self._candidates)):
            inputs = self.graph.inputs
            resized = walk(
                self.graph,
                {n: TensorInfo(s, inputs[n].dtype) for n, s in zip(self.input_names, key)},
                False,
                specialize=True,
            )
            infos = resized.infos
            why = not_separable(resized.graph, infos)
            if why is None and (forced or split_pays(resized.graph, infos, batch)):
                split = BatchSplit(self._image_session, batch, self.threads, infos, self.output_names)
            elif why is not None and forced:
                raise MnnError(
                    f"batch_parallel='on', but this model mixes the images of a batch: {why}; "
                    "use batch_parallel='auto' or 'off'"
                )
        self._splits[key] = split
        while len(self._splits) > self.max_plans:  # as plans: the least recently used goes
            _, old = self._splits.popitem(last=False)
            if old is not None:
                old.close()
        return split

    def _child(self, graph: Graph, optimize: bool) -> Session:
        """A session of a static piece of this eager model (a segment, a body: runtime/eager.py), on
        this session's backends with its threads, fallback and limits."""
        return Session(
            graph,
            backend=self._backend_arg,
            threads=self.threads,
            precision=self.precision,
            fallback=self.fallback,
            options=self.ctx.options,
            optimize=optimize,
            batch_parallel="off",
            release_weights=False,
            fuse=self.fuse,
            max_plans=self.max_plans,
            max_arena_bytes=self.max_arena_bytes,
            max_loop_iterations=self.max_loop_iterations,
        )

    def _image_session(self, threads: int) -> Session:
        """A session of this model for one image (the batch dimension set to 1), with `threads`."""
        if self._released is not None:
            self._released.restore(self.graph)
        graph = self.graph.copy()
        graph.inputs = {n: TensorInfo((1, *i.shape[1:]), i.dtype) for n, i in graph.inputs.items()}
        return Session(
            graph,
            backend=self._backend_arg,
            threads=threads,
            precision=self.precision,
            fallback=self.fallback,
            options=self.ctx.options,
            optimize=False,
            batch_parallel="off",
            fuse=self.fuse,
            max_plans=self.max_plans,
            max_arena_bytes=self.max_arena_bytes,
        )

    # -- introspection ------------------------------------------------------------------

    def _need_plan(self) -> PreparedPlan:
        with self._lock:
            return self._need_plan_locked()

    def _need_plan_locked(self) -> PreparedPlan:
        if self.eager:
            raise MnnError(
                "this model runs eagerly, between its control-flow or value-sized ops (it has sequence or "
                "optional values, control flow or outputs sized by input values): it has no single plan"
            )
        if self._current is None and all(i.is_static for i in self.graph.inputs.values()):
            self.resize({n: i.shape for n, i in self.graph.inputs.items()})  # skipped at init: batch_parallel
        elif self._current is None and self._split_shapes:
            self.resize(self._split_shapes)  # the whole-batch plan of the last run, made now
        if self._current is None:
            dyn = {n: str(i) for n, i in self.graph.inputs.items() if not i.is_static}
            raise MnnError(f"the model has dynamic inputs {dyn}: call resize() or run() first")
        return self._current

    @property
    def plan(self) -> Plan:
        return self._need_plan().plan

    @property
    def pieces(self) -> list[Session]:
        """An eager model's child Sessions made so far (its segments and Loop/Scan/If bodies; each
        has its own `plan`): where its ops ran. Empty for a model planned whole, or run by the
        reference kernels node by node."""
        return [] if self._eager is None else list(self._eager.sessions())

    @property
    def memory(self) -> dict[str, MemoryReport]:
        return self._need_plan().memory

    def profile(self) -> list[tuple[str, float]]:
        """Per-step milliseconds of the last run(profile=True)."""
        return self._need_plan().program.profile()

    def output_info(self) -> dict[str, TensorInfo]:
        infos = self._need_plan().infos
        return {n: infos[n] for n in self.output_names}


#: every live session, for the fork handler below
_SESSIONS: weakref.WeakSet[Session] = weakref.WeakSet()


def _renew_after_fork() -> None:
    """In a forked child: a lock some parent thread held stays held there, and the worker threads
    of a batch split's pool do not exist; each session gets a new lock and makes its splits anew."""
    for sess in list(_SESSIONS):
        sess._lock = threading.RLock()
        sess._splits.clear()
        sess._fast = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_after_fork)
