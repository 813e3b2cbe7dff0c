"""Extra random cases for the GPU backends' integer and classic-ML kernels, beyond the op schemas'
samples (which ONNX Runtime must also run): zero points per output channel, per row of A and per
column of B; integer arithmetic with broadcasting; DynamicQuantizeLSTM at odd sizes; forests and
linear models with many classes or one score per row, two-class forests, NaN features and every
node mode. `quant_cases()` gives them as mnn_core.testing conformance cases (one-node graphs with
the reference's outputs)."""

from __future__ import annotations

import numpy as np


def _bytes(rng, shape, signed: bool):
    return rng.integers(-128, 128, shape).astype(np.int8) if signed else rng.integers(0, 256, shape).astype(np.uint8)


def _integer(rng):
    for signed in (False, True):
        x, w = _bytes(rng, (2, 6, 9, 7), signed), _bytes(rng, (8, 3, 3, 2), signed)
        zx, zw = _bytes(rng, (), signed), _bytes(rng, (8,), signed)
        attrs = {"strides": [2, 1], "pads": [1, 1, 0, 1], "group": 2}
        yield "ConvInteger", [x, w, zx, zw], attrs, f"{'int8' if signed else 'uint8'} per-channel w zero points"
        a, b = _bytes(rng, (3, 5, 11), signed), _bytes(rng, (11, 7), not signed)
        za, zb = _bytes(rng, (5,), signed), _bytes(rng, (7,), not signed)
        yield "MatMulInteger", [a, b, za, zb], {}, f"A {a.dtype} per row, B {b.dtype} per column"
    for dtype, ops in (("int32", ("Add", "Sub", "Mul", "Div", "Max", "Min")), ("int64", ("Add", "Sub", "Mul"))):
        a = rng.integers(-1000, 1000, (3, 1, 5)).astype(dtype)
        b = rng.integers(-50, 50, (4, 5)).astype(dtype)
        b[b == 0] = 7
        for op in ops:
            yield op, [a, b], {}, f"{dtype} broadcast"


def _dq_lstm(rng):
    for seq, batch, inp, hid, direction, per_column, signed in [
        (6, 2, 17, 33, "bidirectional", True, True),
        (9, 3, 5, 7, "reverse", False, False),
    ]:
        dirs = 2 if direction == "bidirectional" else 1
        cols = 4 * hid if per_column else 1
        zp = np.zeros((dirs, cols), np.int8) if signed else np.full((dirs, cols), 120, np.uint8)
        ins = [
            rng.standard_normal((seq, batch, inp)).astype(np.float32),
            _bytes(rng, (dirs, inp, 4 * hid), signed),
            _bytes(rng, (dirs, hid, 4 * hid), signed),
            rng.standard_normal((dirs, 8 * hid)).astype(np.float32) * 0.1,
            None,
            rng.standard_normal((dirs, batch, hid)).astype(np.float32) * 0.5,
            rng.standard_normal((dirs, batch, hid)).astype(np.float32) * 0.5,
            rng.standard_normal((dirs, 3 * hid)).astype(np.float32) * 0.1,
        ]
        for _ in range(2):
            ins += [rng.uniform(0.002, 0.01, (dirs, cols)).astype(np.float32), zp]
        attrs = {"hidden_size": hid, "direction": direction, "clip": 3.0}
        yield "DynamicQuantizeLSTM", ins, attrs, f"seq{seq} batch{batch} in{inp} hid{hid} {direction} peepholes"


def _classic_ml(rng):
    from ..ops.ml_trees import MODES, random_trees

    for k, how in ((5, "SOFTMAX"), (3, "NONE"), (4, "LOGISTIC")):
        attrs = random_trees(rng, "class", 7, 4, 6, k, modes=MODES[:6])
        attrs.update(classlabels_int64s=list(range(100, 100 + k)), post_transform=how, base_values=[0.1] * (k - 1))
        x = rng.uniform(-1, 1, (37, 6)).astype(np.float32)
        x[rng.random(x.shape) < 0.1] = np.nan
        yield "TreeEnsembleClassifier", [x], attrs, f"7 trees depth 4, {k} classes {how}, NaN features"
    for voters, positive, n_base, how in (
        ([1], False, 0, "NONE"),
        (None, False, 1, "LOGISTIC"),
        ([0], True, 2, "NONE"),
    ):
        attrs = random_trees(rng, "class", 5, 3, 4, 2, voters, MODES[:6], positive)
        attrs.update(classlabels_int64s=[3, 9], post_transform=how, base_values=[0.2, -0.1][:n_base])
        x = rng.uniform(-1, 1, (29, 4)).astype(np.float32)
        x[rng.random(x.shape) < 0.1] = np.nan
        yield "TreeEnsembleClassifier", [x], attrs, f"two classes, votes {voters}, {n_base} base values, {how}"
    for how in ("NONE", "LOGISTIC", "PROBIT"):
        scale = 0.1 if how == "PROBIT" else 1.0  # (probit of scores within (0, 1))
        attrs = {"coefficients": (rng.uniform(0, 1, 6) * scale).tolist(), "intercepts": [0.05], "post_transform": how}
        attrs["classlabels_ints"] = [-4, 6]
        x = rng.uniform(-1 if how != "PROBIT" else 0, 1, (13, 6)).astype(np.float32)
        yield "LinearClassifier", [x], attrs, f"one score per row, {how}"
    coef = rng.standard_normal(9 * 13).astype(np.float32)
    for how in ("SOFTMAX_ZERO", "LOGISTIC"):
        attrs = {"coefficients": coef.tolist(), "intercepts": [0.0] * 9, "post_transform": how}
        yield "LinearClassifier", [rng.standard_normal((11, 13)).astype(np.float32)], attrs, f"9 classes {how}"
    yield "Scaler", [rng.standard_normal((3, 7)).astype(np.float32)], {"scale": [2.0], "offset": [0.5]}, "one value"
    for norm in ("MAX", "L1", "L2"):
        yield "Normalizer", [rng.standard_normal((9, 13)).astype(np.float32)], {"norm": norm}, f"9x13 {norm}"


def quant_cases(seed: int = 0) -> list:
    """The cases, as mnn_core.testing.conformance.ConformanceCase (run them with run_case)."""
    from ..ops import run_reference
    from .conformance import ConformanceCase, conformance_graph

    rng = np.random.default_rng(seed)
    cases = []
    for op, ins, attrs, label in [*_integer(rng), *_dq_lstm(rng), *_classic_ml(rng)]:
        graph, feeds = conformance_graph(op, ins, attrs, op in ("ConvInteger", "MatMulInteger"))
        cases.append(ConformanceCase(op, len(cases), graph, feeds, run_reference(op, list(ins), attrs), label))
    return cases
