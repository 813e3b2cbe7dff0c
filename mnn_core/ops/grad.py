"""Backward ops of element-wise and shape families: what training graphs run.

The gradient rules (mnn_core/express/grad_rules.py) turn a forward op into
these ops, so a backward pass is an ordinary graph: a backend claims
`ReluGrad` or `SumToShape` exactly as it claims `Relu`. Naming: `<Op>Grad`
takes the gradient of the forward output first, then what the derivative
needs (the forward output `y` where that suffices, else the input `x`).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import normalize_axis, rand, same_dtype
from .elementwise import _erf, sigmoid
from .schema import Attr, OpSchema, Sample, register

# -- activations: dx = dy * f'(.) ----------------------------------------------------


def _gelu_prime(x):
    c = np.asarray(1.0 / math.sqrt(2.0), x.dtype)
    pdf = np.exp(-0.5 * x * x) / np.asarray(math.sqrt(2.0 * math.pi), x.dtype)
    return 0.5 * (1.0 + _erf(x * c)) + x * pdf


def _silu_prime(x):
    s = sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


#: op -> (derivative from the second input, which input that is, attributes)
_ACTIVATION_GRADS = {
    "ReluGrad": (lambda y, a: y > 0, "y", {}),
    "ClipGrad": (
        lambda y, a: (y > a["min"]) & (y < a["max"]),
        "y",
        {"min": Attr("float", -math.inf), "max": Attr("float", math.inf)},
    ),
    "LeakyReluGrad": (lambda x, a: np.where(x >= 0, 1.0, a["alpha"]), "x", {"alpha": Attr("float", 0.01)}),
    "SigmoidGrad": (lambda y, a: y * (1.0 - y), "y", {}),
    "TanhGrad": (lambda y, a: 1.0 - y * y, "y", {}),
    "GeluGrad": (lambda x, a: _gelu_prime(x), "x", {}),
    "SiluGrad": (lambda x, a: _silu_prime(x), "x", {}),
    "HardSigmoidGrad": (
        lambda x, a: ((x * a["alpha"] + a["beta"] > 0) & (x * a["alpha"] + a["beta"] < 1)) * a["alpha"],
        "x",
        {"alpha": Attr("float", 0.2), "beta": Attr("float", 0.5)},
    ),
    "HardSwishGrad": (lambda x, a: np.where(x < -3, 0.0, np.where(x > 3, 1.0, x / 3.0 + 0.5)), "x", {}),
}


def _same_infer(op):
    def infer(ins, attrs):
        if ins[0].shape != ins[1].shape:
            raise GraphError(f"{op}: gradient {ins[0]} and forward value {ins[1]} differ in shape")
        return [TensorInfo(ins[0].shape, same_dtype(ins, op))]

    return infer


def _activation_grad_kernel(fn):
    def kernel(ins, attrs):
        dy, v = ins
        return [(dy * fn(v, attrs)).astype(dy.dtype, copy=False)]

    return kernel


def _activation_grad_samples(op):
    def samples(rng):
        for shape in [(7,), (2, 3, 5), (1, 8, 6, 6)]:
            v = rand(rng, *shape, low=-4, high=4)
            if op == "ReluGrad":
                v = np.maximum(v, 0)
            elif op == "ClipGrad":
                v = np.clip(v, 0, 2)
            elif op in ("SigmoidGrad", "TanhGrad"):
                v = np.tanh(v)
            attrs = {"min": 0.0, "max": 2.0} if op == "ClipGrad" else {}
            yield Sample([rand(rng, *shape), v], attrs, label=str(shape))

    return samples


for _name, (_fn, _which, _attrs) in _ACTIVATION_GRADS.items():
    register(
        OpSchema(
            _name,
            infer=_same_infer(_name),
            reference=_activation_grad_kernel(_fn),
            attrs=_attrs,
            n_inputs=(2, 2),
            samples=_activation_grad_samples(_name),
            inplace=True,
            doc=f"Backward of {_name[:-4]}: (dy, {_which}) -> dx = dy * f'({_which}).",
        )
    )

# -- broadcasting: the adjoint of numpy broadcasting is a sum ----------------------------


def sum_to_shape(x: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum `x` over the axes numpy broadcasting added or stretched to reach x.shape."""
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1)
    out = x.sum(axis=axes, keepdims=True) if axes else x
    return out.reshape(shape)


def _sum_to_infer(ins, attrs):
    shape = tuple(attrs["shape"])
    src = ins[0].shape
    if len(shape) > len(src) or any(d not in (1, s) for d, s in zip(shape[::-1], src[::-1])):
        raise GraphError(f"SumToShape: {src} does not broadcast from {shape}")
    return [TensorInfo(shape, ins[0].dtype)]


def _sum_to_samples(rng):
    for src, dst in [((3, 5), (5,)), ((2, 3, 7), (3, 1)), ((4, 1, 6), (1, 1, 1)), ((6,), ()), ((2, 4), (2, 4))]:
        yield Sample([rand(rng, *src)], {"shape": list(dst)}, label=f"{src}->{dst}")


register(
    OpSchema(
        "SumToShape",
        infer=_sum_to_infer,
        reference=lambda ins, attrs: [sum_to_shape(ins[0], attrs["shape"])],
        attrs={"shape": Attr("ints", doc="the shape x was broadcast from")},
        samples=_sum_to_samples,
        doc="Backward of broadcasting: sum x down to `shape` (the gradient of an operand that was broadcast).",
    )
)

# -- softmax family ---------------------------------------------------------------------


