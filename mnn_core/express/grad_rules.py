"""Gradient rules, attached to the op schemas (`get_schema(op).gradient`) at import.

A rule takes a `GradContext` (the forward op's inputs, outputs, attributes and
the gradients of its outputs) and returns one gradient per input (None where
there is none or none is needed). Rules are written with ordinary ops, the
backward ones from ops/grad.py, ops/conv_grad.py and ops/norm_train.py among
them, so the backward pass runs eagerly or traces into a training graph
exactly like the forward pass. tests/test_express.py checks every rule
against finite differences.
"""

from __future__ import annotations

import math

import numpy as np

from ..backend.kit.geometry import CONV_SPATIAL, conv_geometry, pool_geometry
from ..errors import MnnError
from ..ops import get_schema
from ..ops.reduce import reduce_axes
from .autograd import GradContext
from .conv_nd_grad import conv_nd_grads
from .var import Var, apply, as_var

RULES: dict = {}


def rule(*ops: str):
    def attach(fn):
        for op in ops:
            RULES[op] = fn
            get_schema(op).gradient = fn
        return fn

    return attach


def sum_to(g: Var, shape) -> Var:
    shape = tuple(shape)
    return g if g.shape == shape else apply("SumToShape", g, shape=list(shape))


def _const(value, like: Var) -> Var:
    return as_var(np.asarray(value, dtype=like.dtype), like)


# -- binary arithmetic -----------------------------------------------------------------------


@rule("Add")
def _add(ctx: GradContext):
    a, b = ctx.inputs
    return [sum_to(ctx.grad, a.shape), sum_to(ctx.grad, b.shape)]


@rule("Sub")
def _sub(ctx):
    a, b = ctx.inputs
    return [sum_to(ctx.grad, a.shape), sum_to(-ctx.grad, b.shape) if ctx.needs(1) else None]


@rule("Mul")
def _mul(ctx):
    (a, b), g = ctx.inputs, ctx.grad
    return [sum_to(g * b, a.shape) if ctx.needs(0) else None, sum_to(g * a, b.shape) if ctx.needs(1) else None]


@rule("Div")
def _div(ctx):
    (a, b), g, y = ctx.inputs, ctx.grad, ctx.outputs[0]
    return [sum_to(g / b, a.shape) if ctx.needs(0) else None, sum_to(-(g * y) / b, b.shape) if ctx.needs(1) else None]


@rule("Pow")
def _pow(ctx):
    (a, b), g, y = ctx.inputs, ctx.grad, ctx.outputs[0]
    da = sum_to(g * b * apply("Pow", a, b - 1), a.shape) if ctx.needs(0) else None
    db = sum_to(g * y * apply("Log", a), b.shape) if ctx.needs(1) else None
    return [da, db]


def _pick(ctx, win: str):
    """Max / Min: the gradient goes to the chosen operand (split evenly on ties, as PyTorch)."""
    (a, b), g = ctx.inputs, ctx.grad
    share_a = apply(
        "Where", apply(win, a, b), _const(1, g), apply("Where", apply("Equal", a, b), _const(0.5, g), _const(0, g))
    )
    return [
        sum_to(g * share_a, a.shape) if ctx.needs(0) else None,
        sum_to(g * (1 - share_a), b.shape) if ctx.needs(1) else None,
    ]


rule("Max")(lambda ctx: _pick(ctx, "Greater"))
rule("Min")(lambda ctx: _pick(ctx, "Less"))


@rule("Where")
def _where(ctx):
    (c, a, b), g = ctx.inputs, ctx.grad
    zero = _const(0, g)
    return [
        None,
        sum_to(apply("Where", c, g, zero), a.shape) if ctx.needs(1) else None,
        sum_to(apply("Where", c, zero, g), b.shape) if ctx.needs(2) else None,
    ]


# -- activations and unary math -------------------------------------------------------------------


def activation_grad(g: Var, y: Var, kind: str, alpha: float, beta: float, op: str) -> Var:
    """Undo a fused activation, knowing only the op's output y."""
    if kind == "none":
        return g
    if kind == "relu":
        return apply("ReluGrad", g, y)
    if kind == "clip":
        return apply("ClipGrad", g, y, min=alpha, max=beta)
    if kind == "sigmoid":
        return apply("SigmoidGrad", g, y)
    if kind == "tanh":
        return apply("TanhGrad", g, y)
    raise MnnError(
        f"{op} with fused activation {kind!r} cannot be differentiated from its output; "
        "train the unfused graph (nn.from_graph unfuses activations)"
    )


