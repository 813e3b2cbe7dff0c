"""Handlers of MNN's tensor ops: constants, shapes, views, element-wise math, reductions.

MNN computes shapes and indices in int32; mnn's Shape gives int64, so a Cast follows it."""

from __future__ import annotations

import numpy as np

from . import schema as S
from .record import OpRecord, handles

INT32_MAX = (1 << 31) - 1
_BINARY = {
    0: "Add",
    1: "Sub",
    2: "Mul",
    3: "Div",
    4: "Max",
    5: "Min",
    6: "Pow",
    7: "Div",
    8: "Min",
    9: "Max",
    10: "Greater",
    11: "GreaterOrEqual",
    12: "Less",
    15: "Equal",
    16: "LessOrEqual",
}
# UnaryOpOperation codes. MNN's converter writes ONNX's erf GELU pattern as GELU (32), which MNN computes
# with the tanh approximation; mnn keeps the erf form the model was written with (it is what the source meant).
_UNARY = {
    0: "Abs",
    1: "Neg",
    2: "Floor",
    3: "Ceil",
    5: "Sqrt",
    7: "Exp",
    8: "Log",
    9: "Sin",
    10: "Cos",
    11: "Tan",
    12: "Asin",
    13: "Acos",
    14: "Atan",
    15: "Reciprocal",
    19: "Sinh",
    20: "Asinh",
    21: "Atanh",
    22: "Sign",
    23: "Round",
    24: "Cosh",
    25: "Erf",
    29: "Sigmoid",
    30: "Tanh",
    31: "HardSwish",
    32: "Gelu",
    33: "Gelu",
    34: "Silu",
}
_REDUCE = {0: "ReduceSum", 2: "ReduceSumSquare", 3: "ReduceMean", 4: "ReduceMax", 5: "ReduceMin", 6: "ReduceProd"}


def blob_array(ctx, blob, what: str) -> np.ndarray:
    """A Blob's data as an array of its dims (MNN keeps ints as int32, floats as float32)."""
    f = S.BLOB
    dims = blob.ints(f["dims"], f"{what}'s dims")
    if any(d < 0 for d in dims):
        raise ctx.fail(f"{what} has a negative dimension {dims}")
    if blob.table(f["external"], "external") is not None or blob._field(f["external"]):
        raise ctx.fail(f"{what} keeps its data in an external file; mnn reads data stored in the model")
    code = blob.scalar(f["dataType"], "int32", 1)
    dtype = S.DATA_TYPES.get(code)
    field = {
        "float32": "float32s",
        "int32": "int32s",
        "int64": "int64s",
        "uint8": "uint8s",
        "int8": "int8s",
        "bool": "int32s",
    }.get(dtype)
    if field is None:
        raise ctx.fail(f"{what} has data type {code}, which mnn does not read")
    stored = {"float32s": "float32", "int32s": "int32", "int64s": "int64", "uint8s": "uint8", "int8s": "int8"}[field]
    data = blob.array(f[field], stored, what)
    if data is None and dtype == "bool":
        data = blob.array(f["uint8s"], "uint8", what)
    n = int(np.prod(dims, dtype=np.int64)) if dims else 1
    if data is None:
        data = np.zeros(0, stored)
    if data.size != n:
        raise ctx.fail(f"{what} holds {data.size} values for dims {dims}")
    return data.astype(dtype).reshape(dims)


@handles("Const", "TrainableParam")
def const(ctx, op: OpRecord) -> None:
    if op.param is None or op.param_type != "Blob":
        raise ctx.fail(f"op {op.name!r} (Const) has no Blob")
    ctx.const(blob_array(ctx, op.param, f"constant {op.outputs[0]!r}"), name=op.outputs[0])


@handles("ConvertTensor", "Dropout")
def identity(ctx, op: OpRecord) -> None:
    ctx.emit("Identity", op.inputs[:1], op.outputs, op.name)


