"""The classic-ML ops on a GPU (Scaler, Normalizer, LinearClassifier, TreeEnsembleClassifier): what
they decline, and the host tables and parameters their kernels read (ml_*.comp, mnn-opencl's ml.cl).

A classifier's row is one invocation: its scores (at most MAX_CLASSES) live in registers, the label
is the first best score's, and the post transform is applied in place, as mnn_core.ops.ml does it;
one score per row (a one-column LinearClassifier) and two-class forests follow ONNX Runtime's rules.
A model's constants (coefficients, the trees) are one table of 32-bit words uploaded with the segment;
`words` says where each section starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...graph.ir import Node, TensorInfo

MAX_CLASSES = 64  # the scores one invocation keeps in registers
TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
NORMS = {"MAX": 0, "L1": 1, "L2": 2}


def full_attrs(node: Node) -> dict:
    from ...ops import get_schema

    return get_schema(node.op).check_attrs(node.attrs, node.name)


def _words(*sections: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The sections as one uint32 table, and the word where each starts."""
    parts = [np.ascontiguousarray(s).reshape(-1).view(np.uint32) for s in sections]
    starts = np.cumsum([0] + [p.size for p in parts])[:-1].tolist()
    return np.concatenate(parts + [np.zeros(1, np.uint32)]), starts


def _float32_rows(node: Node, ins: Sequence[TensorInfo]) -> str | bool:
    if ins[0].dtype != "float32":
        return f"float32 input only, got {ins[0].dtype}"
    if ins[0].shape is None or len(ins[0].shape) not in (1, 2):
        return f"[N, F] or [F] input only, got {ins[0].shape}"
    return True


def rows(info: TensorInfo) -> tuple[int, int]:
    return (1, int(info.shape[0])) if len(info.shape) == 1 else (int(info.shape[0]), int(info.shape[1]))


# -- Scaler and Normalizer ---------------------------------------------------------------------------


def scaler_supports(node: Node, ins: Sequence[TensorInfo]) -> str | bool:
    return True if ins[0].dtype == "float32" else f"float32 input only, got {ins[0].dtype}"


def scaler_table(info: TensorInfo, attrs: dict) -> tuple[np.ndarray, int]:
    """[offsets..., scales...] (float32) and how many of each (1, or the features along axis 1)."""
    offset, scale = np.asarray(attrs["offset"], np.float32), np.asarray(attrs["scale"], np.float32)
    return np.concatenate([offset, scale]), int(scale.size)


def scaler_width(info: TensorInfo) -> int:
    """ONNX Runtime's feature count: element i takes value i % width (axis 1, axis 0 of a vector)."""
    return int(info.shape[0] if len(info.shape) == 1 else info.shape[1]) if info.shape else 1


normalizer_supports = _float32_rows


# -- LinearClassifier --------------------------------------------------------------------------------


def _classes(attrs: dict, features: int) -> int:
    return len(attrs["intercepts"]) or len(attrs["coefficients"]) // max(features, 1)


def linear_supports(node: Node, ins: Sequence[TensorInfo]) -> str | bool:
    ok = _float32_rows(node, ins)
    if ok is not True:
        return ok
    attrs = full_attrs(node)
    k = _classes(attrs, rows(ins[0])[1])
    if k > MAX_CLASSES:
        return f"{k} classes exceed the {MAX_CLASSES} one invocation keeps"
    return True


def linear_table(info: TensorInfo, attrs: dict) -> tuple[np.ndarray, dict]:
    """Coefficients [k, F], intercepts [k] (float32), labels [k] (int64); the push parameters."""
    n, f = rows(info)
    k = _classes(attrs, f)
    coef = np.asarray(attrs["coefficients"], np.float32).reshape(k, f)
    icpt = np.asarray(attrs["intercepts"] or [0.0] * k, np.float32)
    labels = np.asarray(attrs["classlabels_ints"] or range(k), np.int64)
    table, starts = _words(coef, icpt, labels)
    return table, dict(n=n, f=f, k=k, how=TRANSFORMS.index(attrs["post_transform"]), icpt=starts[1], labels=starts[2])


# -- TreeEnsembleClassifier --------------------------------------------------------------------------