rule("Relu")(lambda ctx: [apply("ReluGrad", ctx.grad, ctx.outputs[0])])
rule("Sigmoid")(lambda ctx: [apply("SigmoidGrad", ctx.grad, ctx.outputs[0])])
rule("Tanh")(lambda ctx: [apply("TanhGrad", ctx.grad, ctx.outputs[0])])
rule("Gelu")(lambda ctx: [apply("GeluGrad", ctx.grad, ctx.inputs[0])])
rule("Silu")(lambda ctx: [apply("SiluGrad", ctx.grad, ctx.inputs[0])])
rule("HardSwish")(lambda ctx: [apply("HardSwishGrad", ctx.grad, ctx.inputs[0])])
rule("Clip")(lambda ctx: [apply("ClipGrad", ctx.grad, ctx.outputs[0], min=ctx.attrs["min"], max=ctx.attrs["max"])])
rule("LeakyRelu")(lambda ctx: [apply("LeakyReluGrad", ctx.grad, ctx.inputs[0], alpha=ctx.attrs["alpha"])])
rule("HardSigmoid")(
    lambda ctx: [apply("HardSigmoidGrad", ctx.grad, ctx.inputs[0], alpha=ctx.attrs["alpha"], beta=ctx.attrs["beta"])]
)
rule("Identity")(lambda ctx: [ctx.grad])
rule("Neg")(lambda ctx: [-ctx.grad])
rule("Exp")(lambda ctx: [ctx.grad * ctx.outputs[0]])
rule("Log")(lambda ctx: [ctx.grad / ctx.inputs[0]])
rule("Sqrt")(lambda ctx: [ctx.grad * 0.5 / ctx.outputs[0]])
rule("Reciprocal")(lambda ctx: [-ctx.grad * ctx.outputs[0] * ctx.outputs[0]])
rule("Sin")(lambda ctx: [ctx.grad * apply("Cos", ctx.inputs[0])])
rule("Cos")(lambda ctx: [-ctx.grad * apply("Sin", ctx.inputs[0])])
rule("Softplus")(lambda ctx: [ctx.grad * apply("Sigmoid", ctx.inputs[0])])
rule("Floor", "Ceil")(lambda ctx: [None])


@rule("Abs")
def _abs(ctx):
    x, g = ctx.inputs[0], ctx.grad
    return [apply("Where", apply("Less", x, _const(0, x)), -g, g)]


@rule("Erf")
def _erf(ctx):
    x = ctx.inputs[0]
    return [ctx.grad * (2.0 / math.sqrt(math.pi)) * apply("Exp", -(x * x))]


# -- convolution, matrix products ---------------------------------------------------------------


@rule("Conv")
def _conv(ctx):
    x, w = ctx.inputs[:2]
    a = ctx.attrs
    g = activation_grad(ctx.grad, ctx.outputs[0], a["activation"], a["act_alpha"], a["act_beta"], "Conv")
    if x.ndim != 4:  # 1-D and 3-D: the backward kernels are 2-D; forward ops of any rank do it
        return conv_nd_grads(x, w, g, conv_geometry(x.shape, w.shape, a, CONV_SPATIAL), ctx.needs)
    geo = conv_geometry(x.shape, w.shape, a)
    gattrs = dict(
        kernel_shape=geo["kernel"],
        strides=geo["strides"],
        pads=geo["pads"],
        dilations=geo["dilations"],
        group=geo["group"],
    )
    dx = apply("ConvGradInput", g, w, input_shape=list(x.shape), **gattrs) if ctx.needs(0) else None
    dw = db = None
    if ctx.needs(1):
        with_bias = ctx.needs(2)
        out = apply("ConvGradWeight", g, x, n_outputs=2 if with_bias else 1, **gattrs)
        dw, db = out if with_bias else (out, None)
    elif ctx.needs(2):
        db = apply("ReduceSum", g, axes=[0, 2, 3], keepdims=0)
    return [dx, dw, db]


