"""More math: trigonometry, rounding, extra activations (Elu, Selu, PRelu, ...),
cumulative sums, Einsum, Det, Trilu, EyeLike, Hardmax and LpNormalization."""

from __future__ import annotations

import re

import numpy as np

from ..errors import GraphError
from ..graph.ir import DTYPES, TensorInfo
from ._util import broadcast_shape, info_like, normalize_axis, rand, same_dtype
from .schema import Attr, OpSchema, Sample, register

# -- unary element-wise -----------------------------------------------------------------------------


def _f(fn):
    """Compute in float64 (clearer numerics), return the input's dtype."""
    return lambda x, a: np.asarray(fn(x.astype(np.float64), a)).astype(x.dtype)


_UNARY = {
    # name: (kernel(x, attrs), attrs, input range)
    "Tan": (_f(lambda x, a: np.tan(x)), {}, (-1.2, 1.2)),
    "Asin": (_f(lambda x, a: np.arcsin(x)), {}, (-0.99, 0.99)),
    "Acos": (_f(lambda x, a: np.arccos(x)), {}, (-0.99, 0.99)),
    "Atan": (_f(lambda x, a: np.arctan(x)), {}, (-4, 4)),
    "Sinh": (_f(lambda x, a: np.sinh(x)), {}, (-4, 4)),
    "Cosh": (_f(lambda x, a: np.cosh(x)), {}, (-4, 4)),
    "Asinh": (_f(lambda x, a: np.arcsinh(x)), {}, (-4, 4)),
    "Acosh": (_f(lambda x, a: np.arccosh(x)), {}, (1.0, 5)),
    "Atanh": (_f(lambda x, a: np.arctanh(x)), {}, (-0.99, 0.99)),
    "Round": (lambda x, a: np.round(x), {}, (-5, 5)),  # halves to even, as ONNX says
    "Sign": (lambda x, a: np.sign(x).astype(x.dtype), {}, (-3, 3)),
    "Softsign": (_f(lambda x, a: x / (1 + np.abs(x))), {}, (-4, 4)),
    "Mish": (_f(lambda x, a: x * np.tanh(np.logaddexp(0, x))), {}, (-4, 4)),
    "Elu": (
        _f(lambda x, a: np.where(x < 0, a["alpha"] * np.expm1(np.minimum(x, 0)), x)),
        {"alpha": Attr("float", 1.0)},
        (-4, 4),
    ),
    "Celu": (
        _f(lambda x, a: np.maximum(0, x) + np.minimum(0, a["alpha"] * np.expm1(np.minimum(x, 0) / a["alpha"]))),
        {"alpha": Attr("float", 1.0)},
        (-4, 4),
    ),
    "Selu": (
        _f(lambda x, a: a["gamma"] * np.where(x <= 0, a["alpha"] * np.expm1(np.minimum(x, 0)), x)),
        {"alpha": Attr("float", 1.67326319217681884765625), "gamma": Attr("float", 1.05070102214813232421875)},
        (-4, 4),
    ),
    "ThresholdedRelu": (_f(lambda x, a: np.where(x > a["alpha"], x, 0)), {"alpha": Attr("float", 1.0)}, (-4, 4)),
    "Shrink": (
        _f(lambda x, a: np.where(x < -a["lambd"], x + a["bias"], np.where(x > a["lambd"], x - a["bias"], 0))),
        {"bias": Attr("float", 0.0), "lambd": Attr("float", 0.5)},
        (-4, 4),
    ),
}


def _unary_samples(low, high):
    def samples(rng):
        for shape in [(7,), (2, 3, 5), (1, 8, 5, 5), (0, 4)]:
            yield Sample([rand(rng, *shape, low=low, high=high)], label=str(shape))

    return samples


for _name, (_kernel, _attrs, (_lo, _hi)) in _UNARY.items():
    register(
        OpSchema(
            _name,
            infer=lambda ins, attrs: [ins[0]],
            reference=lambda ins, attrs, k=_kernel: [k(ins[0], attrs)],
            attrs=_attrs,
            samples=_unary_samples(_lo, _hi),
            inplace=True,
            doc=f"Element-wise {_name}.",
        )
    )


def _prelu_infer(ins, attrs):
    shape = broadcast_shape(ins[0].shape, ins[1].shape)
    if shape != tuple(ins[0].shape):
        raise GraphError(f"PRelu: slope {ins[1].shape} must broadcast to the input {ins[0].shape}")
    return [info_like(ins[0], dtype=same_dtype(ins, "PRelu"))]


