"""Control flow with ONNX semantics: If, Loop and Scan over closed sub-graphs.

A body is a `Graph` attribute. Values the ONNX body read from the enclosing graph
are explicit here: they are the node's trailing `num_captures` inputs and the
body's trailing graph inputs, so the dataflow between graph and body is visible
to validation, pruning and placement. Iteration counts and output sizes follow
input values, so these ops are `dynamic`: a graph using them runs eagerly. The loop
control (trip count, condition, carried values, stacking) is written once here, in
run_if / run_loop / run_scan, over a `run_body(body, inputs) -> outputs` callable: the
reference kernels run each body through the evaluator (`mnn_core.graph.evaluate`), a
Session's eager program runs it as a planned sub-program on its backend (runtime/eager.py).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

import numpy as np

from ..errors import GraphError, LimitError
from ..graph.ir import Graph, Node, TensorInfo, symbolic
from ._util import normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register

_CAPTURES = Attr("int", 0, doc="trailing inputs the body reads from the enclosing graph")
MAX_LOOP_ITERATIONS = 1 << 31  # a loop without a trip count stops on its condition; this bounds a runaway
#: the iterations a Loop may run in this thread's current run (Session(max_loop_iterations=), set by
#: Session.run; None: up to its trip count): one more is a LimitError, not a run without end
loop_limit: ContextVar[int | None] = ContextVar("mnn_loop_limit", default=None)


#: runs a body on its inputs (in the body's input order), returning its outputs in order
RunBody = Callable[[Graph, list], list]


def evaluate_body(body: Graph, ins: list) -> list:
    """A body's outputs, run node by node on the reference kernels."""
    from ..graph.evaluate import evaluate

    out = evaluate(body, dict(zip(body.inputs, ins)))
    return [out[n] for n in body.outputs]


def _body_outputs(body: Graph, ins: list | None = None) -> list:
    infos = body.infer() if ins is None else body.infer(dict(zip(body.inputs, ins)))
    return [infos[o] for o in body.outputs]


def _loosen(info, prefix: str):
    """The info of a value whose sizes may change from run to run of a body."""
    if isinstance(info, TensorInfo) and info.shape is not None:  # (a rank unknown stays so)
        return TensorInfo(symbolic(prefix, len(info.shape)), info.dtype)
    return info


# -- If ------------------------------------------------------------------------------------------------------


def _if_infer(ins, attrs):
    then, other = _body_outputs(attrs["then_branch"]), _body_outputs(attrs["else_branch"])
    if len(then) != len(other):
        raise GraphError(f"If: the branches give {len(then)} and {len(other)} outputs")
    return [a if a == b else _loosen(a, f"If_out{i}") for i, (a, b) in enumerate(zip(then, other))]


def run_if(ins, attrs, run_body: RunBody = evaluate_body) -> list:
    branch = attrs["then_branch"] if bool(np.asarray(ins[0]).reshape(-1)[0]) else attrs["else_branch"]
    return run_body(branch, list(ins[1:]))


def _if_samples(rng):
    x = TensorInfo((2, 3))
    then = Graph(inputs={"x": x}, outputs=["r"], nodes=[Node("Relu", ["x"], ["r"])])
    other = Graph(inputs={"x": x}, outputs=["n"], nodes=[Node("Neg", ["x"], ["n"])])
    for cond in (True, False):
        yield Sample([np.array(cond), rand(rng, 2, 3)], {"then_branch": then, "else_branch": other}, f"cond={cond}")


register(
    OpSchema(
        "If",
        infer=_if_infer,
        samples=_if_samples,
        reference=run_if,
        n_inputs=(1, 1 << 16),
        n_outputs=1 << 16,
        dynamic=True,
        attrs={"then_branch": Attr("graph"), "else_branch": Attr("graph")},
        doc="Run then_branch when the condition is true, else else_branch; their outputs are the node's. "
        "Inputs after the condition are captures: both branches take them all, as their graph inputs.",
    )
)


# -- Loop ----------------------------------------------------------------------------------------------------


