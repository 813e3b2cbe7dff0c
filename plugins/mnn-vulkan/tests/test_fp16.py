"""precision="low" on a device with shaderFloat16 and 16-bit storage buffers (lavapipe
has both; so does the H200): every float tensor is stored as float16 in the arena, the
ops with float16 shaders (*_h: convolution, GEMM/GEMV, element-wise, pooling,
reductions, normalizations, softmax) compute on it directly, every other op on
float32 copies (widen.comp / narrow.comp); host inputs and outputs stay float32.
float32 otherwise, or with MNN_VULKAN_FP16=0. Checked against the reference at an
fp16 tolerance: every claimed op, each convolution path, and the real CNNs."""

from __future__ import annotations

import numpy as np
import pytest
from test_models import encoder_block, small_cnn
from vulkan_testing import needs_vulkan

import mnn_core as mnn
from mnn_core.testing import BackendConformance

pytestmark = needs_vulkan


def _device_fp16() -> bool:
    from mnn_vulkan import device

    return bool(device.choose(None).props["fp16"])


def _segment_of(sess):
    import mnn_vulkan

    names = {p.node for p in sess.plan.placements}  # fused nodes ("a+b") included
    return [s for s in mnn_vulkan.segments().values() if set(s.names) <= names and s.names][-1]


def _conv_graph(rng, x_shape, w_shape, **attrs):
    b = mnn.GraphBuilder()
    x = b.input("x", x_shape)
    w = b.const(rng.uniform(-1, 1, w_shape).astype("float32"))
    bias = b.const(rng.uniform(-1, 1, w_shape[0]).astype("float32"))
    b.output(b.Conv(x, w, bias, **attrs), "y")
    return b.build()


CASES = {  # each convolution path: implicit GEMM, split-K, 1x1 (GEMM), depthwise
    "3x3": ((2, 13, 9, 7), (21, 13, 3, 3), {"pads": [1, 1, 1, 1], "activation": "relu"}),
    "strided-grouped": ((1, 16, 11, 11), (24, 4, 3, 3), {"strides": [2, 2], "group": 4}),
    "1x1": ((2, 40, 5, 6), (33, 40, 1, 1), {}),
    "depthwise": ((1, 24, 9, 9), (24, 1, 3, 3), {"pads": [1, 1, 1, 1], "group": 24}),
}


@pytest.mark.parametrize(
    "options", [{}, {"vulkan.gpu_tiling": True}, {"vulkan.fp16_fma": True}], ids=["device", "gpu-tiling", "fp16-fma"]
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_conv_fp16_matches_the_reference(rng, case, options):
    x_shape, w_shape, attrs = CASES[case]
    graph = _conv_graph(rng, x_shape, w_shape, **attrs)
    x = rng.uniform(-1, 1, x_shape).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision="low", options=options)
    got = sess.run({"x": x})["y"]
    seg = _segment_of(sess)
    if _device_fp16():
        assert seg.precision == "float16"
        suffix = "_hf" if options.get("vulkan.fp16_fma") else "_h"
        # 1x1 convolutions take tensor cores where the device has them (test_coopmat.py)
        shaders = [s for s in seg.shaders if not s.startswith("splitk") and s != "gemm_coop"]
        assert all(s.endswith(suffix) for s in shaders), seg.shaders
        assert not seg.widened
    else:
        assert seg.precision == "float32"
    # fp16 inputs, weights and outputs: ~2^-11 relative rounding each; float16 products
    # summed in float16 over at most 16 k (tile.glsl), then in float32
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * scale)
    fp32 = mnn.Session(graph, backend="vulkan", fallback=False, options=options).run({"x": x})["y"]
    assert not any(s.endswith(("_h", "_hf")) for s in _segment_of(mnn.Session(graph, backend="vulkan")).shaders)
    np.testing.assert_allclose(fp32, want, rtol=1e-4, atol=1e-5)


def test_cnn_at_low_precision_matches_within_fp16_tolerance(rng):
    graph = small_cnn(rng)
    x = rng.standard_normal((2, 3, 16, 16)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["probs"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision="low")
    np.testing.assert_allclose(sess.run({"x": x})["probs"], want, rtol=1e-2, atol=1e-3)


def test_encoder_block_at_low_precision(rng):
    """Attention (MatMul, Softmax), LayerNorm, Gelu in float16; the head transposes run widened."""
    import mnn_vulkan

    graph = encoder_block(rng)
    x = rng.standard_normal((2, 12, 32)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision="low")
    got = sess.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=2e-2 * np.abs(want).max())
    if _device_fp16():
        names = {p.node for p in sess.plan.placements}
        mine = [seg for seg in mnn_vulkan.segments().values() if seg.names and set(seg.names) <= names]
        shaders = {s for seg in mine for s in seg.shaders}
        assert {"gemm_h", "softmax_h", "norm_rows_h"} <= shaders, shaders


