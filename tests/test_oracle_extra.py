"""The ops whose schemas give no conformance samples (they run eagerly, or make a value from nothing),
judged by ONNX Runtime or onnx.reference on samples written here, several shapes and dtypes each."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from mnn_core.ops import all_schemas  # noqa: E402
from mnn_core.ops.schema import Sample  # noqa: E402
from mnn_core.testing.onnx_oracle import assert_matches, oracle_outputs  # noqa: E402

_RNG = np.random.default_rng(7)


def _seq(*shapes, dtype="float32"):
    return [_RNG.standard_normal(s).astype(dtype) for s in shapes]


def _i64(v):
    return np.array(v, np.int64)


#: op -> samples (inputs, attrs, label); every op here has no `samples` in its schema. A value input is given
#: twice: as the input ONNX reads and as the attribute mnn binds it to at resize (the reference reads that).
EXTRA_SAMPLES: dict[str, list[Sample]] = {
    "Range": [Sample([np.array(v, dt) for v in args],
                     dict(zip(("start", "limit", "delta"), (np.array(v, dt) for v in args))), f"{dt} {args}")
              for dt, args in (("int64", (2, 17, 3)), ("int64", (10, -7, -4)), ("float32", (0.5, 3.25, 0.375)),
                               ("float32", (1.0, -2.0, -0.3)), ("int32", (5, 5, 1)), ("float64", (-1.5, 2.0, 0.5)))],
    "ConstantOfShape": [Sample([_i64(s)], {"shape": s, "value": np.array([v], dt)}, f"{s} {dt}")
                        for s, v, dt in (([2, 3], 1.5, "float32"), ([4], 7, "int64"), ([1, 5, 1], 0, "int32"),
                                         ([3, 0], 2.0, "float32"), ([2, 2], True, "bool"))],
    "SequenceAt": [Sample([_seq((2, 3), (4,), (1, 5)), _i64(i)], {}, f"at {i}") for i in (0, 2, -1, -3)],
    "SequenceLength": [Sample([_seq(*[(k,)] * n)], {}, f"{n} elements") for n, k in ((1, 3), (4, 2), (7, 5))],
    "SequenceErase": [Sample([_seq((2,), (3,), (4,))] + ([_i64(i)] if i is not None else []), {}, f"erase {i}")
                      for i in (0, 1, -1, None)],
    "SequenceInsert": [Sample([_seq((2,), (3,)), _seq((5,))[0]] + ([_i64(i)] if i is not None else []), {},
                              f"insert at {i}") for i in (0, 1, -2, None)],
    "Optional": [Sample([x], {}, str(x.shape)) for x in _seq((2, 3), (0,), ())],
    "OptionalHasElement": [Sample([x], {}, "absent" if x is None else str(x.shape)) for x in _seq((4,), ()) + [None]],
    "OptionalGetElement": [Sample([x], {}, str(x.shape)) for x in _seq((3, 1), (5,))],
    "SequenceEmpty": [Sample([], {"dtype": dt}, dt) for dt in ("float32", "int64")],
}


def _cases():
    for op, samples in EXTRA_SAMPLES.items():
        for i, sample in enumerate(samples):
            yield pytest.param(op, sample, id=f"{op}-{i}")


@pytest.mark.parametrize("op, sample", list(_cases()))
def test_extra_sample_matches_oracle(op, sample):
    schema = all_schemas()[op]
    assert schema.samples is None, f"{op} has schema samples now: tests/test_reference_vs_onnxruntime.py runs them"
    expected = schema.reference(list(sample.inputs), schema.check_attrs(sample.attrs, op))
    got = oracle_outputs(op, sample, expected)
    assert_matches(op, got, expected, f"{op} [{sample.label}]: reference (ACTUAL) vs oracle (DESIRED)")
