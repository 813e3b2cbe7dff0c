"""The classic-ML ops (ai.onnx.ml; ops_ml.py, csrc/ml/) on x86 against the reference: the schemas'
samples, random forests and linear models of every mode, several input dtypes and row counts (one
block of rows, several, and enough for the threaded path)."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core.errors import UnsupportedOpError
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.ops.ml import TRANSFORMS
from mnn_core.ops.ml_trees import AGGREGATES, MODES, random_trees
from mnn_core.ops.schema import get_schema
from mnn_core.session import Session
from mnn_core.testing import ml_trees_cases as cases

ML_OPS = (
    "TreeEnsembleClassifier",
    "TreeEnsembleRegressor",
    "LinearClassifier",
    "LinearRegressor",
    "Scaler",
    "Normalizer",
    "Imputer",
    "Binarizer",
)
TWO_OUTPUTS = ("TreeEnsembleClassifier", "LinearClassifier")


def _session(op: str, x: np.ndarray, attrs: dict, threads: int) -> Session:
    graph = Graph(name=op)
    graph.inputs["x"] = TensorInfo(x.shape, str(x.dtype))
    outs = ["label", "scores"] if op in TWO_OUTPUTS else ["y"]
    graph.nodes.append(Node(op, ["x"], outs, dict(attrs), op.lower()))
    graph.outputs = outs
    return Session(graph, backend="x86", fallback=False, optimize=False, threads=threads)


def check(op: str, x: np.ndarray, attrs: dict, threads: int = 1, rtol: float = 2e-6, atol: float = 1e-6):
    """x86 equals the reference: labels exactly, scores within a few float32 ulps (PROBIT near 0.5, the
    difference of two close float32 roots, within 1e-5: an ulp of log there moves it that far)."""
    if attrs.get("post_transform") == "PROBIT":
        atol = max(atol, 1e-5)
    sess = _session(op, x, attrs, threads)
    want = run_reference(op, [x], attrs)
    got = sess.run({"x": x})
    names = ["label", "scores"] if op in TWO_OUTPUTS else ["y"]
    for name, w in zip(names, want):
        g = got[name]
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, g.shape, w.dtype, w.shape)
        if w.dtype == np.int64:
            np.testing.assert_array_equal(g, w, err_msg=f"{op} {name}")
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{op} {name}")


def _samples(op):
    return [pytest.param(op, s, id=f"{op}-{i}") for i, s in enumerate(get_schema(op).samples(np.random.default_rng(0)))]


@pytest.mark.parametrize("op,sample", [p for op in ML_OPS for p in _samples(op)])
def test_schema_samples(op, sample):
    if op == "Imputer" and sample.inputs[0].dtype.kind == "i":
        with pytest.raises(UnsupportedOpError, match="integer Imputer"):
            _session(op, sample.inputs[0], sample.attrs, 1)
        return
    check(op, sample.inputs[0], sample.attrs)


ROWS = (1, 7, 64, 333)


@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("case", cases.CLASSIFIER_CASES)
def test_tree_classifier(rows, case):
    k, how, voters, positive, n_base = case
    rng = np.random.default_rng(rows * 31 + k * 7 + n_base)
    attrs = cases.classifier(rng, rows, 6, *case)
    for threads in (1, 2):
        check("TreeEnsembleClassifier", cases.rows(rng, rows, 6, "float32"), attrs, threads)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("agg", AGGREGATES)
@pytest.mark.parametrize("case", cases.REGRESSOR_CASES)
def test_tree_regressor(dtype, agg, case):
    how, k, n_base = case
    rng = np.random.default_rng(len(dtype) * 11 + k)
    attrs = cases.regressor(rng, 4, agg, how, k, n_base)
    for rows in (3, 130):
        check("TreeEnsembleRegressor", cases.rows(rng, rows, 4, dtype), attrs, threads=2)


@pytest.mark.parametrize("modes", [MODES[:1], MODES[:6]])
def test_tree_ties(modes):
    """Features equal to thresholds, through the BRANCH_LEQ-only walk and the one of every mode."""
    rng = np.random.default_rng(len(modes))
    attrs = random_trees(rng, "class", 6, 4, 5, 3, modes=modes)
    attrs.update(classlabels_int64s=[0, 1, 2], post_transform="NONE")
    check("TreeEnsembleClassifier", cases.tie_rows(rng, 300, 5, attrs), attrs, threads=2)


def test_tree_float32_sums():
    """float32 input's scores add up in float32 as the reference's (1e8 + 1 - 1e8 is 0 there), float64's in float64."""
    for dtype in ("float32", "float64"):
        check("TreeEnsembleRegressor", np.zeros((3, 2), dtype), cases.float32_sums())