register(
    OpSchema(
        "PRelu",
        infer=_prelu_infer,
        reference=lambda ins, attrs: [np.where(ins[0] < 0, ins[0] * ins[1], ins[0]).astype(ins[0].dtype)],
        n_inputs=(2, 2),
        inplace=True,
        doc="x if x >= 0 else slope * x, the slope broadcast to x.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 2, 4, 3, 3), rand(rng, 4, 1, 1)]),
                Sample([rand(rng, 5, 6), rand(rng, 6)]),
                Sample([rand(rng, 3, 2), rand(rng, 1)]),
            ]
        ),
    )
)


# -- cumulative ----------------------------------------------------------------------------------


def _cumulative(fn):
    def kernel(ins, attrs):
        x = ins[0]
        axis = normalize_axis(attrs["axis"], x.ndim, "CumSum")
        y = np.flip(x, axis) if attrs["reverse"] else x
        out = fn(y, axis=axis, dtype=x.dtype)
        if attrs["exclusive"]:
            ident = 0 if fn is np.cumsum else 1
            pad = np.full_like(np.take(out, [0], axis=axis), ident)
            out = np.concatenate([pad, np.take(out, range(out.shape[axis] - 1), axis=axis)], axis=axis)
        return [np.flip(out, axis) if attrs["reverse"] else out]

    return kernel


def _cum_samples(rng):
    yield Sample([rand(rng, 5)], {"axis": 0})
    yield Sample([rand(rng, 2, 3, 4)], {"axis": 1, "exclusive": 1})
    yield Sample([rand(rng, 3, 6)], {"axis": -1, "reverse": 1})
    yield Sample([rand(rng, 3, 6)], {"axis": 0, "reverse": 1, "exclusive": 1})


for _name, _fn in {"CumSum": np.cumsum, "CumProd": np.cumprod}.items():
    register(
        OpSchema(
            _name,
            infer=lambda ins, attrs: [ins[0]],
            reference=_cumulative(_fn),
            attrs={"axis": Attr("int", 0), "exclusive": Attr("int", 0, (0, 1)), "reverse": Attr("int", 0, (0, 1))},
            samples=_cum_samples,
            doc=f"{_name} along an axis (optionally exclusive, reversed).",
            value_inputs={1: "axis"},
        )
    )


# -- Einsum -----------------------------------------------------------------------------------------


def _einsum_parse(equation: str, shapes: list[tuple]) -> str:
    eq = equation.replace(" ", "")
    lhs, _, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise GraphError(f"Einsum: equation {equation!r} has {len(terms)} operands, got {len(shapes)} inputs")
    if not re.fullmatch(r"[A-Za-z.,\->]*", eq):
        raise GraphError(f"Einsum: bad equation {equation!r}")
    return eq


def _einsum_infer(ins, attrs):
    eq = _einsum_parse(attrs["equation"], [i.shape for i in ins])
    probes = [np.empty(i.shape, dtype=np.float32) if i.size < 1 << 16 else None for i in ins]
    if any(p is None for p in probes):  # shape only: einsum on zero-stride views
        probes = [np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), i.shape, [0] * len(i.shape)) for i in ins]
    try:
        out = np.einsum(eq, *probes)
    except ValueError as exc:
        raise GraphError(f"Einsum {attrs['equation']!r}: {exc}") from None
    return [TensorInfo(np.shape(out), same_dtype(ins, "Einsum"))]


def _einsum_reference(ins, attrs):
    eq = _einsum_parse(attrs["equation"], [i.shape for i in ins])
    acc = np.float64 if ins[0].dtype.kind == "f" else ins[0].dtype
    return [np.asarray(np.einsum(eq, *[x.astype(acc) for x in ins])).astype(ins[0].dtype)]


register(
    OpSchema(
        "Einsum",
        infer=_einsum_infer,
        reference=_einsum_reference,
        attrs={"equation": Attr("str")},
        n_inputs=(1, 8),
        doc="Einstein summation over the inputs (numpy's einsum rules).",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 3, 4), rand(rng, 4, 5)], {"equation": "ij,jk->ik"}),
                Sample([rand(rng, 2, 3, 4), rand(rng, 2, 4, 5)], {"equation": "bij,bjk->bik"}),
                Sample([rand(rng, 3, 3)], {"equation": "ii"}),
                Sample([rand(rng, 2, 5, 4)], {"equation": "...ij->...ji"}),
                Sample([rand(rng, 4), rand(rng, 4)], {"equation": "i,i"}),
            ]
        ),
    )
)


