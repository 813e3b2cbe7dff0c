"""Matrix products: MatMul (numpy semantics) and Gemm (2-D, transposes, bias)."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import broadcast_shape, rand, same_dtype
from .conv import FUSED_ACTIVATION_ATTRS
from .elementwise import apply_activation
from .schema import Attr, OpSchema, Sample, register


def _matmul_shape(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        raise GraphError("MatMul does not take scalars")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise GraphError(f"MatMul: inner dimensions differ: {a} @ {b}")
    out = broadcast_shape(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _matmul_infer(ins, attrs):
    dtype = same_dtype(ins, "MatMul")
    return [TensorInfo(_matmul_shape(ins[0].shape, ins[1].shape), dtype)]


def _matmul_reference(ins, attrs):
    a, b = ins
    y = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    return [apply_activation(y, attrs["activation"], attrs["act_alpha"], attrs["act_beta"])]


def _matmul_flops(ins, outs, attrs):
    return 2.0 * outs[0].size * ins[0].shape[-1]


def _matmul_samples(rng):
    cases = [
        ((3, 4), (4, 5)),
        ((2, 7, 9), (9, 3)),
        ((2, 1, 5, 6), (3, 6, 2)),
        ((8,), (8, 3)),
        ((4, 8), (8,)),
        ((0, 4), (4, 3)),
    ]
    for a, b in cases:
        yield Sample([rand(rng, *a), rand(rng, *b)], label=f"{a}@{b}")
    yield Sample([rand(rng, 5, 16), rand(rng, 16, 33)], {"activation": "gelu"}, label="fused gelu")


register(
    OpSchema(
        "MatMul",
        infer=_matmul_infer,
        reference=_matmul_reference,
        attrs=dict(FUSED_ACTIVATION_ATTRS),
        n_inputs=(2, 2),
        flops=_matmul_flops,
        samples=_matmul_samples,
        doc="Matrix product with numpy broadcasting semantics, fused activation.",
    )
)


def _gemm_dims(ins, attrs):
    a, b = ins[0].shape, ins[1].shape
    if len(a) != 2 or len(b) != 2:
        raise GraphError(f"Gemm takes 2-D inputs, got {a} and {b}")
    m, k = a[::-1] if attrs["transA"] else a
    k2, n = b[::-1] if attrs["transB"] else b
    if k != k2:
        raise GraphError(
            f"Gemm: inner dimensions differ: {a} (transA={attrs['transA']}) and {b} (transB={attrs['transB']})"
        )
    return m, k, n


def _gemm_infer(ins, attrs):
    m, _, n = _gemm_dims(ins, attrs)
    if len(ins) > 2 and ins[2] is not None:
        broadcast_shape(ins[2].shape, (m, n))
    return [TensorInfo((m, n), same_dtype(ins[:2], "Gemm"))]


def _gemm_reference(ins, attrs):
    a, b = ins[0].astype(np.float64), ins[1].astype(np.float64)
    if attrs["transA"]:
        a = a.T
    if attrs["transB"]:
        b = b.T
    y = attrs["alpha"] * (a @ b)
    if len(ins) > 2 and ins[2] is not None:
        y = y + attrs["beta"] * ins[2]
    y = y.astype(ins[0].dtype)
    return [apply_activation(y, attrs["activation"], attrs["act_alpha"], attrs["act_beta"])]


def _gemm_flops(ins, outs, attrs):
    m, k, n = _gemm_dims(ins, attrs)
    return 2.0 * m * k * n


def _gemm_samples(rng):
    yield Sample([rand(rng, 4, 6), rand(rng, 6, 5), rand(rng, 5)])
    yield Sample([rand(rng, 3, 17), rand(rng, 9, 17), rand(rng, 9)], {"transB": 1, "activation": "relu"})
    yield Sample([rand(rng, 7, 2), rand(rng, 7, 3), rand(rng, 2, 3)], {"transA": 1, "alpha": 0.5, "beta": 2.0})
    yield Sample([rand(rng, 1, 64), rand(rng, 10, 64)], {"transB": 1})
    yield Sample([rand(rng, 0, 8), rand(rng, 8, 3), rand(rng, 3)])


register(
    OpSchema(
        "Gemm",
        infer=_gemm_infer,
        reference=_gemm_reference,
        attrs={
            "alpha": Attr("float", 1.0),
            "beta": Attr("float", 1.0),
            "transA": Attr("int", 0, (0, 1)),
            "transB": Attr("int", 0, (0, 1)),
            **FUSED_ACTIVATION_ATTRS,
        },
        n_inputs=(2, 3),
        flops=_gemm_flops,
        samples=_gemm_samples,
        doc="alpha * A' @ B' + beta * C (' = optional transpose), fused activation.",
    )
)
