"""QLinearAdd: the reference's rounding rule, the DQ-Add-(Relu)-Q rewrite and the ONNX export."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import quant
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops.quant import add_multipliers
from mnn_core.ops.schema import run_reference
from mnn_core.quant.calibrate import run_values


def _params(rng):
    return (
        np.float32(rng.uniform(0.005, 0.1)),
        np.uint8(rng.integers(0, 256)),
        np.float32(rng.uniform(0.005, 0.1)),
        np.uint8(rng.integers(0, 256)),
        np.float32(rng.uniform(0.005, 0.2)),
        np.uint8(rng.integers(0, 256)),
    )


def test_qlinear_add_rule_is_two_float32_products_one_sum_half_even():
    # scales chosen so that A's term is exactly 0.5 and 1.5 : halves go to even
    a = np.array([1, 3, 5, 0, 255], np.uint8)
    b = np.zeros(5, np.uint8)
    sa, sc = np.float32(0.5), np.float32(1.0)
    (y,) = run_reference("QLinearAdd", [a, sa, np.uint8(0), b, np.float32(1), np.uint8(0), sc, np.uint8(10)], {})
    np.testing.assert_array_equal(y, [10, 12, 12, 10, 138])  # 0.5->0, 1.5->2, 2.5->2, saturation not reached
    (y,) = run_reference(
        "QLinearAdd", [a, np.float32(4), np.uint8(0), b, np.float32(1), np.uint8(0), sc, np.uint8(250)], {}
    )
    assert y[-1] == 255 and y[3] == 250  # saturates at the top


def test_qlinear_add_matches_the_written_rule_and_the_float_add(rng):
    for shape_a, shape_b in [((3, 7), (3, 7)), ((2, 5, 1, 3), (5, 4, 1)), ((1,), (9,)), ((13,), ())]:
        sa, za, sb, zb, sc, zc = _params(rng)
        a = rng.integers(0, 256, shape_a).astype(np.uint8)
        b = rng.integers(0, 256, shape_b).astype(np.uint8)
        (y,) = run_reference("QLinearAdd", [a, sa, za, b, sb, zb, sc, zc], {})
        ma, mb = add_multipliers(sa, sb, sc)
        terms = (np.float32(a.astype(np.int32) - int(za)) * ma) + (np.float32(b.astype(np.int32) - int(zb)) * mb)
        want = np.clip(np.rint(terms.astype(np.float32)) + int(zc), 0, 255).astype(np.uint8)
        np.testing.assert_array_equal(y, want)
        # and it is the float add of the dequantized values, within one step of C
        fl = (a.astype(np.float64) - int(za)) * sa + (b.astype(np.float64) - int(zb)) * sb
        ref = np.clip(np.rint(fl / sc) + int(zc), 0, 255)
        assert np.abs(y.astype(np.int64) - ref).max() <= 1


def test_qlinear_add_rejects_per_channel_and_mixed_types(rng):
    g = Graph(
        inputs={"a": TensorInfo((2, 3), "uint8")},
        outputs=["y"],
        initializers={"s": np.ones(3, np.float32), "z": np.uint8(0), "s1": np.float32(1)},
        nodes=[Node("QLinearAdd", ["a", "s", "z", "a", "s1", "z", "s1", "z"], ["y"], {}, "qadd")],
    )
    with pytest.raises(mnn.errors.GraphError, match="A_scale must be a scalar"):
        g.infer()


def residual(rng, relu: bool = True) -> Graph:
    """x -> conv1 -> relu -> conv2 (+ x) [-> relu] -> conv3: one ResNet-style block."""
    w = {f"w{i}": rng.normal(0, 0.3, (4, 4, 3, 3)).astype(np.float32) for i in (1, 2, 3)}
    pads = {"pads": [1, 1, 1, 1]}
    nodes = [
        Node("Conv", ["x", "w1"], ["c1"], pads, "conv1"),
        Node("Relu", ["c1"], ["r1"], {}, "relu1"),
        Node("Conv", ["r1", "w2"], ["c2"], pads, "conv2"),
        Node("Conv", ["x", "w3"], ["c0"], pads, "conv0"),
        Node("Add", ["c2", "c0"], ["s"], {}, "add"),
    ]
    last = "s"
    if relu:
        nodes.append(Node("Relu", ["s"], ["r2"], {}, "relu2"))
        last = "r2"
    nodes.append(Node("Conv", [last, "w3"], ["y"], pads, "conv3"))
    return Graph(inputs={"x": TensorInfo((1, 4, 7, 5), "float32")}, outputs=["y"], initializers=w, nodes=nodes)


@pytest.mark.parametrize("relu", [True, False])
def test_ptq_fuses_dq_add_relu_q_into_qlinear_add(rng, relu):
    g = residual(rng, relu)
    calib = {"x": rng.normal(0, 1, (16, 4, 7, 5)).astype(np.float32)}
    res = quant.quantize(g, calib)
    ops = [n.op for n in res.graph.nodes]
    assert ops.count("QLinearAdd") == 1 and "Add" not in ops and "Relu" not in ops, ops
    assert ops.count("DequantizeLinear") == 1  # only the graph output
    qadd = next(n for n in res.graph.nodes if n.op == "QLinearAdd")
    if relu:
        assert res.graph.initializers[qadd.inputs[7]] == 0  # the Relu is C_zero_point 0
    x = calib["x"][:1]
    fl = run_values(res.float_graph, {"x": x})["y"]
    q8 = mnn.Session(res.graph, backend="reference").run({"x": x})["y"]
    assert np.abs(q8 - fl).max() < 0.08 * np.abs(fl).max()
    np.testing.assert_array_equal(mnn.Session(res.graph, backend="auto").run({"x": x})["y"], q8)


def test_add_without_a_range_or_excluded_stays_float(rng):
    g = residual(rng)
    x = rng.normal(0, 1, (1, 4, 7, 5)).astype(np.float32)
    res = quant.quantize(g, {"x": x}, exclude=["add"])
    ops = [n.op for n in res.graph.nodes]
    assert "QLinearAdd" not in ops and "Add" in ops
    ops = [n.op for n in quant.quantize(g, {"x": x}, fuse_add=False).graph.nodes]
    assert "QLinearAdd" not in ops and "Add" in ops and "Relu" in ops


def test_export_qlinear_add_to_onnx_runtime_agrees_within_one_step(rng):
    ort = pytest.importorskip("onnxruntime")
    from mnn_core.convert.onnx_export import to_onnx

    shapes = [((1, 16, 9, 7), (1, 16, 9, 7)), ((2, 3, 5), (3, 1)), ((1, 64, 56, 56), (1, 64, 56, 56))]
    exact = total = 0
    for shape_a, shape_b in shapes:
        sa, za, sb, zb, sc, zc = _params(rng)
        g = Graph(
            inputs={"a": TensorInfo(shape_a, "uint8"), "b": TensorInfo(shape_b, "uint8")},
            outputs=["y"],
            initializers={"sa": sa, "za": za, "sb": sb, "zb": zb, "sc": sc, "zc": zc},
            nodes=[Node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["y"], {}, "qadd")],
        )
        proto = to_onnx(g)
        assert proto.graph.node[0].domain == "com.microsoft"
        feed = {
            "a": rng.integers(0, 256, shape_a).astype(np.uint8),
            "b": rng.integers(0, 256, shape_b).astype(np.uint8),
        }
        sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, feed)[0]
        want = mnn.Session(g, backend="reference").run(feed)["y"]
        diff = np.abs(got.astype(np.int64) - want)
        assert diff.max() <= 1, (shape_a, shape_b)
        exact += int((diff == 0).sum())
        total += diff.size
    print(f"ORT QLinearAdd bit-exact on {exact}/{total}")
    assert exact / total > 0.99  # ORT's kernel differs from the rule only near a tie (docs/QUANT.md)


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
def test_onnx_runtime_quantized_residual_imports_with_qlinear_add(tmp_path, rng, fmt):
    ort = pytest.importorskip("onnxruntime")
    quantization = pytest.importorskip("onnxruntime.quantization")
    from mnn_core.convert import save_onnx

    fp32, int8 = str(tmp_path / "m.onnx"), str(tmp_path / "m.int8.onnx")
    save_onnx(residual(rng), fp32)
    calib = rng.normal(0, 1, (16, 1, 4, 7, 5)).astype(np.float32)

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": c} for c in calib])

        def get_next(self):
            return next(self.it, None)

    quantization.quantize_static(
        fp32,
        int8,
        Reader(),
        quant_format=getattr(quantization.QuantFormat, fmt),
        activation_type=quantization.QuantType.QUInt8,
        weight_type=quantization.QuantType.QInt8,
    )
    graph = mnn.load(int8)
    ops = [n.op for n in graph.nodes]
    assert ops.count("QLinearAdd") == 1 and not {"Add", "Relu", "Conv"} & set(ops), ops
    x = calib[0]
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(int8, opts, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = mnn.Session(graph).run({"x": x})["y"]
    # QDQ in ORT adds in float and rounds once; QLinearAdd's rule (and ORT's kernel) may differ by one step of
    # the sum's scale near a tie, which the next convolution spreads by at most a few of its own steps
    step = float(np.abs(want).max()) / 100
    assert np.abs(got - want).max() <= step, np.abs(got - want).max()
    assert np.mean(got == want) > 0.9
