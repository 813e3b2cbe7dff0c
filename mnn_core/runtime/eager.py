"""An eager graph as a short program: planned pieces on the session's backends, control on the host.

A graph that cannot be planned once per input shape (Graph.is_dynamic: a Loop, an If on data, a
NonZero) still has long stretches that can. Each maximal run of non-dynamic nodes becomes a segment,
a sub-graph run by a child Session with the parent's backends, threads and fallback, planned per the
shapes (and shape-deciding values) that reach it and reused while they repeat. Between segments the
dynamic nodes run on the host: If, Loop and Scan through ops/control_flow.py's loop control (trip
count, condition, carried values, stacking), each body run by a runner of its own; any other dynamic
op (NonZero, sequences) on its reference kernel, which fallback=False refuses (check_eager).

A body's runner is a child Session where the body is static (one plan per body-input shapes, reused
across iterations and runs; body_split.py keeps values that change every iteration from replanning
it all) and another eager program where the body holds control flow of its own. The inputs that hold
one of the enclosing graph's constants in every iteration (weights passed through a Loop) become
the body's own constants first (bind_constants): packed once, folded where transposed.

Why child Sessions rather than the program builder applied to pieces: a Session already is what a
piece needs (a plan cache keyed by shapes and values, placement, fusion, the compiled run loop,
cancellation and limits); a piece only has to say which values enter and leave it.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..graph.evaluate import check_feed, run_node
from ..graph.ir import HOST_DTYPES, Graph, Node, TensorInfo, symbolic
from ..graph.shapes import SHAPE_OPS
from ..ops import get_schema
from ..ops.control_flow import evaluate_body, run_if, run_loop, run_scan
from .cancel import current_limits

#: dynamic ops whose control the host runs, their bodies planned; every other dynamic op runs on
#: its reference kernel
CONTROL = {"If": run_if, "Loop": run_loop, "Scan": run_scan}

#: the most results of host blocks an eager program keeps (EagerProgram.memo)
MEMO_ENTRIES = 1 << 14

#: makes the child Session of a static sub-graph (Session._child): (graph, optimize) -> Session
MakeSession = Callable[[Graph, bool], Any]


def has_dynamic_ops(graph: Graph) -> bool:
    return any(get_schema(n.op).dynamic for n in graph.nodes)


def all_graphs(graph: Graph) -> Iterator[Graph]:
    """The graph and its bodies, nested ones too."""
    yield graph
    for _, _, body in graph.subgraphs():
        yield from all_graphs(body)


@dataclass
class Piece:
    """A step of the program: a segment (a static sub-graph, `graph`), one host node (`node`), or a
    block of host nodes computing small values (`block`, body_split's; `shape_only`: the inputs it
    reads only the shapes of)."""

    inputs: list[str]
    outputs: list[str]
    graph: Graph | None = None
    node: Node | None = None
    block: list[Node] | None = None
    shape_only: frozenset = frozenset()


def split(graph: Graph, is_host: Callable[[Node], bool]) -> list[Piece]:
    """The graph's nodes in order as segments (maximal runs of nodes not `is_host`) and host nodes."""
    runs: list[list[Node] | Node] = []
    for node in graph.nodes:
        if is_host(node):
            runs.append(node)
        elif runs and isinstance(runs[-1], list):
            runs[-1].append(node)
        else:
            runs.append([node])
    return pieces_of(graph, runs)


def pieces_of(graph: Graph, runs: list[list[Node] | tuple[Node, ...] | Node]) -> list[Piece]:
    """Pieces from runs of nodes in run order: a list a segment, a tuple a host block, a Node one
    host node. A segment's or block's inputs are the values it reads from before it (initializers
    travel inside a segment); its outputs the values a later piece or the graph's outputs read. A
    segment or block nothing reads is left out."""
    pieces: list[Piece] = []
    needed = set(graph.outputs)  # read after the piece being built (built last to first)
    for run in reversed(runs):
        if isinstance(run, Node):
            pieces.append(Piece(list(run.inputs), list(run.outputs), node=run))
            needed.update(n for n in run.inputs if n)
            continue
        produced = {o for node in run for o in node.outputs}
        outputs = list(dict.fromkeys(o for node in run for o in node.outputs if o in needed))
        if not outputs:
            continue
        reads = list(dict.fromkeys(n for node in run for n in node.inputs if n and n not in produced))
        inputs = [n for n in reads if n not in graph.initializers]
        if isinstance(run, tuple):
            shape_only = {n for n in inputs if all(m.op in SHAPE_OPS for m in run if n in m.inputs)}
            pieces.append(Piece(inputs, outputs, block=list(run), shape_only=frozenset(shape_only)))
            needed.update(inputs)
            continue
        sub = Graph(
            inputs={n: TensorInfo(()) for n in inputs},  # declared at its first run (StaticRunner)
            outputs=outputs,
            nodes=run,
            initializers={n: graph.initializers[n] for n in reads if n in graph.initializers},
            name=f"{graph.name}[{run[0].name}..{run[-1].name}]",
        )
        pieces.append(Piece(inputs, outputs, graph=sub))
        needed.update(inputs)
    return pieces[::-1]


