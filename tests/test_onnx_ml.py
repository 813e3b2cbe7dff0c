"""Classic ML (ai.onnx.ml) and ONNX Runtime's DynamicQuantizeLSTM, imported and run on the reference
backend, against ONNX Runtime: scikit-learn estimators converted by skl2onnx on random data of odd
sizes, single ONNX-ML nodes for every post_transform and ONNX Runtime's binary-classifier rules, and
a small torch LSTM quantized by onnxruntime.quantization.quantize_dynamic."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import OnnxImportError, import_onnx  # noqa: E402
from mnn_core.errors import MnnError  # noqa: E402
from mnn_core.ops.ml import TRANSFORMS  # noqa: E402
from mnn_core.ops.ml_trees import random_trees  # noqa: E402

ML = "ai.onnx.ml"
TOL = 1e-5  # probabilities and scores: ONNX Runtime's to this (absolute and relative)


def run_both(model, feeds: dict) -> tuple[list, list]:
    """(mnn's outputs, ONNX Runtime's), in the model's output order."""
    data = model.SerializeToString()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    want = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"]).run(None, feeds)
    graph = import_onnx(data)
    out = mnn.Session(graph, backend="reference").run(feeds)
    return [out[n] for n in graph.outputs], want


def assert_matches(model, feeds: dict, tol: float = TOL) -> None:
    got, want = run_both(model, feeds)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {k}: shape {g.shape}, onnxruntime {w.shape}"
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"output {k}")
        else:
            assert g.tolist() == w.tolist(), f"output {k}: labels differ"


# -- scikit-learn through skl2onnx ---------------------------------------------------------------------

try:
    import skl2onnx
    from sklearn import ensemble, linear_model, pipeline, preprocessing, tree
    from sklearn.impute import SimpleImputer
except ImportError as e:  # not in CI's install list: these tests then say why they skip
    skl2onnx = None
    MISSING = f"scikit-learn and skl2onnx build these models (pip install scikit-learn skl2onnx): {e}"

needs_sklearn = pytest.mark.skipif(skl2onnx is None, reason=MISSING if skl2onnx is None else "")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(37, 7)).astype(np.float32)
Y2 = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(np.int64)
Y3 = np.digitize(X[:, 1] - X[:, 2], [-0.6, 0.6])
Y5 = RNG.integers(0, 5, 37)
YR = X[:, 2] * 2 - X[:, 3] + 0.1 * RNG.normal(size=37)


def convert(estimator, x=X, **options):
    """The fitted estimator as ONNX, probabilities as a tensor (no ZipMap)."""
    opts = {"zipmap": False, **options} if hasattr(estimator, "classes_") else options or None
    return skl2onnx.to_onnx(estimator, x[:1], options=opts, target_opset={"": 17, ML: 3})


CLASSIFIERS = {  # name: (a fresh estimator, its targets)
    "logreg-binary": (lambda: linear_model.LogisticRegression(), Y2),
    "logreg-3": (lambda: linear_model.LogisticRegression(), Y3),
    "logreg-5": (lambda: linear_model.LogisticRegression(C=0.5, max_iter=400), Y5),
    "sgd-hinge-3": (lambda: linear_model.SGDClassifier(random_state=0), Y3),
    "ridge-classifier-binary": (lambda: linear_model.RidgeClassifier(), Y2),
    "forest-binary": (lambda: ensemble.RandomForestClassifier(n_estimators=7, max_depth=4, random_state=0), Y2),
    "forest-3": (lambda: ensemble.RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0), Y3),
    "extra-trees-5": (lambda: ensemble.ExtraTreesClassifier(n_estimators=6, max_depth=3, random_state=0), Y5),
    "tree-3": (lambda: tree.DecisionTreeClassifier(max_depth=5, random_state=0), Y3),
    "gboost-binary": (lambda: ensemble.GradientBoostingClassifier(n_estimators=9, max_depth=2, random_state=0), Y2),
    "gboost-3": (lambda: ensemble.GradientBoostingClassifier(n_estimators=6, max_depth=3, random_state=0), Y3),
    "scaler-logreg": (
        lambda: pipeline.make_pipeline(preprocessing.StandardScaler(), linear_model.LogisticRegression()),
        Y3,
    ),
}


