"""Cases for the ops whose schemas give no conformance samples (they run eagerly, or make a value from
nothing), judged by ONNX Runtime or onnx.reference (onnx_oracle) in tests/test_oracle_extra.py: several
shapes and dtypes each. A value input is given twice: as the input ONNX reads and as the attribute mnn
binds it to at resize (the reference reads that)."""

from __future__ import annotations

import numpy as np

from ..ops.schema import Sample


def extra_samples() -> dict[str, list[Sample]]:
    """op -> samples (inputs, attrs, label), the same on every call."""
    rng = np.random.default_rng(7)

    def seq(*shapes, dtype="float32"):
        return [rng.standard_normal(s).astype(dtype) for s in shapes]

    def i64(v):
        return np.array(v, np.int64)

    return {
        "Range": [Sample([np.array(v, dt) for v in args],
                         dict(zip(("start", "limit", "delta"), (np.array(v, dt) for v in args))), f"{dt} {args}")
                  for dt, args in (("int64", (2, 17, 3)), ("int64", (10, -7, -4)), ("float32", (0.5, 3.25, 0.375)),
                                   ("float32", (1.0, -2.0, -0.3)), ("int32", (5, 5, 1)),
                                   ("float64", (-1.5, 2.0, 0.5)))],
        "ConstantOfShape": [Sample([i64(s)], {"shape": s, "value": np.array([v], dt)}, f"{s} {dt}")
                            for s, v, dt in (([2, 3], 1.5, "float32"), ([4], 7, "int64"), ([1, 5, 1], 0, "int32"),
                                             ([3, 0], 2.0, "float32"), ([2, 2], True, "bool"))],
        "SequenceAt": [Sample([seq((2, 3), (4,), (1, 5)), i64(i)], {}, f"at {i}") for i in (0, 2, -1, -3)],
        "SequenceLength": [Sample([seq(*[(k,)] * n)], {}, f"{n} elements") for n, k in ((1, 3), (4, 2), (7, 5))],
        "SequenceErase": [Sample([seq((2,), (3,), (4,))] + ([i64(i)] if i is not None else []), {}, f"erase {i}")
                          for i in (0, 1, -1, None)],
        "SequenceInsert": [Sample([seq((2,), (3,)), seq((5,))[0]] + ([i64(i)] if i is not None else []), {},
                                  f"insert at {i}") for i in (0, 1, -2, None)],
        "Optional": [Sample([x], {}, str(x.shape)) for x in seq((2, 3), (0,), ())],
        "OptionalHasElement": [Sample([x], {}, "absent" if x is None else str(x.shape))
                               for x in seq((4,), ()) + [None]],
        "OptionalGetElement": [Sample([x], {}, str(x.shape)) for x in seq((3, 1), (5,))],
        "SequenceEmpty": [Sample([], {"dtype": dt}, dt) for dt in ("float32", "int64")],
    }