def _swap_last(v: Var) -> Var:
    perm = list(range(v.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return apply("Transpose", v, perm=perm)


@rule("MatMul")
def _matmul(ctx):
    (a, b), a_ = ctx.inputs, ctx.attrs
    g = activation_grad(ctx.grad, ctx.outputs[0], a_["activation"], a_["act_alpha"], a_["act_beta"], "MatMul")
    if a.ndim == 2 and b.ndim == 2:  # Gemm takes the transposes for free
        return [
            apply("Gemm", g, b, transB=1) if ctx.needs(0) else None,
            apply("Gemm", a, g, transA=1) if ctx.needs(1) else None,
        ]
    a2 = apply("Unsqueeze", a, axes=[0]) if a.ndim == 1 else a
    b2 = apply("Unsqueeze", b, axes=[1]) if b.ndim == 1 else b
    g2 = apply("Unsqueeze", g, axes=[g.ndim]) if b.ndim == 1 else g  # back to the 2-D product's shape
    g2 = apply("Unsqueeze", g2, axes=[g2.ndim - 1]) if a.ndim == 1 else g2
    da = db = None
    if ctx.needs(0):
        da = sum_to(apply("MatMul", g2, _swap_last(b2)), a2.shape)
        da = apply("Reshape", da, shape=list(a.shape), allowzero=1) if a.ndim == 1 else da
    if ctx.needs(1):
        if b.ndim == 2 and a.ndim > 2:  # sum over every batch dim at once: one 2-D product
            k, n = a.shape[-1], g2.shape[-1]
            db = apply("Gemm", apply("Reshape", a2, shape=[-1, k]), apply("Reshape", g2, shape=[-1, n]), transA=1)
        else:
            db = sum_to(apply("MatMul", _swap_last(a2), g2), b2.shape)
        db = apply("Reshape", db, shape=list(b.shape), allowzero=1) if b.ndim == 1 else db
    return [da, db]


@rule("Gemm")
def _gemm(ctx):
    a, b = ctx.inputs[:2]
    c = ctx.inputs[2] if len(ctx.inputs) > 2 else None
    at = ctx.attrs
    g = activation_grad(ctx.grad, ctx.outputs[0], at["activation"], at["act_alpha"], at["act_beta"], "Gemm")
    alpha, ta, tb = at["alpha"], at["transA"], at["transB"]
    da = db = dc = None
    if ctx.needs(0):
        da = (
            apply("Gemm", b, g, transA=tb, transB=1, alpha=alpha)
            if ta
            else apply("Gemm", g, b, transB=1 - tb, alpha=alpha)
        )
    if ctx.needs(1):
        db = (
            apply("Gemm", g, a, transA=1, transB=ta, alpha=alpha)
            if tb
            else apply("Gemm", a, g, transA=1 - ta, alpha=alpha)
        )
    if c is not None and ctx.needs(2):
        dc = sum_to(g if at["beta"] == 1.0 else g * at["beta"], c.shape)
    return [da, db, dc]


# -- pooling ---------------------------------------------------------------------------------------


@rule("MaxPool")
def _max_pool(ctx):
    x = ctx.inputs[0]
    geo = pool_geometry(x.shape, ctx.attrs, "MaxPool")
    return [
        apply(
            "MaxPoolGrad",
            ctx.grad,
            x,
            kernel_shape=geo["kernel"],
            strides=geo["strides"],
            pads=geo["pads"],
            dilations=geo["dilations"],
            ceil_mode=ctx.attrs["ceil_mode"],
        )
    ]


@rule("AveragePool")
def _average_pool(ctx):
    x = ctx.inputs[0]
    geo = pool_geometry(x.shape, ctx.attrs, "AveragePool")
    return [
        apply(
            "AveragePoolGrad",
            ctx.grad,
            kernel_shape=geo["kernel"],
            strides=geo["strides"],
            pads=geo["pads"],
            ceil_mode=ctx.attrs["ceil_mode"],
            count_include_pad=ctx.attrs["count_include_pad"],
            input_shape=list(x.shape),
        )
    ]


rule("GlobalAveragePool")(lambda ctx: [apply("GlobalAveragePoolGrad", ctx.grad, input_shape=list(ctx.inputs[0].shape))])
rule("GlobalMaxPool")(
    lambda ctx: [apply("MaxPoolGrad", ctx.grad, ctx.inputs[0], kernel_shape=list(ctx.inputs[0].shape[2:]))]
)


# -- normalization, softmax, losses ---------------------------------------------------------------


@rule("BatchNormalization")
def _batch_norm(ctx):
    x, scale, _, mean, var = ctx.inputs
    if not any(ctx.needs(i) for i in range(3)):
        return [None] * 5
    dx, dscale, dbias = apply(
        "BatchNormGrad", ctx.grad, x, scale, mean, var, n_outputs=3, epsilon=ctx.attrs["epsilon"], training=0
    )
    return [dx, dscale, dbias, None, None]


@rule("BatchNormTraining")
def _batch_norm_training(ctx):
    x, scale = ctx.inputs[:2]
    g = ctx.grads[0]
    if g is None:
        return [None] * 5
    _, mean, var = ctx.outputs[:3]
    dx, dscale, dbias = apply(
        "BatchNormGrad", g, x, scale, mean, var, n_outputs=3, epsilon=ctx.attrs["epsilon"], training=1
    )
    return [dx, dscale, dbias, None, None]


@rule("LayerNormalization")
def _layer_norm(ctx):
    x = ctx.inputs[0]
    scale = ctx.inputs[1] if len(ctx.inputs) > 1 else None
    bias = ctx.inputs[2] if len(ctx.inputs) > 2 else None
    axis = ctx.attrs["axis"] % x.ndim
    full = x.shape[axis:]
    s = _const(np.ones(full), x) if scale is None else scale
    s = s if s.shape == full else apply("Expand", s, shape=list(full))
    dx, dscale, dbias = apply("LayerNormGrad", ctx.grad, x, s, n_outputs=3, axis=axis, epsilon=ctx.attrs["epsilon"])
    return [
        dx,
        None if scale is None else sum_to(dscale, scale.shape),
        None if bias is None else sum_to(dbias, bias.shape),
    ]


rule("Softmax")(lambda ctx: [apply("SoftmaxGrad", ctx.grad, ctx.outputs[0], axis=ctx.attrs["axis"])])
rule("LogSoftmax")(lambda ctx: [apply("LogSoftmaxGrad", ctx.grad, ctx.outputs[0], axis=ctx.attrs["axis"])])


@rule("SoftmaxCrossEntropy")
def _softmax_cross_entropy(ctx):
    logits, target = ctx.inputs
    if ctx.needs(1):
        raise MnnError("cross_entropy: gradients to probability targets are not supported; detach() the target")
    return [apply("SoftmaxCrossEntropyGrad", ctx.grad, logits, target, **ctx.attrs), None]


# -- reductions ------------------------------------------------------------------------------------


def _keepdims_shape(x: Var, attrs: dict, op: str):
    if not attrs["axes"] and attrs["noop_with_empty_axes"]:
        return None, ()
    axes = reduce_axes(x.shape, attrs["axes"], op)
    return [1 if i in axes else d for i, d in enumerate(x.shape)], axes


def _spread(g: Var, x: Var, attrs: dict, op: str) -> Var:
    """A reduction's gradient broadcast back over the reduced axes."""
    kept, _ = _keepdims_shape(x, attrs, op)
    if kept is None:
        return g
    if list(g.shape) != kept:
        g = apply("Reshape", g, shape=kept, allowzero=1)
    return apply("Expand", g, shape=list(x.shape))


@rule("ReduceSum")
def _reduce_sum(ctx):
    return [_spread(ctx.grad, ctx.inputs[0], ctx.attrs, "ReduceSum")]


@rule("ReduceMean")
def _reduce_mean(ctx):
    x = ctx.inputs[0]
    kept, axes = _keepdims_shape(x, ctx.attrs, "ReduceMean")
    count = int(np.prod([x.shape[a] for a in axes])) if kept is not None else 1
    return [_spread(ctx.grad * (1.0 / max(count, 1)), x, ctx.attrs, "ReduceMean")]


def _reduce_extreme(ctx):
    x, y = ctx.inputs[0], ctx.outputs[0]
    kept, _ = _keepdims_shape(x, ctx.attrs, ctx.op)
    if kept is None:
        return [ctx.grad]
    yk = apply("Reshape", y, shape=kept, allowzero=1) if list(y.shape) != kept else y
    hit = apply("Where", apply("Equal", x, yk), _const(1, x), _const(0, x))  # ties share the gradient evenly
    count = apply("ReduceSum", hit, axes=ctx.attrs["axes"], keepdims=1)
    return [_spread(ctx.grad, x, ctx.attrs, ctx.op) * hit / count]


rule("ReduceMax", "ReduceMin")(_reduce_extreme)


@rule("ReduceL2")
def _reduce_l2(ctx):
    x, y = ctx.inputs[0], ctx.outputs[0]
    kept, _ = _keepdims_shape(x, ctx.attrs, "ReduceL2")
    yk = y if kept is None or list(y.shape) == kept else apply("Reshape", y, shape=kept, allowzero=1)
    return [_spread(ctx.grad, x, ctx.attrs, "ReduceL2") * x / yk]


# -- shape and data movement --------------------------------------------------------------------------


def _back_to_shape(ctx):
    x = ctx.inputs[0]
    return [apply("Reshape", ctx.grad, shape=list(x.shape), allowzero=1)] + [None] * (len(ctx.inputs) - 1)


rule("Reshape", "Flatten", "Squeeze", "Unsqueeze")(_back_to_shape)


@rule("Transpose")
def _transpose(ctx):
    x = ctx.inputs[0]
    perm = ctx.attrs["perm"] or list(range(x.ndim))[::-1]
    return [apply("Transpose", ctx.grad, perm=[int(i) for i in np.argsort(perm)])]


@rule("Concat")
def _concat(ctx):
    axis = ctx.attrs["axis"] % ctx.inputs[0].ndim
    sizes = [v.shape[axis] for v in ctx.inputs]
    if len(sizes) == 1:
        return [ctx.grad]
    return list(apply("Split", ctx.grad, n_outputs=len(sizes), axis=axis, split=sizes))


@rule("Split")
def _split(ctx):
    axis = ctx.attrs["axis"] % ctx.inputs[0].ndim
    parts = [g if g is not None else _const(np.zeros(o.shape), o) for g, o in zip(ctx.grads, ctx.outputs)]
    return [apply("Concat", *parts, axis=axis)]


@rule("Slice")
def _slice(ctx):
    a = ctx.attrs
    return [
        apply(
            "SliceGrad",
            ctx.grad,
            input_shape=list(ctx.inputs[0].shape),
            starts=a["starts"],
            ends=a["ends"],
            axes=a["axes"],
            steps=a["steps"],
        )
    ]


@rule("Gather")
def _gather(ctx):
    data, idx = ctx.inputs
    return [apply("GatherGrad", ctx.grad, idx, axis=ctx.attrs["axis"] % data.ndim, input_shape=list(data.shape)), None]


@rule("Expand")
def _expand(ctx):
    return [sum_to(ctx.grad, ctx.inputs[0].shape)]


@rule("Tile")
def _tile(ctx):
    x, reps = ctx.inputs[0], ctx.attrs["repeats"]
    split = [d for r, s in zip(reps, x.shape) for d in (r, s)]
    g = apply("Reshape", ctx.grad, shape=split, allowzero=1)
    g = apply("ReduceSum", g, axes=list(range(0, 2 * x.ndim, 2)), keepdims=0)
    return [g]


@rule("Pad")
def _pad(ctx):
    if ctx.attrs["mode"] != "constant":
        raise MnnError(f"Pad in {ctx.attrs['mode']!r} mode has no gradient rule; only constant padding")
    return [apply("Pad", ctx.grad, pads=[-p for p in ctx.attrs["pads"]])]


@rule("Cast")
def _cast(ctx):
    x = ctx.inputs[0]
    return [apply("Cast", ctx.grad, to=x.dtype.name) if x.dtype.kind == "f" else None]


# -- ops that imported models bring ----------------------------------------------------------------


@rule("ConvTranspose")
def _conv_transpose(ctx):
    """A transposed convolution is the adjoint of Conv: its input gradient is a Conv, its weight's a ConvGradWeight."""
    from ..ops.convtranspose import conv_transpose_geometry

    x, w = ctx.inputs[:2]
    a = ctx.attrs
    g = activation_grad(ctx.grad, ctx.outputs[0], a["activation"], a["act_alpha"], a["act_beta"], "ConvTranspose")
    geo = conv_transpose_geometry(x.shape, w.shape, a)
    gattrs = dict(strides=geo["strides"], pads=geo["pads"], dilations=geo["dilations"], group=geo["group"])
    dx = apply("Conv", g, w, **gattrs) if ctx.needs(0) else None
    if dx is not None and dx.shape != x.shape:
        raise MnnError(f"ConvTranspose with output_padding {a['output_padding']} >= stride has no gradient rule")
    dw = apply("ConvGradWeight", x, g, kernel_shape=geo["kernel"], **gattrs) if ctx.needs(1) else None
    db = apply("ReduceSum", g, axes=[0, 2, 3], keepdims=0) if ctx.needs(2) else None
    return [dx, dw, db]


@rule("InstanceNormalization")
def _instance_norm(ctx):
    """Each (n, c) plane is a layer norm over its spatial cells: reuse LayerNormGrad on (N*C, H*W)."""
    x, scale, _ = ctx.inputs
    g, eps = ctx.grad, ctx.attrs["epsilon"]
    n, c = x.shape[:2]
    per = [1, c] + [1] * (x.ndim - 2)
    flat = [n * c, -1]
    x2 = apply("Reshape", x, shape=flat)
    ones = _const(np.ones(x2.shape[1:]), x)
    gs = g * apply("Reshape", scale, shape=per)
    dx2, _, _ = apply("LayerNormGrad", apply("Reshape", gs, shape=flat), x2, ones, n_outputs=3, axis=1, epsilon=eps)
    axes = [0] + list(range(2, x.ndim))
    xhat = apply("Reshape", apply("LayerNormalization", x2, axis=1, epsilon=eps), shape=list(x.shape))
    return [
        apply("Reshape", dx2, shape=list(x.shape)),
        apply("ReduceSum", g * xhat, axes=axes, keepdims=0) if ctx.needs(1) else None,
        apply("ReduceSum", g, axes=axes, keepdims=0) if ctx.needs(2) else None,
    ]


@rule("PRelu")
def _prelu(ctx):
    (x, slope), g = ctx.inputs, ctx.grad
    neg = apply("Less", x, _const(0, x))
    zero = _const(0, g)
    return [
        apply("Where", neg, g * slope, g),
        sum_to(apply("Where", neg, g * x, zero), slope.shape) if ctx.needs(1) else None,
    ]


@rule("Elu")
def _elu(ctx):
    x, y, g = ctx.inputs[0], ctx.outputs[0], ctx.grad
    return [apply("Where", apply("Less", x, _const(0, x)), g * (y + ctx.attrs["alpha"]), g)]


@rule("Mish")
def _mish(ctx):
    x = ctx.inputs[0]
    t = apply("Tanh", apply("Softplus", x))
    return [ctx.grad * (t + x * (1 - t * t) * apply("Sigmoid", x))]


rule("Tan")(lambda ctx: [ctx.grad * (1 + ctx.outputs[0] * ctx.outputs[0])])
rule("Sinh")(lambda ctx: [ctx.grad * apply("Cosh", ctx.inputs[0])])
rule("Cosh")(lambda ctx: [ctx.grad * apply("Sinh", ctx.inputs[0])])
rule("Atan")(lambda ctx: [ctx.grad / (1 + ctx.inputs[0] * ctx.inputs[0])])
rule("Asin")(lambda ctx: [ctx.grad / apply("Sqrt", 1 - ctx.inputs[0] * ctx.inputs[0])])
rule("Acos")(lambda ctx: [-ctx.grad / apply("Sqrt", 1 - ctx.inputs[0] * ctx.inputs[0])])
rule("Softsign")(lambda ctx: [ctx.grad / ((1 + apply("Abs", ctx.inputs[0])) * (1 + apply("Abs", ctx.inputs[0])))])
rule("Sign", "Round")(lambda ctx: [None])


@rule("CumSum")
def _cumsum(ctx):
    a = ctx.attrs
    return [apply("CumSum", ctx.grad, axis=a["axis"], exclusive=a["exclusive"], reverse=1 - a["reverse"])]
