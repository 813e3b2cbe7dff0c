"""Element-wise ops: broadcasting binary arithmetic (binary.comp; int32/int64 in
ibinary.comp) and unary math and activations (unary.comp, codes shared with
the fused activations in act.glsl)."""

from __future__ import annotations

from ..recorder import HALF_OPS, pack
from . import collapse, contiguous_strides, pad6, register

BINARY = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Pow": 4, "Max": 5, "Min": 6, "PRelu": 7}

# op -> (code in act.glsl, attribute giving alpha, attribute giving beta); a float is a constant
UNARY = {
    "Relu": (1, None, None), "Clip": (2, "min", "max"), "LeakyRelu": (3, "alpha", None), "Sigmoid": (4, None, None),
    "Silu": (5, None, None), "Gelu": (6, None, None), "Tanh": (7, None, None),
    "HardSigmoid": (8, "alpha", "beta"), "HardSwish": (9, None, None),
    "Exp": (16, None, None), "Log": (17, None, None), "Sqrt": (18, None, None), "Neg": (19, None, None),
    "Abs": (20, None, None), "Reciprocal": (21, None, None), "Erf": (22, None, None), "Floor": (23, None, None),
    "Ceil": (24, None, None), "Sin": (25, None, None), "Cos": (26, None, None), "Softplus": (27, None, None),
    "Round": (29, None, None), "Sign": (30, None, None), "Softsign": (31, None, None),
    "Mish": (32, None, None), "Elu": (33, "alpha", None), "Celu": (34, "alpha", None), "Selu": (35, "alpha", "gamma"),
    "ThresholdedRelu": (36, "alpha", None), "Shrink": (37, "bias", "lambd"), "Tan": (38, None, None),
    "Sinh": (39, None, None), "Cosh": (40, None, None),
}


def broadcast_plan(out_shape, *in_shapes):
    """Collapsed output dims and each input's element strides (0 where it broadcasts)."""
    rank = len(out_shape)
    strides = []
    for shape in in_shapes:
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        cs = contiguous_strides(padded)
        strides.append([0 if d == 1 and o != 1 else s for d, o, s in zip(padded, out_shape, cs)])
    return collapse(out_shape, *strides)


def _out_shape(ins):
    import numpy as np

    return tuple(np.broadcast_shapes(*(i.shape for i in ins)))


#: integer ops of ibinary.comp, per dtype
INT_OPS = {"int32": ("Add", "Sub", "Mul", "Div", "Max", "Min"), "int64": ("Add", "Sub", "Mul", "Max", "Min")}


def _binary_supports(node, ins):
    dtype = ins[0].dtype
    if dtype != "float32" and node.op not in INT_OPS.get(dtype, ()):
        return f"{node.op} of {dtype} tensors is not implemented (float32 only)"
    dims, _ = broadcast_plan(_out_shape(ins), ins[0].shape, ins[1].shape)
    return True if len(dims) <= 6 else f"broadcast pattern needs {len(dims)} dims after collapsing (max 6)"


def _record_binary(op, rec, act=(0, 0.0, 0.0)):
    a, b = op.inputs
    y = op.outputs[0]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    if a.info.dtype == "float32":
        push = pack(y.info.size, len(dims), BINARY[op.node.op], act[0], pad6(dims, 1), pad6(sa), pad6(sb), *act[1:])
        rec.elementwise("binary", [rec.tensor(a), rec.tensor(b), rec.output(y)], push, y.info.size)
        return
    push = pack(y.info.size, len(dims), BINARY[op.node.op], int(a.info.dtype == "int64"), pad6(dims, 1), pad6(sa),
                pad6(sb))
    rec.elementwise("ibinary", [rec.tensor(a), rec.tensor(b), rec.output(y)], push, y.info.size)


def fused_activation(op, nxt):
    """(code, alpha, beta) when `nxt` is an activation applied in place to `op`'s float
    result (the core aliases it only when it is the result's one reader), else None."""
    if op.node.op not in BINARY or nxt is None or nxt.node.op not in UNARY or op.inputs[0].info.dtype != "float32":
        return None
    code, alpha, beta = UNARY[nxt.node.op]
    src, dst = op.outputs[0], nxt.outputs[0]
    if code > 9 or nxt.inputs[0].name != src.name or dst.offset != src.offset or dst.info != src.info:
        return None
    return code, _param(nxt.node.attrs, alpha), _param(nxt.node.attrs, beta)


def record_fused(op, act, rec):
    """The binary op with the activation that follows it, as one dispatch."""
    _record_binary(op, rec, act)


def _param(attrs, name):
    return 0.0 if name is None else float(attrs[name])


def _record_unary(op, rec):
    code, alpha, beta = UNARY[op.node.op]
    x, y = op.inputs[0], op.outputs[0]
    push = pack(y.info.size, code, _param(op.node.attrs, alpha), _param(op.node.attrs, beta))
    rec.elementwise("unary", [rec.tensor(x), rec.output(y)], push, y.info.size)


for _op in BINARY:
    register(_op, _record_binary, _binary_supports, dtypes=("float32", "int32", "int64"), inplace=_op == "PRelu",
             efficiency=0.8)
for _op in UNARY:
    register(_op, _record_unary, inplace=True, efficiency=0.8)
HALF_OPS.update(UNARY)  # unary.comp has a float16 variant
