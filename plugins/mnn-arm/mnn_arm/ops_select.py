"""ArgMax / ArgMin, TopK and CumSum / CumProd on Arm (csrc/select.c) for float32, int32 and int64: the
input seen as x [outer][n][inner] about the op's axis. ArgMax / ArgMin and TopK follow the reference's tie
and NaN rules (first index, or last with select_last_index; TopK's stable order on float64 keys, NaN
last); the scans run in the input's dtype in the reference's order, so float32 sums are bit-exact."""

from __future__ import annotations

from mnn_core.ops.helpers import normalize_axis

from . import _arm
from ._common import kernel, prod, static_shape

#: enum arm_sel_dtype of csrc/select.h
DTYPES = {"float32": 0, "int32": 1, "int64": 2}
#: the data's dtypes plus the int64 / int32 of a bound value input (TopK's k, CumSum's axis)
SPEC_DTYPES = ("float32", "int32", "int64")


def _data_dtype(node, ins):
    return True if ins[0].dtype in DTYPES else f"{node.op} on arm takes {'/'.join(DTYPES)}, not {ins[0].dtype}"


def _around(node, ins, axis_attr="axis") -> tuple[int, int, int]:
    shape = static_shape(ins[0])
    if not shape:
        return 1, 1, 1
    axis = normalize_axis(node.attrs[axis_attr], len(shape), node.op)
    return prod(shape[:axis]), shape[axis], prod(shape[axis + 1 :])


def _threads(ctx) -> int:
    return max(1, int(getattr(ctx, "threads", 1) or 1))


def _prepare_arg(node, ins, outs, constants, ctx):
    outer, n, inner = _around(node, ins)
    last = bool(node.attrs.get("select_last_index", 0))
    return _arm.arg(f"arm.{node.op}", DTYPES[ins[0].dtype], node.op == "ArgMax", last, outer, n, inner)


for _op in ("ArgMax", "ArgMin"):
    kernel(_op, dtypes=SPEC_DTYPES, supports=_data_dtype, efficiency=0.5)(_prepare_arg)


@kernel("TopK", dtypes=SPEC_DTYPES, supports=_data_dtype, efficiency=0.3)
def prepare_topk(node, ins, outs, constants, ctx):
    outer, n, inner = _around(node, ins)
    k = int(node.attrs["k"])
    largest = bool(node.attrs.get("largest", 1))
    return _arm.topk("arm.TopK", DTYPES[ins[0].dtype], largest, outer, n, inner, k, _threads(ctx))


def _prepare_cumulative(node, ins, outs, constants, ctx):
    outer, n, inner = _around(node, ins)
    a = node.attrs
    return _arm.cumulative(
        f"arm.{node.op}",
        DTYPES[ins[0].dtype],
        node.op == "CumProd",
        bool(a.get("exclusive", 0)),
        bool(a.get("reverse", 0)),
        outer,
        n,
        inner,
    )


for _op in ("CumSum", "CumProd"):
    kernel(_op, dtypes=SPEC_DTYPES, supports=_data_dtype, efficiency=0.5)(_prepare_cumulative)