@handles("Shape", "Size")
def shape(ctx, op: OpRecord) -> None:
    s = ctx.emit(op.type, op.inputs[:1], None, op.name + ".i64")
    ctx.emit("Cast", [s], op.outputs, op.name, to="int32")


@handles("Rank")
def rank(ctx, op: OpRecord) -> None:
    s = ctx.emit("Shape", [ctx.emit("Shape", op.inputs[:1], None, op.name + ".shape")], None, op.name + ".rank")
    s = ctx.emit("Squeeze", [s], None, op.name + ".squeeze", axes=[0])
    ctx.emit("Cast", [s], op.outputs, op.name, to="int32")


@handles("SliceTf")
def slice_tf(ctx, op: OpRecord) -> None:
    """TF Slice: begin and size (-1 = to the end)."""
    begin = ctx.value(op.inputs[1], f"op {op.name!r} (SliceTf)'s begin").astype(np.int64).reshape(-1)
    size = ctx.value(op.inputs[2], f"op {op.name!r} (SliceTf)'s size").astype(np.int64).reshape(-1)
    ends = np.where(size < 0, INT32_MAX, begin + size)
    ctx.emit("Slice", op.inputs[:1], op.outputs, op.name, starts=begin.tolist(), ends=ends.tolist())


@handles("StridedSlice")
def strided_slice(ctx, op: OpRecord) -> None:
    # StridedSliceParam: beginMask 2, endMask 3, ellipsisMask 4, newAxisMask 5, shrinkAxisMask 6, fromType 7
    what = f"op {op.name!r} (StridedSlice)"
    vals = [
        ctx.value(n, f"{what}'s input {i + 1}").astype(np.int64).reshape(-1).tolist() if n else None
        for i, n in enumerate(op.inputs[1:])
    ]
    if op.p_scalar(7, "int32") == 1:  # ONNX Slice: starts, ends, axes, steps
        attrs = {"starts": vals[0], "ends": vals[1]}
        if len(vals) > 2 and vals[2] is not None:
            attrs["axes"] = vals[2]
        if len(vals) > 3 and vals[3] is not None:
            attrs["steps"] = vals[3]
        ctx.emit("Slice", op.inputs[:1], op.outputs, op.name, **attrs)
        return
    if op.p_scalar(4, "int32") or op.p_scalar(5, "int32"):
        raise ctx.fail(f"{what} uses an ellipsis or new-axis mask, which mnn does not read")
    begin, end = vals[0], vals[1]
    steps = vals[2] if len(vals) > 2 and vals[2] is not None else [1] * len(begin)
    bmask, emask, shrink = op.p_scalar(2, "int32"), op.p_scalar(3, "int32"), op.p_scalar(6, "int32")
    for i, step in enumerate(steps):
        if bmask >> i & 1:
            begin[i] = 0 if step > 0 else INT32_MAX
        if emask >> i & 1:
            end[i] = INT32_MAX if step > 0 else -INT32_MAX
        if shrink >> i & 1:
            end[i] = begin[i] + 1 if begin[i] != -1 else INT32_MAX
    squeeze = [i for i in range(len(begin)) if shrink >> i & 1]
    y = ctx.emit(
        "Slice",
        op.inputs[:1],
        None if squeeze else op.outputs,
        op.name + (".slice" if squeeze else ""),
        starts=begin,
        ends=end,
        steps=steps,
    )
    if squeeze:
        ctx.emit("Squeeze", [y], op.outputs, op.name, axes=squeeze)


@handles("Squeeze", "Unsqueeze")
def squeeze(ctx, op: OpRecord) -> None:
    if len(op.inputs) > 1 and op.inputs[1]:
        axes = ctx.value(op.inputs[1], f"op {op.name!r} ({op.type})'s axes").reshape(-1).tolist()
    else:
        axes = op.p_ints(0)
    ctx.emit(op.type, op.inputs[:1], op.outputs, op.name, axes=[int(a) for a in axes])


