"""Element-wise ops: broadcasting binary arithmetic (binary.comp) and unary math
and activations (unary.comp; codes shared with the fused activations in act.glsl)."""

from __future__ import annotations

import numpy as np

from ..recorder import element
from . import collapse, contiguous_strides, pad_to, register

BINARY = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Pow": 4, "Max": 5, "Min": 6, "PRelu": 7}

# op -> (code in act.glsl, attribute giving alpha, attribute giving beta)
UNARY = {
    "Relu": (1, None, None),
    "Clip": (2, "min", "max"),
    "LeakyRelu": (3, "alpha", None),
    "Sigmoid": (4, None, None),
    "Silu": (5, None, None),
    "Gelu": (6, None, None),
    "Tanh": (7, None, None),
    "HardSigmoid": (8, "alpha", "beta"),
    "HardSwish": (9, None, None),
    "Exp": (16, None, None),
    "Log": (17, None, None),
    "Sqrt": (18, None, None),
    "Neg": (19, None, None),
    "Abs": (20, None, None),
    "Reciprocal": (21, None, None),
    "Erf": (22, None, None),
    "Floor": (23, None, None),
    "Ceil": (24, None, None),
    "Softplus": (27, None, None),
    "Sign": (30, None, None),
    "Elu": (33, "alpha", None),
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


def _binary_supports(node, ins):
    if len(ins) != 2 or any(i is None for i in ins):
        return f"{node.op} takes two inputs"
    dims, _ = broadcast_plan(tuple(np.broadcast_shapes(ins[0].shape, ins[1].shape)), ins[0].shape, ins[1].shape)
    return True if len(dims) <= 6 else f"broadcast pattern needs {len(dims)} dims after collapsing (max 6)"


def _record_binary(op, rec):
    a, b = op.inputs
    y = op.outputs[0]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    params = [
        y.info.size,
        len(dims),
        BINARY[op.node.op],
        0,
        0.0,
        0.0,
        element(a),
        element(b),
        element(y),
        pad_to(dims, 6, 1),
        pad_to(sa, 6),
        pad_to(sb, 6),
    ]
    rec.elementwise("binary", params, [a, b], [y], y.info.size)


def _param(attrs, name):
    return 0.0 if name is None else float(attrs[name])


def _record_unary(op, rec):
    code, alpha, beta = UNARY[op.node.op]
    x, y = op.inputs[0], op.outputs[0]
    params = [y.info.size, code, _param(op.node.attrs, alpha), _param(op.node.attrs, beta), element(x), element(y)]
    rec.elementwise("unary", params, [x], [y], y.info.size)


def _unary_supports(node, ins):
    if node.op == "Clip" and len(ins) > 1:
        return "Clip with min/max as inputs (only as attributes)"
    return True


for _op in BINARY:
    register(_op, _record_binary, _binary_supports, inplace=_op == "PRelu", efficiency=0.8)
for _op in UNARY:
    register(_op, _record_unary, _unary_supports, inplace=True, efficiency=0.8)