@needs_sklearn
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_sklearn_classifier_matches_onnxruntime(name):
    make, y = CLASSIFIERS[name]
    estimator = make().fit(X, y)
    feeds = {"X": RNG.normal(size=(13, 7)).astype(np.float32)}
    assert_matches(convert(estimator), feeds)


REGRESSORS = {
    "linear": (lambda: linear_model.LinearRegression(), YR),
    "ridge-2-targets": (lambda: linear_model.Ridge(alpha=0.3), np.c_[YR, X[:, 4]]),
    "forest": (lambda: ensemble.RandomForestRegressor(n_estimators=6, max_depth=4, random_state=0), YR),
    "forest-2-targets": (
        lambda: ensemble.RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0),
        np.c_[YR, X[:, 4]],
    ),
    "gboost": (lambda: ensemble.GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0), YR),
    "tree": (lambda: tree.DecisionTreeRegressor(max_depth=6, random_state=0), YR),
}


@needs_sklearn
@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_sklearn_regressor_matches_onnxruntime(name):
    make, y = REGRESSORS[name]
    estimator = make().fit(X, y)
    assert_matches(convert(estimator), {"X": RNG.normal(size=(11, 7)).astype(np.float32)})


@needs_sklearn
@pytest.mark.parametrize("name", ["forest-3", "forest-binary"])
def test_trees_on_double_input(name):
    """float64 input: ONNX Runtime compares and adds up in float64. (skl2onnx's double gradient boosting
    and single trees give double probabilities, which ONNX Runtime refuses.)"""
    make, y = CLASSIFIERS[name]
    x = X.astype(np.float64)
    estimator = make().fit(x, y)
    model = convert(estimator, x)
    assert_matches(model, {"X": RNG.normal(size=(9, 7))})


TRANSFORMERS = {
    "standard-scaler": lambda: preprocessing.StandardScaler(),
    "min-max-scaler": lambda: preprocessing.MinMaxScaler(),
    "normalizer-l1": lambda: preprocessing.Normalizer(norm="l1"),
    "normalizer-l2": lambda: preprocessing.Normalizer(norm="l2"),
    "normalizer-max": lambda: preprocessing.Normalizer(norm="max"),
    "binarizer": lambda: preprocessing.Binarizer(threshold=0.2),
    "imputer-mean": lambda: SimpleImputer(strategy="mean"),
}


@needs_sklearn
@pytest.mark.parametrize("name", sorted(TRANSFORMERS))
def test_sklearn_transformer_matches_onnxruntime(name):
    x = X.copy()
    if name.startswith("imputer"):
        x[RNG.random(x.shape) < 0.2] = np.nan
    estimator = TRANSFORMERS[name]().fit(x)
    feeds = x[:15].copy()
    feeds[0, :] = 0  # a zero row: the normalizers leave it alone
    assert_matches(convert(estimator, x), {"X": feeds})


@needs_sklearn
def test_one_hot_encoder_on_integers():
    cats = RNG.integers(0, 4, (29, 3)).astype(np.int64)
    encoder = preprocessing.OneHotEncoder(handle_unknown="ignore").fit(cats)
    test = cats[:10].copy()
    test[1, 2] = 9  # unknown: all zeros
    assert_matches(convert(encoder, cats), {"X": test})


@needs_sklearn
def test_string_class_labels_go_through_a_label_encoder():
    names = np.array(["cat", "dog", "emu"], dtype=object)[Y3]
    for estimator in (
        tree.DecisionTreeClassifier(max_depth=4, random_state=0),
        linear_model.LogisticRegression(),
        ensemble.RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
    ):
        estimator.fit(X, names)
        got, want = run_both(convert(estimator), {"X": X[:17]})
        assert got[0].dtype == object and got[0].tolist() == want[0].tolist()
        np.testing.assert_allclose(got[1], want[1], rtol=TOL, atol=TOL)