@handles("Slice")
def slice_caffe(ctx, op: OpRecord) -> None:
    """Caffe's Slice: cut `axis` at slicePoints (or into equal parts) into the outputs."""
    axis, points = op.p_scalar(0, "int32", 1), op.p_ints(1)
    info = ctx.infos.get(op.inputs[0])
    attrs = {"axis": axis, "num_outputs": len(op.outputs)}
    if points:
        dim = (
            info.shape[axis]
            if info is not None and info.shape is not None and -len(info.shape) <= axis < len(info.shape)
            else None
        )
        if not isinstance(dim, int) or len(points) != len(op.outputs) - 1:
            raise ctx.fail(
                f"op {op.name!r} (Slice): {len(points)} slice points for {len(op.outputs)} outputs "
                "of a dimension not known at import"
            )
        bounds = [0, *points, dim]
        attrs = {"axis": axis, "split": [b - a for a, b in zip(bounds, bounds[1:])]}
    ctx.emit("Split", op.inputs[:1], op.outputs, op.name, **attrs)


@handles("Concat")
def concat(ctx, op: OpRecord) -> None:
    ctx.emit("Concat", op.inputs, op.outputs, op.name, axis=op.p_scalar(0, "int32"))


@handles("Reshape")
def reshape(ctx, op: OpRecord) -> None:
    if len(op.inputs) > 1 and op.inputs[1]:
        v = ctx.values.get(op.inputs[1])
        if v is None:  # a shape known only when running: mnn binds it at resize
            s = ctx.emit("Cast", [op.inputs[1]], None, op.name + ".shape", to="int64")
            ctx.emit("Reshape", [op.inputs[0], s], op.outputs, op.name)
            return
        dims = [int(d) for d in np.asarray(v).reshape(-1)]
    else:
        dims = op.p_ints(0)
    ctx.emit("Reshape", op.inputs[:1], op.outputs, op.name, shape=dims)


@handles("Permute")
def permute(ctx, op: OpRecord) -> None:
    ctx.emit("Transpose", op.inputs[:1], op.outputs, op.name, perm=op.p_ints(0))


@handles("Transpose")
def transpose(ctx, op: OpRecord) -> None:
    perm = ctx.value(op.inputs[1], f"op {op.name!r} (Transpose)'s permutation").reshape(-1).tolist()
    ctx.emit("Transpose", op.inputs[:1], op.outputs, op.name, perm=[int(p) for p in perm])


@handles("GatherV2", "Gather")
def gather(ctx, op: OpRecord) -> None:
    if op.type == "GatherV2" and len(op.inputs) > 2 and op.inputs[2]:
        axis = int(ctx.value(op.inputs[2], f"op {op.name!r} (GatherV2)'s axis").reshape(-1)[0])
    else:
        axis = op.p_scalar(S.GATHER["axis"], "int32") if op.type == "Gather" else 0
    ctx.emit("Gather", op.inputs[:2], op.outputs, op.name, axis=axis)


@handles("Cast")
def cast(ctx, op: OpRecord) -> None:
    code = op.p_scalar(S.CAST["dstT"], "int32", 1)
    if code not in S.DATA_TYPES:
        raise ctx.fail(f"op {op.name!r} (Cast) casts to data type {code}, which mnn does not hold")
    ctx.emit("Cast", op.inputs[:1], op.outputs, op.name, to=S.DATA_TYPES[code])


@handles("Flatten")
def flatten(ctx, op: OpRecord) -> None:
    if op.p_scalar(1, "int32"):
        raise ctx.fail(f"op {op.name!r} (Flatten) has an end axis, which mnn does not read")
    ctx.emit("Flatten", op.inputs[:1], op.outputs, op.name, axis=op.p_scalar(0, "int32", 1))