def _loop_infer(ins, attrs):
    body: Graph = attrs["body"]
    n_carried = len(ins) - 2 - attrs["num_captures"]
    outs = _body_outputs(body)
    carried = [
        ins[2 + i] if outs[1 + i] == ins[2 + i] else _loosen(outs[1 + i], f"Loop_v{i}") for i in range(n_carried)
    ]
    scans = [
        TensorInfo(("Loop_iterations",) + tuple(o.shape), o.dtype) if isinstance(o, TensorInfo) else o
        for o in outs[1 + n_carried :]
    ]
    return carried + scans


def run_loop(ins, attrs, run_body: RunBody = evaluate_body) -> list:
    body: Graph = attrs["body"]
    n_carried = len(ins) - 2 - attrs["num_captures"]
    trip = MAX_LOOP_ITERATIONS if ins[0] is None else int(np.asarray(ins[0]).reshape(-1)[0])
    cond = True if ins[1] is None else bool(np.asarray(ins[1]).reshape(-1)[0])
    values = list(ins[2 : 2 + n_carried])
    captured = list(ins[2 + n_carried :])
    scans: list[list] = [[] for _ in range(len(body.outputs) - 1 - n_carried)]
    i, cap = 0, loop_limit.get()
    while i < trip and cond:
        if cap is not None and i >= cap:
            asked = "no trip count" if ins[0] is None else f"a trip count of {trip}"
            raise LimitError(
                f"Loop ran {cap} iterations ({asked}, its condition still true), the most "
                "max_loop_iterations allows (Session(max_loop_iterations=) or MNN_MAX_LOOP_ITERATIONS)"
            )
        results = run_body(body, [np.array(i, np.int64), np.array(cond)] + values + captured)
        cond = bool(np.asarray(results[0]).reshape(-1)[0])
        values = results[1 : 1 + n_carried]
        for acc, v in zip(scans, results[1 + n_carried :]):
            acc.append(np.asarray(v))
        i += 1
    stacked = []
    for k, acc in enumerate(scans):
        if acc:
            stacked.append(np.stack(acc))
        else:  # no iteration ran: an empty stack of the body output's dtype
            info = _body_outputs(body)[1 + n_carried + k]
            stacked.append(np.zeros((0,), info.dtype if isinstance(info, TensorInfo) else np.float32))
    return values + stacked


def _loop_samples(rng):
    v = TensorInfo((3,))
    body = Graph(
        inputs={"i": TensorInfo((), "int64"), "c": TensorInfo((), "bool"), "v": v, "y": v},
        outputs=["c2", "v2", "sq"],
        nodes=[Node("Add", ["v", "y"], ["v2"]), Node("Identity", ["c"], ["c2"]), Node("Mul", ["v2", "v2"], ["sq"])],
    )
    for trips in (3, 1):
        yield Sample(
            [np.array(trips, np.int64), np.array(True), rand(rng, 3), rand(rng, 3)],
            {"body": body, "num_captures": 1},
            f"{trips} iterations",
        )


register(
    OpSchema(
        "Loop",
        infer=_loop_infer,
        samples=_loop_samples,
        reference=run_loop,
        n_inputs=(2, 1 << 16),
        n_outputs=1 << 16,
        dynamic=True,
        attrs={"body": Attr("graph"), "num_captures": _CAPTURES},
        doc="Run `body` while i < M (input 0, absent: no limit) and the condition holds. Body inputs: "
        "iteration, condition, loop-carried values, captures; outputs: condition, carried values, and "
        "per-iteration values that the node stacks on a new first axis.",
    )
)


# -- Scan ----------------------------------------------------------------------------------------------------


def _scan_layout(n_inputs: int, attrs, body: Graph):
    n_scan = attrs["num_scan_inputs"]
    n_state = n_inputs - n_scan - attrs["num_captures"]
    n_scan_out = len(body.outputs) - n_state
    in_axes = list(attrs["scan_input_axes"]) or [0] * n_scan
    in_dirs = list(attrs["scan_input_directions"]) or [0] * n_scan
    out_axes = list(attrs["scan_output_axes"]) or [0] * n_scan_out
    out_dirs = list(attrs["scan_output_directions"]) or [0] * n_scan_out
    if len(in_axes) != n_scan or len(in_dirs) != n_scan or len(out_axes) != n_scan_out or len(out_dirs) != n_scan_out:
        raise GraphError("Scan: scan_input/output axes and directions must have one entry per scan input/output")
    return n_state, n_scan, n_scan_out, in_axes, in_dirs, out_axes, out_dirs


