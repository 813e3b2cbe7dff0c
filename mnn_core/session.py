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

At each plan a backend may run some of the ops placed on it as one op of its own (fusion.py;
Session(fuse=False) keeps every op apart).

Weights that every kernel reading them copied at prepare (CExecution.packed: x86's GEMM panels) are
freed from the session's graph as the plan is built, and derived again from the model when
another input shape needs a plan (weights.py; release_weights=False keeps them).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backend import (
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
from .backend.plugins import get_plugins
from .batch_split import BatchSplit, split_pays
from .errors import BackendError, GraphError, InputError, MnnError, UnsupportedOpError
from .fusion import fuse_placed
from .graph.batch import not_separable
from .graph.ir import Graph, Node, TensorInfo, consumers_of
from .graph.shapes import value_sources, walk
from .memory.planner import ALIGNMENT, MemoryReport, TensorUse, plan_arena
from .ops import get_schema
from .runtime._runloop import Program
from .scheduler import REFERENCE, VIEW_OPS, Candidate, Placement, make_candidate, place_auto, place_listed
from .weights import ReleasedWeights, give_back_freed

PRECISIONS = ("high", "normal", "low")
#: Session(batch_parallel=): "auto" (the default) runs a batch as images where that is safe (host
#: backends only, a batch-separable model) and pays (batch_split.split_pays: an image's activations
#: outweigh the weights); "on" whenever the model is batch-separable (at one thread: the images in
#: turn); "off" never
BATCH_PARALLEL = ("auto", "on", "off")
FOREVER = 1 << 40  # a lifetime end past the last step
#: plans kept for different values of inputs that decide shapes (a Reshape target fed at each run)
MAX_VALUE_PLANS = 16


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
            lines.append(f"no step (views alias their input; concatenations are written in place): "
                         f"{', '.join(self.elided)}")
        if self.fused:
            fused = (f"{k} ({' + '.join(v)})" for k, v in self.fused.items())
            lines.append("fused by their backend: " + ", ".join(fused))
        if self.layouts:
            lines.append("backend-private layouts: " + ", ".join(f"{v} ({c})" for v, c in self.layouts.items()))
        return "\n".join(lines)


@dataclass
class _Slot:
    """Where one value lives for this plan."""

    domain: str
    info: TensorInfo
    offset: int = -1  # in the domain's arena; -1: outside (a constant)
    constant: np.ndarray | None = None
    nbytes: int = 0  # its size in the arena
    name: str = ""  # the value's name


class _PreparedPlan:
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
        self.move_index: dict[str, int] = {}  # movable input -> its position in program.run's `moved`


class Session:
    """A model bound to backends, planned per input shape."""

    def __init__(self, model: Graph | str | os.PathLike, backend: str | Sequence[str] = "auto",
                 threads: int = 1, precision: str = "normal", fallback: bool = True,
                 options: dict | None = None, optimize: bool = True, batch_parallel: str = "auto",
                 release_weights: bool = True, fuse: bool = True, input_shapes: dict | None = None):
        from .graph.passes import optimize as run_passes
        from .loader import load

        graph = model if isinstance(model, Graph) else load(model)
        graph.validate()
        if input_shapes:
            graph = _fix_input_shapes(graph, input_shapes)
        if precision not in PRECISIONS:
            raise MnnError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if not isinstance(threads, int) or threads < 1:
            raise MnnError(f"threads must be a positive int, got {threads!r}")
        if batch_parallel not in BATCH_PARALLEL:
            raise MnnError(f"batch_parallel must be one of {', '.join(BATCH_PARALLEL)}, got {batch_parallel!r}")
        self.threads = threads
        self.fuse = bool(fuse)  # backends' fusions of their placed ops, at each plan (fusion.py)
        self.precision = precision
        self.fallback = fallback
        self.batch_parallel = batch_parallel
        self._backend_arg = backend
        self._splits: dict[tuple, BatchSplit | None] = {}  # per input shapes: how batches run as images
        self._split_shapes: dict | None = None  # the last run's shapes when it ran as images (_need_plan)
        self.ctx = PrepareContext(threads=threads, precision=precision, options=dict(options or {}))
        plugins = get_plugins()
        self._auto = backend == "auto"
        names = self._backend_names(backend, plugins)
        self._candidates = [make_candidate(plugins.backends[n], self.ctx) for n in names]
        self._by_name = {c.backend.name: c for c in self._candidates}
        self._reference = self._by_name.get(REFERENCE) or make_candidate(plugins.backends[REFERENCE], self.ctx)
        self._by_name.setdefault(REFERENCE, self._reference)
        derive = (lambda g: run_passes(g, extra=plugins.passes)) if optimize else Graph.copy
        self.graph = derive(graph)  # a copy even unoptimized: released weights leave the model intact
        self._released = ReleasedWeights(model, derive) if release_weights else None
        self._pinned: set[str] = set()  # constants a step of some plan reads at run: never released
        self.input_names = list(self.graph.inputs)
        self.output_names = list(self.graph.outputs)
        self._plans: dict[tuple, _PreparedPlan] = {}
        self._current: _PreparedPlan | None = None
        self.eager = self.graph.is_dynamic()
        #: graph inputs whose values decide shapes (a Reshape's target fed at run): plans are per value too
        self.value_inputs: list[str] = []
        if not self.eager:
            try:
                self.value_inputs = sorted(value_sources(self.graph)[0])
            except GraphError:  # shapes that follow the data: no plan can hold for every run
                self.eager = True
        if self.eager:  # sequences, optionals, control flow: no plan per shape (graph/evaluate.py)
            _check_eager(self.graph, names, fallback)
            return
        if all(info.is_static for info in self.graph.inputs.values()) and not self.value_inputs:
            shapes = {n: i.shape for n, i in self.graph.inputs.items()}
            if self._split_for(shapes) is None:  # a batch run as images needs no plan for the whole batch
                self.resize(shapes)

    # -- backend choice ----------------------------------------------------------------

    @staticmethod
    def _backend_names(backend, plugins) -> list[str]:
        known = plugins.backends
        if backend == "auto":
            names = []
            for name, b in known.items():
                try:
                    if b.availability():
                        names.append(name)
                except Exception:  # a backend that cannot say is not available
                    continue
            return names
        names = [backend] if isinstance(backend, str) else list(backend)
        if not names:
            raise BackendError("backend list is empty; name one, or use backend='auto'")
        for name in names:
            if name not in known:
                hint = ""
                broken = [r for r in plugins.records if r.name == name and r.error]
                if broken:
                    hint = f" (its plugin failed to load: {broken[0].error})"
                raise BackendError(
                    f"no backend named {name!r}{hint}; installed: {', '.join(sorted(known))}. "
                    f"Install it (e.g. pip install mnn-{name}) or see `mnn backends`"
                )
        return names

    # -- planning ----------------------------------------------------------------------

    def resize(self, shapes: dict[str, Sequence[int]], values: dict[str, Any] | None = None) -> None:
        """Plan for these input shapes (or reuse the plan made for them before). `values`: the
        values of the inputs that decide shapes (`value_inputs`), which key the plan too."""
        missing = [n for n in self.input_names if n not in shapes]
        if missing:
            raise InputError(f"resize() needs the shape of every input; missing: {', '.join(missing)}")
        values = {n: np.asarray((values or {})[n]) for n in self.value_inputs if n in (values or {})}
        if len(values) != len(self.value_inputs):
            raise InputError(f"inputs {', '.join(self.value_inputs)} decide shapes in this model: pass their "
                             "values to resize(shapes, values=...), or call run()")
        key = (tuple(tuple(int(d) for d in shapes[n]) for n in self.input_names),
               tuple((v.dtype.str, v.tobytes()) for v in values.values()))
        plan = self._plans.get(key)
        if plan is None:
            infos = {}
            for name, shape in zip(self.input_names, key[0]):
                declared = self.graph.inputs[name]
                infos[name] = TensorInfo(shape, declared.dtype)
            if self._released is not None:
                self._released.restore(self.graph)
            resized = walk(self.graph, infos, False, values, specialize=True)
            plan = self._prepare(resized.infos, resized.graph)
            plan.values = values
            if values and sum(1 for k in self._plans if k[1]) >= MAX_VALUE_PLANS:
                del self._plans[next(k for k in self._plans if k[1])]  # the oldest plan for fed values
            self._plans[key] = plan
        self._current = plan

    def _prepare(self, infos: dict[str, TensorInfo], graph: Graph) -> _PreparedPlan:
        listed = [c for c in self._candidates if c.backend.name != REFERENCE or not self._auto]
        if self._auto:
            placements = place_auto(graph, infos, self._candidates or [self._reference], self.threads)
        else:
            placements = place_listed(graph, infos, listed, self._reference, self.fallback, self.threads)
        nodes, fused = graph.nodes, {}
        if self.fuse:
            placed = {p.backend for p in placements}
            backends = {n: c.backend for n, c in self._by_name.items() if n in placed}
            nodes, placements, fused = fuse_placed(graph.nodes, placements, backends, infos, graph.initializers,
                                                   graph.outputs, self.ctx)
        builder = _ProgramBuilder(self, graph, infos, placements, nodes)
        builder.plan.fused = fused
        plan = builder.build()
        self._pinned |= builder.pinned
        if builder.freed:
            give_back_freed()
        return plan

    # -- running -----------------------------------------------------------------------

    def run(self, feeds: dict[str, Any], copy: bool = True, profile: bool = False) -> dict[str, np.ndarray]:
        """Run once. Returns {output name: array}; with copy=False the arrays are
        views into the session's memory, valid until the next run."""
        if self.eager:
            from .graph.evaluate import evaluate

            return evaluate(self.graph, feeds)
        feeds = self._check_feeds(feeds)
        shapes = {n: a.shape for n, a in feeds.items()}
        split = None if profile else self._split_for(shapes)  # a profile is of the whole-batch plan
        if split is not None:
            self._split_shapes = shapes
            return split.run(feeds, copy)
        cur = self._current
        if cur is None or any(cur.input_views[n].shape != s for n, s in shapes.items()) or any(
                not np.array_equal(cur.values[n], feeds[n]) for n in self.value_inputs):
            self.resize(shapes, {n: feeds[n] for n in self.value_inputs})
            cur = self._current
        moved = None
        for name, arr in feeds.items():
            view = cur.input_views[name]
            j = cur.move_index.get(name)
            if j is not None and _readable_in_place(arr, view.dtype, cur.arenas.get(HOST)):
                moved = moved or [0] * len(cur.program.movable)
                moved[j] = arr.ctypes.data  # read where it is: no copy into the arena
            else:
                np.copyto(view, arr, casting="unsafe")  # kinds checked above
        cur.program.run(profile, None if moved is None else tuple(moved))
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
            return self._splits[key]
        split, batch = None, key[0][0] if key[0] else 1
        forced = self.batch_parallel == "on"
        if batch >= 2 and (forced or all(c.domain == HOST for c in self._candidates)):
            inputs = self.graph.inputs
            resized = walk(self.graph, {n: TensorInfo(s, inputs[n].dtype) for n, s in zip(self.input_names, key)},
                           False, specialize=True)
            infos = resized.infos
            why = not_separable(resized.graph, infos)
            if why is None and (forced or split_pays(resized.graph, infos, batch)):
                split = BatchSplit(self._image_session, batch, self.threads, infos, self.output_names)
            elif why is not None and forced:
                raise MnnError(f"batch_parallel='on', but this model mixes the images of a batch: {why}; "
                               "use batch_parallel='auto' or 'off'")
        self._splits[key] = split
        return split

    def _image_session(self, threads: int) -> Session:
        """A session of this model for one image (the batch dimension set to 1), with `threads`."""
        if self._released is not None:
            self._released.restore(self.graph)
        graph = self.graph.copy()
        graph.inputs = {n: TensorInfo((1, *i.shape[1:]), i.dtype) for n, i in graph.inputs.items()}
        return Session(graph, backend=self._backend_arg, threads=threads, precision=self.precision,
                       fallback=self.fallback, options=self.ctx.options, optimize=False, batch_parallel="off",
                       fuse=self.fuse)

    def _check_feeds(self, feeds: dict[str, Any]) -> dict[str, np.ndarray]:
        if not isinstance(feeds, dict):
            raise InputError(f"run() takes a dict {{input name: array}}; inputs are {self.input_names}")
        missing = [n for n in self.input_names if n not in feeds]
        extra = [n for n in feeds if n not in self.graph.inputs]
        if missing or extra:
            raise InputError(
                f"inputs {'missing: ' + ', '.join(missing) if missing else ''}"
                f"{'; ' if missing and extra else ''}{'unknown: ' + ', '.join(extra) if extra else ''}"
                f" (the model takes {', '.join(f'{n} {i}' for n, i in self.graph.inputs.items())})"
            )
        out = {}
        for name in self.input_names:
            arr = np.asarray(feeds[name])
            want = self.graph.inputs[name]
            if arr.dtype != np.dtype(want.dtype) and _kind(arr.dtype) != _kind(np.dtype(want.dtype)):
                raise InputError(f"input {name!r} must be {want.dtype} (another {_kind(np.dtype(want.dtype))} "
                                 f"dtype is converted), got {arr.dtype}")
            if arr.ndim != len(want.shape) or any(
                isinstance(d, int) and d != s for d, s in zip(want.shape, arr.shape)
            ):
                raise InputError(f"input {name!r} must have shape {want}, got {tuple(arr.shape)}")
            out[name] = arr
        return out

    # -- introspection ------------------------------------------------------------------

    def _need_plan(self) -> _PreparedPlan:
        if self.eager:
            raise MnnError("this model runs eagerly on the reference backend, node by node (it has sequence or "
                           "optional values, control flow or outputs sized by input values): it has no plan")
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
    def memory(self) -> dict[str, MemoryReport]:
        return self._need_plan().memory

    def profile(self) -> list[tuple[str, float]]:
        """Per-step milliseconds of the last run(profile=True)."""
        return self._need_plan().program.profile()

    def output_info(self) -> dict[str, TensorInfo]:
        infos = self._need_plan().infos
        return {n: infos[n] for n in self.output_names}


def _fix_input_shapes(graph: Graph, shapes: dict) -> Graph:
    """The graph with these inputs' symbolic dimensions fixed (Session(input_shapes=...))."""
    unknown = sorted(set(shapes) - set(graph.inputs))
    if unknown:
        raise InputError(f"input_shapes names {', '.join(unknown)}, which are not inputs "
                         f"(the model takes {', '.join(graph.inputs)})")
    graph = graph.copy()
    for name, shape in shapes.items():
        declared = graph.inputs[name]
        shape = tuple(int(d) for d in shape)
        if len(shape) != len(declared.shape) or any(
                isinstance(d, int) and d != s for d, s in zip(declared.shape, shape)):
            raise InputError(f"input_shapes: input {name!r} is {declared}; {shape} does not fit it")
        graph.inputs[name] = TensorInfo(shape, declared.dtype)
    return graph


def _check_eager(graph: Graph, backends: list[str], fallback: bool) -> None:
    """An eager graph runs on the reference kernels: fine unless fallback=False names another backend."""
    if fallback or REFERENCE in backends:
        return
    ops = sorted({n.op for n in graph.nodes if get_schema(n.op).dynamic})
    raise UnsupportedOpError(
        f"op {ops[0] if ops else '?'}: this model runs eagerly on the reference backend (sequence/optional "
        f"values or outputs sized by input values: {', '.join(ops) or 'its inputs'}), not on "
        f"{', '.join(backends)}; allow fallback=True")


def _readable_in_place(arr: np.ndarray, dtype: np.dtype, host: np.ndarray | None) -> bool:
    """Whether a movable input's steps may read the caller's array itself: its exact dtype, C order,
    aligned to its element size, and outside the arena (a view of the last run's outputs is copied
    first, as the steps will overwrite those bytes)."""
    return (arr.dtype == dtype and arr.flags.c_contiguous and arr.flags.aligned
            and (host is None or not np.may_share_memory(arr, host)))


def _kind(dtype: np.dtype) -> str:
    """Inputs of the same kind are converted to the model's dtype; others are errors."""
    if dtype.kind == "f":
        return "floating-point"
    if dtype.kind in "iu":
        return "integer"
    return dtype.name


class _ProgramBuilder:
    """Turns a placement into steps, arenas and a compiled Program."""

    def __init__(self, session: Session, graph: Graph, infos: dict[str, TensorInfo], placements: list[Placement],
                 nodes: list[Node]):
        self.s = session
        self.graph = graph  # the session's graph at these shapes (graph/shapes.py: specialize)
        self.nodes = nodes  # the graph's nodes in run order, with backends' fusions (fusion.py)
        self.infos = dict(infos)  # values given a backend-private layout get their own TensorInfo
        self.placements = {p.node: p for p in placements}
        self.plan = Plan(placements)
        self.slots: dict[tuple[str, str], _Slot] = {}  # (value, domain) -> slot
        self.uses: dict[str, dict[str, TensorUse]] = {}  # domain -> value -> its use
        self.steps: list[tuple] = []  # (name, kind, payload) before compiling
        self.aliases: dict[tuple[str, str], tuple[str, str]] = {}
        self.layout_owner: dict[str, Any] = {}  # value in a backend-private layout -> that backend
        self.pinned: set[str] = set()  # constants a step reads in host memory at run (or a view returns)
        self.freed: list[str] = []  # constants released (weights.py) as this plan was built

    def domain_of(self, backend: str) -> str:
        return self.s._by_name[backend].domain

    def backend_of_domain(self, domain: str):
        for c in self.s._by_name.values():
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

    def _define(self, value: str, domain: str, step: int, alias: str | None = None) -> _Slot:
        info = self.infos[value]
        nbytes = self._nbytes(value, domain)
        slot = _Slot(domain, info, nbytes=nbytes)
        self.slots[(value, domain)] = slot
        self.uses.setdefault(domain, {})[value] = TensorUse(value, nbytes, step, step, alias)
        return slot

    def _locate(self, value: str, domain: str) -> _Slot:
        """The slot of `value` in `domain`, inserting a copy step if it lives elsewhere."""
        if (value, domain) in self.slots:
            return self.slots[(value, domain)]
        if value in self.graph.initializers:
            arr = np.asarray(self.graph.initializers[value], order="C")  # keeps 0-d 0-d
            if domain == HOST:
                slot = _Slot(HOST, self.infos[value], constant=arr, name=value)
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

    def build(self) -> _PreparedPlan:
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
            if alias is not None and node.op in VIEW_OPS:
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
                if any(self.placements[u.name].backend != backend or u.op in VIEW_OPS for u in users):
                    continue
                readers = {id(u): u for u in users}.values()  # a node reading the value twice is listed twice
                uses = tuple((u, i) for u in readers for i, n in enumerate(u.inputs) if n == value)
                offers.setdefault(backend, []).append(
                    LayoutCandidate(value, self.infos[value], node, uses, self.infos, constants))
        for backend_name, cands in offers.items():
            backend = self.s._by_name[backend_name].backend
            choose = getattr(backend, "tensor_layouts", None)  # backends not derived from Backend lack it
            if not callable(choose):
                continue
            chosen = choose(cands, self.s.ctx) or {}
            offered = {c.value for c in cands}
            for value, code in chosen.items():
                if value not in offered:
                    raise BackendError(f"backend {backend_name} chose a layout for {value!r}, which is not one of "
                                       "the tensors it was offered (they must stay inside the backend)")
                if not isinstance(code, (int, np.integer)) or not 0 <= code < 2**31:
                    raise BackendError(f"backend {backend_name} chose layout {code!r} for {value!r}; a layout is "
                                       "an int code, 0 for dense row-major, others private to the backend")
                if code:
                    self.infos[value] = TensorInfo(self.infos[value].shape, self.infos[value].dtype, int(code))
                    self.layout_owner[value] = backend
                    self.plan.layouts[value] = int(code)

    def _alias_target(self, node: Node, domain: str, backend: str, consumers) -> str | None:
        """The input whose memory the output may reuse (in-place op), or None."""
        if not node.inputs or not node.inputs[0] or len(node.outputs) != 1:
            return None
        src = node.inputs[0]
        spec = self.s._by_name[backend].kernels.get(node.op)
        in_place = node.op in VIEW_OPS or (spec is not None and spec.inplace and get_schema(node.op).inplace)
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
            if (not name or name in self.graph.inputs or name in self.graph.outputs or name not in uses
                    or len(consumers.get(name, [])) != 1):
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

    def _compile(self) -> _PreparedPlan:
        out = _PreparedPlan()
        out.plan = self.plan
        out.infos = self.infos
        offsets: dict[tuple[str, str], int] = {}
        for domain, uses in self.uses.items():
            arena_plan = plan_arena(domain, list(uses.values()))
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
        last_reader = {n: payload[0] for _, kind, payload in self.steps if kind == "op"
                       for n in payload[0].inputs if n in self.graph.initializers}
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

    def _may_move(self, name: str) -> bool:
        """Whether run() may hand the steps the caller's array for this input, as far as the plan goes
        (the Program checks its readers): it is in host memory, not an output, and no value lives
        inside its bytes."""
        uses = self.uses.get(HOST, {})
        return (name not in self.graph.outputs and (name, HOST) in self.slots
                and not any(u.alias_of == name for u in uses.values()))

    def _free_packed(self, node: Node, last_reader: dict[str, Node]) -> None:
        """Release the constants this node was the last to read, where every step so far packed
        them (weights.py): freed now, before the next prepare packs its own weights, so even the
        session's peak memory holds each weight about once."""
        released = self.s._released
        if released is None:
            return
        for name in node.inputs:
            if last_reader.get(name) is not node or name in self.pinned or name in self.s._pinned:
                continue
            if name in self.s.graph.initializers and released.release(self.s.graph, name):
                self.graph.initializers[name] = self.s.graph.initializers[name]  # (a specialized copy's too)
                self.freed.append(name)
                for (value, _), slot in self.slots.items():
                    if value == name:
                        slot.constant = self.graph.initializers[name]  # the placeholder

    def _group_segments(self):
        """Steps in order; consecutive ops on a backend with prepare_segment become one."""
        pending: list = []
        for name, kind, payload in self.steps:
            backend = self.s._by_name[payload[1]].backend if kind == "op" else None
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
        backend = self.s._by_name[backend_name].backend
        domain = self.s._by_name[backend_name].domain

        def ref(value):
            slot = self.slots[(value, domain)]
            if slot.constant is not None:  # a segment may keep whatever it was handed
                self.pinned.add(value)
            return TensorRef(value, slot.info, slot.offset if slot.constant is None or domain != HOST else -1,
                             slot.constant)

        ops, in_names, in_descs, out_descs, seen = [], [], [], [], set()
        for node, _ in group:
            ops.append(SegmentOp(node, [ref(n) if n else None for n in node.inputs], [ref(n) for n in node.outputs],
                                 {n: self.graph.initializers[n] for n in node.inputs if n in self.graph.initializers}))
            for n in node.inputs:
                if n and n not in seen:
                    seen.add(n)
                    in_names.append(n)
                    in_descs.append(self._desc(arenas, self.slots[(n, domain)]))
            out_descs += [self._desc(arenas, self.slots[(n, domain)]) for n in node.outputs]
        name = f"segment:{backend_name}:{group[0][0].name}..{group[-1][0].name}"
        try:
            execution = backend.prepare_segment(ops, arenas.get(domain), self.s.ctx)
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
        return method(arg, self.s.ctx) if takes_context(method) else method(arg)

    def _allocate(self, domain: str, nbytes: int):
        if domain == HOST:
            raw = np.zeros(nbytes + ALIGNMENT, dtype=np.uint8)
            start = (-raw.ctypes.data) % ALIGNMENT
            return raw[start:start + nbytes]
        arena = self._with_ctx(self.backend_of_domain(domain).allocate_arena, nbytes)
        if not isinstance(arena, Arena):
            raise BackendError(f"allocate_arena of domain {domain!r} must return an mnn_core.backend.Arena")
        return arena

    def _host_view(self, host: np.ndarray, slot: _Slot) -> np.ndarray:
        if slot.constant is not None:
            self.pinned.add(slot.name)  # a pointer to it or a view of it outlives the plan's build
            return slot.constant
        info = slot.info
        if info.layout:  # bytes only its backend can read
            return np.ndarray((slot.nbytes,), dtype=np.uint8, buffer=host, offset=slot.offset)
        return np.ndarray(info.shape, dtype=info.dtype, buffer=host, offset=slot.offset)

    def _view(self, arenas, slot: _Slot) -> np.ndarray:
        if slot.domain == HOST:
            return self._host_view(arenas.get(HOST), slot)
        try:
            return arenas[slot.domain].view(slot.offset, slot.info)
        except NotImplementedError as exc:
            raise BackendError(f"a Python execution cannot reach memory domain {slot.domain!r}: {exc}") from None

    def _desc(self, arenas, slot: _Slot) -> tuple:
        if slot.domain == HOST:
            view = self._host_view(arenas.get(HOST), slot)
            return (view.ctypes.data, 0, slot.info.shape, slot.info.dtype, slot.info.layout)
        return (arenas[slot.domain].handle, slot.offset, slot.info.shape, slot.info.dtype, slot.info.layout)

    @staticmethod
    def _packed_desc(slot: _Slot) -> tuple:
        """A constant the execution packed: no data pointer (it may be freed, weights.py)."""
        return (0, 0, slot.info.shape, slot.info.dtype, slot.info.layout)

    def _op_step(self, payload, arenas) -> tuple:
        node, backend_name = payload
        cand: Candidate = self.s._by_name[backend_name]
        domain = cand.domain
        ins = [self.slots[(n, domain)] if n else None for n in node.inputs]
        outs = [self.slots[(n, domain)] for n in node.outputs]
        constants = {n: self.graph.initializers[n] for n in node.inputs if n in self.graph.initializers}
        if node.op in VIEW_OPS and node.op not in cand.kernels:
            return self._view_copy_step(node, ins[0], outs[0], arenas)
        try:
            execution = cand.backend.prepare(
                node, [s.info if s else None for s in ins], [s.info for s in outs], constants, self.s.ctx)
        except MnnError:
            raise
        except Exception as exc:
            raise BackendError(f"backend {backend_name} failed to prepare {node.op} ({node.name}): {exc}") from exc
        packed = execution.packed if isinstance(execution, CExecution) else frozenset()
        in_descs = [self._packed_desc(s) if i in packed and s.constant is not None and s.domain == HOST
                    else self._desc(arenas, s) for i, s in enumerate(ins) if s is not None]
        out_descs = [self._desc(arenas, s) for s in outs]
        in_names = [n for n in node.inputs if n]
        if isinstance(execution, CExecution):
            return (node.name, execution, in_descs, out_descs, in_names)
        if isinstance(execution, PyExecution):
            in_views = [self._view(arenas, s) if s else None for s in ins]
            out_views = [self._view(arenas, s) for s in outs]
            fn = execution.fn
            return (node.name, lambda: fn(in_views, out_views), in_descs, out_descs, in_names)
        raise BackendError(f"backend {backend_name} returned {type(execution).__name__} from prepare; "
                           "expected CExecution or PyExecution")

    def _view_copy_step(self, node: Node, src: _Slot, dst: _Slot, arenas) -> tuple:
        """A view op that could not alias its input: the core copies the bytes."""
        if src.domain != HOST:
            raise BackendError(f"{node.op} ({node.name}) on domain {src.domain!r} cannot alias its input "
                               "and the backend has no kernel for it")
        a, b = self._host_view(arenas[HOST], src), self._host_view(arenas[HOST], dst)
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        return (node.name, lambda: np.copyto(flat_b, flat_a), [self._desc(arenas, src)], [self._desc(arenas, dst)],
                [node.inputs[0]])

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
