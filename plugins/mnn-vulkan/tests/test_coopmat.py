"""Tensor cores through VK_NV_cooperative_matrix (gemm_coop.comp, conv_coop.comp): under
precision="low" with "vulkan.coopmat", GEMMs and convolutions on a device that multiplies 16x16x16
float16 matrices per subgroup of 32 run on them, float16 operands summed in float32. Checked against the
reference at the float16 tolerance on odd sizes (edges of every 128x128 block and 32-deep K
step), 8-aligned rows (16-byte loads), batches, transposes, bias and fused activations. Devices without the extension
(lavapipe) keep the plain shaders, which is checked wherever the tests run."""

from __future__ import annotations

import numpy as np
import pytest
from vulkan_testing import needs_vulkan, unavailable_reason

import mnn_core as mnn

pytestmark = needs_vulkan


def _props() -> dict:
    from mnn_vulkan import device

    return device.choose(None).props


def _tensor_cores() -> bool:
    if unavailable_reason():
        return False
    props = _props()
    return bool(props["fp16"] and props["coopmat"] and props["subgroup_size"] == 32)


needs_tensor_cores = pytest.mark.skipif(
    not _tensor_cores(), reason="the device has no 16x16x16 float16 cooperative matrices (VK_NV_cooperative_matrix)"
)


def _shaders(sess) -> set[str]:
    import mnn_vulkan

    names = {p.node for p in sess.plan.placements}  # fused nodes ("a+b") included
    return {s for seg in mnn_vulkan.segments().values() if set(seg.names) <= names for s in seg.shaders}


def _matmul_graph(a_shape, b_shape, activation=None):
    b = mnn.GraphBuilder()
    a, c = b.input("a", a_shape), b.input("b", b_shape)
    y = b.MatMul(a, c)
    b.output(b.Relu(y) if activation == "relu" else y, "y")
    return b.build()


def _gemm_graph(rng, m, n, k, trans_a, trans_b, c_shape):
    b = mnn.GraphBuilder()
    a = b.input("a", (k, m) if trans_a else (m, k))
    w = b.const(rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype("float32"))
    c = b.const(rng.uniform(-1, 1, c_shape).astype("float32"))
    b.output(b.Gemm(a, w, c, transA=int(trans_a), transB=int(trans_b), alpha=0.75, beta=1.5), "y")
    return b.build()


