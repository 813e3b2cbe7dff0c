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
        "Range": [
            Sample(
                [np.array(v, dt) for v in args],
                dict(zip(("start", "limit", "delta"), (np.array(v, dt) for v in args))),
                f"{dt} {args}",
            )
            for dt, args in (
                ("int64", (2, 17, 3)),
                ("int64", (10, -7, -4)),
                ("float32", (0.5, 3.25, 0.375)),
                ("float32", (1.0, -2.0, -0.3)),
                ("int32", (5, 5, 1)),
                ("float64", (-1.5, 2.0, 0.5)),
            )
        ],
        "ConstantOfShape": [
            Sample([i64(s)], {"shape": s, "value": np.array([v], dt)}, f"{s} {dt}")
            for s, v, dt in (
                ([2, 3], 1.5, "float32"),
                ([4], 7, "int64"),
                ([1, 5, 1], 0, "int32"),
                ([3, 0], 2.0, "float32"),
                ([2, 2], True, "bool"),
            )
        ],
        "SequenceAt": [Sample([seq((2, 3), (4,), (1, 5)), i64(i)], {}, f"at {i}") for i in (0, 2, -1, -3)],
        "SequenceLength": [Sample([seq(*[(k,)] * n)], {}, f"{n} elements") for n, k in ((1, 3), (4, 2), (7, 5))],
        "SequenceErase": [
            Sample([seq((2,), (3,), (4,))] + ([i64(i)] if i is not None else []), {}, f"erase {i}")
            for i in (0, 1, -1, None)
        ],
        "SequenceInsert": [
            Sample([seq((2,), (3,)), seq((5,))[0]] + ([i64(i)] if i is not None else []), {}, f"insert at {i}")
            for i in (0, 1, -2, None)
        ],
        "Optional": [Sample([x], {}, str(x.shape)) for x in seq((2, 3), (0,), ())],
        "OptionalHasElement": [
            Sample([x], {}, "absent" if x is None else str(x.shape)) for x in seq((4,), ()) + [None]
        ],
        "OptionalGetElement": [Sample([x], {}, str(x.shape)) for x in seq((3, 1), (5,))],
        "SequenceEmpty": [Sample([], {"dtype": dt}, dt) for dt in ("float32", "int64")],
    }


#: x shape, weight shape, attributes: what the schemas' convolution samples do not reach (rectangular
#: dilations with unequal strides, SAME pads with odd totals on both axes, grouped and depthwise with
#: dilation, a reduction depth C * kh * kw of 333, batch > 1, odd channels, 1-D with dilation)
_CONV_WIDE = [
    ((2, 5, 13, 11), (7, 5, 3, 3), {"dilations": [2, 3], "strides": [1, 2], "pads": [2, 1, 3, 2]}),
    ((1, 3, 10, 9), (4, 3, 4, 3), {"auto_pad": "SAME_UPPER", "strides": [3, 2]}),
    ((1, 3, 10, 9), (4, 3, 4, 3), {"auto_pad": "SAME_LOWER", "strides": [3, 2]}),
    ((2, 37, 9, 8), (19, 37, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 9, 8, 10), (6, 3, 3, 2), {"group": 3, "dilations": [3, 1], "strides": [2, 1], "pads": [1, 0, 2, 1]}),
    ((2, 7, 9, 12), (7, 1, 5, 3), {"group": 7, "dilations": [1, 2], "pads": [2, 2, 2, 2]}),
    ((2, 6, 17), (5, 6, 4), {"dilations": [3], "strides": [2], "pads": [4, 5]}),  # ORT: no SAME with dilation
    ((2, 6, 17), (5, 6, 4), {"strides": [2], "auto_pad": "SAME_LOWER"}),
]

_POOL_WIDE = [
    ((2, 3, 13, 10), {"kernel_shape": [3, 2], "strides": [2, 3], "auto_pad": "SAME_UPPER"}),
    ((2, 3, 13, 10), {"kernel_shape": [2, 3], "strides": [3, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 5, 12, 11), {"kernel_shape": [3, 2], "dilations": [2, 3], "strides": [1, 2], "pads": [2, 1, 1, 0]}),
    ((3, 2, 9, 14), {"kernel_shape": [4, 3], "strides": [3, 2], "pads": [1, 1, 2, 0], "ceil_mode": 1}),
]


def wider_samples() -> dict[str, list[Sample]]:
    """op -> samples beyond its schema's, for the window ops whose geometry (the shared SAME-padding and
    window helpers) backends import from the reference: judged by ONNX Runtime in tests/test_oracle_extra.py."""
    rng = np.random.default_rng(11)
    conv = []
    for xs, ws, attrs in _CONV_WIDE:
        inputs = [
            rng.uniform(-1, 1, xs).astype("float32"),
            rng.uniform(-1, 1, ws).astype("float32"),
            rng.uniform(-1, 1, ws[:1]).astype("float32"),
        ]
        conv.append(Sample(inputs, {"kernel_shape": list(ws[2:]), **attrs}, f"{xs} {ws} {attrs}"))
    pools = {
        op: [
            Sample([rng.uniform(-1, 1, xs).astype("float32")], attrs, f"{xs} {attrs}")
            for xs, attrs in _POOL_WIDE
            if op == "MaxPool" or "dilations" not in attrs
        ]
        for op in ("MaxPool", "AveragePool")
    }
    pools["AveragePool"] += [
        Sample(
            [rng.uniform(-1, 1, (2, 3, 11, 9)).astype("float32")],
            {"kernel_shape": [3, 4], "strides": [2, 3], "pads": [1, 2, 1, 0], "count_include_pad": 1},
            "count_include_pad, uneven pads",
        )
    ]
    return {"Conv": conv, **pools}
