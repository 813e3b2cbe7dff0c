"""ReduceSum / Mean / Max / Min / Prod / L2 / SumSquare over any axes (kernels/reduce.cl):
one work-item per output element, kept and reduced dims as strided walks; ArgMax / ArgMin along
one axis of float32, int32 or int64 (arg_reduce), one work-item per row."""

from __future__ import annotations

from mnn_core.backend.kit.codes import REDUCE

from ._common import collapse, contiguous_strides, full_attrs, int8, kernel, numel

#: reduce.cl's modes: the shared shaders' (reduce.comp) numbering, and SumSquare, which only it has
REDUCE_CODES = {op: code for op, code in REDUCE.items() if op.startswith("Reduce")} | {"ReduceSumSquare": 6}


def _build_reduce(op, b):
    from mnn_core.ops.reduce import reduce_axes

    attrs = full_attrs(op.node)
    x, y = op.inputs[0], op.outputs[0]
    shape = tuple(x.info.shape)
    n_out = numel(y.info.shape)
    if n_out == 0:
        return
    if not attrs["axes"] and attrs["noop_with_empty_axes"]:
        axes = ()
    else:
        axes = reduce_axes(shape, attrs["axes"], op.node.op)
    strides = contiguous_strides(shape)
    kept = [d for d in range(len(shape)) if d not in axes]
    kshape, (kstride,) = collapse([shape[d] for d in kept], [strides[d] for d in kept])
    rshape, (rstride,) = collapse([shape[d] for d in axes], [strides[d] for d in axes])
    n_red = numel([shape[d] for d in axes])
    if n_red == 0:
        rshape, rstride = [1], [0]
    b.launch(
        "reduce_axes",
        [
            b.tensor(x),
            b.tensor(y),
            n_out,
            n_red,
            len(kshape),
            int8(kshape),
            int8(kstride),
            len(rshape),
            int8(rshape),
            int8(rstride),
            REDUCE_CODES[op.node.op],
        ],
        (n_out,),
    )


for _op in REDUCE_CODES:
    kernel(_op)(_build_reduce)


def _build_arg(op, b):
    attrs = full_attrs(op.node)
    x, y = op.inputs[0], op.outputs[0]
    shape = x.info.shape
    axis = attrs["axis"] % len(shape)
    length = int(shape[axis])
    rows = x.info.size // length if length else 0
    if rows == 0:
        return
    inner = numel(shape[axis + 1 :])
    args = [b.tensor(x), b.tensor(y), rows, length, inner, int(op.node.op == "ArgMin"), attrs["select_last_index"]]
    b.launch("arg_reduce" + {"float32": "_f32", "int32": "_i32", "int64": "_i64"}[x.info.dtype], args, (rows,))


for _op in ("ArgMax", "ArgMin"):
    kernel(_op, dtypes=("float32", "int32", "int64"))(_build_arg)
