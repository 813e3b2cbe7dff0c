"""Tree ensembles with ONNX-ML semantics (the ai.onnx.ml domain): TreeEnsembleClassifier and
TreeEnsembleRegressor, in their opset 1 and opset 3 attribute forms.

The kernels walk every tree for all rows at once (one numpy step per tree level) and add the
leaves' weights tree by tree in float32 (float64 for float64 input), ONNX Runtime's order and
precision, so that a vote on the 0.5 line falls the same way.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .ml import TRANSFORMS, _one_score, _rows, _rows_info, post_transform, probit
from .schema import Attr, OpSchema, Sample, register

# -- the forest ----------------------------------------------------------------------------------

MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "LEAF")
LEAF = MODES.index("LEAF")
_COMPARE = (np.less_equal, np.less, np.greater_equal, np.greater, np.equal, np.not_equal)
AGGREGATES = ("SUM", "AVERAGE", "MIN", "MAX")


def _tree_attrs(votes: str) -> dict:
    """The attributes of both tree ensembles; `votes` is "class" or "target" (the leaves' weights)."""
    return {
        **{
            f"nodes_{k}": Attr("ints", [])
            for k in ("treeids", "nodeids", "featureids", "truenodeids", "falsenodeids", "missing_value_tracks_true")
        },
        "nodes_modes": Attr("strs", [], doc=", ".join(MODES)),
        "nodes_values": Attr("floats", []),
        "nodes_values_as_tensor": Attr("tensor", None),
        **{f"{votes}_{k}": Attr("ints", []) for k in ("treeids", "nodeids", "ids")},
        f"{votes}_weights": Attr("floats", []),
        f"{votes}_weights_as_tensor": Attr("tensor", None),
        "base_values": Attr("floats", []),
        "base_values_as_tensor": Attr("tensor", None),
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
            raise GraphError(
                f"tree ensemble: nodes_* attributes must all have one entry per node ({n}), got "
                f"{ {k: len(v) for k, v in fields.items()} | {'values': values.size} }"
            )
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
        self.true, self.false = (
            self._children(tree, fields[f"{side}nodeids"], position, leaf, side) for side in ("true", "false")
        )
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
                raise GraphError(
                    f"tree ensemble: node at position {i} of tree {tree[i]} has {side} child "
                    f"{ids[i]}, which is {'itself' if child == i else 'not a node of that tree'}"
                )
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


def random_trees(
    rng,
    votes: str,
    n_trees: int,
    depth: int,
    features: int,
    k: int,
    voters=None,
    modes=("BRANCH_LEQ",),
    positive: bool = False,
) -> dict:
    """Tree ensemble attributes of full random trees (for samples and tests): `voters` are the ids
    a leaf may vote for (default: all k), `positive` weights are in [0, 1)."""
    a: dict = {key: [] for key in _tree_attrs(votes) if not key.endswith("as_tensor")}
    voters = list(range(k)) if voters is None else list(voters)
    inner = 2**depth - 1
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
            for c in voters if leaf else []:
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
    for i, (agg, how, k) in enumerate(
        [
            ("SUM", "NONE", 1),
            ("AVERAGE", "NONE", 3),
            ("MIN", "SOFTMAX", 2),
            ("MAX", "LOGISTIC", 2),
            ("SUM", "PROBIT", 1),
            ("SUM", "SOFTMAX_ZERO", 3),
        ]
    ):
        attrs = random_trees(
            rng,
            "target",
            1 + i % 3,
            1 + i % 3,
            4,
            k,
            modes=MODES[:6] if i % 2 else MODES[:1],
            voters=[0] if i == 5 else None,
        )
        attrs.update(
            n_targets=k,
            aggregate_function=agg,
            post_transform=how,
            base_values=rand(rng, k if i % 2 else 1).tolist() if how != "PROBIT" else [],
        )
        if how == "PROBIT":
            attrs["target_weights"] = [abs(w) / 4 for w in attrs["target_weights"]]
        yield Sample([_with_nan(rand(rng, 5 + i, 4), rng)], attrs, f"{agg} {how} {k}")


register(
    OpSchema(
        "TreeEnsembleRegressor",
        infer=_tree_regressor_infer,
        reference=_tree_regressor,
        attrs={
            **_tree_attrs("target"),
            "n_targets": Attr("int", 1),
            "aggregate_function": Attr("str", "SUM", AGGREGATES),
        },
        doc="Decision trees (ai.onnx.ml): each row walks every tree to a leaf; the leaves' target weights are "
        "aggregated, added to base_values and post-transformed. Outputs [N, n_targets].",
        samples=_regressor_samples,
    )
)


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
    score[:, : base.size] += base
    has[:, : base.size] = True
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
    cases = [
        (3, "NONE", None, False, 0),
        (4, "SOFTMAX", None, False, 4),
        (2, "NONE", [1], True, 0),
        (2, "LOGISTIC", [0], False, 1),
        (2, "PROBIT", [1], True, 0),
        (2, "SOFTMAX_ZERO", None, False, 2),
        (3, "LOGISTIC", [0, 2], False, 3),
    ]
    for i, (k, how, voters, positive, n_base) in enumerate(cases):
        attrs = random_trees(
            rng, "class", 1 + i % 4, 1 + i % 3, 5, k, voters, MODES[:6] if i % 2 else MODES[:1], positive
        )
        if how == "PROBIT":
            attrs["class_weights"] = [w / (2 * (1 + i % 4)) for w in attrs["class_weights"]]
        attrs.update(
            classlabels_int64s=list(range(7, 7 + k)), post_transform=how, base_values=rand(rng, n_base).tolist()
        )
        yield Sample([_with_nan(rand(rng, 6 + i, 5), rng)], attrs, f"{k} classes {how} votes {voters}")


register(
    OpSchema(
        "TreeEnsembleClassifier",
        infer=_tree_classifier_infer,
        reference=_tree_classifier,
        n_outputs=2,
        attrs={**_tree_attrs("class"), "classlabels_int64s": Attr("ints", [])},
        doc="Decision trees (ai.onnx.ml): each row walks every tree to a leaf and the leaves' class weights add "
        "up; outputs the best label [N] (int64) and the class scores [N, classes] after post_transform.",
        samples=_classifier_samples,
    )
)