def _softmax_grad(ins, attrs):
    dy, y = ins
    axis = normalize_axis(attrs["axis"], y.ndim, "SoftmaxGrad")
    return [(y * (dy - (dy * y).sum(axis=axis, keepdims=True))).astype(dy.dtype, copy=False)]


def _log_softmax_grad(ins, attrs):
    dy, y = ins
    axis = normalize_axis(attrs["axis"], y.ndim, "LogSoftmaxGrad")
    return [(dy - np.exp(y) * dy.sum(axis=axis, keepdims=True)).astype(dy.dtype, copy=False)]


def _softmax_grad_samples(log: bool):
    def samples(rng):
        for shape, axis in [((4, 10), -1), ((2, 3, 5), 1), ((3, 7), 0)]:
            x = rand(rng, *shape, low=-3, high=3)
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            y = e / e.sum(axis=axis, keepdims=True)
            yield Sample([rand(rng, *shape), np.log(y) if log else y], {"axis": axis}, label=f"{shape} axis {axis}")

    return samples


for _name, _kernel, _log in [("SoftmaxGrad", _softmax_grad, False), ("LogSoftmaxGrad", _log_softmax_grad, True)]:
    register(
        OpSchema(
            _name,
            infer=_same_infer(_name),
            reference=_kernel,
            attrs={"axis": Attr("int", -1)},
            n_inputs=(2, 2),
            samples=_softmax_grad_samples(_log),
            doc=f"Backward of {_name[:-4]} along `axis`, from dy and the forward output y.",
        )
    )

# -- gather: the adjoint of indexing is a scatter-add -------------------------------------


def _gather_grad_infer(ins, attrs):
    shape = tuple(attrs["input_shape"])
    axis = normalize_axis(attrs["axis"], len(shape), "GatherGrad")
    want = shape[:axis] + ins[1].shape + shape[axis + 1 :]
    if ins[0].shape != want:
        raise GraphError(f"GatherGrad: dy has shape {ins[0].shape}, gathering {ins[1].shape} gives {want}")
    return [TensorInfo(shape, ins[0].dtype)]


def _gather_grad(ins, attrs):
    dy, idx = ins
    shape = tuple(attrs["input_shape"])
    axis = normalize_axis(attrs["axis"], len(shape), "GatherGrad")
    idx = np.where(idx < 0, idx + shape[axis], idx).astype(np.int64)
    out = np.zeros(shape, dtype=dy.dtype)
    moved = np.moveaxis(out, axis, 0)  # a view: scatter along axis 0 of it
    rest = shape[:axis] + shape[axis + 1 :]
    d = np.moveaxis(dy.reshape(shape[:axis] + (idx.size,) + shape[axis + 1 :]), axis, 0)
    np.add.at(moved, idx.reshape(-1), d.reshape((idx.size,) + rest))
    return [out]


def _gather_grad_samples(rng):
    for shape, idx_shape, axis in [((10, 4), (6,), 0), ((3, 7, 2), (2, 3), 1), ((5,), (), 0)]:
        idx = rng.integers(-shape[axis], shape[axis], size=idx_shape).astype(np.int64)
        dy = rand(rng, *(shape[:axis] + idx_shape + shape[axis + 1 :]))
        yield Sample([dy, idx], {"axis": axis, "input_shape": list(shape)}, label=f"{shape}[{idx_shape}] axis {axis}")


register(
    OpSchema(
        "GatherGrad",
        infer=_gather_grad_infer,
        reference=_gather_grad,
        attrs={"axis": Attr("int", 0), "input_shape": Attr("ints")},
        n_inputs=(2, 2),
        samples=_gather_grad_samples,
        doc="Backward of Gather: scatter-add dy into zeros of `input_shape` at the gathered indices.",
    )
)

# -- slice: the adjoint of taking a window is writing it into zeros -----------------------


def _slice_grad_infer(ins, attrs):
    from .shape import slice_plan

    shape = tuple(attrs["input_shape"])
    want = slice_plan(shape, attrs)[1]
    if ins[0].shape != want:
        raise GraphError(f"SliceGrad: dy has shape {ins[0].shape}, the slice of {shape} has {want}")
    return [TensorInfo(shape, ins[0].dtype)]


def _slice_grad(ins, attrs):
    from .shape import slice_plan

    shape = tuple(attrs["input_shape"])
    slices, out_shape = slice_plan(shape, attrs)
    dx = np.zeros(shape, dtype=ins[0].dtype)
    dx[slices] = ins[0].reshape(out_shape)
    return [dx]


def _slice_grad_samples(rng):
    cases = [
        ((10,), {"starts": [2], "ends": [8]}),
        ((5, 6), {"starts": [1, -4], "ends": [4, 100], "axes": [0, 1]}),
        ((6, 7, 8), {"starts": [7, 5], "ends": [0, 0], "axes": [-1, 0], "steps": [-2, -2]}),
        ((4, 5), {"starts": [0], "ends": [-1], "axes": [1], "steps": [3]}),
    ]
    from .shape import slice_plan

    for shape, attrs in cases:
        full = {"axes": [], "steps": [], **attrs}
        dy = rand(rng, *slice_plan(shape, full)[1])
        yield Sample([dy], {**attrs, "input_shape": list(shape)}, label=f"{shape} {attrs}")


register(
    OpSchema(
        "SliceGrad",
        infer=_slice_grad_infer,
        reference=_slice_grad,
        attrs={
            "input_shape": Attr("ints"),
            "starts": Attr("ints"),
            "ends": Attr("ints"),
            "axes": Attr("ints", []),
            "steps": Attr("ints", []),
        },
        samples=_slice_grad_samples,
        doc="Backward of Slice: dy written into zeros of `input_shape` at the sliced positions.",
    )
)
