"""Depthwise convolutions on kernels/dwconv.cl (opencl.dwconv=tile: the input plane staged in local
memory, the window's weights in registers, 4 output rows a work-item) against the reference backend:
3x3, 5x5 and 7x7 windows, symmetric, one-sided and no padding, odd and tiny planes, several images,
with and without bias, fused activations; and what stays on conv2d_c1."""

from __future__ import annotations

import pytest
from conftest import needs_opencl, run_conv

TILE = {"opencl.dwconv": "tile"}


def _run(rng, shape, k, attrs, options, bias=True, mult=1):
    c = shape[1]
    return run_conv(rng, shape, (c * mult, 1, k, k), {"group": c, **attrs}, options, bias)


CASES = [
    ((2, 5, 13, 11), 7, {"pads": [3, 3, 3, 3]}),  # ConvNeXt's, odd plane
    ((3, 4, 7, 7), 7, {"pads": [3, 3, 3, 3]}),  # the last stage's 7x7 plane
    ((1, 3, 9, 14), 3, {"pads": [1, 1, 1, 1]}),
    ((2, 3, 10, 6), 5, {"pads": [2, 1, 0, 2]}),  # one-sided
    ((1, 2, 8, 9), 3, {}),  # no padding: a smaller output
    ((2, 3, 2, 3), 5, {"pads": [2, 2, 2, 2]}),  # a plane smaller than the window
    ((1, 6, 33, 30), 7, {"pads": [3, 3, 3, 3], "activation": "gelu"}),  # more strips than a work-group
]
IDS = ["7x7", "7x7-plane", "3x3", "5x5-one-sided", "3x3-valid", "tiny", "33x30-gelu"]


@needs_opencl
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("shape, k, attrs", CASES, ids=IDS)
def test_dwconv_matches_reference(rng, shape, k, attrs, bias):
    assert _run(rng, shape, k, attrs, TILE, bias) == [f"dwconv{k}"]


@needs_opencl
@pytest.mark.parametrize("act", [{"activation": "relu"}, {"activation": "clip", "act_alpha": -0.3, "act_beta": 0.4}])
def test_dwconv_fused_activations(rng, act):
    assert _run(rng, (2, 3, 9, 8), 3, {"pads": [1, 1, 1, 1], **act}, TILE) == ["dwconv3"]


@needs_opencl
@pytest.mark.parametrize(
    "shape, k, attrs, mult",
    [
        ((1, 3, 9, 8), 3, {"pads": [1, 1, 1, 1], "strides": [2, 2]}, 1),  # strided
        ((1, 3, 9, 8), 3, {"pads": [2, 2, 2, 2], "dilations": [2, 2]}, 1),  # dilated
        ((1, 3, 9, 8), 3, {"pads": [1, 1, 1, 1]}, 2),  # two outputs per channel
        ((1, 2, 12, 12), 9, {"pads": [4, 4, 4, 4]}, 1),  # a window size without a kernel
        ((1, 2, 200, 180), 3, {"pads": [1, 1, 1, 1]}, 1),  # a plane past local memory
    ],
    ids=["strided", "dilated", "multiplier-2", "9x9", "large-plane"],
)
def test_what_stays_on_conv2d_c1(rng, shape, k, attrs, mult):
    assert _run(rng, shape, k, attrs, TILE, mult=mult) == ["conv2d_c1"]


@needs_opencl
def test_dwconv_by_default_on_gpus_only(rng):
    from mnn_opencl import runtime

    want = "dwconv3" if runtime.get_runtime(runtime.select_device()).is_gpu else "conv2d_c1"
    assert _run(rng, (1, 3, 9, 8), 3, {"pads": [1, 1, 1, 1]}, {}) == [want]
    assert _run(rng, (1, 3, 9, 8), 3, {"pads": [1, 1, 1, 1]}, {"opencl.dwconv": "off"}) == ["conv2d_c1"]
