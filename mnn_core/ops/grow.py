"""Ops that make a tensor larger by repeating or padding it: Pad, Expand (broadcast to a shape) and Tile."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.symbolic import is_sym
from ._util import broadcast_shape, info_like, rand
from .schema import Attr, OpSchema, Sample, register

# -- Pad ---------------------------------------------------------------------------------


def _pad_widths(shape, attrs):
    pads, mode, rank = attrs["pads"], attrs["mode"], len(shape)
    if len(pads) != 2 * rank:
        raise GraphError(f"Pad: pads must have 2 x rank = {2 * rank} values for {shape}, got {pads}")
    begin, end = pads[:rank], pads[rank:]
    out = tuple(d + b + e for d, b, e in zip(shape, begin, end))
    if any(not is_sym(o) and o < 0 for o in out):
        raise GraphError(f"Pad: pads {pads} crop more than {shape} holds")
    for axis, (d, b, e) in enumerate(zip(shape, begin, end)):
        if is_sym(d):
            continue  # checked at resize
        grow = max(b, 0), max(e, 0)  # negative pads crop after the padding
        if mode == "reflect" and max(grow) > d - 1:
            raise GraphError(f"Pad: reflect pads {grow} on axis {axis} must be smaller than its size {d}")
        if mode in ("edge", "wrap") and max(grow) > 0 and (d == 0 or mode == "wrap" and max(grow) > d):
            raise GraphError(f"Pad: {mode} pads {grow} on axis {axis} need more than its {d} element(s)")
    return begin, end, out


def _pad_infer(ins, attrs):
    return [info_like(ins[0], _pad_widths(ins[0].shape, attrs)[2])]


def _pad_reference(ins, attrs):
    x = ins[0]
    begin, end, _ = _pad_widths(x.shape, attrs)
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    if attrs["mode"] == "constant":
        y = np.pad(x, widths, constant_values=np.array(attrs["value"]).astype(x.dtype))
    else:
        y = np.pad(x, widths, mode=attrs["mode"])
    crop = tuple(slice(max(-b, 0), n - max(-e, 0)) for n, b, e in zip(y.shape, begin, end))
    return [np.ascontiguousarray(y[crop])]


def _pad_samples(rng):
    cases = [
        ((3, 4), {"pads": [1, 2, 0, 1], "value": 1.5}),
        ((2, 3, 4, 5), {"pads": [0, 0, 1, 2, 0, 0, 2, 1], "mode": "reflect"}),
        ((2, 3, 4, 5), {"pads": [0, 1, 3, 0, 0, 0, 1, 4], "mode": "edge"}),
        ((3, 5), {"pads": [2, 1, 1, 3], "mode": "wrap"}),
        ((4, 6), {"pads": [0, -1, 1, 2]}),
        ((1, 3), {"pads": [1, 0, -2, 0], "value": -1.0}),
        ((0, 3), {"pads": [0, 1, 0, 1]}),
        ((7,), {"pads": [3, 0], "mode": "reflect"}),
    ]
    for shape, attrs in cases:
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")
    ints = rng.integers(-5, 5, size=(2, 3)).astype("int64")
    yield Sample([ints], {"pads": [1, 1, 1, 1], "value": 7.0}, label="int64")


register(
    OpSchema(
        "Pad",
        value_inputs={1: "pads", 2: "value"},
        infer=_pad_infer,
        reference=_pad_reference,
        attrs={
            "pads": Attr("ints", doc="[x1_begin, x2_begin, ..., x1_end, x2_end, ...]; negative crops"),
            "mode": Attr("str", "constant", ("constant", "reflect", "edge", "wrap")),
            "value": Attr("float", 0.0, doc="fill value of constant mode"),
        },
        samples=_pad_samples,
        doc="Pad (or crop, with negative pads) every axis: constant, reflect, edge or wrap.",
    )
)


# -- Expand / Tile -------------------------------------------------------------------------


def _expand_shape(shape, attrs):
    if min(attrs["shape"], default=0) < 0:
        raise GraphError(f"Expand: shape {attrs['shape']} has a negative dim")
    return broadcast_shape(shape, tuple(attrs["shape"]))


def _expand_samples(rng):
    for shape, target in [
        ((3, 1), [2, 1, 6]),
        ((1,), [4]),
        ((2, 3), [1, 1]),
        ((4, 1, 5), [4, 3, 1]),
        ((0, 1), [0, 3]),
        ((), [2, 2]),
    ]:
        yield Sample([rand(rng, *shape)], {"shape": target}, label=f"{shape} -> {target}")


register(
    OpSchema(
        "Expand",
        value_inputs={1: "shape"},
        infer=lambda ins, attrs: [info_like(ins[0], _expand_shape(ins[0].shape, attrs))],
        reference=lambda ins, attrs: [np.broadcast_to(ins[0], _expand_shape(ins[0].shape, attrs)).copy()],
        attrs={"shape": Attr("ints", doc="broadcast (both ways) with the input's shape")},
        samples=_expand_samples,
        doc="Broadcast the input to `shape` (numpy rules, in both directions).",
    )
)


def _tile_infer(ins, attrs):
    shape, reps = ins[0].shape, attrs["repeats"]
    if len(reps) != len(shape) or min(reps, default=0) < 0:
        raise GraphError(f"Tile: repeats {reps} must be {len(shape)} non-negative ints for {shape}")
    return [info_like(ins[0], tuple(d * r for d, r in zip(shape, reps)))]


def _tile_samples(rng):
    for shape, reps in [((2, 3), [2, 2]), ((3,), [4]), ((2, 1, 3), [1, 3, 0]), ((1, 4), [3, 1])]:
        yield Sample([rand(rng, *shape)], {"repeats": reps}, label=f"{shape} x {reps}")
    yield Sample([rng.integers(0, 9, size=(2, 2)).astype("int32")], {"repeats": [2, 3]}, label="int32")


register(
    OpSchema(
        "Tile",
        value_inputs={1: "repeats"},
        infer=_tile_infer,
        reference=lambda ins, attrs: [np.tile(ins[0], attrs["repeats"])],
        attrs={"repeats": Attr("ints", doc="copies along each axis")},
        samples=_tile_samples,
        doc="Repeat the input `repeats[i]` times along each axis i.",
    )
)
