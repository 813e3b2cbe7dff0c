"""BatchNormalization (batchnorm.comp), LayerNormalization (add_norm_rows.comp where a row fits
an invocation's registers in float32, else norm_rows.comp) and InstanceNormalization
(norm_rows.comp), Softmax and LogSoftmax (softmax.comp)."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv, numel
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.recorder import row_groups

from . import register
from .add_norm import fits, record_rows
from .loops import budgeted


def _row_passes(length: int) -> int:
    # norm_rows.comp / softmax.comp: three walks of a row shared by its group, trees between them
    return 3 * cdiv(length, _local(length)) + 64


def _softmax_passes(node, ins) -> int:
    shape = ins[0].shape
    return _row_passes(shape[node.attrs.get("axis", -1) % len(shape)] if shape else 1)


def _ln_passes(node, ins) -> int:
    shape = ins[0].shape
    return _row_passes(numel(shape[node.attrs["axis"] % len(shape) :]))


def _local(length: int) -> int:
    return 64 if length <= 512 else 256


def _record_batchnorm(op, rec):
    x, scale, bias, mean, var = op.inputs
    y = op.outputs[0]
    shape = x.info.shape
    inner = 1
    for d in shape[2:]:
        inner *= d
    push = pack(y.info.size, inner, shape[1], float(op.node.attrs["epsilon"]))
    rec.elementwise(
        "batchnorm",
        [rec.tensor(x), rec.tensor(scale), rec.tensor(bias), rec.tensor(mean), rec.tensor(var), rec.output(y)],
        push,
        y.info.size,
    )


def _ln_supports(node, ins):
    x = ins[0]
    axis = node.attrs["axis"] % len(x.shape)
    normalized = tuple(x.shape[axis:])
    seen = set()
    for p in ins[1:]:
        if p is None:
            continue
        shape = tuple(p.shape)
        while shape and shape[0] == 1:
            shape = shape[1:]
        if shape != normalized[len(normalized) - len(shape) :]:
            return f"scale/bias of shape {p.shape} broadcast inside the normalized shape {normalized}"
        seen.add(shape)
    return True if len(seen) <= 1 else "scale and bias of different shapes"


def _norm_rows(rec, x, scale, bias, y, rows, length, mode, eps):
    """Rows of `length`; scale/bias indexed by position (mode 0) or by channel = row % C (mode 1)."""
    present = [p for p in (scale, bias) if p is not None]
    s = present[0].info.size if present else 1
    push = pack(rows, length, mode, s, float(eps), int(scale is not None), int(bias is not None))
    bindings = [
        rec.tensor(x),
        rec.tensor(scale if scale is not None else x),
        rec.tensor(bias if bias is not None else x),
        rec.output(y),
    ]
    rec.dispatch("norm_rows", bindings, push, row_groups(rows), (_local(length), 1, 1))


def _record_layernorm(op, rec):
    x = op.inputs[0]
    scale = op.inputs[1] if len(op.inputs) > 1 else None
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    axis = op.node.attrs["axis"] % len(x.info.shape)
    length = 1
    for d in x.info.shape[axis:]:
        length *= d
    rows = x.info.size // length if length else 0
    if not rec.half and rows and fits(length, [p.info if p is not None else None for p in (scale, bias)]):
        record_rows(rec, x, None, scale, bias, op.outputs[0], None, rows, length, op.node.attrs["epsilon"])
        return
    _norm_rows(rec, x, scale, bias, op.outputs[0], rows, length, 0, op.node.attrs["epsilon"])


def _record_instancenorm(op, rec):
    x, scale, bias = op.inputs
    shape = x.info.shape
    length = 1
    for d in shape[2:]:
        length *= d
    _norm_rows(rec, x, scale, bias, op.outputs[0], shape[0] * shape[1], length, 1, op.node.attrs["epsilon"])


def _record_softmax(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    shape = x.info.shape
    axis = op.node.attrs["axis"] % len(shape)
    inner = numel(shape[axis + 1 :])
    length = shape[axis]
    rows = x.info.size // length if length else 0
    push = pack(rows, length, inner, int(op.node.op == "LogSoftmax"))
    rec.dispatch("softmax", [rec.tensor(x), rec.output(y)], push, row_groups(rows), (_local(length), 1, 1))


register("BatchNormalization", _record_batchnorm, inplace=True, efficiency=0.8)
register("LayerNormalization", _record_layernorm, budgeted(_ln_supports, _ln_passes), efficiency=0.5)
register(
    "InstanceNormalization",
    _record_instancenorm,
    budgeted(None, lambda n, ins: _row_passes(numel(ins[0].shape[2:]))),
    efficiency=0.5,
)
register("Softmax", _record_softmax, budgeted(None, _softmax_passes), efficiency=0.5)
register("LogSoftmax", _record_softmax, budgeted(None, _softmax_passes), efficiency=0.5)