@needs_sklearn
def test_zipmap_is_refused_with_the_way_out():
    estimator = linear_model.LogisticRegression().fit(X, Y3)
    model = skl2onnx.to_onnx(estimator, X[:1], target_opset={"": 17, ML: 3})  # zipmap on, as by default
    with pytest.raises(OnnxImportError, match="ZipMap") as info:
        import_onnx(model)
    assert "'zipmap': False" in str(info.value) and "ai.onnx.ml" in str(info.value)


# -- single ONNX-ML nodes: every post_transform, ONNX Runtime's binary rules, opset 1 and 3 forms ------------


def ml_model(op: str, attrs: dict, n_features: int, outputs, dtype=T.FLOAT, ml_opset: int = 3):
    node = helper.make_node(op, ["X"], [name for name, _ in outputs], domain=ML, **attrs)
    graph = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info("X", dtype, [None, n_features])],
        [helper.make_tensor_value_info(name, t, None) for name, t in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)])
    model.ir_version = 8
    return model


CLASSIFIER_OUT = [("label", T.INT64), ("scores", T.FLOAT)]


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("classes", [1, 2, 4])
def test_linear_classifier_post_transforms(how, classes):
    rng = np.random.default_rng(classes)
    labels = [3, 8] if classes <= 2 else [5, 6, 7, 9]
    scale = 0.4 if how == "PROBIT" else 1.5  # PROBIT takes probabilities, in (0, 1)
    attrs = {
        "coefficients": (rng.uniform(-1, 1, classes * 5) * scale / 5).tolist(),
        "intercepts": (
            0.5 + rng.uniform(-0.1, 0.1, classes) if how == "PROBIT" else rng.uniform(-1, 1, classes)
        ).tolist(),
        "classlabels_ints": labels,
        "post_transform": how,
    }
    if how == "PROBIT" and classes == 1:
        pytest.skip("ONNX Runtime leaves half of a one-score PROBIT classifier's scores unwritten")
    x = rng.uniform(-1, 1, (9, 5)).astype(np.float32)
    x[0] = 0  # (SOFTMAX_ZERO leaves zero scores out)
    assert_matches(ml_model("LinearClassifier", attrs, 5, CLASSIFIER_OUT), {"X": x})


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("targets", [1, 3])
def test_linear_regressor_post_transforms(how, targets):
    rng = np.random.default_rng(targets)
    attrs = {
        "coefficients": (rng.uniform(-1, 1, targets * 4) / 8).tolist(),
        "intercepts": (0.5 + rng.uniform(-0.1, 0.1, targets)).tolist(),
        "targets": targets,
        "post_transform": how,
    }
    x = rng.uniform(-1, 1, (7, 4)).astype(np.float32)
    assert_matches(ml_model("LinearRegressor", attrs, 4, [("y", T.FLOAT)]), {"X": x})


def _tree_feeds(rng, n_features: int, dtype=np.float32) -> dict:
    x = rng.uniform(-1, 1, (23, n_features)).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan  # missing values follow nodes_missing_value_tracks_true
    return {"X": x}


