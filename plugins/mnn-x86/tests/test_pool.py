"""MaxPool on planes of every awkward size against the reference: the stride-2 column kernel of
pool_impl.h (maxpool_plane_s2) and the paths next to it, NaN and infinities included."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, check_op


def _r(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# the stride-2 column path (pool_impl.h maxpool_plane_s2: windows 2 or 3 wide, two output rows at a
# time for 3x3/2) and the paths next to it (stride 1, a 5-wide window), on planes from one column to
# several vectors, so that every edge case of its masked loads is met: a plane narrower than a
# vector, a last vector of 1..VLEN-1 columns, left padding, the ceil_mode overhang, an odd row count
# that leaves one row after the pairs, windows clipped by padding at the top and bottom
S2_SIZES = [
    (1, 1),
    (2, 2),
    (5, 5),
    (13, 13),
    (27, 27),
    (55, 55),
    (111, 111),
    (1, 111),
    (111, 1),
    (2, 55),
    (55, 2),
    (5, 27),
    (27, 5),
    (13, 111),
    (111, 13),
    (34, 33),
    (17, 48),
]
S2_ATTRS = [
    {"kernel_shape": [3, 3], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 1, 2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 1, 0, 0]},
    {"kernel_shape": [5, 3], "strides": [1, 2], "pads": [2, 1, 2, 1]},
    # 3 wide but taller: the first windows clipped to 3 rows by the top padding look like 3x3 ones
    {"kernel_shape": [5, 3], "strides": [2, 2], "pads": [2, 1, 2, 1]},
    {"kernel_shape": [4, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [2, 3], "strides": [3, 2], "ceil_mode": 1},
    {"kernel_shape": [5, 5], "strides": [2, 2], "pads": [2, 2, 2, 2]},
    {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [2, 2], "strides": [1, 1]},
]


def _fits(hw, attrs) -> bool:
    """Whether the window fits the padded plane (pads are always smaller than the kernel here)."""
    pads = attrs.get("pads", [0, 0, 0, 0])
    return all(hw[i] + pads[i] + pads[i + 2] >= attrs["kernel_shape"][i] for i in range(2))


def _inputs_with_specials(rng, shape, nan_share):
    """Random floats, about `nan_share` of them NaN, a few +-inf (which must not read as NaN)."""
    x = _r(rng, *shape)
    flat = x.reshape(-1)
    flat[rng.random(flat.size) < nan_share] = np.nan
    flat[rng.random(flat.size) < 0.02] = np.inf
    flat[rng.random(flat.size) < 0.02] = -np.inf
    return x


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("attrs", S2_ATTRS, ids=[str(i) for i in range(len(S2_ATTRS))])
def test_maxpool_sizes(rng, isa, attrs):
    checked = 0
    for h, w in S2_SIZES:
        if _fits((h, w), attrs):
            check_op("MaxPool", [_r(rng, 1, 3, h, w)], attrs, isa, threads=2, constant=(), rtol=0, atol=0)
            checked += 1
    assert checked >= 8


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("attrs", S2_ATTRS[:6], ids=[str(i) for i in range(6)])
def test_maxpool_nan_and_inf_sizes(rng, isa, attrs):
    """NaN in any tap of a window (first, middle or last row; even or odd column; the column a 3-wide
    window shares with the next) gives NaN there and nowhere else; infinities are plain values."""
    for h, w in [(13, 13), (27, 27), (55, 55), (34, 33), (5, 111)]:
        for share in (0.002, 0.03):
            x = _inputs_with_specials(rng, (1, 2, h, w), share)
            check_op("MaxPool", [x], attrs, isa, constant=(), rtol=0, atol=0)
