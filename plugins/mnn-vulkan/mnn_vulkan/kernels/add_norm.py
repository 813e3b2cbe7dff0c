"""LayerNormalization with each row read once (add_norm_rows.comp: a row's elements in registers,
subgroup sums), alone or with the residual Add in front of it: vulkan.AddLayerNorm (fuse.py), whose
inputs are the Add's two tensors then the norm's scale and bias (attrs has_scale, has_bias), and
whose outputs are the normalized rows then, when the Add has other readers, the sum itself."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.recorder import row_groups

from . import register

ADD_LAYERNORM = "vulkan.AddLayerNorm"
#: the most elements of a row one invocation holds
MAX_PER = 8


def row_tiling(length: int) -> tuple[int, int] | None:
    """(invocations per row, elements each) for add_norm_rows.comp, or None past 8 x 256 elements."""
    local = 64 if length <= 256 else 128 if length <= 1024 else 256
    per = cdiv(max(length, 1), local)
    return (local, per) if per <= MAX_PER else None


def fits(length: int, params: list) -> bool:
    """Whether add_norm_rows.comp takes rows of `length` with these scale/bias TensorInfos (None:
    absent): it indexes them by position in the row, so they must have the row's length."""
    return row_tiling(length) is not None and all(p is None or p.size == length for p in params)


def record_rows(rec, x1, x2, scale, bias, y, total, rows: int, length: int, eps: float) -> None:
    """y = LayerNorm(x1 (+ x2)) over rows of `length`; the sum also goes to `total` when given."""
    local, per = row_tiling(length)
    flags = (int(x2 is not None), int(scale is not None), int(bias is not None), int(total is not None))
    push = pack(rows, length, float(eps), *flags)
    out = rec.output(y)
    bindings = [
        rec.tensor(x1),
        rec.tensor(x2 if x2 is not None else x1),
        rec.tensor(scale if scale is not None else x1),
        rec.tensor(bias if bias is not None else x1),
        out,
        rec.output(total) if total is not None else out,
    ]
    rec.dispatch("add_norm_rows", bindings, push, row_groups(rows), (local, 1, 1), (per,))


def _record(op, rec):
    attrs = op.node.attrs
    x1, x2, *params = op.inputs
    scale = params.pop(0) if attrs.get("has_scale") else None
    bias = params.pop(0) if attrs.get("has_bias") else None
    shape = x1.info.shape
    axis = attrs.get("axis", -1) % len(shape)
    length = 1
    for d in shape[axis:]:
        length *= d
    rows = x1.info.size // length if length else 0
    total = op.outputs[1] if len(op.outputs) > 1 else None
    record_rows(rec, x1, x2, scale, bias, op.outputs[0], total, rows, length, attrs.get("epsilon", 1e-5))


register(ADD_LAYERNORM, _record, efficiency=0.5)
