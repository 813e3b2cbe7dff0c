"""Softmax / LogSoftmax (softmax.comp), LayerNormalization and InstanceNormalization
(layernorm.comp) and inference BatchNormalization (batchnorm.comp; the core usually folds it into
the convolution before it)."""

from __future__ import annotations

from mnn_core.backend.kit.layout import numel
from mnn_core.ops.helpers import normalize_axis

from ..recorder import element
from . import register
from .loops import group_passes, group_size, within_budget


def _record_rows(rec, shader, params, reads, y, rows, length):
    """A row per invocation; a long row per work group (GROUP_ROW), its loops shared."""
    rec.rows(shader, params, reads, [y], rows, group_size(length), "GROUP_ROW")


def _row_budget(length, what):
    # three passes over the row, and the group's trees between them
    return within_budget(3 * group_passes(length) + 64, f"a {what} over rows of {length}")


def _softmax_supports(node, ins):
    shape = ins[0].shape
    axis = normalize_axis(node.attrs.get("axis", -1), len(shape), node.op)
    return _row_budget(shape[axis], node.op)


def _record_softmax(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    shape = x.info.shape
    axis = normalize_axis(op.node.attrs.get("axis", -1), len(shape), op.node.op)
    inner = numel(shape[axis + 1 :])
    length = shape[axis]
    rows = numel(shape[:axis]) * inner
    if length == 0:
        return
    params = [rows, length, max(inner, 1), int(op.node.op == "LogSoftmax"), element(x), element(y)]
    _record_rows(rec, "softmax", params, [x], y, rows, length)


def _ln_supports(node, ins):
    if len([o for o in node.outputs if o]) > 1:
        return "LayerNormalization's Mean/InvStdDev outputs are not implemented"
    x = ins[0]
    axis = normalize_axis(node.attrs.get("axis", -1), len(x.shape), "LayerNormalization")
    d = numel(x.shape[axis:])
    for extra in ins[1:]:
        if extra is not None and extra.size != d:
            return "scale/bias broadcast over the normalized shape (only full-size scale and bias)"
    return _row_budget(d, node.op)


def _in_supports(node, ins):
    return _row_budget(numel(ins[0].shape[2:]), node.op)


def _record_ln(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    scale = op.inputs[1] if len(op.inputs) > 1 else None
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    axis = normalize_axis(op.node.attrs.get("axis", -1), len(x.info.shape), "LayerNormalization")
    d = numel(x.info.shape[axis:])
    rows = numel(x.info.shape[:axis])
    if d == 0:
        return
    params = [
        rows,
        d,
        float(op.node.attrs.get("epsilon", 1e-5)),
        element(x),
        element(y),
        element(scale) if scale is not None else -1,
        element(bias) if bias is not None else -1,
        0,
    ]
    _record_rows(rec, "layernorm", params, [x, scale, bias], y, rows, d)


def _record_instancenorm(op, rec):
    x, scale, bias = op.inputs
    y = op.outputs[0]
    shape = x.info.shape
    d = numel(shape[2:])
    rows = shape[0] * shape[1]
    if d == 0:
        return
    eps = float(op.node.attrs.get("epsilon", 1e-5))
    params = [rows, d, eps, element(x), element(y), element(scale), element(bias), shape[1]]
    _record_rows(rec, "layernorm", params, [x, scale, bias], y, rows, d)


def _bn_supports(node, ins):
    if len(ins[0].shape) < 2:
        return "BatchNormalization needs a channel axis (rank >= 2)"
    if len([o for o in node.outputs if o]) > 1:
        return "training-mode BatchNormalization outputs are not implemented"
    return True


def _record_bn(op, rec):
    x, scale, bias, mean, var = op.inputs
    y = op.outputs[0]
    shape = x.info.shape
    params = [
        y.info.size,
        shape[1],
        max(numel(shape[2:]), 1),
        float(op.node.attrs.get("epsilon", 1e-5)),
        element(x),
        element(y),
        element(scale),
        element(bias),
        element(mean),
        element(var),
    ]
    rec.elementwise("batchnorm", params, [x, scale, bias, mean, var], [y], y.info.size)


register("Softmax", _record_softmax, _softmax_supports, efficiency=0.5)
register("LogSoftmax", _record_softmax, _softmax_supports, efficiency=0.5)
register("LayerNormalization", _record_ln, _ln_supports, efficiency=0.5)
register("InstanceNormalization", _record_instancenorm, _in_supports, efficiency=0.5)
register("BatchNormalization", _record_bn, _bn_supports, inplace=True, efficiency=0.8)
