"""Tree ensembles on Arm (csrc/ml.c): TreeEnsembleClassifier and TreeEnsembleRegressor of numeric
rows, with the reference's arithmetic (mnn_core/ops/ml_trees.py). The forest is flattened at prepare
by the reference's own _Forest, so malformed attributes fail with its messages and a leaf's votes
count as there: one record per node, a leaf's record pointing at its row of a [leaves, k] weight table."""

from __future__ import annotations

import numpy as np

from mnn_core.errors import GraphError
from mnn_core.ops.ml import TRANSFORMS
from mnn_core.ops.ml_trees import AGGREGATES, LEAF, _floats, _Forest

from . import _arm
from ._common import kernel, static_shape

NUMERIC = ("float32", "float64", "int32", "int64")


def _k(node) -> int:
    return len(node.attrs["classlabels_int64s"]) if node.op == "TreeEnsembleClassifier" else node.attrs["n_targets"]


def _forest(node) -> _Forest:
    return _Forest(node.attrs, "class" if node.op == "TreeEnsembleClassifier" else "target", _k(node))


def _depths(forest: _Forest) -> list | None:
    """Per tree, the steps from its root to its deepest leaf; None when a tree has a cycle."""
    depths = []
    for root in forest.roots.tolist():
        level, d = {root}, 0
        while True:
            level = {p for p in level if forest.mode[p] != LEAF}
            if not level:
                break
            d += 1
            if d > forest.mode.size:
                return None
            level = {int(c) for p in level for c in (forest.true[p], forest.false[p])}
        depths.append(d)
    return depths


def _supports(node, ins) -> bool | str:
    x = ins[0]
    if x.shape is None or len(x.shape) not in (1, 2) or not isinstance(x.shape[-1], (int, np.integer)):
        return "[N, F] or [F] input with F known at prepare"
    try:
        forest = _forest(node)
    except GraphError as e:
        return str(e)
    if x.shape[-1] <= forest.feature.max(initial=0):
        return f"a node reads feature {forest.feature.max()}, the input has {x.shape[-1]}"
    return True if _depths(forest) is not None else "a tree has a cycle"


def _prepare(node, ins, outs, constants, ctx):
    attrs, classifier = node.attrs, node.op == "TreeEnsembleClassifier"
    forest = _forest(node)
    dtype = np.float64 if ins[0].dtype == "float64" else np.float32  # the type the scores add up in
    leaf = forest.mode == LEAF
    at = np.flatnonzero(leaf)
    row = np.zeros(leaf.size, np.int64)
    row[at] = np.arange(at.size)
    nodes = dict(
        threshold=forest.threshold,
        feature=forest.feature,
        yes=forest.true,  # (a leaf's children are itself)
        no=forest.false,
        leaf=row,
        mode=forest.mode,
        missing_true=forest.missing,
    )
    f = dict(
        classifier=classifier,
        k=_k(node),
        features=static_shape(ins[0])[-1],
        f32=dtype == np.float32,
        aggregate=0 if classifier else AGGREGATES.index(attrs["aggregate_function"]),
        post=TRANSFORMS.index(attrs["post_transform"]),
        binary=classifier and len(set(attrs.get("class_ids", []))) == 1,
        all_leq=bool((forest.mode[~leaf] == 0).all()),
        positive=classifier and bool((_floats(attrs, "class_weights") >= 0).all()),
    )
    weights = forest.weights[at].astype(dtype).astype(np.float64)  # rounded to the scores' type
    base = _floats(attrs, "base_values").astype(dtype).astype(np.float64)
    labels = attrs["classlabels_int64s"] if classifier else []
    threads = max(1, int(getattr(ctx, "threads", 1) or 1))
    return _arm.trees(
        f"arm.{node.op}", f, nodes, forest.roots, _depths(forest), weights, forest.has[at], base, labels, threads
    )


for _op in ("TreeEnsembleClassifier", "TreeEnsembleRegressor"):
    kernel(_op, dtypes=NUMERIC, supports=_supports, efficiency=0.3)(_prepare)
