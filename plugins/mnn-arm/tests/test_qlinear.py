"""QuantizeLinear, DequantizeLinear and QLinearAdd on Arm (csrc/qlinear.c) against the reference backend,
exactly: per tensor and per axis, uint8 and int8 (and int32 for DequantizeLinear), odd sizes (the 8-wide
steps' tails), halves that round to even, saturation at both ends, broadcasting adds; parameters as
constants and as graph inputs; 1 and 3 threads.
Then a post-training-quantized CNN (mnn_core.quant: QLinearConv, QLinearAdd and the glue between them)
runs whole on Arm and gives the reference's bits."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_arm_bit_exact, needs_arm

from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(41)


def _q(op, ins, attrs=None):
    return (op, ins, {"axis": 1, "block_size": 0, "output_dtype": "", **(attrs or {})})


def _cases():
    c = []
    for shape, scale, zp, axis in [
        ((2, 3, 37), np.float32(0.013), np.uint8(128), 1),
        ((5, 7), np.float32(0.02), np.int8(-3), 1),
        ((4, 6, 3), RNG.uniform(0.005, 0.05, 6).astype(np.float32), RNG.integers(0, 30, 6).astype(np.uint8), 1),
        ((3, 11, 9), RNG.uniform(0.005, 0.05, 3).astype(np.float32), RNG.integers(-5, 5, 3).astype(np.int8), 0),
        ((2, 5, 13), RNG.uniform(0.005, 0.05, 13).astype(np.float32), np.zeros(13, np.int8), -1),
        ((1001,), np.float32(0.01), None, 0),
    ]:
        x = RNG.uniform(-4, 4, shape).astype(np.float32)
        c.append(_q("QuantizeLinear", [x, scale] + ([zp] if zp is not None else []), {"axis": axis}))
        q = RNG.integers(0, 256, shape).astype(np.uint8) if zp is None or zp.dtype == np.uint8 else None
        if q is None:
            q = RNG.integers(-128, 128, shape).astype(np.int8)
        c.append(_q("DequantizeLinear", [q, scale] + ([zp] if zp is not None else []), {"axis": axis}))
    halves = (np.arange(-40, 41, dtype=np.float32) + 0.5) * np.float32(0.5)  # x / 0.5 = k + 0.5: ties to even
    c.append(_q("QuantizeLinear", [halves, np.float32(0.5), np.uint8(20)]))
    c.append(_q("QuantizeLinear", [halves, np.float32(0.5), np.int8(3)]))
    c.append(_q("DequantizeLinear", [RNG.integers(-(2**31), 2**31 - 1, (3, 19)).astype(np.int32), np.float32(1e-4)]))
    for a_shape, b_shape, dt in [
        ((2, 3, 21), (2, 3, 21), np.uint8),
        ((1, 4, 3, 9), (4, 1, 1), np.uint8),
        ((5, 17), (17,), np.int8),
        ((3, 1, 11), (1, 7, 1), np.int8),
        ((1003,), (1,), np.uint8),
    ]:
        lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
        zs = [dt(RNG.integers(lo, hi) // 2) for _ in range(3)]
        ins = [
            RNG.integers(lo, hi, a_shape).astype(dt),
            np.float32(0.021),
            zs[0],
            RNG.integers(lo, hi, b_shape).astype(dt),
            np.float32(0.034),
            zs[1],
            np.float32(0.047),
            zs[2],
        ]
        c.append(("QLinearAdd", ins, {}))
    return c


CASES = _cases()


@needs_arm
@pytest.mark.parametrize("constant", [True, False], ids=["constant-params", "runtime-params"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"{CASES[i][0]}-{i}")
def test_glue_ops_bit_exact(case, constant):
    """Scales and zero points as constants (taken at prepare) and as graph inputs (read at run)."""
    op, ins, attrs = CASES[case]
    graph, feeds = conformance_graph(op, ins, attrs, constant)
    assert_arm_bit_exact(graph, feeds, op)


@needs_arm
def test_big_tensors_split_over_threads():
    from mnn_core import Session

    x = RNG.uniform(-3, 3, (4, 16, 45, 43)).astype(np.float32)
    graph, feeds = conformance_graph("QuantizeLinear", [x, np.float32(0.02), np.uint8(128)], _q("Q", [])[2], True)
    want = Session(graph, backend="reference").run(dict(feeds))["out0"]
    for threads in (2, 3):
        got = Session(graph, backend="arm", fallback=False, threads=threads).run(dict(feeds))["out0"]
        np.testing.assert_array_equal(got, want)


def _residual_cnn():
    from mnn_core import GraphBuilder

    rng = np.random.default_rng(3)
    g = GraphBuilder("qcnn")
    x = g.input("x", (1, 3, 19, 17), "float32")

    def conv(v, c, o, k, group=1):
        w = g.const((rng.standard_normal((o, c // group, k, k)) * 0.3).astype(np.float32))
        b = g.const((rng.standard_normal(o) * 0.1).astype(np.float32))
        return g.Relu(g.Conv(v, w, b, pads=[k // 2] * 4, group=group))

    h = conv(x, 3, 16, 3)
    r = conv(conv(h, 16, 16, 3, group=16), 16, 16, 1)
    g.output(g.Add(h, r), "y")
    return g.build()


@needs_arm
def test_post_training_quantized_cnn_runs_whole():
    from mnn_core import Session
    from mnn_core.quant.ptq import quantize

    graph = _residual_cnn()
    calib = {"x": np.random.default_rng(4).standard_normal((4, 3, 19, 17)).astype(np.float32)}
    qgraph = quantize(graph, calib, progress=False).graph
    ops = {n.op for n in qgraph.nodes}
    assert {"QLinearConv", "QuantizeLinear", "DequantizeLinear"} <= ops, ops
    x = {"x": calib["x"][:1]}
    want = Session(qgraph, backend="reference").run(x)["y"]
    sess = Session(qgraph, backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    np.testing.assert_array_equal(sess.run(x)["y"], want)


@needs_arm
@pytest.mark.parametrize("dtype,shape,group", [(np.uint8, (2, 6, 11, 9), 1), (np.int8, (1, 8, 13, 7), 8)])
def test_conv_integer_with_a_runtime_x_zero_point(dtype, shape, group):
    """ConvInteger whose x_zero_point is a graph input (a dynamically quantized model's): read at run, as
    the im2col padding and the column correction, for the GEMM and the depthwise kernels alike."""
    from mnn_core import Session
    from mnn_core.graph.ir import Graph, Node, TensorInfo

    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    c = shape[1]
    g = Graph(name="conv_integer")
    g.inputs["x"] = TensorInfo(shape, np.dtype(dtype).name)
    g.inputs["zx"] = TensorInfo((), np.dtype(dtype).name)
    g.initializers["w"] = RNG.integers(-127, 128, (8, c // group, 3, 3)).astype(np.int8)
    g.initializers["zw"] = np.int8(2)
    attrs = {"group": group, "pads": [1, 1, 1, 1], "strides": [1, 1], "dilations": [1, 1]}
    g.nodes.append(Node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], attrs, "conv"))
    g.outputs = ["y"]
    sess = Session(g, backend="arm", fallback=False, threads=2)
    ref = Session(g, backend="reference")
    for zx in (dtype(lo + 3), dtype(hi // 2 - 1)):  # two zero points on one session: each run reads its own
        feeds = {"x": RNG.integers(lo, hi, shape).astype(dtype), "zx": zx}
        np.testing.assert_array_equal(sess.run(feeds)["y"], ref.run(feeds)["y"])


def _mmi_cases():
    c = []
    for a_shape, n, adt, bdt, per_col in [
        ((7, 13), 5, np.uint8, np.int8, False),
        ((3, 37, 61), 53, np.uint8, np.uint8, True),
        ((2, 5, 33), 29, np.int8, np.int8, True),
        ((1, 19), 1, np.int8, np.uint8, False),
    ]:
        k = a_shape[-1]

        def ints(shape, dt):
            lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
            return RNG.integers(lo, hi, shape).astype(dt)

        za = ints((), adt)
        zb = ints((n,), bdt) if per_col else ints((), bdt)
        c.append([ints(a_shape, adt), ints((k, n), bdt), np.asarray(za, adt), np.asarray(zb, bdt)])
    return c


MMI_CASES = _mmi_cases()


@needs_arm
@pytest.mark.parametrize("constant", [True, False], ids=["constant-B", "runtime-B"])
@pytest.mark.parametrize("case", range(len(MMI_CASES)))
def test_matmul_integer_bit_exact(case, constant):
    """MatMulInteger (dynamically quantized models' matmul): B and the zero points as constants (packed at
    prepare) or graph inputs (read at run), batched A, per-column b_zero_point; 1 and 3 threads."""
    graph, feeds = conformance_graph("MatMulInteger", MMI_CASES[case], {}, constant)
    assert assert_arm_bit_exact(graph, feeds, "MatMulInteger")["out0"].dtype == np.int32