def _conv_graph(rng, x_shape, o, group, kernel=1, **attrs):
    b = mnn.GraphBuilder()
    x = b.input("x", x_shape)
    w = b.const(rng.uniform(-1, 1, (o, x_shape[1] // group, kernel, kernel)).astype("float32"))
    bias = b.const(rng.uniform(-1, 1, o).astype("float32"))
    b.output(b.Conv(x, w, bias, group=group, activation="relu", **attrs), "y")
    return b.build()


def _check(graph, feeds, options=None):
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    options = {"vulkan.coopmat": True, **(options or {})}
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision="low", options=options)
    got = sess.run(feeds)["y"]
    # float16 operands (~2^-11 relative each), products summed in float32, a float16 result
    scale = max(float(np.abs(want).max()), 1e-6)
    np.testing.assert_allclose(got, want, rtol=3e-3, atol=3e-3 * scale)
    return _shaders(sess)


MATMULS = [  # (A shape, B shape): exact blocks, odd edges, K past several 32-deep steps, batches
    ((64, 32), (32, 64)),
    ((17, 33), (33, 45)),
    ((130, 97), (97, 71)),
    ((3, 37, 65), (3, 65, 19)),
    ((2, 1, 40, 24), (1, 3, 24, 50)),
    ((16, 300), (300, 16)),
    ((256, 128), (128, 136)),
    ((2, 136, 64), (2, 64, 264)),
]


@needs_tensor_cores
@pytest.mark.parametrize("a_shape,b_shape", MATMULS, ids=lambda s: "x".join(map(str, s)))
def test_matmul_on_tensor_cores_matches_the_reference(rng, a_shape, b_shape):
    feeds = {"a": rng.uniform(-1, 1, a_shape).astype("float32"), "b": rng.uniform(-1, 1, b_shape).astype("float32")}
    shaders = _check(_matmul_graph(a_shape, b_shape, "relu"), feeds)
    assert "gemm_coop" in shaders, shaders
    plain = _check(_matmul_graph(a_shape, b_shape, "relu"), feeds, {"vulkan.coopmat": False})
    assert "gemm_coop" not in plain


@needs_tensor_cores
@pytest.mark.parametrize("trans_a,trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("c_shape", [(1,), (45,), (29, 45)], ids=["scalar", "row", "full"])
def test_gemm_on_tensor_cores_matches_the_reference(rng, trans_a, trans_b, c_shape):
    graph = _gemm_graph(rng, 29, 45, 83, trans_a, trans_b, c_shape)
    a = rng.uniform(-1, 1, (83, 29) if trans_a else (29, 83)).astype("float32")
    assert "gemm_coop" in _check(graph, {"a": a})


@needs_tensor_cores
@pytest.mark.parametrize("trans_a,trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_on_tensor_cores_with_8_aligned_rows(rng, trans_a, trans_b):
    """Every operand's rows a multiple of 8 float16: the shader's 16-byte staging loads, over
    several 128x128 blocks and 32-deep K steps, K-major and M/N-major operands alike."""
    m, n, k = 200, 136, 96
    graph = _gemm_graph(rng, m, n, k, trans_a, trans_b, (n,))
    a = rng.uniform(-1, 1, (k, m) if trans_a else (m, k)).astype("float32")
    assert "gemm_coop" in _check(graph, {"a": a})


@needs_tensor_cores
@pytest.mark.parametrize(
    "x_shape,o,group,shader",
    [
        ((2, 40, 5, 6), 33, 1, "conv_coop"),  # small images: folded into one implicit GEMM
        ((1, 64, 9, 9), 96, 2, "conv_coop"),
        ((3, 24, 17, 3), 48, 1, "conv_coop"),
        ((2, 32, 16, 16), 40, 1, "gemm_coop"),  # a 16-byte-row GEMM per image
    ],
)
def test_pointwise_conv_on_tensor_cores_matches_the_reference(rng, x_shape, o, group, shader):
    graph = _conv_graph(rng, x_shape, o, group)
    x = rng.uniform(-1, 1, x_shape).astype("float32")
    assert shader in _check(graph, {"x": x})


@needs_tensor_cores
@pytest.mark.parametrize(
    "x_shape,o,group,kernel,attrs",
    [
        ((2, 19, 13, 11), 37, 1, 3, {"pads": [1, 1, 1, 1]}),
        ((1, 16, 20, 20), 136, 1, 3, {"pads": [1, 1, 1, 1]}),  # K = 144: 16-byte weight rows
        ((3, 12, 15, 17), 40, 2, 3, {"strides": [2, 2], "dilations": [2, 2], "pads": [2, 1, 0, 2]}),
        ((2, 3, 33, 31), 24, 1, 7, {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
        ((2, 8, 9, 9), 16, 1, 1, {"strides": [2, 2]}),  # strided 1x1: not a plain GEMM
    ],
)
def test_conv_on_tensor_cores_matches_the_reference(rng, x_shape, o, group, kernel, attrs):
    """Implicit GEMM on tensor cores (conv_coop.comp): padding, strides, dilations, groups,
    K below and past a 32-deep step, images folded into the columns."""
    graph = _conv_graph(rng, x_shape, o, group, kernel, **attrs)
    x = rng.uniform(-1, 1, x_shape).astype("float32")
    assert "conv_coop" in _check(graph, {"x": x})


def test_no_tensor_cores_without_the_extension_or_at_float32(rng):
    """fp32 sessions never take gemm_coop, nor sessions that do not ask for it, nor any session
    on a device without it."""
    graph = _matmul_graph((33, 40), (40, 47))
    feeds = {"a": rng.uniform(-1, 1, (33, 40)).astype("float32"), "b": rng.uniform(-1, 1, (40, 47)).astype("float32")}
    sess = mnn.Session(graph, backend="vulkan", fallback=False)
    np.testing.assert_allclose(sess.run(feeds)["y"], feeds["a"] @ feeds["b"], rtol=1e-4, atol=1e-5)
    assert "gemm_coop" not in _shaders(sess)
    low = mnn.Session(graph, backend="vulkan", fallback=False, precision="low")
    low.run(feeds)
    assert "gemm_coop" not in _shaders(low)
    asked = mnn.Session(graph, backend="vulkan", fallback=False, precision="low", options={"vulkan.coopmat": True})
    asked.run(feeds)
    assert ("gemm_coop" in _shaders(asked)) == _tensor_cores()
