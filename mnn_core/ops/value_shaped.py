"""Ops whose output shapes follow input *values*, with ONNX semantics: NonZero, Compress, Unique.

Their sizes are unknown until the values are, so they are `dynamic`: a graph using them
runs eagerly (`mnn_core.graph.evaluate`); shape inference gives symbolic sizes.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register

register(
    OpSchema(
        "NonZero",
        dynamic=True,
        infer=lambda ins, attrs: [TensorInfo((len(ins[0].shape), "NonZero_count"), "int64")],
        reference=lambda ins, attrs: [np.array(np.nonzero(ins[0]), dtype=np.int64).reshape(ins[0].ndim, -1)],
        doc="Indices of the nonzero elements, one row per axis: [rank, count], in row-major order.",
        samples=lambda rng: iter([Sample([rng.random((3, 4)) > 0.5]), Sample([rand(rng, 5) * (rng.random(5) > 0.3)])]),
    )
)


def _compress_infer(ins, attrs):
    x = ins[0]
    if attrs["axis"] is None:
        return [TensorInfo(("Compress_count",), x.dtype)]
    axis = normalize_axis(attrs["axis"], len(x.shape), "Compress")
    shape = list(x.shape)
    shape[axis] = "Compress_count"
    return [TensorInfo(tuple(shape), x.dtype)]


def _compress(ins, attrs):
    x, cond = np.asarray(ins[0]), np.asarray(ins[1]).astype(bool).reshape(-1)
    if attrs["axis"] is None:
        x = x.reshape(-1)
        axis = 0
    else:
        axis = normalize_axis(attrs["axis"], x.ndim, "Compress")
    if cond.size > x.shape[axis]:
        raise GraphError(f"Compress: condition has {cond.size} entries, the axis only {x.shape[axis]}")
    return [np.compress(cond, x, axis=axis)]


register(
    OpSchema(
        "Compress",
        infer=_compress_infer,
        reference=_compress,
        n_inputs=(2, 2),
        dynamic=True,
        attrs={"axis": Attr("int", None, doc="absent: the input is flattened first")},
        doc="The slices along `axis` where the condition is true (a shorter condition leaves the rest out).",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 3, 4), rng.random(3) > 0.5], {"axis": 0}),
                Sample([rand(rng, 3, 4), rng.random(7) > 0.5]),
            ]
        ),
    )
)


def _unique_infer(ins, attrs):
    x = ins[0]
    if attrs["axis"] is None:
        y = TensorInfo(("Unique_count",), x.dtype)
    else:
        shape = list(x.shape)
        shape[normalize_axis(attrs["axis"], len(shape), "Unique")] = "Unique_count"
        y = TensorInfo(tuple(shape), x.dtype)
    n = TensorInfo(("Unique_count",), "int64")
    inverse = TensorInfo(
        (x.size if attrs["axis"] is None else x.shape[normalize_axis(attrs["axis"], len(x.shape), "Unique")],), "int64"
    )
    return [y, n, inverse, n]


def _unique(ins, attrs):
    x = np.asarray(ins[0])
    axis = attrs["axis"]
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_axis(axis, x.ndim, "Unique")
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inverse = inverse.reshape(-1)
    if not attrs["sorted"]:  # in order of first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values, first, counts, inverse = np.take(values, order, axis=axis), first[order], counts[order], rank[inverse]
    return [values, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)]


register(
    OpSchema(
        "Unique",
        infer=_unique_infer,
        reference=_unique,
        n_outputs=4,
        dynamic=True,
        attrs={
            "axis": Attr("int", None, doc="absent: unique elements of the flattened input"),
            "sorted": Attr("int", 1, (0, 1), "1: ascending; 0: in order of first occurrence"),
        },
        doc="Unique elements (or slices along `axis`), the index of each one's first occurrence, the index "
        "into the uniques of every input element (slice), and the counts.",
        samples=lambda rng: iter(
            [
                Sample([rng.integers(0, 5, (3, 4)).astype(np.int64)], {"sorted": 0}),
                Sample([rng.integers(0, 3, (4, 2)).astype(np.float32)], {"axis": 0}),
            ]
        ),
    )
)


# -- attributes that arrive as runtime values ----------------------------------------------------------------


def _slice_attrs(ins, attrs) -> dict:
    names = ("starts", "ends", "axes", "steps")
    out = {n: [int(v) for v in np.asarray(x).reshape(-1)] for n, x in zip(names, ins[1:]) if x is not None}
    if attrs["axes"]:
        out["axes"] = list(attrs["axes"])
    return out


def _slice_dynamic(ins, attrs):
    from .schema import get_schema

    static = get_schema("Slice")
    return static.reference(ins[:1], static.check_attrs(_slice_attrs(ins, attrs), "SliceDynamic"))


def _slice_dynamic_infer(ins, attrs):
    """Sliced axes get symbolic sizes; the others keep theirs when the axes are known."""
    x = ins[0]
    rank = len(x.shape)
    if attrs["axes"]:
        axes = {normalize_axis(a, rank, "SliceDynamic") for a in attrs["axes"]}
    elif len(ins) < 4 or ins[3] is None:  # default axes 0 .. len(starts) - 1
        n = ins[1].shape[0] if len(ins[1].shape) == 1 and isinstance(ins[1].shape[0], int) else rank
        axes = set(range(min(n, rank)))
    else:
        axes = set(range(rank))
    shape = tuple(f"SliceDynamic_d{i}" if i in axes else d for i, d in enumerate(x.shape))
    return [TensorInfo(shape, x.dtype)]


register(
    OpSchema(
        "SliceDynamic",
        infer=_slice_dynamic_infer,
        reference=_slice_dynamic,
        n_inputs=(3, 5),
        dynamic=True,
        attrs={"axes": Attr("ints", [], doc="the axes when known at import (then input 3 is left out)")},
        doc="Slice with starts, ends (and axes, steps) given as int tensors at run time, as ONNX Slice (opset 10+) "
        "takes them; what an imported body uses when they follow a loop's counter.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 4, 6), np.array([1]), np.array([3])]),
                Sample([rand(rng, 4, 6), np.array([-1, 0]), np.array([0, 5]), np.array([0, 1]), np.array([-1, 2])]),
            ]
        ),
    )
)


# -- NonMaxSuppression ---------------------------------------------------------------------------------------


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """Boxes as [y_min, x_min, y_max, x_max] (ONNX allows either diagonal, or centers with sizes)."""
    b = boxes.astype(np.float64)
    if center_point_box:
        xc, yc, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
        return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=-1)
    return np.stack(
        [
            np.minimum(b[..., 0], b[..., 2]),
            np.minimum(b[..., 1], b[..., 3]),
            np.maximum(b[..., 0], b[..., 2]),
            np.maximum(b[..., 1], b[..., 3]),
        ],
        axis=-1,
    )


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    top, left = np.maximum(box[0], others[:, 0]), np.maximum(box[1], others[:, 1])
    bottom, right = np.minimum(box[2], others[:, 2]), np.minimum(box[3], others[:, 3])
    inter = np.clip(bottom - top, 0, None) * np.clip(right - left, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def _scalar(ins, i, default, kind):
    return (
        default
        if len(ins) <= i or ins[i] is None or np.asarray(ins[i]).size == 0
        else kind(np.asarray(ins[i]).reshape(-1)[0])
    )


def _nms(ins, attrs):
    boxes, scores = np.asarray(ins[0]), np.asarray(ins[1])
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or scores.shape[::2] != boxes.shape[:2]:
        raise GraphError(
            f"NonMaxSuppression: boxes [B, N, 4] and scores [B, C, N] do not match: {boxes.shape}, {scores.shape}"
        )
    limit = _scalar(ins, 2, 0, int)
    iou_threshold = _scalar(ins, 3, 0.0, float)
    score_threshold = _scalar(ins, 4, None, float)
    corners = _corners(boxes, attrs["center_point_box"])
    selected = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c].astype(np.float64)
            order = np.argsort(-s, kind="stable")
            if score_threshold is not None:
                order = order[s[order] > score_threshold]
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if kept and (_iou(corners[b, i], corners[b, kept]) > iou_threshold).any():
                    continue
                kept.append(int(i))
            selected += [(b, c, i) for i in kept]
    return [np.array(selected, np.int64).reshape(-1, 3)]


register(
    OpSchema(
        "NonMaxSuppression",
        reference=_nms,
        n_inputs=(2, 5),
        dynamic=True,
        infer=lambda ins, attrs: [TensorInfo(("NonMaxSuppression_count", 3), "int64")],
        attrs={
            "center_point_box": Attr("int", 0, (0, 1), "0: corners [y1, x1, y2, x2]; 1: [x_center, y_center, w, h]")
        },
        doc="Per batch and class, greedily keep the highest-scoring boxes (above score_threshold) whose IoU with "
        "every box kept is at most iou_threshold, up to max_output_boxes_per_class: [count, 3] indices "
        "(batch, class, box). Inputs: boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold.",
        samples=lambda rng: iter(
            [
                Sample(
                    [
                        np.sort(rng.random((2, 6, 4)).astype(np.float32), axis=-1),
                        rng.random((2, 3, 6)).astype(np.float32),
                        np.array([3], np.int64),
                        np.array([0.4], np.float32),
                        np.array([0.2], np.float32),
                    ]
                )
            ]
        ),
    )
)
