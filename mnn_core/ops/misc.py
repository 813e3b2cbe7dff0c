"""Odds and ends with ONNX semantics: BitCast, TfIdfVectorizer, and the ai.onnx.ml
Binarizer and ArrayFeatureExtractor."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import DTYPES, TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register


def _bitcast_infer(ins, attrs):
    src, dst = np.dtype(ins[0].dtype), np.dtype(attrs["to"])
    if src.itemsize != dst.itemsize:
        raise GraphError(f"BitCast: {src} and {dst} differ in size ({src.itemsize} and {dst.itemsize} bytes)")
    return [TensorInfo(ins[0].shape, attrs["to"])]


register(
    OpSchema(
        "BitCast",
        infer=_bitcast_infer,
        reference=lambda ins, attrs: [ins[0].view(attrs["to"]).copy()],
        attrs={"to": Attr("str", choices=DTYPES)},
        doc="Reinterpret the bytes of each element as another dtype of the same size.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 3, 4)], {"to": "int32"}),
                Sample([rng.integers(-100, 100, (5,)).astype(np.int8)], {"to": "uint8"}),
            ]
        ),
    )
)


def _binarizer(ins, attrs):
    return [(ins[0] > attrs["threshold"]).astype(ins[0].dtype)]


register(
    OpSchema(
        "Binarizer",
        infer=lambda ins, attrs: [ins[0]],
        reference=_binarizer,
        attrs={"threshold": Attr("float", 0.0)},
        doc="1 where x > threshold, else 0 (ai.onnx.ml).",
        samples=lambda rng: iter([Sample([rand(rng, 3, 4)], {"threshold": 0.2})]),
    )
)


def _afe_infer(ins, attrs):
    x, idx = ins
    if not x.shape:
        raise GraphError("ArrayFeatureExtractor takes a tensor of rank >= 1")
    n = int(np.prod(idx.shape)) if idx.shape else 1
    shape = (1, n) if len(x.shape) == 1 else tuple(x.shape[:-1]) + (n,)
    return [TensorInfo(shape, x.dtype)]


def _afe(ins, attrs):
    x, idx = ins
    y = np.take(x, idx.reshape(-1).astype(np.int64), axis=-1)
    return [y.reshape(1, -1) if x.ndim == 1 else y]


register(
    OpSchema(
        "ArrayFeatureExtractor",
        infer=_afe_infer,
        reference=_afe,
        n_inputs=(2, 2),
        doc="Select elements of the last axis by index (ai.onnx.ml).",
        samples=lambda rng: iter([Sample([rand(rng, 3, 4), np.array([0, 2])]), Sample([rand(rng, 5), np.array([4])])]),
    )
)


# -- TfIdfVectorizer -----------------------------------------------------------------------------------


def _ngram_pool(attrs) -> dict:
    """{n-gram tuple: output index} from the pool (pool_int64s grouped by ngram_counts)."""
    pool, counts, indexes = attrs["pool_int64s"], attrs["ngram_counts"], attrs["ngram_indexes"]
    grams, k = {}, 0
    for n, start in enumerate(counts, start=1):
        end = counts[n] if n < len(counts) else len(pool)
        for i in range(start, end, n):
            grams[tuple(pool[i : i + n])] = indexes[k]
            k += 1
    return grams


def _tfidf_infer(ins, attrs):
    x = ins[0]
    if len(x.shape) not in (1, 2) or x.dtype not in ("int32", "int64"):
        raise GraphError(f"TfIdfVectorizer takes int32/int64 [C] or [N, C] input, got {x}")
    if not attrs["pool_int64s"]:
        raise GraphError("TfIdfVectorizer: mnn supports integer pools (pool_int64s) only")
    width = max(attrs["ngram_indexes"]) + 1
    return [TensorInfo((width,) if len(x.shape) == 1 else (x.shape[0], width), "float32")]


def _tfidf(ins, attrs):
    x = ins[0]
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    grams = _ngram_pool(attrs)
    width = max(attrs["ngram_indexes"]) + 1
    counts = np.zeros((rows.shape[0], width), np.float32)
    lo, hi, max_skip = attrs["min_gram_length"], attrs["max_gram_length"], attrs["max_skip_count"]
    for r, row in enumerate(rows.tolist()):
        for n in range(lo, hi + 1):
            for skip in [0] if n == 1 else range(max_skip + 1):  # unigrams are counted once
                step = skip + 1
                for start in range(len(row) - (n - 1) * step):
                    gram = tuple(row[start + j * step] for j in range(n))
                    if gram in grams:
                        counts[r, grams[gram]] += 1
    weights = np.asarray(attrs["weights"] or np.ones(width), np.float32)
    if attrs["mode"] == "IDF":
        counts = (counts > 0) * weights
    elif attrs["mode"] == "TFIDF":
        counts = counts * weights
    return [counts.reshape(-1) if x.ndim == 1 else counts]


register(
    OpSchema(
        "TfIdfVectorizer",
        infer=_tfidf_infer,
        reference=_tfidf,
        attrs={
            "max_gram_length": Attr("int"),
            "min_gram_length": Attr("int"),
            "max_skip_count": Attr("int"),
            "mode": Attr("str", "TF", ("TF", "IDF", "TFIDF")),
            "ngram_counts": Attr("ints"),
            "ngram_indexes": Attr("ints"),
            "pool_int64s": Attr("ints", []),
            "weights": Attr("floats", []),
        },
        doc="Count (weighted) n-grams with skips from a pool of integer n-grams.",
        samples=lambda rng: iter(
            [
                Sample(
                    [np.array([1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8], np.int32)],
                    {
                        "max_gram_length": 2,
                        "min_gram_length": 1,
                        "max_skip_count": 1,
                        "ngram_counts": [0, 4],
                        "ngram_indexes": [0, 1, 2, 3, 4, 5, 6],
                        "pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7],
                    },
                )
            ]
        ),
    )
)