def _scan_infer(ins, attrs):
    body: Graph = attrs["body"]
    n_state, n_scan, _, in_axes, _, out_axes, _ = _scan_layout(len(ins), attrs, body)
    if n_scan:
        first = ins[n_state]
        length = first.shape[normalize_axis(in_axes[0], len(first.shape), "Scan")]
    else:
        length = "Scan_length"
    outs = _body_outputs(body)
    result = list(ins[:n_state])
    for o, axis in zip(outs[n_state:], out_axes):
        shape = list(o.shape)
        shape.insert(normalize_axis(axis, len(shape) + 1, "Scan"), length)
        result.append(TensorInfo(tuple(shape), o.dtype))
    return result


def run_scan(ins, attrs, run_body: RunBody = evaluate_body) -> list:
    body: Graph = attrs["body"]
    n_state, n_scan, n_scan_out, in_axes, in_dirs, out_axes, out_dirs = _scan_layout(len(ins), attrs, body)
    states = list(ins[:n_state])
    scan_ins = [np.asarray(x) for x in ins[n_state : n_state + n_scan]]
    captured = list(ins[n_state + n_scan :])
    axes = [normalize_axis(a, x.ndim, "Scan") for a, x in zip(in_axes, scan_ins)]
    lengths = {x.shape[a] for x, a in zip(scan_ins, axes)}
    if len(lengths) > 1:
        raise GraphError(f"Scan: scan inputs differ in length along their axes ({sorted(lengths)})")
    n = lengths.pop() if lengths else 0
    collected: list[list] = [[] for _ in range(n_scan_out)]
    for t in range(n):
        slices = [np.take(x, n - 1 - t if d else t, axis=a) for x, a, d in zip(scan_ins, axes, in_dirs)]
        results = run_body(body, states + slices + captured)
        states = results[:n_state]
        for acc, v in zip(collected, results[n_state:]):
            acc.append(np.asarray(v))
    outputs = []
    for k, (acc, axis, d) in enumerate(zip(collected, out_axes, out_dirs)):
        if d:
            acc = acc[::-1]
        if not acc:
            info = _body_outputs(body)[n_state + k]
            outputs.append(np.zeros((0,) + tuple(d for d in info.shape if isinstance(d, int)), info.dtype))
            continue
        outputs.append(np.stack(acc, axis=normalize_axis(axis, acc[0].ndim + 1, "Scan")))
    return states + outputs


def _scan_samples(rng):
    s = TensorInfo((4,))
    body = Graph(
        inputs={"s": s, "x": s},
        outputs=["s2", "y"],
        nodes=[Node("Add", ["s", "x"], ["s2"]), Node("Mul", ["s2", "x"], ["y"])],
    )
    yield Sample([rand(rng, 4), rand(rng, 5, 4)], {"body": body, "num_scan_inputs": 1}, "axis 0")
    yield Sample(
        [rand(rng, 4), rand(rng, 4, 3)],
        {
            "body": body,
            "num_scan_inputs": 1,
            "scan_input_axes": [1],
            "scan_input_directions": [1],
            "scan_output_axes": [1],
        },
        "axis 1, reversed",
    )


register(
    OpSchema(
        "Scan",
        infer=_scan_infer,
        samples=_scan_samples,
        reference=run_scan,
        n_inputs=(1, 1 << 16),
        n_outputs=1 << 16,
        dynamic=True,
        attrs={
            "body": Attr("graph"),
            "num_scan_inputs": Attr("int"),
            "num_captures": _CAPTURES,
            "scan_input_axes": Attr("ints", []),
            "scan_input_directions": Attr("ints", []),
            "scan_output_axes": Attr("ints", []),
            "scan_output_directions": Attr("ints", []),
        },
        doc="Run `body` once per slice of the scan inputs along their axes, threading the state values "
        "through; per-slice outputs are stacked along the scan output axes (ONNX Scan, opset 9+).",
    )
)
