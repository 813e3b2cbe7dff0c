"""MobileNetV2, ResNet-18 and SqueezeNet 1.1 (examples/build_models.py) run
entirely on mnn-arm (fallback=False) and match the reference backend; with
precision="low" MobileNetV2 runs the fp16 path where the CPU has asimdhp."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core import Session

BUILD_MODELS = Path(__file__).resolve().parents[3] / "examples" / "build_models.py"


def _model(name: str):
    if not BUILD_MODELS.exists():
        pytest.skip(f"{BUILD_MODELS} not found (run from the mnn source tree)")
    spec = importlib.util.spec_from_file_location("build_models", BUILD_MODELS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.MODELS[name](batch=1)


@needs_arm
@pytest.mark.parametrize("name", ["resnet18", "squeezenet1_1"])
def test_model_runs_on_arm_alone(name):
    """At 96x96 (both are fully convolutional up to global pooling): the
    reference backend's numpy convolutions take minutes at 224 under qemu."""
    from mnn_core.graph.ir import TensorInfo

    graph = _model(name)
    graph.inputs["input"] = TensorInfo((1, 3, 96, 96), "float32")
    image = np.random.default_rng(1).standard_normal((1, 3, 96, 96)).astype(np.float32)
    want = Session(graph, backend="reference").run({"input": image})["logits"]
    sess = Session(graph, backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    got = sess.run({"input": image})["logits"]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())


@needs_arm
def test_mobilenet_v2_runs_on_arm_alone():
    graph = _model("mobilenet_v2")
    image = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    want = Session(graph, backend="reference").run({"input": image})["logits"]
    sess = Session(graph, backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    got = sess.run({"input": image})["logits"]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())
    from mnn_arm import paths

    if paths.runnable("fp16"):
        low = Session(graph, backend="arm", fallback=False, precision="low").run({"input": image})["logits"]
        err = np.abs(low - want).max() / np.abs(want).max()
        assert err < 5e-2, f"fp16 MobileNetV2 differs from the reference by {err:.3g} of its largest logit"


@needs_arm
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("group", [1, 8])
def test_qlinear_conv_bit_exact(dtype, group):
    """QLinearConv with constant weights and per-channel parameters, as a quantized
    model has them: bit-exact with the reference (the sdot path where the CPU has it)."""
    from mnn_core import GraphBuilder
    from mnn_core.ops import run_reference

    rng = np.random.default_rng(3)
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    x = rng.integers(lo, hi, (2, 8, 11, 10)).astype(dtype)
    w = rng.integers(lo, hi, (16, 8 // group, 3, 3)).astype(dtype)
    params = [
        np.float32(0.02),
        np.array(rng.integers(lo + 100, lo + 150), dtype),
        w,
        rng.uniform(0.002, 0.02, 16).astype(np.float32),
        rng.integers(lo + 110, lo + 140, 16).astype(dtype),
        np.float32(0.3),
        np.array(lo + 120, dtype),
        rng.integers(-3000, 3000, 16).astype(np.int32),
    ]
    attrs = {"pads": [1, 1, 1, 1], "strides": [2, 1], "group": group}
    g = GraphBuilder("qconv")
    y = g.QLinearConv(g.input("x", x.shape, dtype), *[g.const(p) for p in params], **attrs)
    g.output(y, "y")
    sess = Session(g.build(), backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    want = run_reference("QLinearConv", [x] + params, attrs)[0]
    np.testing.assert_array_equal(sess.run({"x": x})["y"], want)


@needs_arm
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("stride", [1, 2])
def test_qlinear_conv_depthwise_bit_exact(dtype, stride):
    """Depthwise 3x3 QLinearConv (the sdot path's own kernel where the CPU has it), rows wider than
    one 16-output vector, weight zero points that push some channels' w - zw out of int8 (those
    take the generic kernel): bit-exact with the reference."""
    from mnn_core import GraphBuilder
    from mnn_core.ops import run_reference

    rng = np.random.default_rng(5)
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    x = rng.integers(lo, hi, (1, 8, 13, 37)).astype(dtype)
    w = rng.integers(lo, hi, (8, 1, 3, 3)).astype(dtype)
    # the first 4 channels: the symmetric zero point (w - zw fits int8); the rest: anywhere in 100..150 above lo
    zw = np.array([128 if lo == 0 else 0] * 4 + list(rng.integers(lo + 100, lo + 150, 4)), dtype)
    params = [
        np.float32(0.02),
        np.array(rng.integers(lo + 100, lo + 150), dtype),
        w,
        rng.uniform(0.002, 0.02, 8).astype(np.float32),
        zw,
        np.float32(0.3),
        np.array(lo + 120, dtype),
        rng.integers(-3000, 3000, 8).astype(np.int32),
    ]
    attrs = {"pads": [1, 1, 1, 1], "strides": [stride, stride], "group": 8}
    g = GraphBuilder("qdw")
    y = g.QLinearConv(g.input("x", x.shape, dtype), *[g.const(p) for p in params], **attrs)
    g.output(y, "y")
    sess = Session(g.build(), backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    want = run_reference("QLinearConv", [x] + params, attrs)[0]
    np.testing.assert_array_equal(sess.run({"x": x})["y"], want)
