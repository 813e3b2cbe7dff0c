"""conv_dw7.comp (depthwise 7x7 convolutions of stride 1, 7 outputs down a column per invocation;
"vulkan.dw_strip") against the reference: ConvNeXt's padding of 3 and others (none, uneven), heights
that are not a multiple of 7 (a partial last strip), widths below a warp, images narrower than the
window, channel multipliers, bias and fused activations; which convolutions take it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from vulkan_testing import check_vulkan, needs_vulkan

import mnn_core as mnn

ON = {"vulkan.dw_strip": "1"}


def _dw(rng, n, c, h, w, pads=(3, 3, 3, 3), mult=1, bias=True, act=None, kernel=7, stride=1, dilation=1):
    b = mnn.GraphBuilder()
    x = b.input("x", (n, c, h, w))
    wt = b.const((rng.standard_normal((c * mult, 1, kernel, kernel)) / kernel).astype("float32"))
    bs = b.const(rng.standard_normal(c * mult).astype("float32")) if bias else None
    y = b.Conv(x, wt, bs, pads=list(pads), group=c, strides=[stride] * 2, dilations=[dilation] * 2)
    b.output(getattr(b, act)(y) if act else y, "y")
    return b.build(), {"x": rng.standard_normal((n, c, h, w)).astype("float32")}


@needs_vulkan
@pytest.mark.parametrize(
    "shape,pads",
    [
        ((2, 5, 14, 14), (3, 3, 3, 3)),  # ConvNeXt's stage 3 geometry: two whole strips
        ((1, 3, 7, 7), (3, 3, 3, 3)),  # stage 4: one strip, the window past every edge
        ((2, 4, 17, 9), (3, 3, 3, 3)),  # a partial last strip (17 = 2 * 7 + 3)
        ((1, 2, 5, 40), (3, 3, 3, 3)),  # fewer rows than one strip; a row wider than a warp
        ((1, 3, 3, 4), (3, 3, 3, 3)),  # an image smaller than the window
        ((2, 3, 16, 12), (0, 0, 0, 0)),  # no padding: 10 x 6 outputs
        ((1, 2, 15, 13), (1, 2, 4, 0)),  # uneven padding
    ],
)
def test_depthwise_7x7(rng, shape, pads):
    graph, feeds = _dw(rng, *shape, pads=pads)
    assert "conv_dw7" in check_vulkan(graph, feeds, ON)


@needs_vulkan
@pytest.mark.parametrize("act", ["Relu", "Sigmoid", None])
@pytest.mark.parametrize("bias", [True, False])
def test_bias_and_activation(rng, bias, act):
    graph, feeds = _dw(rng, 2, 6, 12, 10, bias=bias, act=act)
    assert "conv_dw7" in check_vulkan(graph, feeds, ON)


@needs_vulkan
def test_channel_multiplier(rng):
    graph, feeds = _dw(rng, 2, 3, 11, 9, mult=2)
    assert "conv_dw7" in check_vulkan(graph, feeds, ON)


@needs_vulkan
@pytest.mark.parametrize(
    "kw",
    [dict(kernel=3, pads=(1, 1, 1, 1)), dict(stride=2), dict(dilation=2, pads=(6, 6, 6, 6))],
    ids=["3x3", "stride2", "dilated"],
)
def test_other_depthwise_keep_conv_dw(rng, kw):
    graph, feeds = _dw(rng, 1, 4, 15, 15, **kw)
    shaders = check_vulkan(graph, feeds, ON)
    assert "conv_dw" in shaders and "conv_dw7" not in shaders, shaders


@needs_vulkan
def test_the_option_off_keeps_conv_dw(rng):
    graph, feeds = _dw(rng, 1, 4, 14, 14)
    shaders = check_vulkan(graph, feeds, {"vulkan.dw_strip": "0"})
    assert "conv_dw" in shaders and "conv_dw7" not in shaders, shaders


def test_the_default_takes_it_on_a_gpu():
    from mnn_vulkan.kernels.dw_strip import takes

    p = SimpleNamespace(depthwise=True, kh=7, kw=7, sh=1, sw=1, dh=1, dw=1)

    def on(kind, half=False, **options):
        return takes(SimpleNamespace(device=SimpleNamespace(type=kind), options=options, half=half), p)

    assert on("discrete") and on("integrated") and not on("cpu") and on("cpu", **ON)
    assert not on("discrete", half=True) and not on("discrete", **{"vulkan.dw_strip": "0"})
    with pytest.raises(ValueError, match="vulkan.dw_strip must be"):
        on("discrete", **{"vulkan.dw_strip": "fast"})


def test_registers_stay_registers():
    """The 49 weights and 7 sums reach the driver as SSA values, not Function arrays."""
    from test_gemm_big import _function_variables

    from mnn_core.backend.kit import spirv

    assert _function_variables(spirv.spirv("conv_dw7")) == 0
    assert np.frombuffer(spirv.spirv("conv_dw7"), "<u4")[0] == 0x07230203
