"""Reductions and the ops along one axis on x86 (_reduce.pyx, csrc/reduce/): ReduceSum ... ReduceLogSumExp
and GlobalLpPool; ArgMax/ArgMin, Hardmax, CumSum/CumProd, TopK, LpNormalization and LRN. (LayerNormalization
with broadcast parameters also runs in _reduce, from ops_norm.py.)

A reduction over any axes is laid out here, at prepare: size-1 axes dropped and adjacent axes of
the same kind (kept or reduced) merged, so the C loops see a few kept axes around a few reduced ones
and a contiguous end that they vectorize: kept outputs across (`inner`) or a reduced `run` along.
When the outputs are too few to share among the threads, the reduction itself is cut into parts.
"""

from __future__ import annotations

import numpy as np

from mnn_core.ops.helpers import normalize_axis
from mnn_core.ops.reduce import reduce_axes

from . import _reduce, _x86
from ._common import kernel, static_shape

FLOATS = ("float32", "float64")
NUMBERS = FLOATS + ("int32", "int64")
INTEGERS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
GRAIN = 16384  # input elements a thread's share should hold at least (csrc/reduce/reduce.c)
TILE = 256  # inner outputs per unit of work (reduce.c)
#: the most elements per float32 vector lane of _x86's row mean for a row it takes (a few, so that it
#: rounds about as the reference does in float64), while it costs half of _reduce's float64 sums
SHORT_ROW_LANE = 16

# reduce.h's enum x86_reduce_kind and x86_reduce_fin
SUM, ABS, SQ, PROD, MAX, MIN, EXP, POW = range(8)
NONE, MEAN, SQRT, LOG, LSE, ROOT = range(6)

#: op -> (what each element adds, what is done to the sum when stored, the input dtypes taken)
REDUCTIONS = {
    "ReduceSum": (SUM, NONE, NUMBERS),
    "ReduceMean": (SUM, MEAN, FLOATS),
    "ReduceMax": (MAX, NONE, NUMBERS + ("bool",)),  # of bools: any
    "ReduceMin": (MIN, NONE, NUMBERS + ("bool",)),  # all
    "ReduceProd": (PROD, NONE, NUMBERS),
    "ReduceL1": (ABS, NONE, FLOATS),
    "ReduceL2": (SQ, SQRT, FLOATS),
    "ReduceSumSquare": (SQ, NONE, FLOATS),
    "ReduceLogSum": (SUM, LOG, FLOATS),
    "ReduceLogSumExp": (EXP, LSE, FLOATS),
}


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def reduce_layout(shape: tuple, axes: tuple) -> dict:
    """The kept and reduced axes (sizes, element strides) of a reduction of a dense tensor, merged,
    with the contiguous end split off as `inner` (kept) or `run` (reduced); reduce.h."""
    strides = [_prod(shape[i + 1 :]) for i in range(len(shape))]
    merged: list[list] = []
    for i, (d, s) in enumerate(zip(shape, strides)):
        if d == 1:
            continue
        if merged and merged[-1][2] == (i in axes):
            merged[-1][0] *= d
            merged[-1][1] = s
        else:
            merged.append([d, s, i in axes])
    inner = run = 1
    if merged and not merged[-1][2]:
        inner = merged.pop()[0]
    elif merged:
        run = merged.pop()[0]
    kept = [(d, s) for d, s, r in merged if not r]
    red = [(d, s) for d, s, r in merged if r]
    n_red = _prod([d for d, _ in red])
    return dict(
        kdim=[d for d, _ in kept],
        kstr=[s for _, s in kept],
        rdim=[d for d, _ in red],
        rstr=[s for _, s in red],
        inner=inner,
        run=run,
        n_out=_prod([d for d, _ in kept]) * inner,
        n_red=n_red,
        count=float(n_red * run),
    )


