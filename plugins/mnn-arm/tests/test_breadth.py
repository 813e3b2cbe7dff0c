"""The data-movement, reduction and other breadth kernels on random inputs of several shapes (odd sizes,
tails of the 4-lane and 4x4 transpose blocks, broadcasts, negative axes and indices) against the
reference backend: fp32 within 1e-5 relative, other dtypes exact; and in the fp16 domain
(precision="low") within 1e-2 where the CPU has asimdhp."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ON_ARM, needs_arm

from mnn_core.testing import ConformanceCase, conformance_graph, run_case

RNG = np.random.default_rng(7)
#: ops whose inputs after the first are given as constants (arm packs their weights at prepare)
CONSTANT_WEIGHTS = ("Conv", "ConvTranspose", "RNN", "GRU", "LSTM")


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _attrs(op, given):
    from mnn_core.ops import all_schemas

    schema = all_schemas()[op]
    return {**{k: a.default for k, a in schema.attrs.items()}, **given}


def _cases():
    c = []
    for shape, perm in [
        ((5, 7), (1, 0)),
        ((3, 9, 13), (0, 2, 1)),
        ((2, 3, 5, 7), (0, 2, 3, 1)),
        ((2, 6, 5, 11), (3, 1, 0, 2)),
        ((1, 4, 1, 8), (2, 3, 0, 1)),
        ((17, 33), (1, 0)),
    ]:
        c.append(("Transpose", [f32(*shape)], {"perm": list(perm)}))
    c.append(("Transpose", [RNG.integers(0, 9, (3, 5, 2)).astype(np.int64)], {"perm": [2, 0, 1]}))
    for shape, starts, ends, axes, steps in [
        ((7, 9), [1], [6], [0], [1]),
        ((5, 11, 3), [0, 10], [5, 1], [0, 1], [2, -3]),
        ((4, 13), [-5], [100], [-1], [1]),
        ((3, 7, 5), [2], [0], [2], [-1]),
    ]:
        c.append(("Slice", [f32(*shape)], {"starts": starts, "ends": ends, "axes": axes, "steps": steps}))
    for shape, out in [((3, 1), (3, 5)), ((1, 7), (4, 7)), ((5, 1, 3), (2, 5, 7, 3)), ((1,), (9,))]:
        c.append(("Expand", [f32(*shape)], {"shape": list(out)}))
    for shape, rep in [((3, 5), [2, 3]), ((2, 1, 7), [1, 4, 2]), ((5,), [3])]:
        c.append(("Tile", [f32(*shape)], {"repeats": rep}))
    for shape, axis, split in [((7, 10), 1, [3, 7]), ((9, 5, 3), 0, [2, 2, 5]), ((4, 11), -1, [1, 10])]:
        c.append(("Split", [f32(*shape)], {"axis": axis, "split": split}))
    for shape, axis, idx in [
        ((7, 5), 0, [[0, 6], [-1, 3]]),
        ((3, 9, 5), 1, [8, 0, -9, 4, 4]),
        ((5, 3), -1, [2]),
        ((11, 7), 0, np.int32(3)),
    ]:
        c.append(
            (
                "Gather",
                [f32(*shape), np.asarray(idx, np.int64 if not isinstance(idx, np.int32) else np.int32)],
                {"axis": axis},
            )
        )
    for shape, axis, n in [((3, 7), 1, 4), ((5, 4, 3), 0, 6), ((2, 3, 5), -1, 5)]:
        idx_shape = list(shape)
        idx_shape[axis] = n
        idx = RNG.integers(-shape[axis], shape[axis], idx_shape).astype(np.int64)
        c.append(("GatherElements", [f32(*shape), idx], {"axis": axis}))
    for sc, sx, sy in [
        ((5, 7), (5, 7), (5, 7)),
        ((1, 9), (3, 9), (3, 1)),
        ((2, 1, 5), (3, 1), (2, 3, 5)),
        ((13,), (13,), (1,)),
    ]:
        c.append(("Where", [RNG.random(sc) > 0.5, f32(*sx), f32(*sy)], {}))
    for shape, pads, mode in [
        ((3, 5), [1, 2, 0, 3], "constant"),
        ((2, 3, 4), [0, 1, 2, 0, 2, 1], "reflect"),
        ((4, 7), [2, 0, 3, 5], "edge"),
        ((5, 3), [1, 1, 1, 1], "wrap"),
    ]:
        c.append(("Pad", [f32(*shape)], {"pads": pads, "mode": mode, "value": 0.5}))
    for op in (
        "ReduceSum",
        "ReduceMean",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ReduceSumSquare",
        "ReduceL1",
        "ReduceL2",
        "ReduceLogSum",
        "ReduceLogSumExp",
    ):
        for shape, axes, keep in [
            ((5, 7), [1], 1),
            ((3, 9, 13), [1], 0),
            ((2, 3, 5, 7), [2, 3], 1),
            ((3, 4, 5), [0, 2], 0),
            ((6, 11), [], 1),
            ((2, 3, 4, 5), [0, 1, 3], 1),
            ((7, 9, 2), [2], 0),  # rows of 2, 3 and 4: four rows a vector (ld2 / ld3 / ld4), then a tail
            ((37, 3), [1], 1),
            ((3, 5, 4), [2], 0),
        ]:
            x = f32(*shape)
            if op in ("ReduceLogSum", "ReduceProd"):
                x = np.abs(x) + 0.5
            c.append((op, [x], {"axes": axes, "keepdims": keep}))
    for n, outer in [(2, 9), (3, 45), (4, 6), (3, 3), (5, 8)]:  # a stack along a new last axis (st2 / st3 / st4)
        c.append(("Concat", [f32(outer, 5, 1) for _ in range(n)], {"axis": 2}))
    for a, b in [
        ((2, 5, 7), (2, 7, 3)),
        ((3, 1, 9, 13), (1, 4, 13, 6)),
        ((7,), (2, 7, 5)),
        ((4, 3, 17), (17,)),
        ((2, 3, 1, 11), (3, 11, 9)),
        ((1, 13, 19), (5, 19, 14)),
    ]:
        c.append(("MatMul", [f32(*a), f32(*b)], {}))
    for op in (
        "Exp",
        "Log",
        "Sqrt",
        "Neg",
        "Abs",
        "Reciprocal",
        "Erf",
        "Floor",
        "Ceil",
        "Sin",
        "Cos",
        "Softplus",
        "Elu",
        "Selu",
        "Mish",
    ):
        for shape in [(7,), (3, 5, 9), (2, 33)]:
            x = f32(*shape) * 3
            c.append((op, [np.abs(x) + 0.1 if op in ("Log", "Sqrt") else x], {}))
    edges = np.array([0.499, 0.5, 0.501, -0.5, 4.0, -4.0, 10.0, np.inf, -np.inf, 0.0], np.float32)
    c.append(("Erf", [np.concatenate([f32(21) * 1e-3, edges, f32(13)])], {}))  # both branches of the vector erf
    for op in ("Add", "Sub", "Mul", "Max", "Min"):  # integers: numpy's wrapping arithmetic, broadcasting
        for dt, (a, b) in [(np.int32, ((3, 1, 9), (4, 1))), (np.int64, ((5, 7), (7,))), (np.int32, ((13,), ()))]:
            big = np.iinfo(dt).max // 3
            c.append((op, [RNG.integers(-big, big, a).astype(dt), RNG.integers(-big, big, b).astype(dt)], {}))
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.49, 0.51, 7.25, -8.75], np.float32)
    c.append(("Round", [np.concatenate([halves, f32(30) * 4])], {}))  # ties to even, vector and tail
    c.append(("Round", [f32(3, 5, 9) * 3], {}))
    c.append(("IsNaN", [np.where(RNG.random((5, 7)) > 0.7, np.nan, f32(5, 7)).astype(np.float32)], {}))
    c.append(("Not", [RNG.random((3, 11)) > 0.5], {}))
    for a in [(3, 11), (2, 5, 4), (7,)]:  # a square (a power spectrum's): one multiply, not powf; negatives too
        c.append(("Pow", [f32(*a) * 3, np.full(() if len(a) == 1 else (1, 1), 2.0, np.float32)], {}))
    exponents = np.array([2.0, 3.0, 2.0, 0.5, 2.0, 1.0], np.float32)  # not one 2 for the row: powf
    c.append(("Pow", [np.abs(f32(4, 6)) + 0.1, exponents], {}))
    for a, b in [((5, 7), (5, 7)), ((3, 1, 9), (4, 1)), ((13,), ())]:
        c.append(("Pow", [np.abs(f32(*a)) + 0.1, f32(*b)], {}))
        for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
            for dt in (np.float32, np.int64, np.int32):
                c.append((op, [RNG.integers(-3, 3, a).astype(dt), RNG.integers(-3, 3, b).astype(dt)], {}))
        for op in ("And", "Or", "Xor"):
            c.append((op, [RNG.random(a) > 0.5, RNG.random(b) > 0.5], {}))
    for src, dst in [
        ("float32", "int32"),
        ("float32", "int64"),
        ("int64", "float32"),
        ("int32", "float32"),
        ("bool", "float32"),
        ("float32", "bool"),
        ("int64", "int32"),
        ("uint8", "float32"),
        ("int64", "bool"),
        ("float64", "float32"),
    ]:
        x = (f32(3, 17) * 50).astype(src) if src != "bool" else RNG.random((3, 17)) > 0.5
        c.append(("Cast", [x], {"to": dst}))
    for shape, attrs in [
        ((1, 3, 5, 7), {"scales": [1.0, 1.0, 2.0, 2.0]}),
        ((2, 3, 9, 13), {"sizes": [2, 3, 4, 20], "mode": "linear", "coordinate_transformation_mode": "align_corners"}),
        ((1, 2, 11, 10), {"scales": [1.0, 1.0, 0.5, 0.7], "mode": "cubic", "antialias": 1}),
        ((3, 17), {"scales": [1.0, 1.5], "mode": "linear"}),
        (
            (1, 5, 6, 9),
            {
                "scales": [1.0, 1.0, 3.0, 1.0],
                "mode": "nearest",
                "nearest_mode": "floor",
                "coordinate_transformation_mode": "asymmetric",
            },
        ),
        (
            (1, 1, 7, 6),
            {
                "sizes": [1, 1, 5, 5],
                "mode": "linear",
                "extrapolation_value": 9.0,
                "coordinate_transformation_mode": "tf_crop_and_resize",
                "roi": [0, 0, -0.2, 0.1, 1, 1, 1.1, 0.8],
            },
        ),
        ((1, 3, 5, 5), {"scales": [1.0, 1.0, 1.6, 1.6], "mode": "cubic", "exclude_outside": 1}),
    ]:
        c.append(("Resize", [f32(*shape)], attrs))
    for x, w, attrs in [
        ((1, 3, 5, 7), (3, 4, 3, 3), {}),
        ((2, 4, 6, 5), (4, 3, 2, 2), {"strides": [2, 2]}),
        ((1, 6, 7, 9), (6, 2, 3, 3), {"strides": [2, 1], "pads": [1, 0, 1, 2], "group": 3, "output_padding": [1, 0]}),
        ((1, 5, 4, 6), (5, 7, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1], "activation": "relu"}),
        ((1, 2, 5, 5), (2, 3, 3, 3), {"dilations": [2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2]}),
        ((2, 3, 11), (3, 5, 4), {"strides": [3], "pads": [1, 2]}),
    ]:
        inputs = [f32(*x), f32(*w)] + ([f32(w[1] * attrs.get("group", 1))] if len(x) == 4 else [])
        c.append(("ConvTranspose", inputs, attrs))
    for op, g in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        lbr = {"linear_before_reset": 1} if op == "GRU" else {}
        for seq, batch, inp, hid, attrs, extras in [
            (5, 3, 7, 6, {}, ()),
            (4, 2, 5, 9, {"direction": "bidirectional"}, ("b",)),
            (6, 3, 4, 5, {"direction": "reverse", "clip": 0.8}, ("b", "lens", "h0")),
            (3, 2, 6, 7, {"layout": 1, "linear_before_reset": 1} if op == "GRU" else {"layout": 1}, ("b", "h0")),
            (5, 4, 3, 4, {"input_forget": 1} if op == "LSTM" else {}, ("b", "lens", "h0", "c0", "p")),
            # wider than one 16-column panel of R, hidden past a multiple of 8 and of 4
            (6, 2, 13, 37, {"direction": "bidirectional", **lbr}, ("b", "lens", "h0")),
            (4, 1, 9, 21, {"clip": 2.5}, ("b", "h0", "c0", "p")),
        ]:
            dirs = 2 if attrs.get("direction") == "bidirectional" else 1
            x = f32(batch, seq, inp) if attrs.get("layout") else f32(seq, batch, inp)
            ins = [
                x,
                f32(dirs, g * hid, inp) * 0.5,
                f32(dirs, g * hid, hid) * 0.5,
                f32(dirs, 2 * g * hid) * 0.3 if "b" in extras else None,
                RNG.integers(0, seq + 1, batch).astype(np.int32) if "lens" in extras else None,
                ((f32(batch, dirs, hid) if attrs.get("layout") else f32(dirs, batch, hid)) if "h0" in extras else None),
            ]
            if op == "LSTM":
                ins += [
                    f32(dirs, batch, hid) if "c0" in extras else None,
                    f32(dirs, 3 * hid) if "p" in extras else None,
                ]
            while ins[-1] is None:
                ins.pop()
            c.append((op, ins, {"hidden_size": hid, **attrs}))
    # convolutions with the activations the GEMM tile leaves to the epilogue pass (a fused SiLU...): 1x1, 3x3
    # stride 2 (im2col) and stride 1 (Winograd), partial tiles and rows not a multiple of 4
    for act, extra in [
        ("silu", {}),
        ("hard_swish", {}),
        ("hard_sigmoid", {"act_alpha": 0.2, "act_beta": 0.5}),
        ("leaky_relu", {"act_alpha": 0.1}),
        ("gelu", {}),
        ("sigmoid", {}),
        ("tanh", {}),
    ]:
        attrs = {"activation": act, **extra}
        # weights scaled so the outputs stay near 1: the fp16 domain's elementwise 1e-2 then holds
        c.append(("Conv", [f32(1, 6, 7, 13), f32(10, 6, 1, 1) * 0.4, f32(10)], attrs))
        w3 = f32(7, 5, 3, 3) * 0.2
        c.append(("Conv", [f32(1, 5, 9, 11), w3, f32(7)], {"pads": [1] * 4, "strides": [2, 2], **attrs}))
        c.append(("Conv", [f32(1, 5, 9, 11), w3, f32(7)], {"pads": [1] * 4, **attrs}))
    # depthwise down one column (kernel k x 1 on a width of 1: FSMN's memory blocks), 4 outputs a vector and a tail
    for h, k, stride, dil, pads, extra in [
        (39, 20, 1, 1, [0, 0, 0, 0], {}),
        (23, 5, 2, 1, [2, 0, 1, 0], {"activation": "relu"}),
        (17, 3, 1, 3, [3, 0, 3, 0], {"activation": "clip", "act_alpha": -0.5, "act_beta": 0.5}),
    ]:
        attrs = {"group": 6, "strides": [stride, 1], "dilations": [dil, 1], "pads": pads, **extra}
        c.append(("Conv", [f32(2, 6, h, 1), f32(6, 1, k, 1) * 0.3, f32(6)], attrs))
    # rows wide enough for the 4-output vectors (stride 1 and 2), read in place or from the padded copy
    for op, shape, attrs in [
        ("MaxPool", (1, 3, 23, 37), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        ("MaxPool", (2, 2, 19, 41), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ("MaxPool", (1, 3, 17, 29), {"kernel_shape": [2, 3], "strides": [2, 2], "dilations": [2, 2]}),
        ("MaxPool", (1, 2, 9, 26), {"kernel_shape": [3, 3], "strides": [1, 1]}),
        ("AveragePool", (1, 3, 21, 35), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ("AveragePool", (1, 2, 15, 30), {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1}),
        # several 8-output vectors and a tail (the fp16 domain's kernel), both strides, 3-wide and not
        ("MaxPool", (1, 3, 13, 53), {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
        ("MaxPool", (1, 2, 11, 67), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        ("MaxPool", (1, 2, 9, 43), {"kernel_shape": [2, 2], "strides": [2, 2]}),
        ("AveragePool", (2, 2, 10, 51), {"kernel_shape": [3, 3], "strides": [1, 1]}),
        ("AveragePool", (1, 3, 12, 45), {"kernel_shape": [5, 5], "pads": [2, 2, 2, 2], "count_include_pad": 1}),
        ("AveragePool", (1, 2, 13, 71), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ]:
        c.append((op, [f32(*shape)], attrs))
    for shape, idx_shape, b in [((5, 7, 3), (4, 2), 0), ((3, 6, 5), (3, 2, 1), 1), ((4, 9), (2, 3, 2), 0)]:
        k = idx_shape[-1]
        hi = np.array(shape[b : b + k]).reshape((1,) * (len(idx_shape) - 1) + (k,))
        idx = (RNG.integers(0, 1 << 20, idx_shape) % hi) - hi * (RNG.random(idx_shape) > 0.7)
        c.append(("GatherND", [f32(*shape), idx.astype(np.int64)], {"batch_dims": b}))
    for shape in [(2, 5, 3, 7), (3, 4), (1, 6, 9)]:
        ch = shape[1]
        c.append(("BatchNormalization", [f32(*shape), f32(ch), f32(ch), f32(ch), np.abs(f32(ch)) + 0.5], {}))
    for shape, depth, axis, dt in [((5,), 7, -1, np.int64), ((3, 4), 5, 0, np.int32), ((2, 3, 2), 6, 1, np.float32)]:
        idx = RNG.integers(-depth, depth, shape).astype(dt)
        c.append(("OneHot", [idx, np.array([0.5, 3.0], np.float32)], {"depth": depth, "axis": axis}))
    for shape, depth, axis, values in [  # 16-byte fills of 1-, 4- and 8-byte values; indices out of range: all off
        ((2, 9), 257, -1, np.array([0.0, 1.0], np.float32)),
        ((4, 5), 6, 1, np.array([-3, 7], np.int64)),
        ((7,), 4, 0, np.array([2, 9], np.uint8)),
    ]:
        idx = RNG.integers(-depth - 2, depth + 3, shape).astype(np.int64)
        c.append(("OneHot", [idx, values], {"depth": depth, "axis": axis}))
    for x, attrs in [
        (f32(5, 3), {"scale": [0.5, 2.0, -1.0], "offset": [0.1, 0.0, -0.3]}),
        (f32(7), {"scale": [3.0], "offset": [1.0]}),
        (RNG.integers(-9, 9, (4, 2)).astype(np.int64), {"scale": [0.5, 0.25], "offset": [1.0, 2.0]}),
        (f32(3, 5).astype(np.float64), {"scale": [1.5], "offset": [0.2]}),
    ]:
        c.append(("Scaler", [x], attrs))
    for norm in ("MAX", "L1", "L2"):
        for x in (f32(4, 7), f32(9), np.zeros((2, 3), np.float32)):
            c.append(("Normalizer", [x], {"norm": norm}))
    for how in ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"):
        for k, x, labels in [
            (3, f32(5, 4), [10, 11, 12]),
            (4, f32(4).astype(np.float64), []),
            (1, RNG.integers(-5, 5, (6, 3)).astype(np.int64), [7, 9]),
        ]:
            feats = x.shape[-1]
            coef = (f32(k * feats) * (0.1 if how == "PROBIT" else 1)).tolist()
            c.append(
                (
                    "LinearClassifier",
                    [x],
                    {
                        "coefficients": coef,
                        "intercepts": (f32(k) * 0.1).tolist(),
                        "classlabels_ints": labels,
                        "post_transform": how,
                    },
                )
            )
    c.append(("DepthToSpace", [f32(1, 8, 3, 5)], {"blocksize": 2, "mode": "DCR"}))
    c.append(("DepthToSpace", [f32(2, 12, 3, 3)], {"blocksize": 2, "mode": "CRD"}))
    c.append(("SpaceToDepth", [f32(1, 3, 6, 4)], {"blocksize": 2}))
    return c


CASES = _cases() if ON_ARM else []


def _case(i):
    op, inputs, attrs = CASES[i]
    from mnn_core.ops import run_reference

    attrs = _attrs(op, attrs)
    graph, feeds = conformance_graph(op, inputs, attrs, op in CONSTANT_WEIGHTS)
    return ConformanceCase(op, i, graph, feeds, run_reference(op, list(inputs), attrs), f"{op} {attrs}")


def _fp16():
    from mnn_arm import paths

    return paths.runnable("fp16")


@needs_arm
@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_fp32(i):
    case = _case(i)
    reason = run_case(case, "arm", rtol=1e-5, atol=1e-6)
    assert reason is None, reason


@needs_arm
@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_fp16_domain(i):
    if not _fp16():
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    op, inputs, attrs = CASES[i]
    if op == "Cast" and inputs[0].dtype == np.float32 and attrs["to"] not in ("float32", "float64", "bool"):
        pytest.skip("float -> integer casts truncate the fp16-rounded value: off by one near integers, as designed")
    if op == "Round":
        pytest.skip("Round of an fp16-rounded value near a half moves by one: a step function, as Floor/Ceil")
    case = _case(i)
    reason = run_case(case, "arm", rtol=1e-2, atol=1e-2, precision="low")
    assert reason is None, reason
