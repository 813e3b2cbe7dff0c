"""Resize beyond NCHW nearest and bilinear (ops_spatial.py's separable passes, csrc/spatial/resize_nd.c):
cubic, antialias, tf_crop_and_resize with extrapolation, half_pixel_symmetric, aspect-ratio policies, axes
and any rank, against the reference backend on odd sizes, up and down, one and two threads."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import one_op_graph
from mnn_x86._common import KERNELS

from mnn_core.graph.ir import Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.session import Session


def _check(x, attrs, threads, rtol=1e-5, atol=1e-5):
    graph, feeds = one_op_graph("Resize", [x], attrs, ())
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads)
    assert "x86" in str(sess.plan), sess.plan
    want = run_reference("Resize", [x], attrs)[0]
    for _ in range(2):  # the second run reuses the scratch the first dirtied
        got = sess.run(feeds)["out"]
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"Resize {attrs} {x.shape}")


def _x(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


FILTERS = [
    {"mode": "cubic"},
    {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
    {"mode": "linear", "antialias": 1},
    {"mode": "cubic", "antialias": 1},
    {"mode": "cubic", "antialias": 1, "exclude_outside": 1},
    {"mode": "linear", "antialias": 1, "exclude_outside": 1},
]
COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"]
SIZES = [
    {"scales": [1.0, 1.0, 2.0, 1.5]},  # up
    {"scales": [1.0, 1.0, 0.45, 0.7]},  # down: antialias widens the filter
    {"sizes": [2, 3, 4, 13]},  # down along H, up along W
    {"sizes": [1, 1]},  # one pixel
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: str(s))
@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("filt", FILTERS, ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()))
def test_filters(rng, filt, coord, size, threads):
    _check(_x(rng, 2, 3, 9, 7), {**filt, "coordinate_transformation_mode": coord, **size}, threads)


CROPS = [
    ([0.0, 0.0, 0.2, -0.1, 1.0, 1.0, 0.9, 1.3], {"sizes": [2, 3, 5, 8]}),
    ([0.1, 0.4, 0.7, 0.6], {"sizes": [4, 6], "axes": [2, 3]}),
    ([-0.3, 1.2], {"scales": [1.7], "axes": [3]}),
    ([0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 0.5, 0.5], {"sizes": [2, 3, 1, 1]}),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("crop", range(len(CROPS)))
def test_tf_crop_and_resize(rng, crop, mode, threads):
    roi, size = CROPS[crop]
    attrs = {
        "mode": mode,
        "coordinate_transformation_mode": "tf_crop_and_resize",
        "roi": roi,
        "extrapolation_value": 7.5,
        **size,
    }
    _check(_x(rng, 2, 3, 6, 7), attrs, threads)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize(
    "shape, size",
    [
        ((11,), {"scales": [1.6]}),
        ((5, 9), {"sizes": [7, 4]}),
        ((4, 5, 6), {"scales": [1.5, 0.6, 2.0]}),  # N and C resized too
        ((2, 3, 5, 4, 6), {"sizes": [3, 7, 4], "axes": [2, 3, 4]}),  # 3-D volumes
        ((2, 3, 5, 4, 6), {"scales": [0.5, 1.5], "axes": [4, 1]}),
        ((2, 3, 4, 6), {"scales": [1.0, 1.0, 1.0, 1.0]}),  # no axis resized: a copy
        ((0, 3, 4, 6), {"scales": [1.0, 1.0, 1.5, 0.5]}),  # empty batch
        ((3, 40, 33, 27), {"scales": [1.0, 1.0, 0.6, 1.3]}),  # enough rows for two threads
    ],
)
def test_any_rank(rng, shape, size, mode, threads):
    _check(_x(rng, *shape), {"mode": mode, "antialias": int(mode != "nearest"), **size}, threads)


POLICIES = list(itertools.product(["not_larger", "not_smaller"], ["nearest", "linear", "cubic"]))


@pytest.mark.parametrize("policy, mode", POLICIES)
def test_keep_aspect_ratio(rng, policy, mode):
    attrs = {"mode": mode, "sizes": [5, 5], "axes": [2, 3], "keep_aspect_ratio_policy": policy}
    _check(_x(rng, 2, 3, 7, 10), attrs, 2)


def test_declines_other_dtypes():
    spec = KERNELS["Resize"].spec
    node = Node("Resize", ["x"], ["y"], {"mode": "cubic", "scales": [1.0, 1.0, 2.0, 2.0]}, "r")
    assert spec.accepts(node, [TensorInfo((1, 2, 3, 3), "float16")]) is not True
    node = Node("Resize", ["x"], ["y"], {"mode": "nearest", "scales": [2.0, 2.0, 2.0]}, "r")
    assert spec.accepts(node, [TensorInfo((2, 3, 3), "uint8")]) is not True
    assert spec.accepts(node, [TensorInfo((2, 3, 3), "float32")]) is True
