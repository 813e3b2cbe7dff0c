"""Pooling over (N, C, D1, ..., Dk) input, any number of spatial axes as ONNX allows: MaxPool (and
MaxPoolWithIndices, its form with ONNX's Indices output), AveragePool and the global forms."""

from __future__ import annotations

import numpy as np

from ..backend.kit.geometry import pool_geometry
from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

_FLOAT = ("float32", "float16")

POOL_ATTRS = {
    "kernel_shape": Attr("ints", doc="one size per spatial axis"),
    "strides": Attr("ints", [], doc="default 1 per spatial axis"),
    "pads": Attr("ints", [], doc="begins then ends of the spatial axes (2-D: top, left, bottom, right); default 0"),
    "dilations": Attr("ints", [], doc="default 1 per spatial axis"),
    "ceil_mode": Attr("int", 0, (0, 1), "round the output size up instead of down"),
    "auto_pad": Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
}


def _windows(x, geo, fill, pad_fill=None):
    """Every pooling window: an (N, C, *out, *kernel) view of the padded input."""
    k = x.ndim - 2
    pads = geo["pads"]
    pad_fill = fill if pad_fill is None else pad_fill
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + k]) for i in range(k)], constant_values=pad_fill)
    xp = np.pad(xp, [(0, 0), (0, 0)] + [(0, e) for e in geo["extra"]], constant_values=fill)
    win = np.lib.stride_tricks.sliding_window_view(xp, tuple(geo["eff"]), axis=tuple(range(2, 2 + k)))
    starts = tuple(slice(0, o * s, s) for o, s in zip(geo["out"][2:], geo["strides"]))
    taps = tuple(slice(None, None, d) for d in geo["dilations"])
    return win[(slice(None), slice(None)) + starts + taps]


def _window_axes(x) -> tuple:
    return tuple(range(-(x.ndim - 2), 0))


def _pool_infer(op, dtypes):
    def infer(ins, attrs):
        x = ins[0]
        if x.dtype not in dtypes:
            raise GraphError(f"{op} takes {', '.join(dtypes)} input, got {x.dtype}")
        return [TensorInfo(pool_geometry(x.shape, attrs, op)["out"], x.dtype)]

    return infer


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _maxpool_reference(ins, attrs):
    x = ins[0]
    geo = pool_geometry(x.shape, attrs, "MaxPool")
    return [_windows(x, geo, _lowest(x.dtype)).max(axis=_window_axes(x)).astype(x.dtype)]


def _maxpool_indices_reference(ins, attrs):
    """Y and ONNX's Indices: where each window's first maximum (scanning the window row-major, as
    onnxruntime does) lies in the flattened input, its spatial part row-major (storage_order 0) or
    column-major (1). Padding never wins: the windows are scanned in float64 with -inf pads."""
    x = ins[0]
    geo = pool_geometry(x.shape, attrs, "MaxPoolWithIndices")
    spatial, taps = x.shape[2:], int(np.prod(geo["kernel"]))
    cells = np.arange(int(np.prod(spatial)), dtype=np.int64)
    cells = cells.reshape(spatial) if attrs["storage_order"] == 0 else cells.reshape(spatial[::-1]).transpose()
    win = _windows(x.astype(np.float64), geo, -np.inf)
    win = win.reshape(win.shape[: x.ndim] + (taps,))
    best = win.argmax(axis=-1)[..., None]
    where = _windows(cells.reshape((1, 1) + spatial), geo, -1)
    where = np.take_along_axis(where.reshape(where.shape[: x.ndim] + (taps,)), best, axis=-1)[..., 0]
    planes = np.arange(x.shape[0] * x.shape[1], dtype=np.int64).reshape(x.shape[:2] + (1,) * len(spatial))
    y = np.take_along_axis(win, best, axis=-1)[..., 0].astype(x.dtype)
    return [y, where + planes * cells.size]


def _avgpool_reference(ins, attrs):
    x = ins[0]
    geo = pool_geometry(x.shape, attrs, "AveragePool")
    total = _windows(x.astype(np.float64), geo, 0.0).sum(axis=_window_axes(x))
    # the divisor counts input positions, plus the padding when count_include_pad
    mask = np.ones((1, 1) + x.shape[2:])
    count = _windows(mask, geo, 0.0, pad_fill=float(attrs["count_include_pad"])).sum(axis=_window_axes(x))
    return [(total / count).astype(x.dtype)]


def _pool_flops(ins, outs, attrs):
    return float(outs[0].size * np.prod(attrs["kernel_shape"]))


