"""A static body as planned segments, so that values which change every iteration replan little.

A Session plans per input shapes and per the values of the inputs that decide shapes (a Slice's
start, a Range's limit). A Loop body that slices at its step counter would so need a plan per
iteration, and replanning the whole body each time costs more than running it. So such a body is
cut in three:

- the shape arithmetic on those values (the step plus one, a Range at the step) runs on the host as
  blocks, as a Session's resize would compute it, each block's results kept by its inputs (a step
  takes the same values in every run);
- a Slice at the step becomes a Gather of the indices the host computes (slice_indices), so the
  tensors it reads need no plan per step; a ScatterElements reads the host's indices as data;
- what still reads those values where they decide a shape runs in small segments planned per
  value, the rest (matrix products, activations) in segments planned once per shapes.

Each segment carries the shape arithmetic on other values it reads (folded at its resize); nodes are
reordered, dependencies kept, so that the kinds alternate as little as they can. A body with no
such input is one segment: a single child Session.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import Graph, Node
from ..graph.shapes import MAX_VALUE_ELEMENTS, SHAPE_OPS, value_sources
from ..ops import get_schema
from .eager import EagerProgram, MakeSession, StaticRunner, pieces_of


def body_runner(body: Graph, make_session: MakeSession, optimize: bool = True):
    """A runner (run_values) of a static body (or segment: optimize=False, its graph's passes ran)."""
    try:
        varying = value_sources(body)[0]
    except GraphError:  # shapes that follow data: the child Session runs it eagerly (and says so)
        varying = set()
    if not varying:
        return StaticRunner(body, make_session, optimize)
    return EagerProgram(body, make_session, pieces_of(body, segment_runs(body, varying)), optimize)


def segment_runs(body: Graph, varying: set[str]) -> list[list[Node] | tuple[Node, ...]]:
    """The body's nodes as runs in an order that keeps dependencies: lists of nodes of one kind
    (reading a value that follows `varying` where it decides a shape, or not) and, as tuples, the
    shape arithmetic on those values that the host computes each iteration."""
    follows, value_node, host, kept = _classify(body, varying)
    rewritten = gather_slices(body, follows)
    if rewritten is not body:
        body = rewritten
        follows, value_node, host, kept = _classify(body, varying)
    closure = _closure(value_node)
    # and the value nodes those read, computed on the host too (segments compute their own copies)
    host_ids = {id(n) for n in host}
    for node in list(host):
        for v in _reads(node, closure):
            vn = value_node.get(v)
            if vn is not None and id(vn) not in host_ids:
                host.append(vn)
                host_ids.add(id(vn))
    bound = {id(n) for n in kept if any(n.inputs[i] in follows for i in _value_positions(n))}
    placed = {id(m) for m in host + kept}
    items = [n for n in body.nodes if id(n) in placed]
    producer = {o: n for n in items for o in n.outputs}
    deps = {id(n): {id(producer[v]) for v in _reads(n, closure) if v in producer} for n in items}
    on_host = {id(n) for n in host}

    runs: list[list[Node] | tuple[Node, ...]] = []
    done: set[int] = set()
    pending = list(items)
    kind, idle = False, 0
    while pending:
        ready = []
        while True:  # the host's values first, each as soon as what it reads is there
            now = [n for n in pending if id(n) in on_host and id(n) not in done and deps[id(n)] <= done]
            if not now:
                break
            ready += now
            done.update(id(n) for n in now)
        if ready:
            runs.append(tuple(ready))
        run: list[Node] = []
        grew = True
        while grew:  # every ready node of this kind, again as each one frees others
            grew = False
            for node in pending:
                if id(node) not in on_host and (id(node) in bound) == kind and id(node) not in done:
                    if deps[id(node)] <= done:
                        run.append(node)
                        done.add(id(node))
                        grew = True
        pending = [n for n in pending if id(n) not in done]
        if run:
            runs.append(run)
        idle = 0 if run or ready else idle + 1
        if idle > 2:
            raise GraphError(f"body {body.name!r}: its nodes are not in an order that runs")
        kind = not kind
    order = {id(n): i for i, n in enumerate(body.nodes)}
    return [
        r if isinstance(r, tuple) else sorted(_with_values(r, closure, value_node), key=lambda n: order[id(n)])
        for r in runs
    ]


def _classify(body: Graph, varying: set[str]):
    """(values that follow `varying`, value nodes by output, the host's nodes, the backend's nodes).
    A value node computes from shapes, small constants and varying inputs only (resize folds it);
    the host computes those following `varying` and those giving the body's outputs."""
    small = {n for n, a in body.initializers.items() if a.size <= MAX_VALUE_ELEMENTS}
    values = set(varying) | small
    follows = set(varying)
    value_node: dict[str, Node] = {}
    host: list[Node] = []
    kept: list[Node] = []
    outputs = set(body.outputs)
    for node in body.nodes:
        ins = [n for n in node.inputs if n]
        if "host_fn" in node.attrs:  # a node of gather_slices: the host's, by construction
            values.update(node.outputs)
            follows.update(node.outputs)
            host.append(node)
        elif node.op in SHAPE_OPS or (not get_schema(node.op).dynamic and ins and all(n in values for n in ins)):
            values.update(node.outputs)
            if any(n in follows for n in ins) or any(o in outputs for o in node.outputs):
                follows.update(node.outputs)
                host.append(node)
            else:
                value_node.update((o, node) for o in node.outputs)
        else:
            kept.append(node)
    return follows, value_node, host, kept


def gather_slices(body: Graph, follows: set[str]) -> Graph:
    """The body with each Slice whose starts or ends follow the varying inputs (its axes and steps
    constant) as a Gather per axis, of indices the host computes (slice_indices): a Slice at the
    step, planned once per shapes instead of once per step. The body itself where there is none."""
    nodes, changed = [], False
    for node in body.nodes:
        ins = list(node.inputs) + [""] * (5 - len(node.inputs))
        data, starts, ends, axes, steps = ins[:5]
        fixed = [n for n in (axes, steps) if n]
        if node.op != "Slice" or not (starts in follows or ends in follows):
            nodes.append(node)
            continue
        if any(n not in body.initializers for n in fixed):
            nodes.append(node)
            continue
        # axes and steps: constant inputs, or the attributes the importer bound them to
        axes_v = [int(a) for a in body.initializers[axes]] if axes else list(node.attrs.get("axes") or []) or None
        steps_v = [int(k) for k in body.initializers[steps]] if steps else list(node.attrs.get("steps") or []) or None
        known = [body.initializers.get(n) if n else node.attrs.get(a) for n, a in ((starts, "starts"), (ends, "ends"))]
        n_starts = next((len(k) for k in known if k is not None), None)
        count = len(axes_v) if axes_v is not None else len(steps_v) if steps_v is not None else n_starts
        if count is None:  # how many axes only the starts' length says: left as it is
            nodes.append(node)
            continue
        axes_v = axes_v if axes_v is not None else list(range(count))
        steps_v = steps_v if steps_v is not None else [1] * count
        shape, idx = f"{node.name}/shape", [f"{node.name}/indices{j}" for j in range(count)]
        nodes.append(Node("Shape", [data], [shape], {"start": 0, "end": None}, f"{node.name}/Shape"))
        nodes.append(
            Node(
                "SliceIndices",
                [shape, starts, ends],
                idx,
                {
                    "host_fn": slice_indices,
                    "axes": axes_v,
                    "steps": steps_v,
                    "starts": node.attrs.get("starts"),  # where one of the two is a constant attribute
                    "ends": node.attrs.get("ends"),
                },
                f"{node.name}/indices",
            )
        )
        prev = data
        for j, axis in enumerate(axes_v):
            out = node.outputs[0] if j == count - 1 else f"{node.name}/gather{j}"
            nodes.append(Node("Gather", [prev, idx[j]], [out], {"axis": axis}, f"{node.name}/gather{j}"))
            prev = out
        changed = True
    if not changed:
        return body
    out = body.copy()
    out.nodes = nodes
    return out


def slice_indices(ins: list, attrs: dict) -> list:
    """Per sliced axis, the indices ONNX Slice takes along it: a negative start or end counts from
    the end, then going up both are clamped to [0, dim]; going down the start to [0, dim - 1] and
    the end to [-1, dim - 1] (where Python's slice would make a start below 0 an empty range)."""
    given = (ins[0], attrs.get("starts") if ins[1] is None else ins[1], attrs.get("ends") if ins[2] is None else ins[2])
    shape, starts, ends = (np.asarray(v).reshape(-1) for v in given)
    rank = len(shape)
    out = []
    for j, (axis, step) in enumerate(zip(attrs["axes"], attrs["steps"])):
        dim = int(shape[axis + rank if axis < 0 else axis])
        start, end = (int(v) + dim if v < 0 else int(v) for v in (starts[j], ends[j]))
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        out.append(np.arange(start, end, step, dtype=np.int64))
    return out


def _value_positions(node: Node) -> list[int]:
    return [i for i in get_schema(node.op).value_inputs if i < len(node.inputs) and node.inputs[i]]


def _closure(value_node: dict[str, Node]) -> dict[str, set[str]]:
    """For each value node's output: the values it reads, through value nodes, back to the first
    value not computed by one (an input, a constant, a kept node's output)."""
    memo: dict[str, set[str]] = {}

    def reads(name: str) -> set[str]:
        if name not in memo:
            found: set[str] = set()
            for n in value_node[name].inputs:
                if n:
                    found.add(n)
                    if n in value_node:
                        found |= reads(n)
            memo[name] = found
        return memo[name]

    for name in value_node:
        reads(name)
    return memo


def _reads(node: Node, closure: dict[str, set[str]]) -> set[str]:
    """The values a node reads, with those its value-node inputs read in turn."""
    out = set()
    for n in node.inputs:
        if n:
            out.add(n)
            out |= closure.get(n, set())
    return out


def _with_values(run: list[Node], closure: dict[str, set[str]], value_node: dict[str, Node]) -> list[Node]:
    """The run's nodes and the value nodes they read (each run computes its own)."""
    nodes = {id(n): n for n in run}
    for node in run:
        for v in _reads(node, closure):
            vn = value_node.get(v)
            if vn is not None:
                nodes[id(vn)] = vn
    return list(nodes.values())
