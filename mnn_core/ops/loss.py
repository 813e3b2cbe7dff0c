"""Fused losses: softmax cross-entropy and its backward.

Fusing log-softmax with the negative log-likelihood is both faster and
stabler than composing them, and its backward is one subtraction:
dlogits = (softmax(logits) - target) * dloss. Semantics follow PyTorch's
`cross_entropy`: class axis 1, targets are class indices (any integer dtype,
`ignore_index` skipped) or per-class probabilities, optional label smoothing.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

_ATTRS = {
    "reduction": Attr("str", "mean", ("mean", "sum", "none")),
    "ignore_index": Attr("int", -100, doc="index targets equal to this contribute nothing"),
    "label_smoothing": Attr("float", 0.0),
}


def _check(ins, op):
    logits, target = ins[0], ins[1]
    if len(logits.shape) < 2:
        raise GraphError(f"{op}: logits must be (N, C, ...), got {logits.shape}")
    by_index = target.shape == logits.shape[:1] + logits.shape[2:]
    if by_index and target.dtype not in ("int64", "int32", "int8", "uint8"):
        raise GraphError(f"{op}: class-index targets must be integers, got {target.dtype}")
    if not by_index and (target.shape != logits.shape or target.dtype != logits.dtype):
        raise GraphError(
            f"{op}: target {target} must be class indices of shape "
            f"{logits.shape[:1] + logits.shape[2:]} or probabilities like the logits {logits}"
        )
    return logits.shape[:1] + logits.shape[2:]


def _ce_infer(ins, attrs):
    per_item = _check(ins, "SoftmaxCrossEntropy")
    shape = per_item if attrs["reduction"] == "none" else ()
    return [TensorInfo(shape, ins[0].dtype)]


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits.astype(np.float64)
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _targets(logits: np.ndarray, target: np.ndarray, attrs: dict):
    """Per-class target weights (smoothed) and the mask of counted items."""
    c = logits.shape[1]
    eps = attrs["label_smoothing"]
    if np.issubdtype(target.dtype, np.integer):
        keep = target != attrs["ignore_index"]
        safe = np.where(keep, target, 0).astype(np.int64)
        if safe.size and (safe.min() < 0 or safe.max() >= c):
            raise GraphError(f"SoftmaxCrossEntropy: target class out of range [0, {c})")
        onehot = np.moveaxis(np.eye(c)[safe], -1, 1)
        weights = onehot * (1 - eps) + eps / c
        return weights * np.expand_dims(keep, 1), keep
    weights = target.astype(np.float64) * (1 - eps) + eps / c
    return weights, np.ones(logits.shape[:1] + logits.shape[2:], bool)


def _reduce(per_item: np.ndarray, keep: np.ndarray, reduction: str):
    if reduction == "none":
        return per_item
    total = per_item.sum()
    return total / max(keep.sum(), 1) if reduction == "mean" else total


def _ce(ins, attrs):
    logits, target = ins
    weights, keep = _targets(logits, target, attrs)
    per_item = -(weights * _log_softmax(logits)).sum(axis=1)
    return [np.asarray(_reduce(per_item, keep, attrs["reduction"]), dtype=logits.dtype)]


def _ce_grad_infer(ins, attrs):
    per_item = _check(ins[1:], "SoftmaxCrossEntropyGrad")
    want = per_item if attrs["reduction"] == "none" else ()
    if ins[0].shape != want:
        raise GraphError(f"SoftmaxCrossEntropyGrad: dloss must have shape {want}, got {ins[0].shape}")
    return [TensorInfo(ins[1].shape, ins[1].dtype)]


def _ce_grad(ins, attrs):
    dloss, logits, target = ins
    weights, keep = _targets(logits, target, attrs)
    prob = np.exp(_log_softmax(logits))
    d = prob * weights.sum(axis=1, keepdims=True) - weights
    scale = dloss.astype(np.float64)
    if attrs["reduction"] == "none":
        scale = np.expand_dims(scale, 1)
    elif attrs["reduction"] == "mean":
        scale = scale / max(keep.sum(), 1)
    return [(d * scale).astype(logits.dtype)]


def _ce_samples(grad: bool):
    def samples(rng):
        cases = [
            ((8, 10), {}),
            ((5, 4), {"reduction": "sum", "label_smoothing": 0.1}),
            ((6, 3), {"reduction": "none", "ignore_index": 1}),
            ((2, 5, 3, 3), {}),
            ((4, 6), {"soft": True}),
        ]
        for shape, attrs in cases:
            attrs = dict(attrs)
            logits = rand(rng, *shape, low=-3, high=3)
            if attrs.pop("soft", False):
                t = rng.random(shape).astype("float32")
                target = t / t.sum(axis=1, keepdims=True)
            else:
                target = rng.integers(0, shape[1], size=shape[:1] + shape[2:]).astype(np.int64)
            ins = [logits, target]
            if grad:
                out = shape[:1] + shape[2:] if attrs.get("reduction") == "none" else ()
                ins = [rand(rng, *out, low=0.5, high=1.5)] + ins
            yield Sample(ins, attrs, label=f"{shape} {attrs}")

    return samples


register(
    OpSchema(
        "SoftmaxCrossEntropy",
        infer=_ce_infer,
        reference=_ce,
        attrs=_ATTRS,
        n_inputs=(2, 2),
        samples=_ce_samples(False),
        doc="(logits, target) -> loss: cross-entropy of softmax(logits) over axis 1 (PyTorch semantics).",
    )
)

register(
    OpSchema(
        "SoftmaxCrossEntropyGrad",
        infer=_ce_grad_infer,
        reference=_ce_grad,
        attrs=_ATTRS,
        n_inputs=(3, 3),
        samples=_ce_samples(True),
        doc="(dloss, logits, target) -> dlogits = (softmax(logits) * sum(t) - t) * dloss [/ count].",
    )
)
