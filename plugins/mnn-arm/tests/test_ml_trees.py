"""TreeEnsembleClassifier / TreeEnsembleRegressor on Arm (ops_ml.py, csrc/ml.c) against the reference: the
schemas' samples, random forests of every node mode, aggregate, post transform and two-class case, several
input dtypes, row counts around the 64-row block (1, 7, 64, 333) and threads; labels exactly, scores
within a few float32 ulps."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ON_ARM, needs_arm

from mnn_core.errors import UnsupportedOpError
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.ops.ml_trees import MODES, random_trees
from mnn_core.ops.schema import get_schema

OPS = ("TreeEnsembleClassifier", "TreeEnsembleRegressor")


def _session(op: str, x: np.ndarray, attrs: dict, threads: int):
    from mnn_core.session import Session

    graph = Graph(name=op)
    graph.inputs["x"] = TensorInfo(x.shape, str(x.dtype))
    outs = ["label", "scores"] if op == "TreeEnsembleClassifier" else ["y"]
    graph.nodes.append(Node(op, ["x"], outs, dict(attrs), op.lower()))
    graph.outputs = outs
    return Session(graph, backend="arm", fallback=False, optimize=False, threads=threads), outs


def check(op: str, x: np.ndarray, attrs: dict, threads: int = 1):
    """arm equals the reference: labels exactly, scores within a few float32 ulps (PROBIT near 0.5, the
    difference of two close float32 roots, within 1e-5)."""
    atol = 1e-5 if attrs.get("post_transform") == "PROBIT" else 1e-6
    sess, names = _session(op, x, attrs, threads)
    want = run_reference(op, [x], attrs)
    for _ in range(2):  # a second run reuses the prepared state and scratch
        got = sess.run({"x": x})
        for name, w in zip(names, want):
            g = got[name]
            assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, g.shape, w.dtype, w.shape)
            if w.dtype == np.int64:
                np.testing.assert_array_equal(g, w, err_msg=f"{op} {name}")
            else:
                np.testing.assert_allclose(g, w, rtol=2e-6, atol=atol, err_msg=f"{op} {name}")


def _samples():
    if not ON_ARM:
        return []
    rng = np.random.default_rng(0)
    return [pytest.param(op, s, id=f"{op}-{i}") for op in OPS for i, s in enumerate(get_schema(op).samples(rng))]


@needs_arm
@pytest.mark.parametrize("op,sample", _samples())
def test_schema_samples(op, sample):
    check(op, sample.inputs[0], sample.attrs)


def _rows(rng, n: int, f: int, dtype: str) -> np.ndarray:
    if dtype.startswith("int"):
        return rng.integers(-2, 3, (n, f)).astype(dtype)
    x = rng.uniform(-1.2, 1.2, (n, f)).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


@needs_arm
@pytest.mark.parametrize(
    "rows,k,how,voters,positive,n_base",
    [
        (1, 3, "NONE", None, False, 0),
        (7, 4, "SOFTMAX", None, False, 4),
        (64, 5, "SOFTMAX_ZERO", [0, 3], False, 2),
        (333, 3, "LOGISTIC", None, True, 5),
        (7, 2, "NONE", [1], True, 0),
        (64, 2, "LOGISTIC", [0], False, 1),
        (333, 2, "PROBIT", [1], True, 0),
        (1, 2, "SOFTMAX", None, False, 2),
        (7, 2, "SOFTMAX_ZERO", None, True, 0),
        (64, 2, "NONE", None, False, 1),
        (333, 2, "LOGISTIC", [1], False, 2),
        (7, 2, "NONE", [0], True, 3),
    ],
)
def test_tree_classifier(rows, k, how, voters, positive, n_base):
    rng = np.random.default_rng(rows * 31 + k * 7 + n_base)
    attrs = random_trees(rng, "class", 1 + rows % 5, 2 + rows % 4, 7, k, voters, MODES[:6], positive)
    if how == "PROBIT":
        attrs["class_weights"] = [w / 12 for w in attrs["class_weights"]]
    base = rng.uniform(-0.5, 0.5, n_base).tolist()
    attrs.update(classlabels_int64s=list(range(3, 3 + k)), post_transform=how, base_values=base)
    check("TreeEnsembleClassifier", _rows(rng, rows, 7, "float32"), attrs, threads=1 + rows % 3)


@needs_arm
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize(
    "agg,how,k,n_base",
    [
        ("SUM", "NONE", 1, 1),
        ("AVERAGE", "PROBIT", 1, 0),
        ("MIN", "NONE", 3, 3),
        ("MAX", "SOFTMAX", 2, 2),
        ("SUM", "LOGISTIC", 3, 0),
        ("AVERAGE", "SOFTMAX_ZERO", 3, 3),
    ],
)
def test_tree_regressor(dtype, agg, how, k, n_base):
    rng = np.random.default_rng(len(dtype) * 11 + k + len(agg))
    attrs = random_trees(rng, "target", 5, 3, 5, k, modes=MODES[:6], voters=[0] if k == 3 and n_base == 0 else None)
    if how == "PROBIT":
        attrs["target_weights"] = [abs(w) / 8 for w in attrs["target_weights"]]
    attrs.update(
        n_targets=k,
        aggregate_function=agg,
        post_transform=how,
        base_values=rng.uniform(-0.5, 0.5, n_base).tolist() if how != "PROBIT" else [],
    )
    for rows in (3, 130):
        check("TreeEnsembleRegressor", _rows(rng, rows, 5, dtype), attrs, threads=2)


@needs_arm
@pytest.mark.parametrize("modes", [MODES[:1], MODES[:6]])
def test_tree_ties(modes):
    """Features equal to thresholds (and NaN), through the BRANCH_LEQ-only walk and the one of every mode."""
    rng = np.random.default_rng(len(modes))
    attrs = random_trees(rng, "class", 6, 4, 5, 3, modes=modes)
    attrs.update(classlabels_int64s=[0, 1, 2], post_transform="NONE")
    values = np.r_[np.asarray(attrs["nodes_values"], np.float32), np.nan]
    check("TreeEnsembleClassifier", rng.choice(values, (150, 5)).astype(np.float32), attrs, threads=2)


@needs_arm
def test_tree_float32_sums():
    """Leaf roots whose weights add up in float32 as the reference's: 1e8 + 1 - 1e8 is 0 there (1 in
    float64); float64 input adds in float64."""
    attrs = dict(
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
    for dtype in ("float32", "float64"):
        check("TreeEnsembleRegressor", np.zeros((3, 2), dtype), attrs)


@needs_arm
def test_tree_big_forest_threads():
    """Deep trees over many blocks of rows: 3 threads give the same bits as one; a [F] input is one row."""
    rng = np.random.default_rng(5)
    attrs = random_trees(rng, "class", 30, 6, 19, 3)
    attrs.update(classlabels_int64s=[0, 1, 2], post_transform="SOFTMAX", base_values=[0.1, 0.2, 0.3])
    x = _rows(rng, 1000, 19, "float32")
    check("TreeEnsembleClassifier", x, attrs, threads=3)
    one, three = (_session("TreeEnsembleClassifier", x, attrs, t)[0].run({"x": x}) for t in (1, 3))
    np.testing.assert_array_equal(one["scores"], three["scores"])
    check("TreeEnsembleClassifier", x[0], attrs)


@needs_arm
def test_tree_cycle_declined():
    """A cycle the reference's attribute checks do not see is declined at planning, not walked forever."""
    attrs = dict(
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
    with pytest.raises(UnsupportedOpError, match="cycle"):
        _session("TreeEnsembleClassifier", np.zeros((2, 1), np.float32), attrs, 1)
