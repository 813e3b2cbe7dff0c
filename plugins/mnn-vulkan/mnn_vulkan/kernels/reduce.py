"""Reductions over any set of axes (reduce.comp): Reduce{Sum,Mean,Max,Min,Prod,L2}
and the global pools, one work group per output element; ReduceSumSquare as ReduceL2
squared in place (binary.comp); ArgMax / ArgMin along one axis (argreduce.comp)."""

from __future__ import annotations

from dataclasses import replace

from mnn_core.backend.kit.codes import BINARY, REDUCE
from mnn_core.backend.kit.layout import cdiv, numel, reduce_plan
from mnn_core.backend.kit.params import binary_params, pack, reduce_params, reduce_supports
from mnn_core.backend.kit.recorder import row_groups
from mnn_core.backend.kit.shader_ops import record_reduce, reduce_local

from . import register
from .loops import budgeted


def _record_sum_square(op, rec):
    """sqrt(sum x^2), squared: one more pass over the (small) output instead of a squared copy of x."""
    l2 = type(op)(replace(op.node, op="ReduceL2"), op.inputs, op.outputs, op.constants)
    params, r = reduce_params(l2)
    y = rec.output(op.outputs[0])
    rec.dispatch(
        "reduce",
        [rec.tensor(op.inputs[0]), y],
        params,
        row_groups(y_size := op.outputs[0].info.size),
        (reduce_local(r), 1, 1),
    )
    shape = op.outputs[0].info.shape
    reads = replace(y, written=False)
    rec.elementwise("binary", [reads, reads, y], binary_params(BINARY["Mul"], shape, shape, shape), y_size)


def _sum_square_supports(node, ins):
    return reduce_supports(replace(node, op="ReduceL2"), ins)


def _record_arg(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    shape = x.info.shape
    axis = op.node.attrs["axis"] % len(shape)
    inner = numel(shape[axis + 1 :])
    length = shape[axis]
    rows = x.info.size // length if length else 0
    push = pack(rows, length, inner, int(op.node.op == "ArgMin"), op.node.attrs["select_last_index"])
    rec.dispatch("argreduce", [rec.tensor(x), rec.output(y)], push, row_groups(rows), (reduce_local(length), 1, 1))


def _reduce_passes(node, ins) -> int:
    # reduce.comp: a group of up to 256 shares each output's elements, each walking <= 4 dims
    (_, _), (rd, _) = reduce_plan(node.op, ins[0].shape, node.attrs)
    count = numel(rd)
    return cdiv(count, reduce_local(count)) * (len(rd) + 2) + 64


def _arg_passes(node, ins) -> int:
    # argreduce.comp: a group of up to 256 shares each row, then a tree
    shape = ins[0].shape
    length = shape[node.attrs.get("axis", 0) % len(shape)] if shape else 1
    return cdiv(length, reduce_local(length)) + 64


for _op in REDUCE:
    register(_op, record_reduce, budgeted(reduce_supports, _reduce_passes), efficiency=0.5)
register("ReduceSumSquare", _record_sum_square, budgeted(_sum_square_supports, _reduce_passes), efficiency=0.5)
register("ArgMax", _record_arg, budgeted(None, _arg_passes), efficiency=0.5)
register("ArgMin", _record_arg, budgeted(None, _arg_passes), efficiency=0.5)
