"""Element-wise kernels: broadcasting binary arithmetic, comparisons, Where,
unary math and activations (kernels/eltwise.cl)."""

from __future__ import annotations

from mnn_core.backend.kit.codes import BINARY as BINARY_CODES
from mnn_core.ops.elementwise import ACTIVATION_OPS

from ._common import ACT_CODES, MATH_CODES, broadcast_strides, collapse, full_attrs, int8, kernel, numel

COMPARE_CODES = {"Equal": 0, "Less": 1, "Greater": 2, "LessOrEqual": 3, "GreaterOrEqual": 4}
#: unary ops beyond the activations: code in kernels/common.cl, attributes passed as (alpha, beta)
EXTRA_UNARY = {
    "Tan": (33, ()),
    "Asin": (34, ()),
    "Acos": (35, ()),
    "Atan": (36, ()),
    "Sinh": (37, ()),
    "Cosh": (38, ()),
    "Asinh": (39, ()),
    "Acosh": (40, ()),
    "Atanh": (41, ()),
    "Round": (42, ()),
    "Sign": (43, ()),
    "Softsign": (44, ()),
    "Mish": (45, ()),
    "Elu": (46, ("alpha",)),
    "Celu": (47, ("alpha",)),
    "Selu": (48, ("alpha", "gamma")),
    "ThresholdedRelu": (49, ("alpha",)),
    "Shrink": (50, ("lambd", "bias")),
}


def _iteration(out_shape, *in_shapes):
    """The output shape and each input's strides over it, with dims collapsed."""
    strides = [broadcast_strides(s, out_shape) for s in in_shapes]
    return collapse(out_shape, *strides)


#: integer ops of ibinary_bcast_*, per dtype (as mnn-vulkan's ibinary.comp)
INT_OPS = {"int32": ("Add", "Sub", "Mul", "Div", "Max", "Min"), "int64": ("Add", "Sub", "Mul", "Max", "Min")}


def _binary_supports(node, ins):
    dtype = ins[0].dtype
    if dtype == "float32" or node.op in INT_OPS.get(dtype, ()):
        return True if all(i.dtype == dtype for i in ins) else "operands of one dtype only"
    return f"{node.op} of {dtype} is not supported"


def _build_binary(op, b):
    x, z = op.inputs
    y = op.outputs[0]
    n = numel(y.info.shape)
    if y.info.dtype != "float32":
        shape, (sx, sz) = _iteration(y.info.shape, x.info.shape, z.info.shape)
        args = [b.tensor(x), b.tensor(z), b.tensor(y), n, BINARY_CODES[op.node.op], len(shape), int8(shape)]
        b.launch("ibinary_bcast_" + ("i32" if y.info.dtype == "int32" else "i64"), args + [int8(sx), int8(sz)], (n,))
        return
    if x.info.shape == z.info.shape:
        b.launch("binary_same", [b.tensor(x), b.tensor(z), b.tensor(y), n, BINARY_CODES[op.node.op]], (n,))
        return
    shape, (sx, sz) = _iteration(y.info.shape, x.info.shape, z.info.shape)
    b.launch(
        "binary_bcast",
        [
            b.tensor(x),
            b.tensor(z),
            b.tensor(y),
            n,
            BINARY_CODES[op.node.op],
            len(shape),
            int8(shape),
            int8(sx),
            int8(sz),
        ],
        (n,),
    )


def _build_compare(op, b):
    x, z = op.inputs
    y = op.outputs[0]
    n = numel(y.info.shape)
    shape, (sx, sz) = _iteration(y.info.shape, x.info.shape, z.info.shape)
    suffix = {"float32": "_f32", "int32": "_i32", "int64": "_i64"}[x.info.dtype]
    b.launch(
        "compare_bcast" + suffix,
        [
            b.tensor(x),
            b.tensor(z),
            b.tensor(y),
            n,
            COMPARE_CODES[op.node.op],
            len(shape),
            int8(shape),
            int8(sx),
            int8(sz),
        ],
        (n,),
    )


def _where_supports(node, ins):
    if ins[0].dtype != "bool" or ins[1].dtype != "float32" or ins[2].dtype != "float32":
        return "a bool condition and float32 values only"
    return True


@kernel("Where", dtypes=("bool", "float32"), supports=_where_supports)
def _build_where(op, b):
    c, x, z = op.inputs
    y = op.outputs[0]
    n = numel(y.info.shape)
    shape, (sc, sx, sz) = _iteration(y.info.shape, c.info.shape, x.info.shape, z.info.shape)
    b.launch(
        "where_bcast",
        [b.tensor(c), b.tensor(x), b.tensor(z), b.tensor(y), n, len(shape), int8(shape), int8(sc), int8(sx), int8(sz)],
        (n,),
    )


def _build_unary(op, b):
    x, y = op.inputs[0], op.outputs[0]
    n = numel(y.info.shape)
    if op.node.op in ACTIVATION_OPS:
        kind, params = ACTIVATION_OPS[op.node.op]
        attrs = full_attrs(op.node)
        values = {k: float(attrs[v]) for k, v in params.items()}
        code, alpha, beta = ACT_CODES[kind], values.get("alpha", 0.0), values.get("beta", 0.0)
    elif op.node.op in EXTRA_UNARY:
        code, names = EXTRA_UNARY[op.node.op]
        attrs = full_attrs(op.node)
        alpha, beta = ([float(attrs[n]) for n in names] + [0.0, 0.0])[:2]
    else:
        code, alpha, beta = MATH_CODES[op.node.op], 0.0, 0.0
    b.launch("unary", [b.tensor(x), b.tensor(y), n, code, alpha, beta], (n,))


for _op in BINARY_CODES:
    kernel(_op, dtypes=("float32", "int32", "int64"), supports=_binary_supports)(_build_binary)


def _compare_supports(node, ins):
    return True if ins[0].dtype == ins[1].dtype else "operands of one dtype only"


for _op in COMPARE_CODES:
    kernel(_op, dtypes=("float32", "int32", "int64"), supports=_compare_supports)(_build_compare)
for _op in ACTIVATION_OPS:
    kernel(_op, inplace=True)(_build_unary)
for _op in MATH_CODES:
    kernel(_op, inplace=_op != "Identity")(_build_unary)
for _op in EXTRA_UNARY:
    kernel(_op, inplace=True)(_build_unary)
