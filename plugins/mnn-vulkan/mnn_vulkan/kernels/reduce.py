"""Reductions over any set of axes (reduce.comp): Reduce{Sum,Mean,Max,Min,Prod,L2}
and the global pools, one work group per output element; ArgMax / ArgMin along
one axis (argreduce.comp)."""

from __future__ import annotations

from ..recorder import pack, row_groups
from . import collapse, contiguous_strides, register

MODES = {"ReduceSum": 0, "ReduceMean": 1, "ReduceMax": 2, "ReduceMin": 3, "ReduceProd": 4, "ReduceL2": 5,
         "GlobalAveragePool": 1, "GlobalMaxPool": 2}


def _axes(op, shape, attrs):
    if op.startswith("Global"):
        return tuple(range(2, len(shape)))
    if not attrs["axes"]:
        return () if attrs["noop_with_empty_axes"] else tuple(range(len(shape)))
    return tuple(sorted(a % len(shape) for a in attrs["axes"]))


def reduce_plan(op, shape, attrs):
    """(kept dims, kept strides), (reduced dims, reduced strides), collapsed."""
    axes = _axes(op, shape, attrs)
    strides = contiguous_strides(shape)
    kept = collapse([d for i, d in enumerate(shape) if i not in axes],
                    [s for i, s in enumerate(strides) if i not in axes])
    red = collapse([d for i, d in enumerate(shape) if i in axes], [s for i, s in enumerate(strides) if i in axes])
    return (kept[0], kept[1][0]), (red[0], red[1][0])


def _supports(node, ins):
    (kd, _), (rd, _) = reduce_plan(node.op, ins[0].shape, node.attrs)
    if len(kd) > 4 or len(rd) > 4:
        return f"the axes leave {len(kd)} kept and {len(rd)} reduced dims after collapsing (max 4 each)"
    return True


def _record(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    (kd, ks), (rd, rs) = reduce_plan(op.node.op, x.info.shape, op.node.attrs)
    r = 1
    for d in rd:
        r *= d
    local = 64 if r <= 1024 else 256
    pad4 = lambda v, fill: list(v) + [fill] * (4 - len(v))  # noqa: E731
    push = pack(y.info.size, r, MODES[op.node.op], len(kd), len(rd), 0, 0, 0,
                pad4(kd, 1), pad4(ks, 0), pad4(rd, 1), pad4(rs, 0))
    rec.dispatch("reduce", [rec.tensor(x), rec.output(y)], push, row_groups(y.info.size), (local, 1, 1))


def _record_arg(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    shape = x.info.shape
    axis = op.node.attrs["axis"] % len(shape)
    inner = 1
    for d in shape[axis + 1:]:
        inner *= d
    length = shape[axis]
    rows = x.info.size // length if length else 0
    push = pack(rows, length, inner, int(op.node.op == "ArgMin"), op.node.attrs["select_last_index"])
    local = 64 if length <= 1024 else 256
    rec.dispatch("argreduce", [rec.tensor(x), rec.output(y)], push, row_groups(rows), (local, 1, 1))


for _op in MODES:
    register(_op, _record, _supports, efficiency=0.5)
register("ArgMax", _record_arg, efficiency=0.5)
register("ArgMin", _record_arg, efficiency=0.5)