CLASSIFIER_CASES = {  # classes, voters (None: all), non-negative weights, base values
    "multiclass": (4, None, False, 0),
    "multiclass-base": (3, None, True, 3),
    "multiclass-sparse": (5, [0, 3], False, 5),
    "binary-both-vote": (2, None, True, 0),
    "binary-positive-only": (2, [1], True, 0),
    "binary-mixed-base1": (2, [0], False, 1),
    "binary-mixed-base2": (2, [1], False, 2),
    "binary-class0-votes": (2, [0], True, 0),
    "binary-both-base2": (2, None, False, 2),
}


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("case", sorted(CLASSIFIER_CASES))
def test_tree_classifier_post_transforms_and_binary_rules(case, how):
    classes, voters, positive, n_base = CLASSIFIER_CASES[case]
    rng = np.random.default_rng(len(case) + len(how))
    modes = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
    attrs = random_trees(rng, "class", 4, 3, 6, classes, voters, modes, positive)
    if how == "PROBIT":  # scores in (0, 1)
        attrs["class_weights"] = [abs(w) / 9 for w in attrs["class_weights"]]
    attrs.update(
        classlabels_int64s=[11, 4, 2, 7, 5][:classes],
        post_transform=how,
        base_values=rng.uniform(0, 0.2, n_base).tolist(),
    )
    if not n_base:
        del attrs["base_values"]
    model = ml_model("TreeEnsembleClassifier", attrs, 6, CLASSIFIER_OUT, ml_opset=1)
    if how == "PROBIT" and voters == [0] and n_base < 2:  # one score per row: ORT writes the first column only
        (label, scores), (want_label, want_scores) = run_both(model, _tree_feeds(rng, 6))
        assert label.tolist() == want_label.tolist()
        np.testing.assert_allclose(scores[:, 0], want_scores[:, 0], rtol=TOL, atol=TOL)
        return
    assert_matches(model, _tree_feeds(rng, 6))


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize(
    "targets, how",
    [(1, "NONE"), (1, "PROBIT"), (3, "NONE"), (2, "LOGISTIC"), (3, "SOFTMAX"), (2, "SOFTMAX_ZERO"), (3, "PROBIT")],
)
def test_tree_regressor_aggregates(aggregate, targets, how):
    rng = np.random.default_rng(targets + len(aggregate))
    attrs = random_trees(rng, "target", 5, 2, 4, targets, voters=[0, targets - 1])
    if how == "PROBIT":
        attrs["target_weights"] = [abs(w) / 11 for w in attrs["target_weights"]]
    attrs.update(
        n_targets=targets,
        aggregate_function=aggregate,
        post_transform=how,
        base_values=rng.uniform(0, 0.1, targets).tolist(),
    )
    assert_matches(ml_model("TreeEnsembleRegressor", attrs, 4, [("y", T.FLOAT)], ml_opset=1), _tree_feeds(rng, 4))


@pytest.mark.parametrize("op", ["TreeEnsembleRegressor", "TreeEnsembleClassifier"])
def test_tensor_attributes_on_double_input(op):
    """ai.onnx.ml opset 3: thresholds, weights and base values as float64 tensors."""
    rng = np.random.default_rng(3)
    votes = "target" if op == "TreeEnsembleRegressor" else "class"
    attrs = random_trees(rng, votes, 3, 3, 5, 3)
    for key in ("nodes_values", f"{votes}_weights"):
        values = np.asarray(attrs.pop(key)) + 1e-9  # not float32 values
        attrs[f"{key}_as_tensor"] = helper.make_tensor(key, T.DOUBLE, [len(values)], values)
    attrs["base_values_as_tensor"] = helper.make_tensor("base", T.DOUBLE, [3], [0.25, -0.5, 0.125])
    attrs.update({"n_targets": 3} if votes == "target" else {"classlabels_int64s": [1, 2, 3]})
    outputs = [("y", T.FLOAT)] if votes == "target" else CLASSIFIER_OUT
    assert_matches(ml_model(op, attrs, 5, outputs, dtype=T.DOUBLE), _tree_feeds(rng, 5, np.float64))