class StaticRunner:
    """A static graph run by a child Session, made at its first run: its inputs declared with the
    ranks and dtypes then fed, every size a symbol (the Session plans per the shapes it is fed).
    Fed host objects (an optional, a sequence, strings) it runs on the reference kernels instead."""

    def __init__(self, graph: Graph, make_session: MakeSession, optimize: bool):
        self.graph, self.make_session, self.optimize = graph, make_session, optimize
        self.session = None
        self.on_host = False

    def run_values(self, values: list) -> list:
        if self.on_host:
            return evaluate_body(self.graph, values)
        if self.session is None:
            if any(not isinstance(v, np.ndarray) or v.dtype.name in HOST_DTYPES for v in values):
                self.on_host = True
                return evaluate_body(self.graph, values)
            g = self.graph.copy()
            g.inputs = {
                name: TensorInfo(symbolic(f"in{i}", v.ndim), v.dtype.name)
                for i, (name, v) in enumerate(zip(self.graph.inputs, values))
            }
            self.session = self.make_session(g, self.optimize)
        feeds = dict(zip(self.graph.inputs, values))
        limits = current_limits.get()
        if limits is None:
            out = self.session.run(feeds)
        else:
            out = self.session.run_limited(feeds, True, False, limits)
        return [out[n] for n in self.graph.outputs]

    def sessions(self) -> Iterator[Any]:
        if self.session is not None:
            yield self.session


