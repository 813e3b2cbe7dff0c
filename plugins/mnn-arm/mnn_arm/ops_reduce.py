"""Reductions over any axes on Arm (csrc/reduce.c, fp32). The input's dims are merged where they
stay together; reduced axes that end up one block run as x [outer][n][inner] (NEON along rows or
across four inner columns), scattered ones walk their strides."""

from __future__ import annotations

from mnn_core.ops.reduce import reduce_axes

from . import _arm
from ._common import kernel, prod, static_shape
from .ops_move import MAX_WHERE_DIMS, dense

#: enum arm_reduce_kind of csrc/move.h
KINDS = {
    "ReduceSum": 0,
    "ReduceMean": 1,
    "ReduceMax": 2,
    "ReduceMin": 3,
    "ReduceProd": 4,
    "ReduceSumSquare": 5,
    "ReduceL1": 6,
    "ReduceL2": 7,
    "ReduceLogSum": 8,
    "ReduceLogSumExp": 9,
}


def reduce_layout(shape, axes) -> tuple[list, list]:
    """Runs of (dim, reduced?) with neighbouring axes of the same kind merged, dims of 1 dropped."""
    runs: list = []
    for a, d in enumerate(shape):
        if d == 1:
            continue
        red = a in axes
        if runs and runs[-1][1] == red:
            runs[-1][0] *= d
        else:
            runs.append([d, red])
    return runs


def _supports(node, ins):
    if len(ins[0].shape) > MAX_WHERE_DIMS:
        return f"rank above {MAX_WHERE_DIMS}"
    return True


def _prepare(node, ins, outs, constants, ctx):
    shape = static_shape(ins[0])
    kind = KINDS[node.op]
    if not node.attrs["axes"] and node.attrs.get("noop_with_empty_axes"):
        axes = ()
    else:
        axes = reduce_axes(shape, node.attrs["axes"], node.op)
    runs = reduce_layout(shape, set(axes))
    red = [i for i, r in enumerate(runs) if r[1]]
    if len(red) <= 1:
        i = red[0] if red else len(runs)
        n = runs[i][0] if red else 1
        outer = prod([r[0] for r in runs[:i]])
        inner = prod([r[0] for r in runs[i + 1 :]])
        return _arm.reduce_any(f"arm.{node.op}", kind, outer, n, inner, None)
    dims = [r[0] for r in runs]
    st = dense(dims)
    kept = ([d for d, r in zip(dims, runs) if not r[1]] or [1], [s for s, r in zip(st, runs) if not r[1]] or [0])
    reduced = ([d for d, r in zip(dims, runs) if r[1]], [s for s, r in zip(st, runs) if r[1]])
    return _arm.reduce_any(f"arm.{node.op}", kind, 0, 0, 0, (kept, reduced))


for _op in KINDS:
    kernel(_op, supports=_supports, efficiency=0.5)(_prepare)
