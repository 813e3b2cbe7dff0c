"""Gather along an axis for any data width (float32 keeps layout's gather_axis), GatherND, OneHot,
ScatterElements (a copy of the data, then one work-item a line of indices), And/Or/Xor/Not,
IsNaN/IsInf (kernels/index.cl), and Identity as a bit copy. Indices are read as 32-bit words
(the low word of an int64: any index a 32-bit offset can reach)."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.gather import gather_nd_plan, scatter_elements_fields, scatter_elements_supports

from . import ops_eltwise, ops_layout  # noqa: F401  (registered first: Gather and Identity here replace theirs)
from ._common import T, broadcast_strides, collapse, full_attrs, int8, kernel, numel

WIDTHS = {1: "1", 4: "4", 8: "8"}
ANY = ("float32", "int32", "int64", "bool", "uint8", "int8")
MAX_ND = 8


def _words(b, ref) -> T:
    """An int32/int64 tensor as 32-bit words (the kernels read int64's low word)."""
    return T(b.arena.buffer, ref.offset // 4)


def _width(dtype) -> str | None:
    return WIDTHS.get(np.dtype(dtype).itemsize)


def _gather_supports(node, ins):
    if ins[1].dtype not in ("int64", "int32"):
        return f"int64/int32 indices only, got {ins[1].dtype}"
    if _width(ins[0].dtype) is None:
        return f"data of {ins[0].dtype}"
    return True


@kernel("Gather", dtypes=ANY, supports=_gather_supports)
def _build_gather(op, b):
    x, idx = op.inputs
    y = op.outputs[0]
    shape = x.info.shape
    axis = full_attrs(op.node)["axis"] % len(shape)
    n = numel(y.info.shape)
    b.launch(
        "gather_any_" + _width(x.info.dtype),
        [
            b.tensor(x),
            _words(b, idx),
            int(idx.info.dtype == "int64"),
            b.tensor(y),
            n,
            numel(idx.info.shape),
            numel(shape[axis + 1 :]),
            int(shape[axis]),
        ],
        (n,),
    )


def _gather_nd_supports(node, ins):
    verdict = _gather_supports(node, ins)
    if verdict is True and ins[1].shape and ins[1].shape[-1] > MAX_ND:
        return f"indices address {ins[1].shape[-1]} dims (max {MAX_ND})"
    return verdict


@kernel("GatherND", dtypes=ANY, supports=_gather_nd_supports)
def _build_gather_nd(op, b):
    x, idx = op.inputs
    y = op.outputs[0]
    s, m, per_batch, batch_stride, dims, strides = gather_nd_plan(
        x.info.shape, idx.info.shape, full_attrs(op.node)["batch_dims"]
    )
    n = numel(y.info.shape)
    b.launch(
        "gather_nd_" + _width(x.info.dtype),
        [
            b.tensor(x),
            _words(b, idx),
            int(idx.info.dtype == "int64"),
            b.tensor(y),
            n,
            max(s, 1),
            m,
            max(per_batch, 1),
            batch_stride,
            int8(dims),
            int8(strides),
        ],
        (n,),
    )


def _onehot_supports(node, ins):
    if ins[0].dtype not in ("int32", "int64", "float32"):
        return f"int32/int64/float32 indices only, got {ins[0].dtype}"
    if _width(ins[1].dtype) is None:
        return f"values of {ins[1].dtype}"
    return True


@kernel("OneHot", dtypes=ANY, supports=_onehot_supports)
def _build_onehot(op, b):
    idx, values = op.inputs
    y = op.outputs[0]
    axis = full_attrs(op.node)["axis"] % len(y.info.shape)
    n = numel(y.info.shape)
    kind = {"int32": 0, "int64": 1, "float32": 2}[idx.info.dtype]
    b.launch(
        "onehot_" + _width(values.info.dtype),
        [
            _words(b, idx),
            kind,
            b.tensor(values),
            b.tensor(y),
            n,
            numel(y.info.shape[axis + 1 :]),
            int(y.info.shape[axis]),
        ],
        (n,),
    )


def _build_scatter_elements(op, b):
    data, idx, upd = op.inputs
    y = op.outputs[0]
    attrs = full_attrs(op.node)
    head, (shape, dstride, istride), lines = _scatter_fields(data.info, idx.info, attrs)
    n = data.info.size * head[3]
    if n == 0:
        return
    b.launch("copy_strided_4", [_words(b, data), _words(b, y), n, 1, int8([n]), int8([1]), int8([1])], (n,))
    if lines:
        args = [_words(b, idx), head[6], _words(b, upd), _words(b, y), *head[:6], *head[7:], shape, dstride, istride]
        b.launch("scatter_elements", args, (lines,))


def _scatter_fields(data, idx, attrs):
    """scatter_elements_fields with its three 6-long arrays as int8 arguments."""
    head, tail, lines = scatter_elements_fields(data, idx, attrs["axis"], attrs.get("reduction", "none"))
    return head, [int8(tail[k : k + 6]) for k in (0, 6, 12)], lines


for _op in ("ScatterElements", "Scatter"):
    kernel(_op, dtypes=("float32", "int32", "int64"), supports=scatter_elements_supports)(_build_scatter_elements)


LOGIC = {"And": 0, "Or": 1, "Xor": 2, "Not": 3}


def _build_logic(op, b):
    y = op.outputs[0]
    a = op.inputs[0]
    z = op.inputs[1] if len(op.inputs) > 1 else a
    n = numel(y.info.shape)
    shape, (sa, sz) = collapse(
        y.info.shape, broadcast_strides(a.info.shape, y.info.shape), broadcast_strides(z.info.shape, y.info.shape)
    )
    b.launch(
        "logic_bcast",
        [b.tensor(a), b.tensor(z), b.tensor(y), n, LOGIC[op.node.op], len(shape), int8(shape), int8(sa), int8(sz)],
        (n,),
    )


def _logic_supports(node, ins):
    shape = np.broadcast_shapes(*(tuple(i.shape) for i in ins))
    dims, _ = collapse(shape, *(broadcast_strides(i.shape, shape) for i in ins))
    return True if len(dims) <= 8 else f"{len(dims)} broadcast dims after collapsing (max 8)"


for _op in LOGIC:
    kernel(_op, dtypes=("bool",), supports=_logic_supports)(_build_logic)


def _build_float_class(op, b):
    x, y = op.inputs[0], op.outputs[0]
    attrs = full_attrs(op.node)
    n = numel(y.info.shape)
    isinf = op.node.op == "IsInf"
    b.launch(
        "float_class",
        [
            b.tensor(x),
            b.tensor(y),
            n,
            int(isinf),
            attrs.get("detect_negative", 1) if isinf else 0,
            attrs.get("detect_positive", 1) if isinf else 0,
        ],
        (n,),
    )


for _op in ("IsNaN", "IsInf"):
    kernel(_op, dtypes=("float32", "bool"))(_build_float_class)


def _build_identity(op, b):
    x, y = op.inputs[0], op.outputs[0]
    n = numel(x.info.shape)
    suffix = "" if x.info.dtype == "float32" else f"_{np.dtype(x.info.dtype).itemsize}"
    b.launch("copy_strided" + suffix, [b.tensor(x), b.tensor(y), n, 1, int8([n]), int8([1]), int8([1])], (n,))


kernel("Identity", dtypes=("float32", "float16", "int64", "int32", "int8", "uint8", "bool"))(_build_identity)