# -- matrices ----------------------------------------------------------------------------------------


def _det_infer(ins, attrs):
    s = ins[0].shape
    if len(s) < 2 or s[-1] != s[-2]:
        raise GraphError(f"Det takes square matrices [..., M, M], got {s}")
    return [info_like(ins[0], s[:-2])]


register(
    OpSchema(
        "Det",
        infer=_det_infer,
        reference=lambda ins, attrs: [np.asarray(np.linalg.det(ins[0])).astype(ins[0].dtype)],
        doc="Determinant of each square matrix in the last two axes.",
        samples=lambda rng: iter([Sample([rand(rng, 3, 3)]), Sample([rand(rng, 2, 4, 4)])]),
    )
)


def _trilu_infer(ins, attrs):
    if len(ins[0].shape) < 2:
        raise GraphError(f"Trilu takes matrices (rank >= 2), got {ins[0].shape}")
    return [ins[0]]


register(
    OpSchema(
        "Trilu",
        infer=_trilu_infer,
        value_inputs={1: "k"},
        reference=lambda ins, attrs: [(np.triu if attrs["upper"] else np.tril)(ins[0], attrs["k"])],
        attrs={"upper": Attr("int", 1, (0, 1)), "k": Attr("int", 0, doc="diagonal offset")},
        doc="Keep the upper (or lower) triangle of each matrix, from diagonal k.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 4, 5)]),
                Sample([rand(rng, 2, 3, 5)], {"upper": 0, "k": 1}),
                Sample([rand(rng, 3, 4)], {"k": -1}),
                Sample([rand(rng, 0, 5)], {"upper": 0}),
            ]
        ),
    )
)


def _eyelike_infer(ins, attrs):
    if len(ins[0].shape) != 2:
        raise GraphError(f"EyeLike takes a 2-D input, got {ins[0].shape}")
    return [info_like(ins[0], dtype=attrs["dtype"] or ins[0].dtype)]


register(
    OpSchema(
        "EyeLike",
        infer=_eyelike_infer,
        reference=lambda ins, attrs: [np.eye(*ins[0].shape, k=attrs["k"], dtype=attrs["dtype"] or ins[0].dtype)],
        attrs={"dtype": Attr("str", "", ("",) + DTYPES, "output dtype; empty: the input's"), "k": Attr("int", 0)},
        doc="An identity matrix of the input's shape (ones on diagonal k).",
        samples=lambda rng: iter([Sample([rand(rng, 4, 5)]), Sample([rand(rng, 3, 3)], {"k": 1, "dtype": "int32"})]),
    )
)


# -- normalizing ---------------------------------------------------------------------------------------


def _hardmax(ins, attrs):
    x = ins[0]
    axis = normalize_axis(attrs["axis"], x.ndim, "Hardmax")
    idx = np.expand_dims(np.argmax(x, axis=axis), axis)
    out = np.zeros_like(x)
    np.put_along_axis(out, idx, 1, axis=axis)
    return [out]


register(
    OpSchema(
        "Hardmax",
        infer=lambda ins, attrs: [ins[0]],
        reference=_hardmax,
        attrs={"axis": Attr("int", -1)},
        doc="1 at the (first) largest element along an axis, 0 elsewhere.",
        samples=lambda rng: iter([Sample([rand(rng, 3, 4)]), Sample([rand(rng, 2, 3, 4)], {"axis": 1})]),
    )
)


def _lp_norm(ins, attrs):
    x = ins[0].astype(np.float64)
    axis = normalize_axis(attrs["axis"], x.ndim, "LpNormalization")
    if attrs["p"] == 1:
        norm = np.sum(np.abs(x), axis=axis, keepdims=True)
    else:
        norm = np.sqrt(np.sum(x * x, axis=axis, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        return [np.where(norm == 0, 0, x / norm).astype(ins[0].dtype)]


register(
    OpSchema(
        "LpNormalization",
        infer=lambda ins, attrs: [ins[0]],
        reference=_lp_norm,
        attrs={"axis": Attr("int", -1), "p": Attr("int", 2, (1, 2))},
        doc="x divided by its L1 or L2 norm along an axis.",
        samples=lambda rng: iter([Sample([rand(rng, 3, 4)]), Sample([rand(rng, 2, 3, 4)], {"axis": 1, "p": 1})]),
    )
)
