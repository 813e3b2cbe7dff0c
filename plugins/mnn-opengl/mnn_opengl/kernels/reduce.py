"""ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL2 and
ReduceSumSquare over any axes (reduce.comp, a work group per output): the kept and
the reduced dims, each collapsed, with their strides in the input. ArgMax / ArgMin along one axis
(argreduce.comp)."""

from __future__ import annotations

from mnn_core.backend.kit.codes import REDUCE_OPS
from mnn_core.backend.kit.layout import collapse, contiguous_strides, numel, pad_to
from mnn_core.backend.kit.recorder import row_groups
from mnn_core.ops.helpers import normalize_axis
from mnn_core.ops.reduce import reduce_axes

from ..recorder import element
from . import register
from .loops import budgeted, group_passes, group_size, within_budget

REDUCE = REDUCE_OPS  # reduce.comp's modes


def _plan(shape, attrs, op):
    if not attrs.get("axes") and attrs.get("noop_with_empty_axes", 0):
        axes = ()
    else:
        axes = reduce_axes(tuple(shape), attrs.get("axes") or [], op)
    st = contiguous_strides(shape)
    kdims, (kst,) = collapse(
        [d for i, d in enumerate(shape) if i not in axes], [s for i, s in enumerate(st) if i not in axes]
    )
    rdims, (rst,) = collapse([shape[a] for a in axes], [st[a] for a in axes])
    return kdims, kst, rdims, rst, numel(shape[a] for a in axes)


def _supports(node, ins):
    kdims, _, rdims, _, count = _plan(ins[0].shape, node.attrs, node.op)
    if len(kdims) > 6 or len(rdims) > 6:
        return "more than 6 dims after collapsing"
    return within_budget(group_passes(count, len(rdims) + 2), f"a {node.op} over {count} elements")


def _record(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    kdims, kst, rdims, rst, count = _plan(x.info.shape, op.node.attrs, op.node.op)
    record_reduce(rec, x, y, (kdims, kst), (rdims, rst), count, REDUCE[op.node.op])


def record_reduce(rec, x, y, kept, reduced, count: int, code: int) -> None:
    """One reduce.comp dispatch: `kept` and `reduced` are (dims, input strides), each collapsed."""
    (kdims, kst), (rdims, rst) = kept, reduced
    params = [
        y.info.size,
        len(kdims),
        len(rdims),
        count,
        code,
        element(x),
        element(y),
        pad_to(kdims, 6, 1),
        pad_to(kst, 6),
        pad_to(rdims, 6, 1),
        pad_to(rst, 6),
    ]
    rec.dispatch("reduce", params, [x], [y], row_groups(y.info.size), (group_size(count), 1))


for _op in REDUCE:
    register(_op, _record, _supports, efficiency=0.5)


def _record_arg(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    shape = x.info.shape
    axis = normalize_axis(op.node.attrs.get("axis", 0), len(shape), op.node.op)
    length = shape[axis]
    rows = x.info.size // length if length else 0
    params = [
        rows,
        length,
        numel(shape[axis + 1 :]),
        int(op.node.op == "ArgMin"),
        int(op.node.attrs.get("select_last_index", 0)),
        element(x),
        element(y),
    ]
    rec.rows("argreduce", params, [x], [y], rows, group_size(length), "GROUP_ROW")


def _axis_passes(node, ins) -> int:
    shape = ins[0].shape
    return group_passes(shape[normalize_axis(node.attrs.get("axis", 0), len(shape), node.op)]) + 16


register("ArgMax", _record_arg, budgeted(None, _axis_passes), efficiency=0.5)
register("ArgMin", _record_arg, budgeted(None, _axis_passes), efficiency=0.5)
