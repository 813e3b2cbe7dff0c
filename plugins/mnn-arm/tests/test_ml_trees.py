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
from mnn_core.testing import ml_trees_cases as cases

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


@needs_arm
@pytest.mark.parametrize("rows,case", list(zip((1, 7, 64, 333, 7, 64, 333, 1, 7, 64, 333, 7), cases.CLASSIFIER_CASES)))
def test_tree_classifier(rows, case):
    k, _, _, _, n_base = case
    rng = np.random.default_rng(rows * 31 + k * 7 + n_base)
    attrs = cases.classifier(rng, rows, 7, *case)
    check("TreeEnsembleClassifier", cases.rows(rng, rows, 7, "float32"), attrs, threads=1 + rows % 3)


@needs_arm
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize(
    "agg,case", list(zip(("SUM", "AVERAGE", "MIN", "MAX", "SUM", "AVERAGE"), cases.REGRESSOR_CASES))
)
def test_tree_regressor(dtype, agg, case):
    how, k, n_base = case
    rng = np.random.default_rng(len(dtype) * 11 + k + len(agg))
    attrs = cases.regressor(rng, 5, agg, how, k, n_base)
    for rows in (3, 130):
        check("TreeEnsembleRegressor", cases.rows(rng, rows, 5, dtype), attrs, threads=2)


@needs_arm
@pytest.mark.parametrize("modes", [MODES[:1], MODES[:6]])
def test_tree_ties(modes):
    """Features equal to thresholds (and NaN), through the BRANCH_LEQ-only walk and the one of every mode."""
    rng = np.random.default_rng(len(modes))
    attrs = random_trees(rng, "class", 6, 4, 5, 3, modes=modes)
    attrs.update(classlabels_int64s=[0, 1, 2], post_transform="NONE")
    check("TreeEnsembleClassifier", cases.tie_rows(rng, 150, 5, attrs), attrs, threads=2)


@needs_arm
def test_tree_float32_sums():
    for dtype in ("float32", "float64"):
        check("TreeEnsembleRegressor", np.zeros((3, 2), dtype), cases.float32_sums())


@needs_arm
def test_tree_big_forest_threads():
    """Deep trees over many blocks of rows: 3 threads give the same bits as one; a [F] input is one row."""
    rng = np.random.default_rng(5)
    attrs = random_trees(rng, "class", 30, 6, 19, 3)
    attrs.update(classlabels_int64s=[0, 1, 2], post_transform="SOFTMAX", base_values=[0.1, 0.2, 0.3])
    x = cases.rows(rng, 1000, 19, "float32")
    check("TreeEnsembleClassifier", x, attrs, threads=3)
    one, three = (_session("TreeEnsembleClassifier", x, attrs, t)[0].run({"x": x}) for t in (1, 3))
    np.testing.assert_array_equal(one["scores"], three["scores"])
    check("TreeEnsembleClassifier", x[0], attrs)


@needs_arm
def test_tree_cycle_declined():
    """A cycle the reference's attribute checks do not see is declined at planning, not walked forever."""
    attrs = cases.cycle()
    with pytest.raises(UnsupportedOpError, match="cycle"):
        _session("TreeEnsembleClassifier", np.zeros((2, 1), np.float32), attrs, 1)
