"""The tiled convolution (conv2d_tiled.comp) against the reference on random inputs: odd channel
counts (partial blocks), strides, dilations, asymmetric pads, groups, batch > 1, 1x1 and 1-D,
fused activations, under each tiling (the CPU's, the GPU's, odd forced ones, split-K), and K long
enough that its slice loop runs past llvmpipe's loop budget counted per loop."""

import numpy as np
import pytest
from opengl_testing import needs_opengl

import mnn_core as mnn

pytestmark = needs_opengl

CASES = [
    ((2, 5, 9, 11), (13, 5, 3, 3), dict(pads=[1, 0, 2, 1], strides=[2, 1])),
    ((1, 12, 10, 13), (18, 4, 3, 3), dict(group=3, dilations=[2, 1], pads=[2, 1, 2, 1])),
    ((3, 7, 8, 9), (70, 7, 1, 1), {}),
    ((2, 16, 17, 15), (65, 16, 5, 3), dict(strides=[2, 3], pads=[2, 1, 1, 0], dilations=[1, 2])),
    ((1, 3, 33, 31), (24, 3, 7, 7), dict(strides=[2, 2], pads=[3, 3, 3, 3])),
    ((2, 9, 37), (11, 9, 3), dict(pads=[1, 1])),  # 1-D
]
TILINGS = [
    {"opengl.conv_path": "tiled"},
    {"opengl.gpu_tiling": True},
    {"opengl.conv_path": "tiled", "opengl.conv_tiles": "4x6x3x2x5"},
    {"opengl.conv_path": "tiled", "opengl.conv_tiles": "one"},
    {"opengl.conv_path": "tiled", "opengl.splitk": 3},  # K summed in slices, then splitk_reduce.comp
    {"opengl.conv_path": "blk"},  # conv2d_blk.comp: vec4 register tiles, double-buffered slices
    {"opengl.conv_path": "blk", "opengl.splitk": 3},
]


def _conv(x_shape, w_shape, attrs, activation=None, seed=0):
    rng = np.random.default_rng(seed)
    b = mnn.GraphBuilder("conv_tiled")
    x = b.input("x", x_shape)
    w = b.const((rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))).astype("float32"), "w")
    bias = b.const(rng.standard_normal(w_shape[0]).astype("float32"), "b")
    y = b.Conv(x, w, bias, **attrs)
    if activation:
        y = getattr(b, activation)(y)
    b.output(y, "y")
    return b.build(), rng.standard_normal(x_shape).astype("float32")


def _check(graph, xv, options, rtol=1e-4):
    want = mnn.Session(graph, backend="reference").run({"x": xv})["y"]
    sess = mnn.Session(graph, backend="opengl", fallback=False, options=options)
    got = sess.run({"x": xv})["y"]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5 * np.abs(want).max())
    return sess


@pytest.mark.parametrize("options", TILINGS, ids=lambda o: ",".join(f"{k[7:]}={v}" for k, v in o.items()))
@pytest.mark.parametrize("x_shape, w_shape, attrs", CASES)
def test_tiled_conv_matches_reference(x_shape, w_shape, attrs, options):
    _check(*_conv(x_shape, w_shape, attrs, activation="Relu"), options)


@pytest.mark.parametrize("activation", [None, "Sigmoid", "LeakyRelu"])
def test_tiled_conv_fuses_activation(activation):
    _check(*_conv((2, 6, 7, 7), (9, 6, 3, 3), dict(pads=[1, 1, 1, 1]), activation), {"opengl.conv_path": "tiled"})


@pytest.mark.parametrize("channels, kernel", [(2300, 3), (1536, 1)])
def test_tiled_conv_with_a_long_k(channels, kernel):
    """K = 20700: 1294 BK slices, about 45000 loop passes of one invocation on llvmpipe."""
    graph, xv = _conv((1, channels, 4, 5), (9, channels, kernel, kernel), dict(pads=[kernel // 2] * 4), seed=3)
    _check(graph, xv, {"opengl.conv_path": "tiled"}, rtol=1e-3)


def test_pointwise_conv_past_the_direct_shaders_budget_runs_tiled():
    """A 1x1 over 14000 channels: too long for conv2d.comp's loops on llvmpipe, not for the tiled one's."""
    graph, xv = _conv((1, 14000, 2, 3), (8, 14000, 1, 1), {}, seed=4)
    _check(graph, xv, {}, rtol=1e-3)


def test_tiled_tilings_are_chosen_and_checked():
    from mnn_opengl.kernels import conv_tiled as ct

    assert ct.tiling(64, 3136, 1, gpu=False) == ct.BIG and ct.tiling(24, 3136, 1, gpu=False) == ct.SMALL
    # a GPU: the largest block that still gives GPU_ENOUGH work groups
    assert ct.tiling(64, 3136 * 16, 1, gpu=True) == ct.BIG and ct.tiling(512, 49 * 16, 1, gpu=True) == ct.WIDE
    assert ct.tiling(64, 3136, 1, gpu=True) == ct.MID and ct.tiling(512, 49, 1, gpu=True) == ct.ONE
    assert ct.tiling(64, 3136 * 16, 1, gpu=True, max_invocations=128) == ct.SMALL
    assert ct.parse_tiles("8x8x4x4x16") == ct.SMALL
    # split-K: on a GPU until about GPU_WAVE work groups, each slice 256+ of K, at most 16
    assert ct.split_k(100, 4608, gpu=True) == 11 and ct.split_k(100, 1024, gpu=True) == 4
    assert ct.split_k(4, 65536, gpu=True) == 16 and ct.split_k(600, 4608, gpu=True) == 1
    assert ct.split_k(100, 4608, gpu=False) == 1 and ct.split_k(100, 40, gpu=False, forced=5) == 3
    for bad in ("8x8x4x3x16", "16x16x8x8x64", "wide-ish"):
        with pytest.raises(ValueError, match="opengl.conv_tiles"):
            ct.parse_tiles(bad)


def test_blk_takes_the_64x64_blocks():
    from mnn_opengl.kernels import conv
    from mnn_opengl.kernels import conv_tiled as ct

    cpu, gpu = dict(gpu=False, max_invocations=1024), dict(gpu=True, max_invocations=1024)
    assert conv._tiled({}, 64, 64, 3, 3, 3136, 1, **cpu) == (ct.BIG, "conv2d_blk")
    assert conv._tiled({}, 16, 64, 3, 3, 3136, 1, **cpu) == (ct.BIG, "conv2d_blk")  # a partial block
    assert conv._tiled({}, 4, 64, 3, 3, 3136, 1, **cpu) is None  # too narrow: direct
    assert conv._tiled({"opengl.conv_tile": (3, 3)}, 64, 64, 3, 3, 3136, 1, **cpu) is None
    assert conv._tiled({}, 64, 64, 3, 3, 3136, 1, gpu=False, max_invocations=128) is None
    # a GPU: conv2d_tiled.comp's tilings; conv2d_blk.comp where forced
    assert conv._tiled({}, 64, 64, 3, 3, 3136 * 16, 1, **gpu) == (ct.BIG, "conv2d_tiled")
    assert conv._tiled({}, 64, 64, 3, 3, 3136, 1, **gpu) == (ct.WIDE, "conv2d_tiled")  # split-K counted
    assert conv._tiled({"opengl.conv_path": "tiled"}, 64, 64, 3, 3, 3136 * 16, 1, **gpu) == (ct.BIG, "conv2d_tiled")
    assert conv._tiled({"opengl.conv_path": "blk"}, 64, 64, 3, 3, 3136, 1, **gpu) == (ct.BIG, "conv2d_blk")