def test_tree_big_forest_threads():
    """Deep trees and many blocks of rows over several workers; a [F] input is one row."""
    rng = np.random.default_rng(5)
    attrs = random_trees(rng, "class", 40, 7, 20, 3)
    attrs.update(classlabels_int64s=[0, 1, 2], post_transform="SOFTMAX", base_values=[0.1, 0.2, 0.3])
    check("TreeEnsembleClassifier", cases.rows(rng, 2000, 20, "float32"), attrs, threads=3)
    check("TreeEnsembleClassifier", cases.rows(rng, 1, 20, "float32")[0], attrs)


def test_tree_cycle_fails():
    """A cycle the reference's checks do not see is declined at prepare, not walked forever."""
    attrs = cases.cycle()
    with pytest.raises(UnsupportedOpError, match="cycle"):
        _session("TreeEnsembleClassifier", np.zeros((2, 1), np.float32), attrs, 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize(
    "k,labels,intercepts", [(1, [4, 9], True), (3, [5, 6, 7], True), (4, [], False), (2, [0, 1], True)]
)
def test_linear_classifier(dtype, how, k, labels, intercepts):
    rng = np.random.default_rng(k * 5 + len(how))
    f = 5
    coef = rng.uniform(-1, 1, k * f).tolist()
    attrs = dict(
        coefficients=coef,
        classlabels_ints=labels,
        post_transform=how,
        intercepts=rng.uniform(-1, 1, k).tolist() if intercepts else [],
    )
    if how == "PROBIT":
        attrs["coefficients"] = [c / 20 for c in coef]
        attrs["intercepts"] = [0.5] * k if intercepts else []
    if not intercepts:
        attrs["intercepts"] = []
    for rows in (1, 9, 300):
        x = cases.rows(rng, rows, f, dtype, nan=False)
        if how == "PROBIT" and dtype != "int64":
            x = x / 4
        check("LinearClassifier", x, attrs, threads=2)


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("k", [1, 3])
def test_linear_regressor(how, k):
    rng = np.random.default_rng(k)
    attrs = dict(
        coefficients=(rng.uniform(-1, 1, k * 6) / 20).tolist(), targets=k, post_transform=how, intercepts=[0.5] * k
    )
    for rows in (2, 257):
        check("LinearRegressor", cases.rows(rng, rows, 6, "float32", nan=False) / 4, attrs, threads=2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("shape", [(7,), (5, 3), (40000, 3), (2, 3, 4)])
@pytest.mark.parametrize("per_feature", [True, False])
def test_scaler(dtype, shape, per_feature):
    rng = np.random.default_rng(len(shape))
    w = (shape[0] if len(shape) == 1 else shape[1]) if per_feature else 1
    attrs = dict(scale=rng.uniform(-2, 2, w).tolist(), offset=rng.uniform(-1, 1, w).tolist())
    x = (rng.uniform(-5, 5, shape) if dtype.startswith("float") else rng.integers(-9, 9, shape)).astype(dtype)
    check("Scaler", x, attrs, threads=2, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
@pytest.mark.parametrize("shape", [(9,), (4, 5), (3000, 17)])
def test_normalizer(dtype, norm, shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.uniform(-5, 5, shape) if dtype.startswith("float") else rng.integers(-9, 9, shape)).astype(dtype)
    x[0] = 0  # a zero row (or element) keeps its values
    check("Normalizer", x, {"norm": norm}, threads=2, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("replaced", [float("nan"), 0.1])
@pytest.mark.parametrize("values", [[7.0], [1.0, 2.0, 3.0]])
def test_imputer(dtype, replaced, values):
    x = np.random.default_rng(1).choice([0.1, 0.5, np.nan, -2.0], (50, 3)).astype(dtype)
    check("Imputer", x, dict(imputed_value_floats=values, replaced_value_float=replaced), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binarizer(dtype):
    x = np.random.default_rng(2).choice([0.1, 0.3, np.nan, -2.0], (50000,)).astype(dtype)
    check("Binarizer", x, dict(threshold=0.1), threads=2, rtol=0, atol=0)
