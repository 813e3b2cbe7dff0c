"""Classic machine learning with ONNX-ML semantics (the ai.onnx.ml domain): Scaler, Normalizer,
Imputer, OneHotEncoder, LinearClassifier, LinearRegressor, TreeEnsembleClassifier and
TreeEnsembleRegressor. (Binarizer and ArrayFeatureExtractor are in misc.py, LabelEncoder in
strings.py.)

Inputs are [N, F] rows of features ([F]: one row). Classifiers give int64 labels and float32
scores; string labels are the importer's business (it maps label indices through a LabelEncoder,
so these ops stay static). Where the ONNX-ML spec is silent (a classifier with one score per row,
PROBIT, the base value of a target no tree voted for) the kernels do what ONNX Runtime does, the
runtime skl2onnx and onnxmltools convert for: PROBIT uses its erfinv approximation, a single score
s becomes the two classes' [1 - s, s] (or [-s, s]), and so on.

The tree kernels walk every tree for all rows at once (one numpy step per tree level) and add the
leaves' weights tree by tree in float32 (float64 for float64 input), ONNX Runtime's order and
precision, so that a vote on the 0.5 line falls the same way.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
NUMERIC = ("float32", "float64", "int64", "int32")


def _need_numeric(op: str, x: TensorInfo) -> None:
    if x.dtype not in NUMERIC:
        raise GraphError(f"{op} takes {', '.join(NUMERIC)} input, got {x.dtype}")


def _rows_info(op: str, x: TensorInfo) -> tuple:
    """(N, F) of an [N, F] or [F] input."""
    _need_numeric(op, x)
    if x.shape is None or len(x.shape) not in (1, 2):
        raise GraphError(f"{op} takes [N, F] or [F] input, got {x.shape}")
    return (1, x.shape[0]) if len(x.shape) == 1 else tuple(x.shape)


def _rows(x: np.ndarray, dtype=np.float32) -> np.ndarray:
    """The input as [N, F] rows in the type ONNX Runtime computes in (float64 stays float64)."""
    x = np.asarray(x)
    x = x.astype(np.float64 if x.dtype == np.float64 else dtype)
    return x.reshape(1, -1) if x.ndim == 1 else x


# -- post transforms -----------------------------------------------------------------------------


def probit(p: np.ndarray) -> np.ndarray:
    """sqrt(2) * erfinv(2p - 1) with ONNX Runtime's erfinv (Winitzki's approximation, a = 0.147,
    in float32): the exact inverse differs in the third digit, and models are checked against ORT."""
    x = (2 * np.asarray(p, np.float32) - 1).astype(np.float32)
    sign = np.where(x < 0, np.float32(-1), np.float32(1))
    with np.errstate(divide="ignore", invalid="ignore"):
        ln = np.log((1 - x) * (1 + x))
        a = np.float32(2 / (np.pi * 0.147)) + np.float32(0.5) * ln
        b = ln / np.float32(0.147)
        return (np.float32(np.sqrt(2)) * sign * np.sqrt(-a + np.sqrt(a * a - b))).astype(np.float32)


def logistic(x: np.ndarray) -> np.ndarray:
    e = 1 / (1 + np.exp(-np.abs(x)))
    return np.where(x < 0, 1 - e, e)


def _softmax(s: np.ndarray, zero: bool) -> np.ndarray:
    """Softmax along the last axis; SOFTMAX_ZERO leaves (near-)zero scores out of the sum."""
    top = s.max(axis=-1, keepdims=True)
    if not zero:
        e = np.exp(s - top)
        return e / e.sum(axis=-1, keepdims=True)
    kept = np.abs(s) > 1e-7
    e = np.where(kept, np.exp(s - top), s * np.exp(-top))
    with np.errstate(divide="ignore", invalid="ignore"):
        return e / np.where(kept, e, 0).sum(axis=-1, keepdims=True)


def post_transform(scores: np.ndarray, how: str) -> np.ndarray:
    """A post transform of [N, K] scores, K >= 2 (one column: see the callers)."""
    if how == "LOGISTIC":
        return logistic(scores)
    if how in ("SOFTMAX", "SOFTMAX_ZERO"):
        return _softmax(scores, how == "SOFTMAX_ZERO")
    if how == "PROBIT":
        return probit(scores)
    return scores


# -- Scaler, Normalizer, Imputer, OneHotEncoder ------------------------------------------------------


def _per_feature(values: np.ndarray, x: np.ndarray, op: str) -> np.ndarray:
    """One value, or one per feature as ONNX Runtime applies them: element i of x (flat) takes
    values[i % F], F the size of axis 1 (of axis 0 for a vector)."""
    width = x.shape[0] if x.ndim == 1 else x.shape[1]
    if values.size == 1:
        return values.reshape(())
    if values.size != width:
        raise GraphError(f"{op}: {values.size} values for {width} features (give 1 or {width})")
    return values[np.arange(x.size) % width].reshape(x.shape)


def _scaler(ins, attrs):
    x = np.asarray(ins[0])
    ftype = np.float64 if x.dtype == np.float64 else np.float32
    offset, scale = np.asarray(attrs["offset"], ftype), np.asarray(attrs["scale"], ftype)
    if offset.size != scale.size:
        raise GraphError(f"Scaler: scale ({scale.size}) and offset ({offset.size}) differ in length")
    offset, scale = _per_feature(offset, x, "Scaler"), _per_feature(scale, x, "Scaler")
    return [((x.astype(ftype) - offset) * scale).astype(np.float32)]


def _scaler_infer(ins, attrs):
    _need_numeric("Scaler", ins[0])
    if not attrs["scale"]:
        raise GraphError("Scaler needs a scale")
    return [TensorInfo(ins[0].shape, "float32")]


register(OpSchema(
    "Scaler", infer=_scaler_infer, reference=_scaler,
    attrs={"scale": Attr("floats", []), "offset": Attr("floats", [])},
    doc="(x - offset) * scale, one value or one per feature (axis 1), in float32 (ai.onnx.ml).",
    samples=lambda rng: iter([
        Sample([rand(rng, 5, 3)], {"scale": [0.5, 2.0, -1.0], "offset": [0.1, 0.0, -0.3]}),
        Sample([rand(rng, 7)], {"scale": [3.0], "offset": [1.0]}),
        Sample([rng.integers(-9, 9, (4, 2)).astype(np.int64)], {"scale": [0.5, 0.25], "offset": [1.0, 2.0]})])))


def _normalize(ins, attrs):
    x = np.asarray(ins[0])
    axis = x.ndim - 1
    v = x.astype(np.float32)
    norm = attrs["norm"]
    if norm == "MAX":
        d = v.max(axis=axis, keepdims=True)
        y = v / np.where(d == 0, 1, d)
    elif norm == "L1":
        d = np.abs(v).sum(axis=axis, keepdims=True)
        y = v / np.where(d == 0, 1, d)
    else:
        sq = (x * x).astype(np.float32)
        d = sq.sum(axis=axis, keepdims=True)
        y = np.sqrt(sq / np.where(d == 0, 1, d)) * np.where(x < 0, -1, 1)
        y = np.where(d == 0, v, y)
    return [y.astype(np.float32)]


def _normalizer_infer(ins, attrs):
    _rows_info("Normalizer", ins[0])
    return [TensorInfo(ins[0].shape, "float32")]


register(OpSchema(
    "Normalizer", infer=_normalizer_infer, reference=_normalize,
    attrs={"norm": Attr("str", "MAX", ("MAX", "L1", "L2"))},
    doc="Each row of [N, C] (or the [C] vector) divided by its max, L1 norm or L2 norm; a zero norm leaves the "
        "row (ai.onnx.ml).",
    samples=lambda rng: iter([Sample([rand(rng, 4, 5)], {"norm": "L1"}), Sample([rand(rng, 3, 7)], {"norm": "L2"}),
                              Sample([rand(rng, 3, 7)], {"norm": "MAX"}),
                              Sample([np.zeros((2, 3), np.float32)], {"norm": "L2"}),
                              Sample([rand(rng, 5)], {"norm": "L2"})])))


def _imputer_values(attrs, dtype: str):
    floats = dtype.startswith("float")
    imputed = attrs["imputed_value_floats"] if floats else attrs["imputed_value_int64s"]
    if not imputed:
        raise GraphError(f"Imputer on {dtype} input needs imputed_value_{'floats' if floats else 'int64s'}")
    return imputed, attrs["replaced_value_float"] if floats else attrs["replaced_value_int64"]


def _imputer(ins, attrs):
    x = np.asarray(ins[0])
    imputed, replaced = _imputer_values(attrs, x.dtype.name)
    values = _per_feature(np.asarray(imputed, x.dtype), x, "Imputer")
    hit = (x == replaced) | (np.isnan(x) & np.isnan(replaced)) if x.dtype.kind == "f" else x == replaced
    return [np.where(hit, values, x).astype(x.dtype)]


def _imputer_infer(ins, attrs):
    _need_numeric("Imputer", ins[0])
    _imputer_values(attrs, ins[0].dtype)
    return [ins[0]]


register(OpSchema(
    "Imputer", infer=_imputer_infer, reference=_imputer,
    attrs={"imputed_value_floats": Attr("floats", []), "replaced_value_float": Attr("float", 0.0),
           "imputed_value_int64s": Attr("ints", []), "replaced_value_int64": Attr("int", 0)},
    doc="Replace the elements equal to a value (NaN matches NaN) by one value or one per feature (ai.onnx.ml).",
    samples=lambda rng: iter([
        Sample([np.array([[1, np.nan, 3], [np.nan, 5, 1]], np.float32)],
               {"imputed_value_floats": [7.0, 8.0, 9.0], "replaced_value_float": float("nan")}),
        Sample([np.array([[0, 2], [4, 0], [0, 0]], np.int64)], {"imputed_value_int64s": [-1]})])))


def _categories(attrs) -> list:
    ints, strs = attrs["cats_int64s"], attrs["cats_strings"]
    if bool(ints) == bool(strs):
        raise GraphError("OneHotEncoder needs exactly one of cats_int64s and cats_strings")
    return ints or strs


def _one_hot(ins, attrs):
    x = np.asarray(ins[0])
    cats = _categories(attrs)
    index = {c: i for i, c in enumerate(cats)}
    keys = [str(v) for v in x.reshape(-1)] if attrs["cats_strings"] else x.reshape(-1).astype(np.int64).tolist()
    out = np.zeros((len(keys), len(cats)), np.float32)
    for row, key in enumerate(keys):
        if key in index:
            out[row, index[key]] = 1
        elif not attrs["zeros"]:
            raise GraphError(f"OneHotEncoder: {key!r} is not a category and zeros=0")
    return [out.reshape(x.shape + (len(cats),))]


def _one_hot_infer(ins, attrs):
    cats = _categories(attrs)
    if attrs["cats_strings"] and ins[0].dtype != "object":
        raise GraphError(f"OneHotEncoder with cats_strings takes strings, got {ins[0].dtype}")
    return [TensorInfo(tuple(ins[0].shape) + (len(cats),), "float32")]


register(OpSchema(
    "OneHotEncoder", infer=_one_hot_infer, reference=_one_hot,
    attrs={"cats_int64s": Attr("ints", []), "cats_strings": Attr("strs", []), "zeros": Attr("int", 1, (0, 1))},
    doc="A one-hot float vector per element on a new last axis; unknown categories are all zeros "
        "(zeros=1) or an error (ai.onnx.ml).",
    samples=lambda rng: iter([Sample([rng.integers(0, 6, (3, 2)).astype(np.int64)], {"cats_int64s": [1, 3, 5, 0]}),
                              Sample([np.array([2.0, 7.0, 1.0], np.float32)], {"cats_int64s": [7, 2]})])))


# -- linear models ---------------------------------------------------------------------------------


def _linear_scores(x: np.ndarray, coefficients, intercepts, k: int) -> np.ndarray:
    rows = _rows(x)
    coef = np.asarray(coefficients, np.float64)
    if coef.size != k * rows.shape[1]:
        raise GraphError(f"{len(coefficients)} coefficients for {k} target(s) of {rows.shape[1]} features")
    scores = rows.astype(np.float64) @ coef.reshape(k, rows.shape[1]).T
    if len(intercepts) == k:
        scores = scores + np.asarray(intercepts, np.float64)
    return scores


def _class_count(attrs, features) -> int:
    if attrs["intercepts"]:
        return len(attrs["intercepts"])
    if not isinstance(features, (int, np.integer)) or not features:
        raise GraphError("LinearClassifier without intercepts needs a known feature count")
    return len(attrs["coefficients"]) // int(features)


def _one_score(v: np.ndarray, how: str, extra) -> np.ndarray:
    """[N, 2] scores of two classes from one score v per row, as ONNX Runtime expands it (`extra`:
    its case, 0 or 1 for non-negative tree weights, 2 or 3 for mixed ones, -1 for none). Its PROBIT
    (and case -1) leaves the second column unwritten: 0 here."""
    if how == "PROBIT":
        return np.stack([probit(v), np.zeros_like(v)], axis=1)
    if how == "LOGISTIC":
        p = logistic(v)
        lo, hi = 1 - p, p
    else:
        lo, hi = np.where(np.asarray(extra) >= 2, -v, 1 - v), v
    keep = np.asarray(extra) < 0
    return np.stack([np.where(keep, v, lo), np.where(keep, 0, hi)], axis=1)


def _linear_classifier(ins, attrs):
    labels = np.asarray(attrs["classlabels_ints"], np.int64)
    x = _rows(ins[0])
    k = _class_count(attrs, x.shape[1])
    if k == 1 and labels.size != 2:
        raise GraphError(f"LinearClassifier with one score per row needs two class labels, got {labels.size}")
    s = _linear_scores(x, attrs["coefficients"], attrs["intercepts"], k)
    how = attrs["post_transform"]
    if k == 1:  # one score per row: its sign picks the label, and it is the second class's score
        y = np.where(s[:, 0] > 0, labels[1], labels[0]).astype(np.int64)
        z = _one_score(s[:, 0], how, 0)
    else:
        first = np.argmax(s, axis=1)
        y = labels[first] if labels.size else first.astype(np.int64)
        z = post_transform(s, how)
    return [y, z.astype(np.float32)]


def _linear_classifier_infer(ins, attrs):
    n, f = _rows_info("LinearClassifier", ins[0])
    k = _class_count(attrs, f)
    if k == 1 and len(attrs["classlabels_ints"]) != 2:
        raise GraphError(f"LinearClassifier with one score per row needs two class labels, got "
                         f"{len(attrs['classlabels_ints'])}")
    return [TensorInfo((n,), "int64"), TensorInfo((n, max(k, 2)), "float32")]


def _linear_samples(rng):
    for i, how in enumerate(TRANSFORMS):
        k = 3 + i % 2
        yield Sample([rand(rng, 5, 4)], {"coefficients": rand(rng, 4 * k).tolist(), "intercepts": rand(rng, k).tolist(),
                                         "classlabels_ints": list(range(10, 10 + k)), "post_transform": how}, how)
    yield Sample([rand(rng, 6, 3)], {"coefficients": rand(rng, 3).tolist(), "intercepts": [0.1],
                                     "classlabels_ints": [4, 7], "post_transform": "LOGISTIC"}, "one column")
    yield Sample([rand(rng, 3)], {"coefficients": rand(rng, 6).tolist(), "intercepts": [0.5, -0.5],
                                  "classlabels_ints": [0, 1], "post_transform": "LOGISTIC"}, "one row")


register(OpSchema(
    "LinearClassifier", infer=_linear_classifier_infer, reference=_linear_classifier, n_outputs=2,
    attrs={"coefficients": Attr("floats", doc="[classes, F], row-major"), "intercepts": Attr("floats", []),
           "classlabels_ints": Attr("ints", [], doc="labels by class; empty: the class index"),
           "multi_class": Attr("int", 0, doc="accepted; ONNX Runtime ignores it"),
           "post_transform": Attr("str", "NONE", TRANSFORMS)},
    doc="Scores x @ coefficients.T + intercepts and the label of the best (ai.onnx.ml); outputs labels [N], "
        "scores [N, classes] after post_transform.",
    samples=_linear_samples,
    flops=lambda ins, outs, attrs: 2.0 * len(attrs["coefficients"]) * (outs[0].size or 1)))


def _linear_regressor(ins, attrs):
    k = attrs["targets"]
    s = _linear_scores(ins[0], attrs["coefficients"], attrs["intercepts"], k)
    how = attrs["post_transform"]
    z = (probit(s) if how == "PROBIT" else s) if k == 1 else post_transform(s, how)
    return [z.astype(np.float32)]


def _linear_regressor_infer(ins, attrs):
    n, _ = _rows_info("LinearRegressor", ins[0])
    return [TensorInfo((n, attrs["targets"]), "float32")]


register(OpSchema(
    "LinearRegressor", infer=_linear_regressor_infer, reference=_linear_regressor,
    attrs={"coefficients": Attr("floats", doc="[targets, F], row-major"), "intercepts": Attr("floats", []),
           "targets": Attr("int", 1), "post_transform": Attr("str", "NONE", TRANSFORMS)},
    doc="x @ coefficients.T + intercepts for each target, then post_transform (ai.onnx.ml).",
    samples=lambda rng: iter([
        Sample([rand(rng, 5, 3)], {"coefficients": rand(rng, 3).tolist(), "intercepts": [0.25]}),
        Sample([rand(rng, 4, 3)], {"coefficients": rand(rng, 6).tolist(), "intercepts": [1.0, -1.0], "targets": 2,
                                   "post_transform": "SOFTMAX"}),
        Sample([rand(rng, 3)], {"coefficients": rand(rng, 6).tolist(), "targets": 2})]),
    flops=lambda ins, outs, attrs: 2.0 * len(attrs["coefficients"]) * (outs[0].size or 1)))


# -- tree ensembles ----------------------------------------------------------------------------------

MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "LEAF")
LEAF = MODES.index("LEAF")
_COMPARE = (np.less_equal, np.less, np.greater_equal, np.greater, np.equal, np.not_equal)
AGGREGATES = ("SUM", "AVERAGE", "MIN", "MAX")


def _tree_attrs(votes: str) -> dict:
    """The attributes of both tree ensembles; `votes` is "class" or "target" (the leaves' weights)."""
    return {
        **{f"nodes_{k}": Attr("ints", []) for k in ("treeids", "nodeids", "featureids", "truenodeids",
                                                    "falsenodeids", "missing_value_tracks_true")},
        "nodes_modes": Attr("strs", [], doc=", ".join(MODES)),
        "nodes_values": Attr("floats", []), "nodes_values_as_tensor": Attr("tensor", None),
        **{f"{votes}_{k}": Attr("ints", []) for k in ("treeids", "nodeids", "ids")},
        f"{votes}_weights": Attr("floats", []), f"{votes}_weights_as_tensor": Attr("tensor", None),
        "base_values": Attr("floats", []), "base_values_as_tensor": Attr("tensor", None),
        "post_transform": Attr("str", "NONE", TRANSFORMS),
    }


def _floats(attrs, name: str) -> np.ndarray:
    """A float list attribute, or its float64 `*_as_tensor` form."""
    tensor = attrs.get(f"{name}_as_tensor")
    return np.asarray(tensor, np.float64).reshape(-1) if tensor is not None else np.asarray(attrs[name], np.float64)


class _Forest:
    """The trees as flat arrays: per node its feature, threshold, mode, true and false child (a
    leaf points at itself), and per leaf its weight for each of k targets (`has`: it votes)."""

    def __init__(self, attrs, votes: str, k: int):
        tree = np.asarray(attrs["nodes_treeids"], np.int64)
        n = tree.size
        fields = {f: attrs[f"nodes_{f}"] for f in ("nodeids", "featureids", "truenodeids", "falsenodeids", "modes")}
        values = _floats(attrs, "nodes_values")
        if n == 0 or any(len(v) != n for v in fields.values()) or values.size != n:
            raise GraphError(f"tree ensemble: nodes_* attributes must all have one entry per node ({n}), got "
                             f"{ {k: len(v) for k, v in fields.items()} | {'values': values.size} }")
        unknown = set(fields["modes"]) - set(MODES)
        if unknown:
            raise GraphError(f"tree ensemble: unknown node mode(s) {sorted(unknown)}; known: {', '.join(MODES)}")
        position = {}
        for i, key in enumerate(zip(tree.tolist(), fields["nodeids"])):
            if position.setdefault(key, i) != i:
                raise GraphError(f"tree ensemble: node {key[1]} of tree {key[0]} is given twice")
        self.mode = np.array([MODES.index(m) for m in fields["modes"]], np.int8)
        leaf = self.mode == LEAF
        self.feature = np.where(leaf, 0, np.asarray(fields["featureids"], np.int64))
        self.threshold = values
        self.true, self.false = (self._children(tree, fields[f"{side}nodeids"], position, leaf, side)
                                 for side in ("true", "false"))
        missing = np.asarray(attrs["nodes_missing_value_tracks_true"], np.int64)[:n] == 1
        self.missing = np.r_[missing, np.zeros(n - missing.size, bool)]  # (a short list: the rest False)
        self.roots = np.flatnonzero(np.r_[True, tree[1:] != tree[:-1]])  # ONNX Runtime: a tree starts where
        self.weights, self.has = self._votes(attrs, votes, k, position, leaf)  # the tree id changes

    @staticmethod
    def _children(tree, ids, position, leaf, side):
        out = np.arange(tree.size)
        for i in np.flatnonzero(~leaf):
            child = position.get((int(tree[i]), int(ids[i])))
            if child is None or child == i:
                raise GraphError(f"tree ensemble: node at position {i} of tree {tree[i]} has {side} child "
                                 f"{ids[i]}, which is {'itself' if child == i else 'not a node of that tree'}")
            out[i] = child
        return out

    @staticmethod
    def _votes(attrs, votes, k, position, leaf):
        trees, nodes, ids = (attrs[f"{votes}_{f}"] for f in ("treeids", "nodeids", "ids"))
        w = _floats(attrs, f"{votes}_weights")
        if not len(trees) == len(nodes) == len(ids) == w.size:
            raise GraphError(f"tree ensemble: {votes}_treeids, _nodeids, _ids and _weights differ in length")
        weights, has = np.zeros((leaf.size, k)), np.zeros((leaf.size, k), bool)
        for t, node, c, value in zip(trees, nodes, ids, w.tolist()):
            at = position.get((t, node))
            if at is None:
                raise GraphError(f"tree ensemble: a weight is given for node {node} of tree {t}, which does not exist")
            if not 0 <= c < k:
                raise GraphError(f"tree ensemble: {votes} id {c} is out of range for {k} {votes}(es)")
            # (weights of inner nodes come from old converters, and one target takes a leaf's first
            # weight only: ONNX Runtime ignores the others too)
            if leaf[at] and not (k == 1 and has[at, 0]):
                weights[at, c] += value
                has[at, c] = True
        return weights, has

    def leaves(self, x: np.ndarray) -> np.ndarray:
        """The leaf each row of x [N, F] reaches in each tree: [N, trees] node positions."""
        if x.shape[1] <= self.feature.max(initial=0):
            raise GraphError(f"tree ensemble: a node reads feature {self.feature.max()}, the input has {x.shape[1]}")
        pos = np.tile(self.roots, (x.shape[0], 1))
        rows = np.arange(x.shape[0])[:, None]
        for _ in range(self.mode.size + 1):
            mode = self.mode[pos]
            inner = mode != LEAF
            if not inner.any():
                return pos
            v = x[rows, self.feature[pos]]
            go = np.zeros(pos.shape, bool)
            for code in np.unique(mode[inner]):
                sel = mode == code
                go[sel] = _COMPARE[code](v[sel], self.threshold[pos[sel]])
            go |= self.missing[pos] & np.isnan(v)
            pos = np.where(inner, np.where(go, self.true[pos], self.false[pos]), pos)
        raise GraphError("tree ensemble: a tree has a cycle")

    def add(self, leaves: np.ndarray, how: str, dtype) -> tuple[np.ndarray, np.ndarray]:
        """(scores [N, k], has [N, k]) aggregated over the trees, tree by tree in `dtype` (ONNX
        Runtime's order and precision: float32, or float64 for float64 input)."""
        weights = self.weights.astype(dtype)
        score = np.zeros((leaves.shape[0], weights.shape[1]), dtype)
        has = np.zeros(score.shape, bool)
        for t in range(leaves.shape[1]):
            w, h = weights[leaves[:, t]], self.has[leaves[:, t]]
            if how in ("SUM", "AVERAGE"):
                score += w
            else:
                better = w < score if how == "MIN" else w > score
                score = np.where(h & (~has | better), w, score)
            has |= h
        return score, has


def _forest_input(x) -> tuple[np.ndarray, type]:
    """Rows in float64 (integers pass through float32, as ONNX Runtime compares them) and the type
    the scores add up in."""
    rows = _rows(x)
    return rows.astype(np.float64), (np.float64 if rows.dtype == np.float64 else np.float32)


def _tree_regressor(ins, attrs):
    k = attrs["n_targets"]
    forest = _Forest(attrs, "target", k)
    x, dtype = _forest_input(ins[0])
    how, agg = attrs["post_transform"], attrs["aggregate_function"]
    score, has = forest.add(forest.leaves(x), agg, dtype)
    if agg == "AVERAGE":
        score = score / dtype(len(forest.roots))
    base = _floats(attrs, "base_values").astype(dtype)
    if k == 1:  # one target: a single base value is its origin; PROBIT is the only transform
        score = score + (base[0] if base.size == 1 else 0)
        return [(probit(score) if how == "PROBIT" else score).astype(np.float32)]
    if base.size == k:
        score = score + base
    return [post_transform(np.where(has, score, 0), how).astype(np.float32)]  # (no vote: 0, base or not)


def _tree_regressor_infer(ins, attrs):
    n, _ = _rows_info("TreeEnsembleRegressor", ins[0])
    if attrs["n_targets"] < 1:
        raise GraphError("TreeEnsembleRegressor needs n_targets >= 1")
    _Forest(attrs, "target", attrs["n_targets"])  # (its faults named at import, not at the first run)
    return [TensorInfo((n, attrs["n_targets"]), "float32")]


def random_trees(rng, votes: str, n_trees: int, depth: int, features: int, k: int, voters=None,
                 modes=("BRANCH_LEQ",), positive: bool = False) -> dict:
    """Tree ensemble attributes of full random trees (for samples and tests): `voters` are the ids
    a leaf may vote for (default: all k), `positive` weights are in [0, 1)."""
    a: dict = {key: [] for key in _tree_attrs(votes) if not key.endswith("as_tensor")}
    voters = list(range(k)) if voters is None else list(voters)
    inner = 2 ** depth - 1
    for t in range(n_trees):
        for node in range(2 * inner + 1):
            leaf = node >= inner
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(node)
            a["nodes_featureids"].append(0 if leaf else int(rng.integers(features)))
            a["nodes_values"].append(0.0 if leaf else float(np.float32(rng.uniform(-1, 1))))
            a["nodes_modes"].append("LEAF" if leaf else str(rng.choice(modes)))
            a["nodes_truenodeids"].append(0 if leaf else 2 * node + 1)
            a["nodes_falsenodeids"].append(0 if leaf else 2 * node + 2)
            a["nodes_missing_value_tracks_true"].append(int(rng.integers(2)) if not leaf else 0)
            for c in (voters if leaf else []):
                a[f"{votes}_treeids"].append(t)
                a[f"{votes}_nodeids"].append(node)
                a[f"{votes}_ids"].append(c)
                a[f"{votes}_weights"].append(float(np.float32(rng.uniform(0 if positive else -1, 1))))
    return {key: v for key, v in a.items() if v != []}


def _with_nan(x: np.ndarray, rng) -> np.ndarray:
    x = x.copy()
    x[rng.random(x.shape) < 0.15] = np.nan
    return x


def _regressor_samples(rng):
    for i, (agg, how, k) in enumerate([("SUM", "NONE", 1), ("AVERAGE", "NONE", 3), ("MIN", "SOFTMAX", 2),
                                       ("MAX", "LOGISTIC", 2), ("SUM", "PROBIT", 1), ("SUM", "SOFTMAX_ZERO", 3)]):
        attrs = random_trees(rng, "target", 1 + i % 3, 1 + i % 3, 4, k, modes=MODES[:6] if i % 2 else MODES[:1],
                             voters=[0] if i == 5 else None)
        attrs.update(n_targets=k, aggregate_function=agg, post_transform=how,
                     base_values=rand(rng, k if i % 2 else 1).tolist() if how != "PROBIT" else [])
        if how == "PROBIT":
            attrs["target_weights"] = [abs(w) / 4 for w in attrs["target_weights"]]
        yield Sample([_with_nan(rand(rng, 5 + i, 4), rng)], attrs, f"{agg} {how} {k}")


register(OpSchema(
    "TreeEnsembleRegressor", infer=_tree_regressor_infer, reference=_tree_regressor,
    attrs={**_tree_attrs("target"), "n_targets": Attr("int", 1),
           "aggregate_function": Attr("str", "SUM", AGGREGATES)},
    doc="Decision trees (ai.onnx.ml): each row walks every tree to a leaf; the leaves' target weights are "
        "aggregated, added to base_values and post-transformed. Outputs [N, n_targets].",
    samples=_regressor_samples))


def _binary_scores(attrs, labels, score, has, how):
    """Labels and [N, 2] scores of a two-class ensemble, as ONNX Runtime forms them: when the trees
    vote for one class only, the label follows that score's sign (or 0.5 for non-negative weights)
    and the other class's score is derived from it."""
    s0, s1, h0, h1 = score[:, 0], score[:, 1], has[:, 0], has[:, 1]
    base = _floats(attrs, "base_values").astype(score.dtype)
    two = np.ones(len(s0), bool)  # the row keeps two scores (else one, expanded below)
    extra = np.full(len(s0), -1)
    if base.size == 2:
        s1, s0 = np.where(h1, base[1] + s0, s1 + base[1]), np.where(h1, -(base[1] + s0), s0 + base[0])
    elif base.size == 1:
        s0, two = s0 + base[0], h1
    elif base.size == 0:
        extra[:], two = 3, h1
    pos = np.where(two & h1, s1, np.where(h0, s0, 0))
    weights = _floats(attrs, "class_weights")
    if len(set(attrs["class_ids"])) == 1:  # ONNX Runtime's "binary case"
        positive = bool((weights >= 0).all())
        win = pos > (0.5 if positive else 0)
        extra = np.where(win, 0, 1) + (0 if positive else 2)
        y = np.where(win, labels[1], labels[0])
    else:
        y = (pos > 0).astype(np.int64)  # (ONNX Runtime gives 1 or 0 here, not the labels)
    v0, v1 = np.where(h0, s0, 0), np.where(h1, s1, 0)
    both = post_transform(np.stack([v0, v1], axis=1), how)
    one = _one_score(v0, how, extra)
    return y.astype(np.int64), np.where(two[:, None], both, one)


def _tree_classifier(ins, attrs):
    labels = np.asarray(attrs["classlabels_int64s"], np.int64)
    k = labels.size
    forest = _Forest(attrs, "class", k)
    x, dtype = _forest_input(ins[0])
    score, has = forest.add(forest.leaves(x), "SUM", dtype)
    how = attrs["post_transform"]
    if k == 2:
        y, z = _binary_scores(attrs, labels, score, has, how)
        return [y, z.astype(np.float32)]
    base = _floats(attrs, "base_values").astype(dtype)[:k]
    score[:, :base.size] += base
    has[:, :base.size] = True
    y = labels[np.argmax(np.where(has, score, -np.inf), axis=1)]
    return [y, post_transform(np.where(has, score, 0), how).astype(np.float32)]


def _tree_classifier_infer(ins, attrs):
    n, _ = _rows_info("TreeEnsembleClassifier", ins[0])
    k = len(attrs["classlabels_int64s"])
    if k < 2:
        raise GraphError(f"TreeEnsembleClassifier needs two class labels or more, got {k}")
    _Forest(attrs, "class", k)
    return [TensorInfo((n,), "int64"), TensorInfo((n, k), "float32")]


def _classifier_samples(rng):
    cases = [(3, "NONE", None, False, 0), (4, "SOFTMAX", None, False, 4), (2, "NONE", [1], True, 0),
             (2, "LOGISTIC", [0], False, 1), (2, "PROBIT", [1], True, 0), (2, "SOFTMAX_ZERO", None, False, 2),
             (3, "LOGISTIC", [0, 2], False, 3)]
    for i, (k, how, voters, positive, n_base) in enumerate(cases):
        attrs = random_trees(rng, "class", 1 + i % 4, 1 + i % 3, 5, k, voters, MODES[:6] if i % 2 else MODES[:1],
                             positive)
        if how == "PROBIT":
            attrs["class_weights"] = [w / (2 * (1 + i % 4)) for w in attrs["class_weights"]]
        attrs.update(classlabels_int64s=list(range(7, 7 + k)), post_transform=how,
                     base_values=rand(rng, n_base).tolist())
        yield Sample([_with_nan(rand(rng, 6 + i, 5), rng)], attrs, f"{k} classes {how} votes {voters}")


register(OpSchema(
    "TreeEnsembleClassifier", infer=_tree_classifier_infer, reference=_tree_classifier, n_outputs=2,
    attrs={**_tree_attrs("class"), "classlabels_int64s": Attr("ints", [])},
    doc="Decision trees (ai.onnx.ml): each row walks every tree to a leaf and the leaves' class weights add "
        "up; outputs the best label [N] (int64) and the class scores [N, classes] after post_transform.",
    samples=_classifier_samples))


# -- ONNX Runtime's dynamically quantized LSTM (com.microsoft) --------------------------------------
# (an RNN, not classic ML: it sits here because this work could add no other op module; its home is
# beside rnn.py)


def _uint8_params(a: np.ndarray) -> tuple:
    """ONNX Runtime's dynamic uint8 quantization of a block: its range widened to hold 0, in float32."""
    lo, hi = np.float32(min(a.min(initial=0), 0)), np.float32(max(a.max(initial=0), 0))
    scale = np.float32(1) if lo == hi else np.float32((hi - lo) / np.float32(255))
    return scale, np.float32(np.clip(np.round(-lo / scale), 0, 255))


def _quantized_matmul(a: np.ndarray, q: np.ndarray, zero_point, scale: np.ndarray) -> np.ndarray:
    """a [M, K] (float32) quantized to uint8 over the whole block, times the integer weights q [K, N]:
    exact integer products (float64 holds them: |terms| <= 255 * 255), scaled once in float32."""
    s, z = _uint8_params(a)
    qa = np.clip(np.round(a / s) + z, 0, 255)
    acc = (qa - z).astype(np.float64) @ (q.astype(np.float64) - float(zero_point))
    return acc.astype(np.float32) * (s * scale).astype(np.float32)


def _dq_lstm_infer(ins, attrs):
    x, w, r = ins[0], ins[1], ins[2]
    dirs, h = (2 if attrs["direction"] == "bidirectional" else 1), attrs["hidden_size"]
    if len(x.shape) != 3 or w.shape != (dirs, x.shape[2], 4 * h) or r.shape != (dirs, h, 4 * h):
        raise GraphError(f"DynamicQuantizeLSTM: X {x.shape}, W {w.shape}, R {r.shape} do not match {dirs} "
                         f"direction(s) and hidden_size {h} (want W [dirs, input, 4*hidden], R [dirs, hidden, "
                         "4*hidden])")
    if w.dtype not in ("int8", "uint8") or r.dtype not in ("int8", "uint8"):
        raise GraphError(f"DynamicQuantizeLSTM takes int8 or uint8 W and R, got {w.dtype} and {r.dtype}")
    if ins[4] is not None:
        raise GraphError("DynamicQuantizeLSTM: sequence_lens is not supported (every sequence runs its full length)")
    state = TensorInfo((dirs, x.shape[1], h), x.dtype)
    return [TensorInfo((x.shape[0], dirs, x.shape[1], h), x.dtype), state, state]


def _dq_lstm(ins, attrs):
    from .rnn import _activations, _clip

    x = np.asarray(ins[0], np.float32)
    seq, batch, _ = x.shape
    hsize, dirs = attrs["hidden_size"], 2 if attrs["direction"] == "bidirectional" else 1
    w, r = ins[1], ins[2]
    get = [ins[i] if i < len(ins) and ins[i] is not None else None for i in range(12)]
    bias = get[3] if get[3] is not None else np.zeros((dirs, 8 * hsize), np.float32)
    h0, c0 = (np.zeros((dirs, batch, hsize), np.float32) if s is None else s for s in get[5:7])
    peep = np.zeros((dirs, 3 * hsize)) if get[7] is None else get[7].astype(np.float64)
    acts = _activations("LSTM", attrs, dirs)
    y = np.zeros((seq, dirs, batch, hsize))
    yh, yc = np.zeros((dirs, batch, hsize)), np.zeros((dirs, batch, hsize))
    for d in range(dirs):
        (w_scale, w_zp), (r_scale, r_zp) = (_per_direction(get[i], get[i + 1], d, dirs) for i in (8, 10))
        reverse = attrs["direction"] == "reverse" or d == 1
        xs = x[::-1] if reverse else x
        # ONNX Runtime multiplies all steps' inputs at once (one quantization), then each step's state
        gx = _quantized_matmul(xs.reshape(seq * batch, -1), w[d], w_zp, w_scale).reshape(seq, batch, -1)
        b = (bias[d, :4 * hsize] + bias[d, 4 * hsize:]).astype(np.float32)
        f, g, hact = acts[d]
        pi, po, pf = np.split(peep[d], 3)
        h, c = h0[d].astype(np.float32), c0[d].astype(np.float64)
        for t in range(seq):
            gates = (gx[t] + _quantized_matmul(h, r[d], r_zp, r_scale) + b).astype(np.float64)
            gi, go, gf, gc = np.split(gates, 4, axis=1)
            i = f(_clip(gi + pi * c, attrs["clip"]))
            fg = 1 - i if attrs["input_forget"] else f(_clip(gf + pf * c, attrs["clip"]))
            c = fg * c + i * g(_clip(gc, attrs["clip"]))
            h64 = f(_clip(go + po * c, attrs["clip"])) * hact(c)
            y[seq - 1 - t if reverse else t, d] = h64
            h = h64.astype(np.float32)
        yh[d], yc[d] = h, c
    return [y.astype(np.float32), yh.astype(np.float32), yc.astype(np.float32)]


def _per_direction(scale, zero_point, d: int, dirs: int) -> tuple:
    """(scale [1] or [columns], zero point) of direction d; like ONNX Runtime, one zero point per
    direction (per-column zero points must all be equal, and 0 for int8)."""
    scale = np.asarray(scale, np.float32).reshape(dirs, -1)[d]
    zp = 0 if zero_point is None else np.asarray(zero_point).reshape(dirs, -1)[d, 0]
    return scale, zp


def _dq_lstm_samples(rng):
    for seq, batch, inp, hid, direction, per_column, signed in [
            (4, 1, 3, 5, "forward", False, True), (3, 2, 4, 3, "bidirectional", True, True),
            (5, 1, 2, 4, "reverse", False, False), (2, 3, 5, 2, "bidirectional", False, False)]:
        dirs = 2 if direction == "bidirectional" else 1
        qtype, (lo, hi) = (np.int8, (-128, 128)) if signed else (np.uint8, (0, 256))
        cols = 4 * hid if per_column else 1
        zp = np.zeros((dirs, cols), qtype) if signed else np.full((dirs, cols), rng.integers(100, 150), qtype)
        ins = [rand(rng, seq, batch, inp), rng.integers(lo, hi, (dirs, inp, 4 * hid)).astype(qtype),
               rng.integers(lo, hi, (dirs, hid, 4 * hid)).astype(qtype), rand(rng, dirs, 8 * hid),
               None, rand(rng, dirs, batch, hid), rand(rng, dirs, batch, hid), None]
        for _ in range(2):
            ins += [rng.uniform(0.002, 0.01, (dirs, cols) if per_column else (dirs,)).astype(np.float32),
                    zp if per_column else zp[:, 0]]
        yield Sample(ins, {"hidden_size": hid, "direction": direction},
                     f"{direction} {'per column' if per_column else 'per direction'} {qtype.__name__}")


register(OpSchema(
    "DynamicQuantizeLSTM", infer=_dq_lstm_infer, reference=_dq_lstm, n_inputs=(12, 12), n_outputs=3,
    attrs={"hidden_size": Attr("int"), "direction": Attr("str", "forward", ("forward", "reverse", "bidirectional")),
           "activation_names": Attr("str", "", doc="comma-separated, as LSTM's; empty: Sigmoid,Tanh,Tanh"),
           "activation_alpha": Attr("floats", []), "activation_beta": Attr("floats", []),
           "clip": Attr("float", 0.0, doc="0: no clipping"), "input_forget": Attr("int", 0, (0, 1))},
    doc="ONNX Runtime's com.microsoft DynamicQuantizeLSTM: an LSTM (ONNX gate order i, o, f, c) with int8/uint8 "
        "W [dirs, input, 4*hidden] and R [dirs, hidden, 4*hidden], scales and zero points per direction or per "
        "column (inputs 8-11), whose inputs and hidden states are quantized to uint8 as ONNX Runtime does: all "
        "steps' X in one block, each step's state in one block. sequence_lens is not supported.",
    samples=_dq_lstm_samples,
    flops=lambda ins, outs, attrs: 8.0 * outs[0].size * (ins[1].shape[1] + attrs["hidden_size"])))
