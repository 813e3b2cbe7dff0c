"""Element-wise ops: broadcasting binary arithmetic, unary math and activations."""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from ._util import broadcast_shape, info_like, rand, same_dtype
from .schema import Attr, OpSchema, Sample, register

# -- binary, with numpy broadcasting ---------------------------------------------

_BINARY = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": None,  # integer division truncates toward zero, as in C and ONNX
    "Pow": np.power,
    "Max": np.maximum,
    "Min": np.minimum,
}

_COMPARE = {
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
}


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return (np.trunc(a / b)).astype(a.dtype)
    return np.divide(a, b)


def _binary_infer(op):
    def infer(ins, attrs):
        return [info_like(ins[0], broadcast_shape(ins[0].shape, ins[1].shape), same_dtype(ins, op))]

    return infer


def _compare_infer(op):
    def infer(ins, attrs):
        same_dtype(ins, op)
        return [info_like(ins[0], broadcast_shape(ins[0].shape, ins[1].shape), "bool")]

    return infer


_BROADCAST_CASES = [((3, 5), (3, 5)), ((2, 3, 7), (7,)), ((1, 4, 1), (3, 1, 6)), ((0, 3), (3,)), ((17,), ())]


def _binary_samples(op):
    def samples(rng):
        for a, b in _BROADCAST_CASES:
            if op == "Pow":
                yield Sample([rand(rng, *a, low=0.5, high=2.0), rand(rng, *b, low=-2, high=2)], label=f"{a}^{b}")
            elif op == "Div":
                y = rand(rng, *b, low=0.5, high=2.0) * rng.choice([-1, 1], size=b).astype("float32")
                yield Sample([rand(rng, *a), y], label=f"{a}/{b}")
            else:
                yield Sample([rand(rng, *a), rand(rng, *b)], label=f"{a},{b}")

    return samples


def _binary_kernel(fn):
    return lambda ins, attrs: [np.asarray(fn(ins[0], ins[1])).astype(ins[0].dtype, copy=False)]


for _name, _fn in _BINARY.items():
    register(
        OpSchema(
            _name,
            infer=_binary_infer(_name),
            reference=_binary_kernel(_fn or _div),
            n_inputs=(2, 2),
            samples=_binary_samples(_name),
            doc=f"Element-wise {_name} with numpy broadcasting.",
        )
    )

for _name, _fn in _COMPARE.items():
    register(
        OpSchema(
            _name,
            infer=_compare_infer(_name),
            reference=lambda ins, attrs, fn=_fn: [np.asarray(fn(ins[0], ins[1]))],
            n_inputs=(2, 2),
            samples=_binary_samples(_name),
            doc=f"Element-wise comparison {_name} (bool output) with broadcasting.",
        )
    )


def _where_infer(ins, attrs):
    shape = broadcast_shape(ins[0].shape, ins[1].shape, ins[2].shape)
    return [info_like(ins[1], shape, same_dtype(ins[1:], "Where"))]


def _where_samples(rng):
    for shape in [(4, 5), (2, 1, 3)]:
        yield Sample([rng.random(shape) > 0.5, rand(rng, *shape), rand(rng, shape[-1])])


register(
    OpSchema(
        "Where",
        infer=_where_infer,
        reference=lambda ins, attrs: [np.where(ins[0], ins[1], ins[2])],
        n_inputs=(3, 3),
        samples=_where_samples,
        doc="Select from the second or third input by a bool condition, with broadcasting.",
    )
)

# -- unary math and activations --------------------------------------------------
# Activation functions are also the vocabulary of fusion: a Conv, Gemm or
# MatMul may carry `activation` = one of ACTIVATIONS, applied to its output.


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


def gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))).astype(x.dtype)


def sigmoid(x: np.ndarray) -> np.ndarray:
    # split by sign so exp never overflows
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def clip_bounds(lo, hi, dtype) -> tuple:
    """Clip's bounds as ONNX defines them: a NaN bound is no bound (None; max(x, NaN) keeps x in ONNX
    Runtime), and an infinite one, the default of an absent bound, is the dtype's finite extreme."""

    def bound(v, extreme):
        if isinstance(v, (float, np.floating)) and math.isnan(v):
            return None
        if isinstance(v, (float, np.floating)) and math.isinf(v) and np.issubdtype(dtype, np.floating):
            return extreme
        return v

    if not np.issubdtype(dtype, np.floating):
        return bound(lo, None), bound(hi, None)
    info = np.finfo(dtype)
    return bound(lo, info.min), bound(hi, info.max)


