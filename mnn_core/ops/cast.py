"""Cast: conversion to another dtype with ONNX's semantics, the low-precision formats included (lowp.py)."""

from __future__ import annotations

import numpy as np

from ..graph.ir import DTYPES, low_precision_dtypes
from . import lowp
from ._util import info_like, rand
from .schema import Attr, OpSchema, Sample, register


def _cast_samples(rng):
    floats = rand(rng, 3, 5, low=-100, high=100)
    floats[0, :2] = 0.0
    cases = [
        (floats, "int32"),
        (floats, "float16"),
        (floats, "bool"),
        (floats, "int64"),
        (np.abs(floats), "uint8"),
        (rng.integers(-300, 300, size=(4, 4)).astype("int32"), "int8"),
        (rng.integers(-9, 9, size=(6,)).astype("int64"), "float32"),
        (rng.random((2, 3)) > 0.5, "float32"),
        (rng.integers(0, 255, size=(5,)).astype("uint8"), "int64"),
        (floats.astype("float16"), "float32"),
        (rand(rng, 0, 3), "int64"),
        (floats, "float32"),
    ]
    if low_precision_dtypes():  # low-precision targets and sources (rounding, saturation)
        cases += [
            (floats, "bfloat16"),
            (floats, "float8_e4m3fn"),
            (floats * 1e3, "float8_e5m2"),
            (rand(rng, 7, low=-9, high=9), "int4"),
            (floats.astype("bfloat16"), "float32"),
            (np.abs(floats) + 0.01, "float8_e8m0fnu"),
        ]
    for x, to in cases:
        yield Sample([x], {"to": to}, label=f"{x.dtype} -> {to} {x.shape}")


register(
    OpSchema(
        "Cast",
        infer=lambda ins, attrs: [info_like(ins[0], dtype=attrs["to"])],
        reference=lambda ins, attrs: [lowp.cast(ins[0], attrs["to"], bool(attrs["saturate"]), attrs["round_mode"])],
        attrs={
            "to": Attr("str", choices=DTYPES, doc="target dtype"),
            "saturate": Attr(
                "int",
                1,
                (0, 1),
                "float8/float4 targets: out-of-range values become the largest finite value (1) or NaN/inf (0)",
            ),
            "round_mode": Attr("str", "up", lowp.ROUND_MODES, "float8_e8m0fnu targets: how to round to a power of two"),
        },
        samples=_cast_samples,
        doc="Convert to the dtype `to` (floats to ints truncate toward zero; nonzero is True; float8 and "
        "bfloat16 round to nearest even).",
    )
)
