"""Classic machine learning on x86 (_ml.pyx, csrc/ml/): the ai.onnx.ml ops of numeric tensors.

The tree ensembles are flattened at prepare by the reference's own _Forest (so malformed attributes
fail with its messages and a leaf's votes count as there): one record per node (threshold, feature,
mode, children; a leaf's child is its row in a dense [leaves, k] weight table). The linear models,
Scaler, Normalizer, Imputer and Binarizer take their attributes as float64 arrays already rounded to
the type the reference computes in.
"""

from __future__ import annotations

import numpy as np

from mnn_core.errors import GraphError
from mnn_core.ops.ml import TRANSFORMS, _class_count
from mnn_core.ops.ml_trees import AGGREGATES, LEAF, _floats, _Forest

from . import _ml
from ._common import kernel, static_shape

NUMERIC = ("float32", "float64", "int64", "int32")
FLOATS = ("float32", "float64")
NORMS = {"MAX": 0, "L1": 1, "L2": 2}


def _features(info) -> int | None:
    """F of an [N, F] or [F] input, when known."""
    if info.shape is None or len(info.shape) not in (1, 2):
        return None
    f = info.shape[-1]
    return f if isinstance(f, (int, np.integer)) else None


def _compute_type(info):
    """The type the reference computes in: float64 for float64 input, else float32."""
    return np.float64 if info.dtype == "float64" else np.float32


# -- tree ensembles --------------------------------------------------------------------------------


def _tree_k(node) -> int:
    return len(node.attrs["classlabels_int64s"]) if node.op == "TreeEnsembleClassifier" else node.attrs["n_targets"]


