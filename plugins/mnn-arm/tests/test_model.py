"""MobileNetV2, ResNet-18 and SqueezeNet 1.1 (examples/build_models.py) run
entirely on mnn-arm (fallback=False) and match the reference backend; with
precision="low" (where the CPU has asimdhp) they run the fp16 path with fp16
activations, converted only at the graph's input and output. Quantized ops
(QLinearConv, QLinearMatMul) are bit-exact with the reference."""

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
    _check_fp16_activations(graph, {"input": image}, want)


def _check_fp16_activations(graph, feeds, want):
    """precision="low": every op on mnn-arm in its fp16 domain, copies only at the graph's edges."""
    from mnn_arm import half, paths

    if not paths.runnable("fp16"):
        return
    sess = Session(graph, backend="arm", fallback=False, precision="low")
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    edges = {f"{n} host->{half.DOMAIN}" for n in graph.inputs} | {f"{n} {half.DOMAIN}->host" for n in graph.outputs}
    assert set(sess.plan.copies) == edges, sess.plan.copies
    low = sess.run(feeds)["logits"]
    err = np.abs(low - want).max() / np.abs(want).max()
    assert err < 5e-2, f"fp16 {graph.name} differs from the reference by {err:.3g} of its largest logit"


@needs_arm
def test_mobilenet_v2_runs_on_arm_alone():
    graph = _model("mobilenet_v2")
    image = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    want = Session(graph, backend="reference").run({"input": image})["logits"]
    sess = Session(graph, backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    got = sess.run({"input": image})["logits"]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())
    _check_fp16_activations(graph, {"input": image}, want)


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


@needs_arm
@pytest.mark.parametrize("a_dtype", ["uint8", "int8"])
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul_bit_exact(a_dtype, per_column):
    """QLinearMatMul with a constant B (uint8 or int8, per-tensor or per-column scale and zero point) and
    A with a batch dimension: bit-exact with the reference (the sdot path where the CPU has it)."""
    from mnn_core import GraphBuilder
    from mnn_core.ops import run_reference

    rng = np.random.default_rng(7)
    lo, hi = (0, 255) if a_dtype == "uint8" else (-128, 127)
    b_dtype = "int8" if per_column else "uint8"
    blo, bhi = (-128, 127) if b_dtype == "int8" else (0, 255)
    a = rng.integers(lo, hi, (3, 5, 37)).astype(a_dtype)
    b = rng.integers(blo, bhi, (37, 29)).astype(b_dtype)
    n = 29 if per_column else 1
    params = [
        np.float32(0.02),
        np.array(rng.integers(lo + 100, lo + 150), a_dtype),
        b,
        rng.uniform(0.002, 0.02, n).astype(np.float32) if per_column else np.float32(0.01),
        rng.integers(blo + 110, blo + 140, n).astype(b_dtype) if per_column else np.array(blo + 125, b_dtype),
        np.float32(0.3),
        np.array(lo + 120, a_dtype),
    ]
    g = GraphBuilder("qmm")
    y = g.QLinearMatMul(g.input("a", a.shape, a_dtype), *[g.const(p) for p in params])
    g.output(y, "y")
    sess = Session(g.build(), backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    want = run_reference("QLinearMatMul", [a] + params, {})[0]
    np.testing.assert_array_equal(sess.run({"a": a})["y"], want)


@needs_arm
def test_fp16_domain_boundaries():
    """An op mnn-arm declines falls back to the reference in host memory: the fp16 domain's tensors are
    converted on the way out and back in; the memory report shows fp16 tensors at half the bytes."""
    from mnn_arm import half, paths

    from mnn_core import GraphBuilder

    if not paths.runnable("fp16"):
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    rng = np.random.default_rng(2)
    g = GraphBuilder("edges")
    x = g.input("x", (1, 4, 9, 10), "float32")
    y = g.Conv(x, g.const(rng.standard_normal((8, 4, 3, 3)).astype(np.float32) * 0.3), pads=[1, 1, 1, 1])
    z = g.Softsign(y)  # not claimed by mnn-arm: runs on the reference, in host memory
    w = g.Add(z, y)
    g.output(w, "w")
    graph = g.build()
    feed = {"x": rng.standard_normal((1, 4, 9, 10)).astype(np.float32)}
    want = Session(graph, backend="reference").run(feed)["w"]
    sess = Session(graph, backend="arm", precision="low")
    assert [p.backend for p in sess.plan] == ["arm", "reference", "arm"], str(sess.plan)
    assert len(sess.plan.copies) == 4, sess.plan.copies  # x in, y out and in again, Softsign's result in, w out
    got = sess.run(feed)["w"]
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * np.abs(want).max())
    kept = Session(graph, backend="arm", precision="low", options={half.OPTION: False})
    assert not kept.plan.copies
    np.testing.assert_allclose(kept.run(feed)["w"], want, rtol=1e-2, atol=1e-2 * np.abs(want).max())