def test_fp16_is_refused_by_normal_precision_and_by_the_switch(rng, monkeypatch):
    x_shape, w_shape, attrs = CASES["3x3"]
    graph = _conv_graph(rng, x_shape, w_shape, **attrs)
    x = rng.uniform(-1, 1, x_shape).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    for precision, env in (("normal", None), ("high", None), ("low", "0")):
        if env is None:
            monkeypatch.delenv("MNN_VULKAN_FP16", raising=False)
        else:
            monkeypatch.setenv("MNN_VULKAN_FP16", env)
        sess = mnn.Session(graph, backend="vulkan", fallback=False, precision=precision)
        np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-4, atol=1e-5)
        seg = _segment_of(sess)
        assert seg.precision == "float32" and not any(s.endswith("_h") for s in seg.shaders)


#: step functions: an input rounded to float16 may cross the step (2.9999 -> 3.0), so
#: they are checked on inputs that float16 represents exactly instead (QuantizeLinear rounds x / scale)
STEP_OPS = ("Floor", "Ceil", "Round", "Sign", "QuantizeLinear")


def _claimed() -> tuple[str, ...]:
    from mnn_vulkan.kernels import KERNELS

    return tuple(sorted(set(KERNELS) - set(STEP_OPS)))


class TestVulkanConformanceFp16(BackendConformance):
    """Every claimed op under precision="low" (float16 shaders where the op has them,
    float32 on widened copies elsewhere) against the reference at an fp16 tolerance:
    inputs and outputs each round by up to 2^-11 relative, products in float16."""

    backend = "vulkan"
    precision = "low"
    rtol = 1e-2
    atol = 1e-2
    ops = _claimed()


class TestVulkanConformanceFp16Fma(BackendConformance):
    """The *_hf variants: float16 FMAs in the GEMM tiles (summed into float32 every 16
    products) and in depthwise windows."""

    backend = "vulkan"
    precision = "low"
    rtol = 1e-2
    atol = 1e-2
    options = {"vulkan.fp16_fma": True}
    ops = ("Conv", "MatMul", "Gemm")


class TestVulkanConformanceFp16GpuChoices(BackendConformance):
    """The float16 GEMM paths with a discrete GPU's tilings, split-K and gemv."""

    backend = "vulkan"
    precision = "low"
    rtol = 1e-2
    atol = 1e-2
    options = {"vulkan.gpu_tiling": True}
    ops = ("Conv", "MatMul", "Gemm")


@pytest.mark.parametrize("op", STEP_OPS)
def test_step_functions_on_fp16_exact_inputs(op):
    from mnn_core.testing.conformance import conformance_cases

    for case in conformance_cases({op}):
        feeds = {
            k: v.astype(np.float16).astype(np.float32) if v.dtype == np.float32 else v for k, v in case.feeds.items()
        }
        want = mnn.Session(case.graph, backend="reference").run(feeds)
        got = mnn.Session(case.graph, backend="vulkan", fallback=False, precision="low").run(feeds)
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{op} [{case.label}]")


def test_fp16_halves_the_arena_and_widens_only_ops_without_fp16_shaders(rng):
    if not _device_fp16():
        pytest.skip("the device has no float16 support")
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 8, 6, 6))
    w = b.const(rng.uniform(-1, 1, (8, 8, 3, 3)).astype("float32"))
    y = b.Conv(x, w, pads=[1, 1, 1, 1], activation="relu")
    t = b.Transpose(y, perm=[0, 2, 3, 1])  # copy_h.comp: float16 elements moved as they are
    p = b.Pad(t, pads=[0, 1, 0, 0, 0, 0, 2, 0], value=0.5)  # pad.comp: no float16 variant, runs widened
    b.output(b.Add(p, p), "y")
    graph = b.build()
    xv = rng.uniform(-1, 1, (2, 8, 6, 6)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": xv})["y"]
    low = mnn.Session(graph, backend="vulkan", fallback=False, precision="low")
    got = low.run({"x": xv})["y"]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * np.abs(want).max())
    seg = _segment_of(low)
    assert seg.precision == "float16"
    assert len(seg.widened) == 1 and "widen" in seg.shaders and "narrow" in seg.shaders, seg.shaders
    assert {"conv2d_h", "copy_h", "binary_h"} <= set(seg.shaders), seg.shaders
    normal = mnn.Session(graph, backend="vulkan", fallback=False)
    normal.run({"x": xv})
    assert low.memory["vulkan"].arena_bytes < 0.6 * normal.memory["vulkan"].arena_bytes
    dev = mnn.Session(graph, backend="vulkan").plan  # the plan is unaffected: placement only
    assert set(dev.backends()) == {"vulkan"}


def test_device_info_says_what_low_precision_does():
    from mnn_vulkan import device

    extra = device.choose(None).info().extra
    assert extra["fp16"] == _device_fp16()
    assert extra["precision_low"].startswith("float16" if _device_fp16() else "float32")