def _depths(forest: _Forest) -> np.ndarray | None:
    """The steps from each tree's root to its deepest leaf, level by level over (tree, node) pairs
    (each counted once per level, however many parents share it); None: a tree has a cycle."""
    n = forest.mode.size
    depths = np.zeros(forest.roots.size, np.int64)
    level = np.arange(forest.roots.size) * n + forest.roots  # tree * n + node position
    for d in range(n + 1):
        level = level[forest.mode[level % n] != LEAF]
        if level.size == 0:
            return depths
        depths[level // n] = d + 1
        tree, pos = level // n, level % n
        level = np.unique(np.r_[tree * n + forest.true[pos], tree * n + forest.false[pos]])
    return None


def _tree_supported(node, ins) -> bool | str:
    votes = "class" if node.op == "TreeEnsembleClassifier" else "target"
    try:
        forest = _Forest(node.attrs, votes, _tree_k(node))
    except GraphError as e:
        return str(e)
    f = _features(ins[0])
    if f is None:
        return "the input's feature count is not known at prepare"
    if f <= forest.feature.max(initial=0):
        return f"a node reads feature {forest.feature.max()}, the input has {f}"
    return True if _depths(forest) is not None else "a tree has a cycle"


def _node_table(forest: _Forest, dtype) -> tuple:
    """(nodes as _ml.NODE_DTYPE, weights [leaves, k] in `dtype`, has [leaves, k])."""
    leaf = forest.mode == LEAF
    at = np.flatnonzero(leaf)
    row = np.zeros(leaf.size, np.int64)
    row[at] = np.arange(at.size)
    nodes = np.zeros(leaf.size, _ml.NODE_DTYPE)
    nodes["threshold"] = forest.threshold
    nodes["feature"] = forest.feature
    nodes["yes"] = forest.true  # (a leaf's children are itself)
    nodes["no"] = forest.false
    nodes["leaf"] = row
    nodes["mode"] = forest.mode
    nodes["missing_true"] = forest.missing
    return nodes, forest.weights[at].astype(dtype), forest.has[at]


def _prepare_trees(node, ins, ctx, isa):
    attrs, classifier = node.attrs, node.op == "TreeEnsembleClassifier"
    k = _tree_k(node)
    forest = _Forest(attrs, "class" if classifier else "target", k)
    dtype = _compute_type(ins[0])
    nodes, weights, has = _node_table(forest, dtype)
    class_ids = attrs.get("class_ids", [])
    f = dict(
        classifier=classifier,
        k=k,
        features=static_shape(ins[0])[-1],
        f32=dtype == np.float32,
        aggregate=0 if classifier else AGGREGATES.index(attrs["aggregate_function"]),
        transform=TRANSFORMS.index(attrs["post_transform"]),
        binary=classifier and len(set(class_ids)) == 1,
        all_leq=bool((forest.mode[forest.mode != LEAF] == 0).all()),
        positive=classifier and bool((_floats(attrs, "class_weights") >= 0).all()),
    )
    base = _floats(attrs, "base_values").astype(dtype)
    labels = attrs["classlabels_int64s"] if classifier else []
    return _ml.trees(
        isa, ctx.threads, f"x86.{node.op}", f, nodes, forest.roots, _depths(forest), weights, has, base, labels
    )


@kernel("TreeEnsembleClassifier", dtypes=NUMERIC, supports=_tree_supported, efficiency=0.2)
def prepare_tree_classifier(node, ins, outs, constants, ctx, isa):
    return _prepare_trees(node, ins, ctx, isa)


@kernel("TreeEnsembleRegressor", dtypes=NUMERIC, supports=_tree_supported, efficiency=0.2)
def prepare_tree_regressor(node, ins, outs, constants, ctx, isa):
    return _prepare_trees(node, ins, ctx, isa)


# -- linear models ---------------------------------------------------------------------------------


def _linear_k(node, f: int) -> int:
    return _class_count(node.attrs, f) if node.op == "LinearClassifier" else node.attrs["targets"]


def _linear_supported(node, ins) -> bool | str:
    f = _features(ins[0])
    if f is None:
        return "the input's feature count is not known at prepare"
    try:
        k = _linear_k(node, f)
    except GraphError as e:
        return str(e)
    if k < 1 or len(node.attrs["coefficients"]) != k * f:
        return f"{len(node.attrs['coefficients'])} coefficients for {k} score(s) of {f} features"
    labels = node.attrs.get("classlabels_ints", [])
    if node.op == "LinearClassifier" and (len(labels) != 2 if k == 1 else 0 < len(labels) < k):
        return f"{len(labels)} class labels for {k} score(s)"
    return True


def _prepare_linear(node, ins, ctx, isa):
    f = static_shape(ins[0])[-1]
    k = _linear_k(node, f)
    classifier = node.op == "LinearClassifier"
    return _ml.linear(
        isa,
        ctx.threads,
        f"x86.{node.op}",
        classifier,
        k,
        TRANSFORMS.index(node.attrs["post_transform"]),
        f,
        np.asarray(node.attrs["coefficients"], np.float64),
        node.attrs["intercepts"],
        node.attrs["classlabels_ints"] if classifier else [],
    )


@kernel("LinearClassifier", dtypes=NUMERIC, supports=_linear_supported, efficiency=0.3)
def prepare_linear_classifier(node, ins, outs, constants, ctx, isa):
    return _prepare_linear(node, ins, ctx, isa)


@kernel("LinearRegressor", dtypes=NUMERIC, supports=_linear_supported, efficiency=0.3)
def prepare_linear_regressor(node, ins, outs, constants, ctx, isa):
    return _prepare_linear(node, ins, ctx, isa)


# -- feature-wise ops ------------------------------------------------------------------------------


def _width(info) -> int | None:
    """The features a per-feature value list runs over (ml.py's _per_feature): axis 1, or 0 of a vector."""
    if info.shape is None or not info.shape:
        return None
    w = info.shape[0] if len(info.shape) == 1 else info.shape[1]
    return w if isinstance(w, (int, np.integer)) else None


def _per_feature_supported(values: int, info) -> bool | str:
    w = _width(info)
    if w is None:
        return "the feature count is not known at prepare"
    return True if values in (1, w) else f"{values} values for {w} features (give 1 or {w})"


def _scaler_supported(node, ins) -> bool | str:
    scale, offset = node.attrs["scale"], node.attrs["offset"]
    if len(scale) != len(offset):
        return f"scale ({len(scale)}) and offset ({len(offset)}) differ in length"
    return _per_feature_supported(len(scale), ins[0])


@kernel("Scaler", dtypes=NUMERIC, supports=_scaler_supported, efficiency=0.3)
def prepare_scaler(node, ins, outs, constants, ctx, isa):
    dtype = _compute_type(ins[0])
    offset, scale = (np.asarray(node.attrs[a], dtype) for a in ("offset", "scale"))
    width = static_shape(ins[0])[0 if len(static_shape(ins[0])) == 1 else 1] if scale.size > 1 else 1
    return _ml.feature("Scaler", isa, ctx.threads, "x86.Scaler", dtype == np.float32, width, offset, scale)


def _imputer_supported(node, ins) -> bool | str:
    if ins[0].dtype not in FLOATS:
        return "integer Imputer runs on the reference"
    if not node.attrs["imputed_value_floats"]:
        return "Imputer on float input needs imputed_value_floats"
    return _per_feature_supported(len(node.attrs["imputed_value_floats"]), ins[0])


@kernel("Imputer", dtypes=NUMERIC, supports=_imputer_supported, efficiency=0.3)
def prepare_imputer(node, ins, outs, constants, ctx, isa):
    dtype = _compute_type(ins[0])
    values = np.asarray(node.attrs["imputed_value_floats"], dtype)
    replaced = np.asarray([node.attrs["replaced_value_float"]], dtype)  # (a weak Python float: x's own type)
    width = _width(ins[0]) if values.size > 1 else 1
    return _ml.feature("Imputer", isa, ctx.threads, "x86.Imputer", dtype == np.float32, width, values, replaced)


@kernel("Binarizer", dtypes=FLOATS, efficiency=0.3)
def prepare_binarizer(node, ins, outs, constants, ctx, isa):
    threshold = float(np.asarray(node.attrs["threshold"], _compute_type(ins[0])))
    return _ml.feature("Binarizer", isa, ctx.threads, "x86.Binarizer", True, 1, [0.0], [0.0], threshold)


def _normalizer_supported(node, ins) -> bool | str:
    return True if ins[0].shape is not None and len(ins[0].shape) in (1, 2) else "takes [N, C] or [C] input"


@kernel("Normalizer", dtypes=NUMERIC, supports=_normalizer_supported, efficiency=0.3)
def prepare_normalizer(node, ins, outs, constants, ctx, isa):
    return _ml.normalizer(isa, ctx.threads, "x86.Normalizer", NORMS[node.attrs["norm"]])