def test_imputer_and_scaler_on_int64():
    nodes = [
        helper.make_node(
            "Imputer", ["X"], ["imputed"], domain=ML, imputed_value_int64s=[7, 8, 9], replaced_value_int64=0
        ),
        helper.make_node("Scaler", ["imputed"], ["y"], domain=ML, offset=[1.0, 0.5, -2.0], scale=[0.5, 2.0, 3.0]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", T.INT64, [None, 3])],
        [helper.make_tensor_value_info("imputed", T.INT64, None), helper.make_tensor_value_info("y", T.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])
    model.ir_version = 8
    assert_matches(model, {"X": np.random.default_rng(0).integers(-2, 3, (6, 3)).astype(np.int64)})


def _single(op: str, attrs: dict, x_type, y_type, shape, ml_opset: int = 1):
    node = helper.make_node(op, ["X"], ["y"], domain=ML, **attrs)
    graph = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info("X", x_type, shape)],
        [helper.make_tensor_value_info("y", y_type, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(
    "op, attrs",
    [
        ("Scaler", {"offset": [0.5, -1.0, 0.25], "scale": [2.0, 0.5, -3.0]}),
        ("Scaler", {"offset": [1.0], "scale": [4.0]}),
        ("Normalizer", {"norm": "L1"}),
        ("Normalizer", {"norm": "L2"}),
        ("Normalizer", {"norm": "MAX"}),
    ],
)
@pytest.mark.parametrize("shape", [(3,), (5, 3), (2, 3, 4)])
def test_scaler_and_normalizer_at_each_rank(op, attrs, shape):
    model = _single(op, attrs, T.FLOAT, T.FLOAT, list(shape))
    if op == "Normalizer" and len(shape) > 2:  # ONNX Runtime refuses these too
        with pytest.raises(OnnxImportError, match="Normalizer takes"):
            import_onnx(model)
        return
    x = np.random.default_rng(len(shape)).uniform(-2, 2, shape).astype(np.float32)
    assert_matches(model, {"X": x})


@pytest.mark.parametrize("to_strings", [True, False])
def test_label_encoder_opset_1_classes(to_strings):
    attrs = {"classes_strings": ["a", "bb", "c"], "default_int64": -5, "default_string": "?"}
    if to_strings:
        model = _single("LabelEncoder", attrs, T.INT64, T.STRING, [5])
        feeds = {"X": np.array([2, 0, 7, 1, -1], np.int64)}
    else:
        model = _single("LabelEncoder", attrs, T.STRING, T.INT64, [5])
        feeds = {"X": np.array(["c", "a", "zz", "bb", "a"], dtype=object)}
    got, want = run_both(model, feeds)
    assert got[0].tolist() == want[0].tolist()


def test_a_broken_forest_is_named_where_shapes_are_known():
    attrs = random_trees(np.random.default_rng(0), "target", 2, 2, 3, 1)
    attrs["nodes_truenodeids"][0] = 99
    model = ml_model("TreeEnsembleRegressor", {**attrs, "n_targets": 1}, 3, [("y", T.FLOAT)])
    with pytest.raises(OnnxImportError, match="true child 99"):
        import_onnx(model, input_shapes={"X": (2, 3)})
    with pytest.raises(MnnError, match="true child 99"):  # a symbolic batch: at resize
        mnn.Session(import_onnx(model)).run({"X": np.zeros((2, 3), np.float32)})


def _tree_ensemble_v5(rng, n_trees: int, depth: int, features: int, targets: int) -> dict:
    """ai.onnx.ml opset 5 TreeEnsemble attributes: full random trees, every mode, BRANCH_MEMBER included."""
    a = {
        k: []
        for k in (
            "nodes_featureids",
            "nodes_modes",
            "nodes_splits",
            "nodes_truenodeids",
            "nodes_trueleafs",
            "nodes_falsenodeids",
            "nodes_falseleafs",
            "nodes_missing_value_tracks_true",
            "leaf_targetids",
            "leaf_weights",
            "membership_values",
            "tree_roots",
        )
    }
    for _ in range(n_trees):
        inner, first, leaves = 2**depth - 1, len(a["nodes_modes"]), len(a["leaf_weights"])
        a["tree_roots"].append(first)
        for node in range(inner):
            mode = int(rng.integers(7))
            a["nodes_modes"].append(mode)
            a["nodes_featureids"].append(int(rng.integers(features)))
            a["nodes_splits"].append(float(rng.integers(-2, 3)) if mode >= 4 else float(rng.uniform(-2, 2)))
            a["nodes_missing_value_tracks_true"].append(int(rng.integers(2)))
            if mode == 6:
                a["membership_values"] += rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], rng.integers(1, 4), False).tolist()
                a["membership_values"].append(np.nan)
            for side, child in (("true", 2 * node + 1), ("false", 2 * node + 2)):
                leaf = child >= inner
                a[f"nodes_{side}leafs"].append(int(leaf))
                a[f"nodes_{side}nodeids"].append(leaves + child - inner if leaf else first + child)
        for _ in range(inner + 1):
            a["leaf_targetids"].append(int(rng.integers(targets)))
            a["leaf_weights"].append(float(rng.uniform(-1, 1)))
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("aggregate, how, targets", [(1, 0, 1), (0, 1, 3), (2, 2, 2), (3, 4, 2)])
def test_tree_ensemble_opset_5(dtype, aggregate, how, targets):
    """Against ONNX Runtime, which reads post_transform 1 as LOGISTIC and 2 as SOFTMAX (1.32; the spec
    and mnn the other way round), so it gets the swapped code."""
    rng = np.random.default_rng(targets + aggregate)
    a = _tree_ensemble_v5(rng, 4, 3, 3, targets)
    if how == 4:  # PROBIT takes (0, 1)
        a["leaf_weights"] = [abs(w) / 5 for w in a["leaf_weights"]]
    tensor_type = T.FLOAT if dtype == np.float32 else T.DOUBLE
    attrs = {
        "nodes_modes": helper.make_tensor("modes", T.UINT8, [len(a["nodes_modes"])], a.pop("nodes_modes")),
        "n_targets": targets,
        "aggregate_function": aggregate,
    }
    for key in ("nodes_splits", "leaf_weights", "membership_values"):
        attrs[key] = helper.make_tensor(key, tensor_type, [len(a[key])], np.asarray(a.pop(key), dtype))

    def model(post_transform):
        node = helper.make_node("TreeEnsemble", ["X"], ["y"], domain=ML, **a, **attrs, post_transform=post_transform)
        graph = helper.make_graph(
            [node],
            "g",
            [helper.make_tensor_value_info("X", tensor_type, [None, 3])],
            [helper.make_tensor_value_info("y", tensor_type, None)],
        )
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(ML, 5)])
        m.ir_version = 10
        return m

    # integers (and NaN): ONNX Runtime tests BRANCH_MEMBER on the value truncated to an integer, the spec
    # (and mnn) on the value itself
    x = rng.integers(-2, 3, (17, 3)).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan
    feeds = {"X": x.astype(dtype)}
    got, _ = run_both(model(how), feeds)
    _, want = run_both(model({1: 2, 2: 1}.get(how, how)), feeds)
    assert got[0].dtype == dtype
    np.testing.assert_allclose(got[0], want[0], rtol=TOL, atol=TOL)