def _pool_samples(op):
    def samples(rng):
        cases = [
            ((1, 3, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
            ((2, 4, 7, 9), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
            ((1, 2, 11, 10), {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 0, 0, 1]}),
            ((1, 3, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
            ((1, 2, 8, 6), {"kernel_shape": [2, 3], "strides": [3, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
            ((1, 3, 9, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
            ((1, 3, 6, 9), {"kernel_shape": [2, 4], "strides": [2, 3], "auto_pad": "SAME_LOWER"}),
            ((2, 1, 5, 5), {"kernel_shape": [5, 5], "auto_pad": "VALID"}),
            ((0, 3, 6, 6), {"kernel_shape": [2, 2]}),
        ]
        if op == "MaxPool":
            cases += [
                ((1, 2, 9, 9), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
                ((1, 2, 10, 8), {"kernel_shape": [2, 2], "dilations": [2, 1], "strides": [2, 2], "ceil_mode": 1}),
            ]
        else:
            cases += [
                ((2, 4, 7, 9), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
                (
                    (1, 2, 8, 6),
                    {
                        "kernel_shape": [3, 3],
                        "strides": [2, 2],
                        "pads": [1, 1, 1, 1],
                        "count_include_pad": 1,
                        "ceil_mode": 1,
                    },
                ),
            ]
        for shape, attrs in cases:
            yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")
        if op == "MaxPool":
            x = rng.integers(-128, 128, size=(1, 2, 6, 6)).astype("int8")
            yield Sample([x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, label="int8 padded")
        # 1 and 3 spatial axes (after the 2-D cases, so that their sample numbers stay)
        for shape, attrs in _ND_POOL_CASES + (_ND_MAXPOOL_CASES if op == "MaxPool" else _ND_AVGPOOL_CASES):
            yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")

    return samples


_ND_POOL_CASES = [
    ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ((1, 2, 10), {"kernel_shape": [3], "strides": [2], "pads": [0, 1], "ceil_mode": 1}),
    ((1, 2, 9), {"kernel_shape": [4], "strides": [3], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 5, 7, 6), {"kernel_shape": [3, 2, 3], "strides": [2, 2, 1], "pads": [1, 0, 1, 1, 1, 0]}),
    ((1, 3, 7, 5, 5), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "ceil_mode": 1}),
    ((1, 2, 5, 6, 3), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "auto_pad": "SAME_LOWER"}),
]
_ND_MAXPOOL_CASES = [
    ((1, 2, 13), {"kernel_shape": [2], "dilations": [3], "strides": [2], "ceil_mode": 1}),
    ((1, 2, 5, 5, 7), {"kernel_shape": [3, 3, 2], "dilations": [2, 1, 3], "pads": [2, 1, 1, 1, 0, 1]}),
]
_ND_AVGPOOL_CASES = [
    ((2, 3, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 2], "count_include_pad": 1, "ceil_mode": 1}),
    (
        (1, 2, 5, 6, 7),
        {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1], "count_include_pad": 1},
    ),
    ((1, 2, 9, 8), {"kernel_shape": [3, 2], "dilations": [2, 3], "pads": [1, 1, 2, 0]}),
    ((1, 2, 13), {"kernel_shape": [2], "dilations": [3], "strides": [2], "ceil_mode": 1}),
    (
        (1, 2, 7, 6, 5),
        {"kernel_shape": [2, 3, 2], "dilations": [2, 1, 2], "pads": [1, 1, 0, 1, 2, 1], "count_include_pad": 1},
    ),
]


register(
    OpSchema(
        "MaxPool",
        infer=_pool_infer("MaxPool", _FLOAT + ("int8", "uint8")),
        reference=_maxpool_reference,
        attrs={**POOL_ATTRS, "storage_order": Attr("int", 0, (0, 1), "no effect without the Indices output")},
        flops=_pool_flops,
        samples=_pool_samples("MaxPool"),
        doc="Max pooling over 1 or more spatial axes; padding never wins.",
    )
)

register(
    OpSchema(
        "AveragePool",
        infer=_pool_infer("AveragePool", _FLOAT),
        reference=_avgpool_reference,
        attrs={**POOL_ATTRS, "count_include_pad": Attr("int", 0, (0, 1), "divide by the window size, pads included")},
        flops=_pool_flops,
        samples=_pool_samples("AveragePool"),
        doc="Average pooling over 1 or more spatial axes.",
    )
)


# -- MaxPool with ONNX's Indices output ----------------------------------------------


def _maxpool_indices_infer(ins, attrs):
    (y,) = _pool_infer("MaxPoolWithIndices", _FLOAT + ("int8", "uint8"))(ins, attrs)
    return [y, TensorInfo(y.shape, "int64")]


def _maxpool_indices_samples(rng):
    cases = [
        ((2, 3, 7, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ((1, 2, 9, 7), {"kernel_shape": [2, 3], "strides": [2, 2], "storage_order": 1, "ceil_mode": 1}),
        ((1, 2, 9, 9), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 1, 2, 1], "storage_order": 1}),
        ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
        ((1, 2, 13), {"kernel_shape": [2], "dilations": [3], "strides": [2], "ceil_mode": 1, "storage_order": 1}),
        ((1, 2, 5, 7, 6), {"kernel_shape": [3, 2, 3], "strides": [2, 2, 1], "pads": [1, 0, 1, 1, 1, 0]}),
        (
            (2, 2, 5, 6, 3),
            {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "auto_pad": "SAME_UPPER", "storage_order": 1},
        ),
        ((0, 3, 6, 6), {"kernel_shape": [2, 2]}),
    ]
    for shape, attrs in cases:
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")
    x = rng.integers(-3, 3, size=(1, 2, 7, 5)).astype("int8")  # ties: the first maximum wins
    yield Sample([x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, label="int8 with ties")


register(
    OpSchema(
        "MaxPoolWithIndices",
        infer=_maxpool_indices_infer,
        reference=_maxpool_indices_reference,
        attrs={**POOL_ATTRS, "storage_order": Attr("int", 0, (0, 1), "0: row-major indices, 1: column-major")},
        n_outputs=2,
        flops=_pool_flops,
        samples=_maxpool_indices_samples,
        doc="ONNX's MaxPool with its Indices output: (Y, Indices), where Indices are positions in the "
        "flattened input (N x C x D1 x ... x Dk). A separate op so that backends claiming MaxPool, "
        "which write Y only, never receive a node that asks for Indices.",
    )
)


# -- global pooling: one value per (N, C) -------------------------------------------


def _global_infer(op, dtypes):
    def infer(ins, attrs):
        x = ins[0]
        if len(x.shape) < 3:
            raise GraphError(f"{op} takes (N, C, D1, ...) input, at least one spatial axis; got shape {x.shape}")
        if x.dtype not in dtypes:
            raise GraphError(f"{op} takes {', '.join(dtypes)} input, got {x.dtype}")
        if any(d == 0 for d in x.shape[2:]):
            raise GraphError(f"{op}: the spatial size of {x.shape} is empty; there is nothing to pool")
        return [TensorInfo(x.shape[:2] + (1,) * (len(x.shape) - 2), x.dtype)]

    return infer


def _global_samples(op):
    def samples(rng):
        for shape in [(1, 3, 7, 7), (2, 16, 5, 9), (3, 1, 1, 1), (1, 8, 1, 13), (0, 4, 3, 3)]:
            yield Sample([rand(rng, *shape)], label=str(shape))
        yield Sample([rand(rng, 1, 2, 4, 4).astype("float16")], label="float16")
        for shape in [(2, 3, 11), (1, 4, 1), (1, 2, 3, 5, 7), (2, 1, 1, 3, 1)]:  # 1 and 3 spatial axes
            yield Sample([rand(rng, *shape)], label=str(shape))

    return samples


def _spatial_axes(x) -> tuple:
    return tuple(range(2, x.ndim))


def _global_lp(ins, attrs):
    x, p = ins[0], attrs["p"]
    total = (np.abs(x.astype(np.float64)) ** p).sum(axis=_spatial_axes(x), keepdims=True)
    return [(total ** (1.0 / p)).astype(x.dtype)]


def _global_lp_samples(rng):
    for shape, p in [((1, 3, 7, 7), 2), ((2, 4, 5, 9), 3), ((2, 3, 11), 1), ((1, 2, 3, 5, 7), 2), ((0, 2, 3), 2)]:
        yield Sample([rand(rng, *shape)], {"p": p}, label=f"{shape} p={p}")


register(
    OpSchema(
        "GlobalAveragePool",
        infer=_global_infer("GlobalAveragePool", _FLOAT),
        reference=lambda ins, attrs: [
            ins[0].astype(np.float64).mean(axis=_spatial_axes(ins[0]), keepdims=True).astype(ins[0].dtype)
        ],
        flops=lambda ins, outs, attrs: float(ins[0].size),
        samples=_global_samples("GlobalAveragePool"),
        doc="Mean over the spatial axes of (N, C, D1, ...) input; output N x C x 1 x ... x 1.",
    )
)

register(
    OpSchema(
        "GlobalMaxPool",
        infer=_global_infer("GlobalMaxPool", _FLOAT),
        reference=lambda ins, attrs: [ins[0].max(axis=_spatial_axes(ins[0]), keepdims=True)],
        flops=lambda ins, outs, attrs: float(ins[0].size),
        samples=_global_samples("GlobalMaxPool"),
        doc="Max over the spatial axes of (N, C, D1, ...) input; output N x C x 1 x ... x 1.",
    )
)

register(
    OpSchema(
        "GlobalLpPool",
        infer=_global_infer("GlobalLpPool", _FLOAT),
        reference=_global_lp,
        attrs={"p": Attr("int", 2, doc="the order of the norm")},
        flops=lambda ins, outs, attrs: 2.0 * ins[0].size,
        samples=_global_lp_samples,
        doc="(sum of |x|^p over the spatial axes)^(1/p) of (N, C, D1, ...) input; output N x C x 1 x ... x 1.",
    )
)
