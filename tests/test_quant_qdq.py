"""ONNX Runtime's quantize_static models (QDQ format) import as mnn int8 graphs and compute what
ONNX's QDQ semantics say (ONNX Runtime with its graph optimizations off, i.e. running the QDQ ops)."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import express, nn

ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")
pytest.importorskip("onnx")


def _model():
    express.manual_seed(3)
    return nn.Sequential(
        nn.Conv2d(2, 5, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(5, 7, 3, stride=2),
        nn.Flatten(),
        nn.Linear(7 * 3 * 3, 11),
        nn.ReLU(),
        nn.Linear(11, 4),
    )


def _quantized(tmp_path, rng, per_channel, fmt="QDQ"):
    from mnn_core.convert import save_onnx

    graph = _model().to_graph([(1, 2, 14, 14)])
    fp32, int8 = str(tmp_path / "m.onnx"), str(tmp_path / "m.int8.onnx")
    save_onnx(graph, fp32)
    calib = rng.standard_normal((24, 2, 14, 14)).astype(np.float32)

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"input": calib[i : i + 1]} for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    quantization.quantize_static(
        fp32,
        int8,
        Reader(),
        quant_format=getattr(quantization.QuantFormat, fmt),
        per_channel=per_channel,
        activation_type=quantization.QuantType.QUInt8,
        weight_type=quantization.QuantType.QInt8,
    )
    return int8


@pytest.mark.parametrize("per_channel", [True, False])
def test_qdq_model_runs_as_int8_and_matches_onnx_semantics(tmp_path, rng, per_channel):
    path = _quantized(tmp_path, rng, per_channel)
    graph = mnn.load(path)
    ops = [n.op for n in graph.nodes]
    assert ops.count("QLinearConv") == 4 and not {"Conv", "Gemm", "Relu"} & set(ops), ops
    assert ops.count("DequantizeLinear") == 1 and ops.count("QuantizeLinear") == 1
    x = rng.standard_normal((6, 2, 14, 14)).astype(np.float32)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    got = mnn.Session(graph).run({"input": x})["output"]
    np.testing.assert_array_equal(got, want)


def test_qoperator_conv_model_imports(tmp_path, rng):
    express.manual_seed(4)
    from mnn_core.convert import save_onnx

    m = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Conv2d(3, 2, 3))
    fp32, int8 = str(tmp_path / "c.onnx"), str(tmp_path / "c.int8.onnx")
    save_onnx(m.to_graph([(1, 1, 9, 9)]), fp32)
    calib = rng.standard_normal((8, 1, 9, 9)).astype(np.float32)

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"input": calib[i : i + 1]} for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    quantization.quantize_static(fp32, int8, Reader(), quant_format=quantization.QuantFormat.QOperator)
    graph = mnn.load(int8)
    assert [n.op for n in graph.nodes].count("QLinearConv") == 2
    x = rng.standard_normal((2, 1, 9, 9)).astype(np.float32)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(int8, opts, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    lsb = float(graph.initializers[[n for n in graph.nodes if n.op == "DequantizeLinear"][0].inputs[1]])
    diff = np.abs(mnn.Session(graph).run({"input": x})["output"] - want) / lsb
    assert diff.max() == 0, np.bincount(np.rint(diff).astype(int).ravel())


def test_qdq_mobilenet_style_block_from_pytorch(tmp_path, rng):
    """Conv+BatchNorm+ReLU6, depthwise, a residual Add and a bias shared through Identity, as torch exports
    them and quantize_static quantizes them: every convolution becomes int8, the result stays exact."""
    torch = pytest.importorskip("torch")
    tnn = torch.nn

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.stem = tnn.Sequential(tnn.Conv2d(1, 8, 3, padding=1, bias=False), tnn.BatchNorm2d(8), tnn.ReLU6())
            self.body = tnn.Sequential(
                tnn.Conv2d(8, 16, 1, bias=False),
                tnn.BatchNorm2d(16),
                tnn.ReLU6(),
                tnn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False),
                tnn.BatchNorm2d(16),
                tnn.ReLU6(),
                tnn.Conv2d(16, 8, 1, bias=False),
                tnn.BatchNorm2d(8),
            )

        def forward(self, x):
            x = self.stem(x)
            return x + self.body(x)

    torch.manual_seed(0)
    model = Block().eval()
    for m in model.modules():
        if isinstance(m, tnn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
    fp32, int8 = str(tmp_path / "b.onnx"), str(tmp_path / "b.int8.onnx")
    torch.onnx.export(
        model, (torch.zeros(1, 1, 10, 10),), fp32, input_names=["input"], output_names=["output"], dynamo=False
    )
    calib = rng.random((12, 1, 10, 10)).astype(np.float32)

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"input": calib[i : i + 1]} for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    quantization.quantize_static(fp32, int8, Reader(), quant_format=quantization.QuantFormat.QDQ, per_channel=True)
    graph = mnn.load(int8)
    ops = graph.ops_histogram()
    assert ops.get("QLinearConv") == 4 and "Conv" not in ops and "Clip" not in ops, ops
    x = rng.random((1, 1, 10, 10)).astype(np.float32)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(int8, opts, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    np.testing.assert_array_equal(mnn.Session(graph).run({"input": x})["output"], want)