def apply_activation(x: np.ndarray, kind: str, alpha: float = 0.0, beta: float = 0.0) -> np.ndarray:
    """The fused-activation vocabulary, shared by the reference kernels."""
    if kind == "none":
        return x
    if kind == "relu":
        return np.maximum(x, 0).astype(x.dtype)
    if kind == "clip":
        lo, hi = clip_bounds(alpha, beta, x.dtype)
        return x.copy() if lo is None and hi is None else np.clip(x, lo, hi).astype(x.dtype)
    if kind == "leaky_relu":
        return np.where(x >= 0, x, x * np.float32(alpha)).astype(x.dtype)
    if kind == "sigmoid":
        return sigmoid(x)
    if kind == "silu":
        return (x * sigmoid(x)).astype(x.dtype)
    if kind == "gelu":
        return gelu(x)
    if kind == "tanh":
        return np.tanh(x)
    if kind == "hard_sigmoid":
        return np.clip(x * np.float32(alpha) + np.float32(beta), 0, 1).astype(x.dtype)
    if kind == "hard_swish":
        return (x * np.clip(x / 6.0 + 0.5, 0, 1)).astype(x.dtype)
    raise ValueError(f"unknown activation {kind!r}")


ACTIVATIONS = ("none", "relu", "clip", "leaky_relu", "sigmoid", "silu", "gelu", "tanh", "hard_sigmoid", "hard_swish")

#: op name -> (activation kind, attrs giving alpha/beta or constant defaults)
ACTIVATION_OPS = {
    "Relu": ("relu", {}),
    "Clip": ("clip", {"alpha": "min", "beta": "max"}),
    "LeakyRelu": ("leaky_relu", {"alpha": "alpha"}),
    "Sigmoid": ("sigmoid", {}),
    "Silu": ("silu", {}),
    "Gelu": ("gelu", {}),
    "Tanh": ("tanh", {}),
    "HardSigmoid": ("hard_sigmoid", {"alpha": "alpha", "beta": "beta"}),
    "HardSwish": ("hard_swish", {}),
}

_UNARY_MATH = {
    "Exp": np.exp,
    "Log": np.log,
    "Sqrt": np.sqrt,
    "Neg": np.negative,
    "Abs": np.abs,
    "Reciprocal": np.reciprocal,
    "Erf": _erf,
    "Floor": np.floor,
    "Ceil": np.ceil,
    "Sin": np.sin,
    "Cos": np.cos,
    "Softplus": lambda x: np.logaddexp(np.float32(0), x).astype(x.dtype),
    "Identity": lambda x: x.copy(),
}

_POSITIVE_DOMAIN = {"Log", "Sqrt", "Reciprocal"}

_ACTIVATION_ATTRS = {
    "Clip": {"min": Attr("number", -math.inf), "max": Attr("number", math.inf)},
    "LeakyRelu": {"alpha": Attr("float", 0.01)},
    "HardSigmoid": {"alpha": Attr("float", 0.2), "beta": Attr("float", 0.5)},
}


def _unary_samples(op):
    def samples(rng):
        lo, hi = (0.1, 4.0) if op in _POSITIVE_DOMAIN else (-4.0, 4.0)
        for shape in [(7,), (2, 3, 5), (1, 16, 9, 9), (0, 4)]:
            attrs = {"min": 0.0, "max": 6.0} if op == "Clip" else {}
            yield Sample([rand(rng, *shape, low=lo, high=hi)], attrs, label=str(shape))

    return samples


def _unary_infer(ins, attrs):
    return [ins[0]]


def _identity(ins, attrs):
    """A copy; a sequence (list) or an empty optional (None) passes through as ONNX's Identity allows."""
    x = ins[0]
    if x is None or isinstance(x, list):
        return [None if x is None else list(x)]
    return [np.array(x, copy=True)]


def _bind_clip(attrs: dict, values: dict) -> dict:
    """Clip's min and max inputs as attributes; integer bounds stay ints, exact past 2**53."""
    for name, value in values.items():
        v = np.asarray(value).reshape(-1)
        if v.size != 1:
            raise GraphError(f"Clip's {name} must be one value, got {v.size}")
        attrs[name] = int(v[0]) if v.dtype.kind in "iub" else float(v[0])
    return attrs


def _activation_kernel(op):
    kind, params = ACTIVATION_OPS[op]

    def kernel(ins, attrs):
        values = {k: attrs[v] for k, v in params.items()}
        return [apply_activation(ins[0], kind, **values)]

    return kernel


for _name in ACTIVATION_OPS:
    register(
        OpSchema(
            _name,
            infer=_unary_infer,
            reference=_activation_kernel(_name),
            attrs=_ACTIVATION_ATTRS.get(_name, {}),
            samples=_unary_samples(_name),
            inplace=True,
            doc=f"Activation {_name}, applied element-wise.",
            value_inputs={1: "min", 2: "max"} if _name == "Clip" else {},
            bind=_bind_clip if _name == "Clip" else None,
        )
    )

for _name, _fn in _UNARY_MATH.items():
    register(
        OpSchema(
            _name,
            infer=_unary_infer,
            reference=_identity
            if _name == "Identity"
            else lambda ins, attrs, fn=_fn: [np.asarray(fn(ins[0])).astype(ins[0].dtype, copy=False)],
            samples=_unary_samples(_name),
            inplace=_name != "Identity",
            doc=f"Element-wise {_name}.",
        )
    )