@handles("BinaryOp")
def binary(ctx, op: OpRecord) -> None:
    code = op.p_scalar(0, "int32")
    act = op.p_scalar(2, "int32")  # activationType (newer schemas): 1 = a ReLU fused after the op
    if act not in (0, 1):
        raise ctx.fail(f"op {op.name!r} (BinaryOp) fuses activation {act}, which mnn does not read")
    outs = None if act else op.outputs
    if code == 14:  # SquaredDifference
        d = ctx.emit("Sub", op.inputs[:2], None, op.name + ".sub")
        y = ctx.emit("Mul", [d, d], outs, op.name)
    elif code in (17, 19):  # FLOORMOD (Python's %), MOD (C's fmod)
        y = ctx.emit("Mod", op.inputs[:2], outs, op.name, fmod=int(code == 19))
    elif code in _BINARY:
        y = ctx.emit(_BINARY[code], op.inputs[:2], outs, op.name)
    else:
        raise ctx.fail(f"op {op.name!r} is BinaryOp {code}, which mnn does not read")
    if act:
        ctx.emit("Relu", [y], op.outputs, op.name + ".relu")


@handles("Eltwise")
def eltwise(ctx, op: OpRecord) -> None:
    kind = {0: "Mul", 1: "Add", 2: "Max", 3: "Sub"}.get(op.p_scalar(0, "int8"))
    coeff = op.p_floats(1)
    if kind is None or (coeff is not None and coeff.size and not np.all(coeff == 1)):
        raise ctx.fail(f"op {op.name!r} (Eltwise) has a type or coefficients mnn does not read")
    y = op.inputs[0]
    for i, x in enumerate(op.inputs[1:], 1):
        last = i == len(op.inputs) - 1
        y = ctx.emit(kind, [y, x], op.outputs if last else None, op.name if last else f"{op.name}.{i}")


@handles("UnaryOp")
def unary(ctx, op: OpRecord) -> None:
    code, x = op.p_scalar(0, "int32"), op.inputs[0]
    if code == 4:  # SQUARE
        ctx.emit("Mul", [x, x], op.outputs, op.name)
    elif code == 6:  # RSQRT
        ctx.emit("Reciprocal", [ctx.emit("Sqrt", [x], None, op.name + ".sqrt")], op.outputs, op.name)
    elif code in _UNARY:
        ctx.emit(_UNARY[code], [x], op.outputs, op.name)
    else:
        raise ctx.fail(f"op {op.name!r} is UnaryOp {code}, which mnn does not read")


@handles("Reduction")
def reduction(ctx, op: OpRecord) -> None:
    code = op.p_scalar(S.REDUCTION["operation"], "int8")
    if code not in _REDUCE:
        raise ctx.fail(f"op {op.name!r} is Reduction {code}, which mnn does not read")
    if len(op.inputs) > 1 and op.inputs[1]:
        axes = ctx.value(op.inputs[1], f"op {op.name!r} (Reduction)'s axes").reshape(-1).tolist()
    else:
        axes = op.p_ints(S.REDUCTION["dim"])
    ctx.emit(
        _REDUCE[code],
        op.inputs[:1],
        op.outputs,
        op.name,
        axes=[int(a) for a in axes],
        keepdims=int(op.p_scalar(S.REDUCTION["keepDims"], "bool", False)),
    )


@handles("Padding")
def padding(ctx, op: OpRecord) -> None:
    pads = ctx.value(op.inputs[1], f"op {op.name!r} (Padding)'s pads").reshape(-1, 2)  # [begin, end] per dim
    mode = {0: "constant", 1: "reflect", 2: "edge"}.get(op.p_scalar(0, "int8"), "constant")
    attrs = {"pads": [int(p) for p in pads[:, 0]] + [int(p) for p in pads[:, 1]], "mode": mode}
    if len(op.inputs) > 2 and op.inputs[2]:
        attrs["value"] = float(ctx.value(op.inputs[2], f"op {op.name!r} (Padding)'s value").reshape(-1)[0])
    ctx.emit("Pad", op.inputs[:1], op.outputs, op.name, **attrs)
