"""Tree-ensemble cases for the compiled backends' tests against the reference (TreeEnsembleClassifier
and TreeEnsembleRegressor): random forests of every two-class case and post transform, rows with NaN
and with features equal to the thresholds, a forest whose sums differ in float32 and float64, and a
cycle the reference's attribute checks do not see. Each backend's test picks its row counts,
threads and seeds."""

from __future__ import annotations

import numpy as np

from ..ops.ml_trees import MODES, random_trees

#: (classes, post transform, the classes the leaves vote for (None: all), weights >= 0, base values):
#: every two-class case of ONNX Runtime's (one base value, two, none; votes for one class or both)
CLASSIFIER_CASES = [
    (3, "NONE", None, False, 0),
    (4, "SOFTMAX", None, False, 4),
    (5, "SOFTMAX_ZERO", [0, 3], False, 2),
    (3, "LOGISTIC", None, True, 5),
    (2, "NONE", [1], True, 0),
    (2, "LOGISTIC", [0], False, 1),
    (2, "PROBIT", [1], True, 0),
    (2, "SOFTMAX", None, False, 2),
    (2, "SOFTMAX_ZERO", None, True, 0),
    (2, "NONE", None, False, 1),
    (2, "LOGISTIC", [1], False, 2),
    (2, "NONE", [0], True, 3),
]
#: (post transform, targets, base values) of the regressor
REGRESSOR_CASES = [
    ("NONE", 1, 1),
    ("PROBIT", 1, 0),
    ("NONE", 3, 3),
    ("SOFTMAX", 2, 2),
    ("LOGISTIC", 3, 0),
    ("SOFTMAX_ZERO", 3, 3),
]


def rows(rng, n: int, f: int, dtype: str, nan: bool = True) -> np.ndarray:
    """[n, f] rows: small integers, or floats around the thresholds with a tenth of them NaN."""
    if dtype.startswith("int"):
        return rng.integers(-2, 3, (n, f)).astype(dtype)
    x = rng.uniform(-1.2, 1.2, (n, f)).astype(dtype)
    if nan:
        x[rng.random(x.shape) < 0.1] = np.nan
    return x


def tie_rows(rng, n: int, f: int, attrs: dict) -> np.ndarray:
    """Rows whose features are the trees' thresholds (and NaN): every comparison mode meets its tie."""
    values = np.r_[np.asarray(attrs["nodes_values"], np.float32), np.nan]
    return rng.choice(values, (n, f)).astype(np.float32)


def classifier(rng, n_rows: int, features: int, k: int, how: str, voters, positive: bool, n_base: int) -> dict:
    """A TreeEnsembleClassifier's attributes for a CLASSIFIER_CASES row; its forest's size follows the
    row count, so that each count meets another forest."""
    attrs = random_trees(rng, "class", 1 + n_rows % 5, 2 + n_rows % 4, features, k, voters, MODES[:6], positive)
    if how == "PROBIT":  # scores near 0.5, where probit is defined
        attrs["class_weights"] = [w / 12 for w in attrs["class_weights"]]
    attrs.update(
        classlabels_int64s=list(range(3, 3 + k)),
        post_transform=how,
        base_values=rng.uniform(-0.5, 0.5, n_base).tolist(),
    )
    return attrs


def regressor(rng, features: int, aggregate: str, how: str, k: int, n_base: int) -> dict:
    """A TreeEnsembleRegressor's attributes for a REGRESSOR_CASES row and an aggregate function."""
    voters = [0] if k == 3 and n_base == 0 else None  # a target no leaf votes for
    attrs = random_trees(rng, "target", 5, 3, features, k, modes=MODES[:6], voters=voters)
    if how == "PROBIT":
        attrs["target_weights"] = [abs(w) / 8 for w in attrs["target_weights"]]
    attrs.update(
        n_targets=k,
        aggregate_function=aggregate,
        post_transform=how,
        base_values=rng.uniform(-0.5, 0.5, n_base).tolist() if how != "PROBIT" else [],
    )
    return attrs


def float32_sums() -> dict:
    """Three leaf roots (trees of depth 0) whose weights add up to 0 in float32 (1e8 + 1 - 1e8) and
    to 1 in float64: the reference adds float32 input's scores in float32, float64 input's in float64."""
    return dict(
        nodes_treeids=[0, 1, 2],
        nodes_nodeids=[0, 0, 0],
        nodes_featureids=[0, 0, 0],
        nodes_values=[0.0] * 3,
        nodes_modes=["LEAF"] * 3,
        nodes_truenodeids=[0] * 3,
        nodes_falsenodeids=[0] * 3,
        target_treeids=[0, 1, 2],
        target_nodeids=[0, 0, 0],
        target_ids=[0] * 3,
        target_weights=[1e8, 1.0, -1e8],
    )


def cycle() -> dict:
    """A classifier whose node 1 leads back to the root, which the reference's attribute checks
    accept: a backend declines it when preparing instead of walking it forever."""
    return dict(
        nodes_treeids=[0, 0, 0],
        nodes_nodeids=[0, 1, 2],
        nodes_featureids=[0, 0, 0],
        nodes_values=[0.5, 0.5, 0.0],
        nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"],
        nodes_truenodeids=[1, 0, 0],
        nodes_falsenodeids=[2, 2, 0],
        class_treeids=[0],
        class_nodeids=[2],
        class_ids=[0],
        class_weights=[1.0],
        classlabels_int64s=[0, 1, 2],
    )