class EagerProgram:
    """A graph's pieces, run in order over one environment of values. `pieces` defaults to the
    segments between the graph's dynamic nodes (split); body_split.py passes its own, with
    optimize=True where the graph's passes have not run (a body's: its constants fold then)."""

    def __init__(
        self, graph: Graph, make_session: MakeSession, pieces: list[Piece] | None = None, optimize: bool = False
    ):
        self.graph = graph
        self.make_session = make_session
        from .body_split import body_runner

        #: body_split's host blocks (shape arithmetic on small values) by their inputs: a Loop's step
        #: takes the same values in every run, so from the second run on each is a look-up
        self.memo: dict[tuple, list] = {}
        if pieces is None:  # segments between dynamic nodes, each cut where values change (body_split)
            self.pieces = split(graph, lambda n: get_schema(n.op).dynamic)
            segment = body_runner
        else:  # body_split's own pieces, planned as they are
            self.pieces, segment = pieces, StaticRunner
        self.segments = [segment(p.graph, make_session, optimize) if p.graph is not None else None for p in self.pieces]
        self.bodies: dict[int, tuple[Graph, Any]] = {}  # id of a body -> (the body, kept alive; its runner)
        #: id of a body -> (the body with its constant inputs bound, the positions of the others)
        self.bound = {id(b): bind_constants(n, b, graph.initializers) for n, _, b in graph.subgraphs()}

    def run(self, feeds: dict[str, Any], checked: bool = False) -> dict[str, Any]:
        env: dict[str, Any] = dict(self.graph.initializers)
        for name, info in self.graph.inputs.items():
            env[name] = feeds[name] if checked else check_feed(name, info, feeds[name])
        limits = current_limits.get()
        for i, (piece, segment) in enumerate(zip(self.pieces, self.segments)):
            if segment is not None:
                outs = segment.run_values([env[n] for n in piece.inputs])
            elif piece.block is not None:
                outs = self.host_block(i, piece, env)
            else:
                node = piece.node
                if limits is not None:
                    limits.check(f"node {node.name!r} ({node.op})")
                control = CONTROL.get(node.op)
                kernel = None if control is None else lambda ins, attrs: control(ins, attrs, self.run_body)
                outs = run_node(node, env, kernel)
            env.update(zip(piece.outputs, outs))
        return {n: env[n] for n in self.graph.outputs}

    def host_block(self, i: int, piece: Piece, env: dict[str, Any]) -> list:
        """A host block's outputs (body_split: small values, and shapes), computed once per inputs."""
        values = [env[n] for n in piece.inputs]
        key = None
        if all(isinstance(v, np.ndarray) for v in values):  # (else no key can stand for them)
            key = (
                i,
                *(
                    v.shape if n in piece.shape_only else (v.dtype.str, v.shape, v.tobytes())
                    for n, v in zip(piece.inputs, values)
                ),
            )
            outs = self.memo.get(key)
            if outs is not None:
                return outs
        local = ChainMap({}, env)
        for node in piece.block:
            fn = node.attrs.get("host_fn")  # a node of body_split's own (slice_indices)
            ins = [local[n] if n else None for n in node.inputs]
            local.update(zip(node.outputs, fn(ins, node.attrs) if fn is not None else run_node(node, local)))
        outs = [local[o] for o in piece.outputs]
        if key is not None:
            if len(self.memo) >= MEMO_ENTRIES:
                self.memo.clear()
            self.memo[key] = outs
        return outs

    def run_values(self, values: list) -> list:
        """The outputs in order, fed the inputs in order (a body's values, checked by its Loop)."""
        out = self.run(dict(zip(self.graph.inputs, values)), checked=True)
        return [out[n] for n in self.graph.outputs]

    def sessions(self) -> Iterator[Any]:
        """The child Sessions made so far: its segments', its bodies' and theirs (what ran where)."""
        for segment in self.segments:
            if segment is not None:
                yield from segment.sessions()
        for _, runner in self.bodies.values():
            yield from runner.sessions()

    def run_body(self, body: Graph, values: list) -> list:
        """A body's outputs: run by an eager program of its own where it holds dynamic ops, else as
        planned segments (body_split.py)."""
        bound, keep = self.bound.get(id(body), (body, None))
        if keep is not None:
            values = [values[i] for i in keep]
        known = self.bodies.get(id(body))
        if known is None:
            from .body_split import body_runner

            runner = (
                EagerProgram(bound, self.make_session, optimize=True)
                if has_dynamic_ops(bound)
                else body_runner(bound, self.make_session)
            )
            known = self.bodies[id(body)] = (body, runner)
        return known[1].run_values(values)


def bind_constants(node: Node, body: Graph, constants: dict[str, np.ndarray]) -> tuple[Graph, list[int] | None]:
    """The body with the inputs that hold one of the enclosing graph's constants in every iteration
    as constants of its own (a Loop's or Scan's captures and the carried values it passes through
    unchanged, an If's captures), and the positions of the inputs left; (body, None) where none is.
    Weights reach a Paddle-exported Loop so: bound, they are packed once, not copied each iteration."""
    names = list(body.inputs)
    if node.op == "Loop":  # node inputs and body inputs line up from the carried values on
        n_carried = len(node.inputs) - 2 - node.attrs["num_captures"]
        fixed = [k for k in range(2, len(names)) if k >= 2 + n_carried or body.outputs[k - 1] == names[k]]
        given = {k: node.inputs[k] for k in fixed}
    elif node.op == "Scan":
        n_state = len(node.inputs) - node.attrs["num_scan_inputs"] - node.attrs["num_captures"]
        first_capture = len(node.inputs) - node.attrs["num_captures"]
        fixed = [k for k in range(len(names)) if k >= first_capture or (k < n_state and body.outputs[k] == names[k])]
        given = {k: node.inputs[k] for k in fixed}
    elif node.op == "If":  # the branches take the inputs after the condition
        given = {k: node.inputs[k + 1] for k in range(len(names))}
    else:  # SequenceMap and the like run on the reference kernels, as they are
        return body, None
    given = {k: name for k, name in given.items() if name in constants}
    if not given:
        return body, None
    bound = body.copy()
    for k, name in given.items():
        del bound.inputs[names[k]]
        bound.initializers[names[k]] = constants[name]
    return bound, [k for k in range(len(names)) if k not in given]
