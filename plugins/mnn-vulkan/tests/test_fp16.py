"""precision="low": convolution weights stored as float16 (the *_h shaders) on a device
with shaderFloat16 and 16-bit storage (lavapipe has both; so does the H200), float32
otherwise or with MNN_VULKAN_FP16=0. Products and sums stay float32, so the error is
the weights' rounding: checked against the reference with an fp16 tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from test_models import small_cnn
from vulkan_testing import needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan


def _device_fp16() -> bool:
    from mnn_vulkan import device

    return bool(device.choose(None).props["fp16"])


def _segment_of(sess):
    import mnn_vulkan

    names = {n.name for n in sess.graph.nodes}
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


@pytest.mark.parametrize("options", [{}, {"vulkan.gpu_tiling": True}], ids=["device", "gpu-tiling"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_conv_fp16_weights_match_the_reference(rng, case, options):
    x_shape, w_shape, attrs = CASES[case]
    graph = _conv_graph(rng, x_shape, w_shape, **attrs)
    x = rng.uniform(-1, 1, x_shape).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision="low", options=options)
    got = sess.run({"x": x})["y"]
    seg = _segment_of(sess)
    if _device_fp16():
        assert seg.precision == "float16"
        assert all(s.endswith("_h") for s in seg.shaders if s.startswith(("conv", "gemm"))), seg.shaders
    else:
        assert seg.precision == "float32"
    # fp16 weights: ~2^-11 relative rounding each, summed over cg*kh*kw products
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * scale)
    fp32 = mnn.Session(graph, backend="vulkan", fallback=False, options=options).run({"x": x})["y"]
    np.testing.assert_allclose(fp32, want, rtol=1e-4, atol=1e-5)


def test_cnn_at_low_precision_matches_within_fp16_tolerance(rng):
    graph = small_cnn(rng)
    x = rng.standard_normal((2, 3, 16, 16)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["probs"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision="low")
    np.testing.assert_allclose(sess.run({"x": x})["probs"], want, rtol=1e-2, atol=1e-3)


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
