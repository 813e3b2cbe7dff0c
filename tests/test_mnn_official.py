"""Models written by Alibaba MNN's converter (its Python wheel, `pip install MNN`) load in mnn and
match ONNX Runtime: ONNX -> MNN's mnnconvert -> .mnn -> mnn_core.load -> Session, against the ONNX
file's outputs. The converter runs in a subprocess of the interpreter named by MNN_CONVERTER_PYTHON
(default: this one), calling its _tools module directly, never its CLI (which pip-installs a
logging SDK)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.convert.mnn_official import is_official_mnn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[1]
CONVERTER = os.environ.get("MNN_CONVERTER_PYTHON", sys.executable)


def _has_converter() -> bool:
    if CONVERTER == sys.executable:
        return importlib.util.find_spec("_tools") is not None
    return subprocess.run([CONVERTER, "-c", "import _tools"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(
    not _has_converter(),
    reason="needs Alibaba's MNN converter: pip install MNN (or MNN_CONVERTER_PYTHON=<a python that has it>)",
)


def mnnconvert(onnx_path: Path) -> Path:
    out = onnx_path.with_suffix(".mnn")
    code = (
        "import sys, _tools; _tools.mnnconvert(['mnnconvert', '-f', 'ONNX', '--modelFile', sys.argv[1], "
        "'--MNNModel', sys.argv[2], '--bizCode', 'mnn-test'])"
    )
    proc = subprocess.run(
        [CONVERTER, "-c", code, str(onnx_path), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PIP_NO_INDEX": "1"},
    )
    assert proc.returncode == 0 and out.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def _zoo(name: str):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import build_models
    finally:
        sys.path.pop(0)
    return build_models.MODELS[name](1)


def _ops_model():
    """Resize (nearest, bilinear), padded average pooling, Concat, Transpose, MatMul, Softmax, Sigmoid."""
    rng = np.random.default_rng(3)
    b = mnn.GraphBuilder("ops")
    x = b.input("x", (1, 4, 5, 7))
    w = b.const(rng.standard_normal((6, 4, 3, 3)).astype("float32") * 0.3)
    y = b.Relu(b.Conv(x, w, None, pads=[1, 1, 1, 1]))
    up = b.Resize(
        y,
        mode="nearest",
        scales=[1.0, 1.0, 2.0, 2.0],
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )
    lin = b.Resize(y, mode="linear", scales=[1.0, 1.0, 2.0, 2.0], coordinate_transformation_mode="half_pixel")
    z = b.Concat(up, lin, axis=1)
    z = b.AveragePool(z, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0)
    z = b.MaxPool(z, kernel_shape=[2, 2], strides=[1, 1])
    t = b.Reshape(b.Transpose(z, perm=[0, 2, 3, 1]), shape=[1, -1, 12])
    m = b.MatMul(t, b.const(rng.standard_normal((12, 5)).astype("float32")))
    b.output(b.Softmax(b.Sigmoid(m), axis=-1), "y")
    return b.build()


def _pads_model():
    """Asymmetric pads and strides on convolution and both poolings (which way round MNN keeps them)."""
    rng = np.random.default_rng(4)
    b = mnn.GraphBuilder("pads")
    x = b.input("x", (1, 3, 9, 8))
    y = b.Conv(x, b.const(rng.standard_normal((4, 3, 3, 3)).astype("float32")), None, pads=[0, 1, 2, 0], strides=[2, 1])
    y = b.MaxPool(y, kernel_shape=[2, 3], strides=[1, 2], pads=[1, 0, 0, 1])
    y = b.AveragePool(y, kernel_shape=[3, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    b.output(b.LeakyRelu(y, alpha=0.1), "y")
    return b.build()


def _deconv_model():
    """A grouped ConvTranspose with asymmetric pads and output padding (MNN splits it by group: Slice,
    two Deconvolutions, Concat)."""
    rng = np.random.default_rng(5)
    b = mnn.GraphBuilder("deconv")
    x = b.input("x", (1, 6, 5, 4))
    y = b.ConvTranspose(
        x,
        b.const(rng.standard_normal((6, 2, 3, 3)).astype("float32")),
        b.const(rng.standard_normal(4).astype("float32")),
        strides=[2, 2],
        pads=[1, 0, 1, 1],
        group=2,
        output_padding=[1, 0],
    )
    b.output(y, "y")
    return b.build()


def _torch_model(name: str, path: Path) -> None:
    """A transformer encoder, or a stack of activations (GELU erf and tanh, SiLU, Hardswish, LayerNorm)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    if name == "encoder":
        layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        model, x = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), torch.randn(1, 16, 64)
    else:
        nn = torch.nn
        model = nn.Sequential(
            nn.Linear(8, 8),
            nn.GELU(),
            nn.Linear(8, 4),
            nn.GELU(approximate="tanh"),
            nn.LayerNorm(4),
            nn.SiLU(),
            nn.Hardswish(),
        )
        x = torch.randn(2, 8)
    torch.onnx.export(model.eval(), x, str(path), input_names=["x"], output_names=["y"], opset_version=17, dynamo=False)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """name -> (the ONNX file, the .mnn file MNN's converter wrote from it), made on first use."""
    folder = tmp_path_factory.mktemp("mnn_official")
    made: dict[str, tuple[Path, Path]] = {}

    def get(name: str):
        if name not in made:
            path = folder / f"{name}.onnx"
            if name in ("encoder", "activations"):
                _torch_model(name, path)
            else:
                built = {"ops": _ops_model, "pads": _pads_model, "deconv": _deconv_model}.get(name)
                mnn.save(built() if built else _zoo(name), path)
            made[name] = (path, mnnconvert(path))
        return made[name]

    return get


def _check_matches(onnx_path: Path, mnn_path: Path, shape) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    ref = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    graph = mnn.load(mnn_path)
    assert "MNN FlatBuffers" in graph.metadata["source_format"]
    out = mnn.Session(graph).run({next(iter(graph.inputs)): x})[graph.outputs[0]]
    assert out.shape == ref.shape
    scale = max(1.0, float(np.abs(ref).max()))  # within 1e-4 of the output's scale
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-4 * scale)


@pytest.mark.parametrize(
    "name, shape",
    [
        ("ops", (1, 4, 5, 7)),
        ("pads", (1, 3, 9, 8)),
        ("deconv", (1, 6, 5, 4)),
        ("encoder", (1, 16, 64)),
        ("activations", (2, 8)),
        pytest.param("mobilenet_v2", (1, 3, 224, 224), marks=pytest.mark.slow),
        pytest.param("resnet18", (1, 3, 224, 224), marks=pytest.mark.slow),
    ],
)
def test_official_model_matches_onnxruntime(converted, name, shape):
    onnx_path, mnn_path = converted(name)
    assert is_official_mnn(mnn_path.read_bytes()[:4096])
    _check_matches(onnx_path, mnn_path, shape)


def test_cli_converts_an_official_model_to_mnn_format(converted, tmp_path):
    _, mnn_path = converted("ops")
    out = tmp_path / "ours.mnn"
    proc = subprocess.run(
        [sys.executable, "-m", "mnn_core", "convert", str(mnn_path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"MNNMODEL" and not is_official_mnn(out.read_bytes()[:4096])
    a = mnn.load(out)
    x = np.random.default_rng(1).standard_normal((1, 4, 5, 7)).astype("float32")
    np.testing.assert_allclose(
        mnn.Session(a).run({"x": x})["y"], mnn.Session(mnn.load(mnn_path)).run({"x": x})["y"], rtol=1e-6, atol=1e-7
    )