def reduce_parts(lay: dict, threads: int) -> int:
    """How many parts the reduction is cut into: more than 1 only when the outputs' units of work
    are too few for the threads and the input is large."""
    units = lay["n_out"] // lay["inner"] * -(-lay["inner"] // TILE) if lay["n_out"] else 0
    total = lay["n_out"] * int(lay["count"])
    if threads < 2 or units == 0 or units >= 2 * threads or total < 4 * GRAIN:
        return 1
    split = lay["n_red"] if lay["inner"] > 1 else lay["run"]
    return max(1, min(-(-4 * threads // units), split, total // GRAIN))


def _dtype_check(allowed):
    def supports(node, ins):
        return True if ins[0].dtype in allowed else f"{node.op} on x86 takes {'/'.join(allowed)}, not {ins[0].dtype}"

    return supports


def _reduction(node, ctx, isa, x: tuple, axes: tuple, kind: int, fin: int, power: float = 1.0):
    lay = reduce_layout(x, axes)
    lay.update(kind=kind, fin=fin, parts=reduce_parts(lay, ctx.threads), lse=fin == LSE, power=power)
    return _reduce.reduce(isa, ctx.threads, f"x86.{node.op}", lay)


def _short_rows(lay: dict, isa: str) -> bool:
    """Contiguous rows of a few vectors, one output each: a global average pool's planes."""
    longest = SHORT_ROW_LANE * _x86.table_info(isa)["vlen"]
    return lay["inner"] == 1 and not lay["rdim"] and len(lay["kdim"]) <= 1 and 1 < lay["run"] <= longest


def _prepare_reduce(node, ins, outs, constants, ctx, isa):
    kind, fin, _ = REDUCTIONS[node.op]
    x = static_shape(ins[0])
    if not node.attrs["axes"] and node.attrs["noop_with_empty_axes"]:
        axes = ()
    else:
        axes = reduce_axes(x, list(node.attrs["axes"]), node.op)
    if node.op == "ReduceMean" and ins[0].dtype == "float32" and _short_rows(lay := reduce_layout(x, axes), isa):
        return _x86.reduce(isa, ctx.threads, "x86.ReduceMean", lay["n_out"], lay["run"], 1)
    return _reduction(node, ctx, isa, x, axes, kind, fin)


for _op, (_, _, _dtypes) in REDUCTIONS.items():
    # the axes input (a bound value) may be int64 too: the data's dtype is checked by supports
    kernel(_op, dtypes=NUMBERS + ("bool",), supports=_dtype_check(_dtypes), efficiency=0.5)(_prepare_reduce)


@kernel("GlobalLpPool", efficiency=0.5)
def prepare_global_lp_pool(node, ins, outs, constants, ctx, isa):
    x = static_shape(ins[0])
    p = float(node.attrs["p"])
    kind, fin = {1.0: (ABS, NONE), 2.0: (SQ, SQRT)}.get(p, (POW, ROOT))
    return _reduction(node, ctx, isa, x, tuple(range(2, len(x))), kind, fin, p)


def _around(shape, axis: int) -> tuple[int, int, int]:
    """[outer][axis][inner] of a dense shape about one axis."""
    return _prod(shape[:axis]), shape[axis], _prod(shape[axis + 1 :])


def _along(op, node, ins, ctx, isa, axis_attr="axis", **kw):
    x = static_shape(ins[0])
    axis = normalize_axis(node.attrs[axis_attr], len(x), node.op) if x else 0
    outer, n, inner = _around(x, axis) if x else (1, 1, 1)
    return _reduce.along_axis(op, isa, ctx.threads, f"x86.{node.op}", outer, n, inner, **kw)


@kernel("ArgMax", dtypes=NUMBERS, efficiency=0.5)
def prepare_argmax(node, ins, outs, constants, ctx, isa):
    return _along("arg", node, ins, ctx, isa, mode=0, last=int(node.attrs["select_last_index"]))


@kernel("ArgMin", dtypes=NUMBERS, efficiency=0.5)
def prepare_argmin(node, ins, outs, constants, ctx, isa):
    return _along("arg", node, ins, ctx, isa, mode=1, last=int(node.attrs["select_last_index"]))


@kernel("Hardmax", dtypes=FLOATS, efficiency=0.5)
def prepare_hardmax(node, ins, outs, constants, ctx, isa):
    return _along("hardmax", node, ins, ctx, isa)


def _cumulative(node, ins, ctx, isa, prod):
    return _along(
        "cumulative",
        node,
        ins,
        ctx,
        isa,
        mode=prod,
        last=int(node.attrs["exclusive"]),
        reverse=int(node.attrs["reverse"]),
    )


@kernel("CumSum", dtypes=NUMBERS, supports=_dtype_check(NUMBERS), efficiency=0.5)
def prepare_cumsum(node, ins, outs, constants, ctx, isa):
    return _cumulative(node, ins, ctx, isa, 0)


@kernel("CumProd", dtypes=NUMBERS, supports=_dtype_check(NUMBERS), efficiency=0.5)
def prepare_cumprod(node, ins, outs, constants, ctx, isa):
    return _cumulative(node, ins, ctx, isa, 1)


@kernel("TopK", dtypes=FLOATS + INTEGERS, supports=_dtype_check(FLOATS + INTEGERS), efficiency=0.3)
def prepare_topk(node, ins, outs, constants, ctx, isa):
    return _along("topk", node, ins, ctx, isa, mode=int(node.attrs["largest"]), k=int(node.attrs["k"]))


@kernel("LpNormalization", dtypes=FLOATS, efficiency=0.5)
def prepare_lp_normalization(node, ins, outs, constants, ctx, isa):
    return _along("lpnorm", node, ins, ctx, isa, mode=int(node.attrs["p"]))


@kernel("LRN", dtypes=FLOATS, efficiency=0.3)
def prepare_lrn(node, ins, outs, constants, ctx, isa):
    x = static_shape(ins[0])
    a = node.attrs
    return _reduce.along_axis(
        "lrn",
        isa,
        ctx.threads,
        "x86.LRN",
        x[0],
        x[1],
        _prod(x[2:]),
        k=int(a["size"]),
        alpha=float(a["alpha"]),
        beta=float(a["beta"]),
        bias=float(a["bias"]),
    )
