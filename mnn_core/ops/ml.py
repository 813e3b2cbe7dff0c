"""Classic machine learning with ONNX-ML semantics (the ai.onnx.ml domain): Scaler, Normalizer,
Imputer, OneHotEncoder, LinearClassifier and LinearRegressor; the tree ensembles are in
ml_trees.py. (Binarizer and ArrayFeatureExtractor are in misc.py, LabelEncoder in strings.py.)

Inputs are [N, F] rows of features ([F]: one row). Classifiers give int64 labels and float32
scores; string labels are the importer's business (it maps label indices through a LabelEncoder,
so these ops stay static). Where the ONNX-ML spec is silent (a classifier with one score per row,
PROBIT, the base value of a target no tree voted for) the kernels do what ONNX Runtime does, the
runtime skl2onnx and onnxmltools convert for: PROBIT uses its erfinv approximation, a single score
s becomes the two classes' [1 - s, s] (or [-s, s]), and so on.
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


register(
    OpSchema(
        "Scaler",
        infer=_scaler_infer,
        reference=_scaler,
        attrs={"scale": Attr("floats", []), "offset": Attr("floats", [])},
        doc="(x - offset) * scale, one value or one per feature (axis 1), in float32 (ai.onnx.ml).",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 5, 3)], {"scale": [0.5, 2.0, -1.0], "offset": [0.1, 0.0, -0.3]}),
                Sample([rand(rng, 7)], {"scale": [3.0], "offset": [1.0]}),
                Sample([rng.integers(-9, 9, (4, 2)).astype(np.int64)], {"scale": [0.5, 0.25], "offset": [1.0, 2.0]}),
            ]
        ),
    )
)


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


register(
    OpSchema(
        "Normalizer",
        infer=_normalizer_infer,
        reference=_normalize,
        attrs={"norm": Attr("str", "MAX", ("MAX", "L1", "L2"))},
        doc="Each row of [N, C] (or the [C] vector) divided by its max, L1 norm or L2 norm; a zero norm leaves the "
        "row (ai.onnx.ml).",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 4, 5)], {"norm": "L1"}),
                Sample([rand(rng, 3, 7)], {"norm": "L2"}),
                Sample([rand(rng, 3, 7)], {"norm": "MAX"}),
                Sample([np.zeros((2, 3), np.float32)], {"norm": "L2"}),
                Sample([rand(rng, 5)], {"norm": "L2"}),
            ]
        ),
    )
)


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


register(
    OpSchema(
        "Imputer",
        infer=_imputer_infer,
        reference=_imputer,
        attrs={
            "imputed_value_floats": Attr("floats", []),
            "replaced_value_float": Attr("float", 0.0),
            "imputed_value_int64s": Attr("ints", []),
            "replaced_value_int64": Attr("int", 0),
        },
        doc="Replace the elements equal to a value (NaN matches NaN) by one value or one per feature (ai.onnx.ml).",
        samples=lambda rng: iter(
            [
                Sample(
                    [np.array([[1, np.nan, 3], [np.nan, 5, 1]], np.float32)],
                    {"imputed_value_floats": [7.0, 8.0, 9.0], "replaced_value_float": float("nan")},
                ),
                Sample([np.array([[0, 2], [4, 0], [0, 0]], np.int64)], {"imputed_value_int64s": [-1]}),
            ]
        ),
    )
)


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


register(
    OpSchema(
        "OneHotEncoder",
        infer=_one_hot_infer,
        reference=_one_hot,
        attrs={"cats_int64s": Attr("ints", []), "cats_strings": Attr("strs", []), "zeros": Attr("int", 1, (0, 1))},
        doc="A one-hot float vector per element on a new last axis; unknown categories are all zeros "
        "(zeros=1) or an error (ai.onnx.ml).",
        samples=lambda rng: iter(
            [
                Sample([rng.integers(0, 6, (3, 2)).astype(np.int64)], {"cats_int64s": [1, 3, 5, 0]}),
                Sample([np.array([2.0, 7.0, 1.0], np.float32)], {"cats_int64s": [7, 2]}),
            ]
        ),
    )
)


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
        raise GraphError(
            f"LinearClassifier with one score per row needs two class labels, got {len(attrs['classlabels_ints'])}"
        )
    return [TensorInfo((n,), "int64"), TensorInfo((n, max(k, 2)), "float32")]


def _linear_samples(rng):
    for i, how in enumerate(TRANSFORMS):
        k = 3 + i % 2
        yield Sample(
            [rand(rng, 5, 4)],
            {
                "coefficients": rand(rng, 4 * k).tolist(),
                "intercepts": rand(rng, k).tolist(),
                "classlabels_ints": list(range(10, 10 + k)),
                "post_transform": how,
            },
            how,
        )
    yield Sample(
        [rand(rng, 6, 3)],
        {
            "coefficients": rand(rng, 3).tolist(),
            "intercepts": [0.1],
            "classlabels_ints": [4, 7],
            "post_transform": "LOGISTIC",
        },
        "one column",
    )
    yield Sample(
        [rand(rng, 3)],
        {
            "coefficients": rand(rng, 6).tolist(),
            "intercepts": [0.5, -0.5],
            "classlabels_ints": [0, 1],
            "post_transform": "LOGISTIC",
        },
        "one row",
    )


register(
    OpSchema(
        "LinearClassifier",
        infer=_linear_classifier_infer,
        reference=_linear_classifier,
        n_outputs=2,
        attrs={
            "coefficients": Attr("floats", doc="[classes, F], row-major"),
            "intercepts": Attr("floats", []),
            "classlabels_ints": Attr("ints", [], doc="labels by class; empty: the class index"),
            "multi_class": Attr("int", 0, doc="accepted; ONNX Runtime ignores it"),
            "post_transform": Attr("str", "NONE", TRANSFORMS),
        },
        doc="Scores x @ coefficients.T + intercepts and the label of the best (ai.onnx.ml); outputs labels [N], "
        "scores [N, classes] after post_transform.",
        samples=_linear_samples,
        flops=lambda ins, outs, attrs: 2.0 * len(attrs["coefficients"]) * (outs[0].size or 1),
    )
)


def _linear_regressor(ins, attrs):
    k = attrs["targets"]
    s = _linear_scores(ins[0], attrs["coefficients"], attrs["intercepts"], k)
    how = attrs["post_transform"]
    z = (probit(s) if how == "PROBIT" else s) if k == 1 else post_transform(s, how)
    return [z.astype(np.float32)]


def _linear_regressor_infer(ins, attrs):
    n, _ = _rows_info("LinearRegressor", ins[0])
    return [TensorInfo((n, attrs["targets"]), "float32")]


register(
    OpSchema(
        "LinearRegressor",
        infer=_linear_regressor_infer,
        reference=_linear_regressor,
        attrs={
            "coefficients": Attr("floats", doc="[targets, F], row-major"),
            "intercepts": Attr("floats", []),
            "targets": Attr("int", 1),
            "post_transform": Attr("str", "NONE", TRANSFORMS),
        },
        doc="x @ coefficients.T + intercepts for each target, then post_transform (ai.onnx.ml).",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 5, 3)], {"coefficients": rand(rng, 3).tolist(), "intercepts": [0.25]}),
                Sample(
                    [rand(rng, 4, 3)],
                    {
                        "coefficients": rand(rng, 6).tolist(),
                        "intercepts": [1.0, -1.0],
                        "targets": 2,
                        "post_transform": "SOFTMAX",
                    },
                ),
                Sample([rand(rng, 3)], {"coefficients": rand(rng, 6).tolist(), "targets": 2}),
            ]
        ),
        flops=lambda ins, outs, attrs: 2.0 * len(attrs["coefficients"]) * (outs[0].size or 1),
    )
)