def _forest(attrs: dict) -> Any:
    from ...ops.ml_trees import _Forest

    return _Forest(attrs, "class", len(attrs["classlabels_int64s"]))


def trees_supports(node: Node, ins: Sequence[TensorInfo]) -> str | bool:
    ok = _float32_rows(node, ins)
    if ok is not True:
        return ok
    attrs = full_attrs(node)
    k = len(attrs["classlabels_int64s"])
    if k == 2 and len(attrs["base_values"]) > 2:
        return f"two classes with {len(attrs['base_values'])} base values are not supported"
    if k > MAX_CLASSES:
        return f"{k} classes exceed the {MAX_CLASSES} one invocation keeps"
    if attrs.get("nodes_values_as_tensor") is not None or attrs.get("class_weights_as_tensor") is not None:
        return "float64 thresholds or weights (*_as_tensor) are not supported"
    return True


def trees_table(info: TensorInfo, attrs: dict) -> tuple[np.ndarray, dict]:
    """Per node (feature, mode | missing-tracks-true << 8, true child, false child), thresholds,
    per node and class the weight and whether it votes, the roots, labels and base values."""
    forest = _forest(attrs)
    n, f = rows(info)
    k = len(attrs["classlabels_int64s"])
    nodes = np.stack(
        [
            forest.feature,
            forest.mode.astype(np.int64) | (forest.missing.astype(np.int64) << 8),
            forest.true,
            forest.false,
        ],
        axis=1,
    ).astype(np.int32)
    base = np.asarray(attrs["base_values"], np.float32)[:k]
    table, starts = _words(
        nodes,
        forest.threshold.astype(np.float32),
        forest.weights.astype(np.float32),
        forest.has.astype(np.uint32),
        forest.roots.astype(np.int32),
        np.asarray(attrs["classlabels_int64s"], np.int64),
        base,
    )
    params = dict(
        n=n,
        f=f,
        k=k,
        how=TRANSFORMS.index(attrs["post_transform"]),
        trees=int(forest.roots.size),
        thr=starts[1],
        w=starts[2],
        has=starts[3],
        roots=starts[4],
        labels=starts[5],
        base=starts[6],
        n_base=int(base.size),
        steps=int(forest.mode.size) + 1,
        binary=_binary_flags(attrs),
    )
    return table, params


def _binary_flags(attrs: dict) -> int:
    """ONNX Runtime's two-class rules: 1 when every leaf votes for one class id (the label then
    follows that score), | 2 when all those weights are >= 0 (the threshold is 0.5, not 0)."""
    one_id = len(set(attrs["class_ids"])) == 1
    positive = all(w >= 0 for w in attrs["class_weights"])
    return int(one_id) | int(one_id and positive) << 1


# -- loop passes (mnn_core.backend.kit.loops): one invocation's, in the GLSL kernels of these ops -----


def normalizer_passes(node: Node, ins: Sequence[TensorInfo]) -> int:
    """ml_normalizer.comp: a row's norm, then the row scaled."""
    return 2 * ins[0].shape[-1] + 16


def linear_passes(node: Node, ins: Sequence[TensorInfo]) -> int:
    """ml_linear.comp: every class's dot product over the features, then a pass per class."""
    coefficients = len(node.attrs.get("coefficients", ()))
    return coefficients + 4 * (coefficients // max(ins[0].shape[-1], 1)) + 16


def trees_passes(node: Node, ins: Sequence[TensorInfo]) -> int:
    """ml_trees.comp walks every tree to the forest's depth, then adds each class's weight."""
    p = trees_table(ins[0], full_attrs(node))[1]
    return p["trees"] * (p["steps"] + p["k"] + 4) + 4 * p["k"] + 16


#: the ops whose loops follow the data: (supports, loop passes of one invocation), for a backend's
#: LoopBudget.budgeted
LOOPED = {
    "Normalizer": (normalizer_supports, normalizer_passes),
    "LinearClassifier": (linear_supports, linear_passes),
    "TreeEnsembleClassifier": (trees_supports, trees_passes),
}


TREE_PARAMS = (
    "n",
    "f",
    "k",
    "how",
    "trees",
    "thr",
    "w",
    "has",
    "roots",
    "labels",
    "base",
    "n_base",
    "steps",
    "binary",
)