def test_unknown_contrib_op_names_its_domain():
    node = helper.make_node("NoSuchFusedOp", ["X"], ["y"], domain="com.microsoft")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", T.FLOAT, [2])],
        [helper.make_tensor_value_info("y", T.FLOAT, None)],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    with pytest.raises(OnnxImportError, match=r"com\.microsoft::NoSuchFusedOp"):
        import_onnx(model)


# -- ONNX Runtime's DynamicQuantizeLSTM (quantize_dynamic of a torch LSTM) ----------------------------------


@pytest.mark.parametrize("bidirectional, per_channel", [(False, False), (True, False), (True, True)])
def test_dynamic_quantize_lstm_matches_onnxruntime(tmp_path, bidirectional, per_channel):
    torch = pytest.importorskip("torch", reason="a torch LSTM is exported and quantized (pip install torch)")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(input_size=7, hidden_size=5, bidirectional=bidirectional).eval()
    x = torch.randn(6, 2, 7)
    float_path, quant_path = tmp_path / "lstm.onnx", tmp_path / "lstm.int8.onnx"
    torch.onnx.export(
        lstm,
        (x,),
        str(float_path),
        input_names=["x"],
        output_names=["y", "h", "c"],
        dynamic_axes={"x": {0: "seq"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(
        str(float_path),
        str(quant_path),
        op_types_to_quantize=["LSTM"],
        per_channel=per_channel,
        weight_type=QuantType.QInt8,
    )
    model = onnx.load(str(quant_path))
    assert any(n.op_type == "DynamicQuantizeLSTM" for n in model.graph.node)
    feeds = {"x": np.random.default_rng(1).normal(size=(9, 2, 7)).astype(np.float32)}
    got, want = run_both(model, feeds)
    for g, w in zip(got, want):
        rel = np.linalg.norm(g - w) / np.linalg.norm(w)
        assert rel < 1e-5, f"relative L2 error {rel:.3g}"
