"""Register tiles the conformance samples rarely reach, on every ISA, against the reference:
depthwise 3x3 rows computed side by side (depthwise_impl.h: dw_tile9; 4 or 2 rows, then single
rows), small planes computed along their flattened rows (dw_flat9: 7x7 on AVX-512), stride-2 rows
split by masked loads (the plane path: these cases have too few channels for AVX-512's channels-last
blocks), depthwise on channels-last blocks (depthwise_cl_impl.h), a GEMM's narrow last column panel
computed as one vector (gemm_impl.h: tile_b with nv = 1), Winograd with few tiles as a transposed
GEMM."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, check_op, one_op_graph
from mnn_x86 import isa as x86_isa

from mnn_core.ops import run_reference
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)


def _r(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)


def _depthwise_attrs(c, k, stride, pad, dil, act):
    """A depthwise k x k Conv's attributes, square strides, pads and dilations; clip bounds for act."""
    return {
        "group": c,
        "kernel_shape": [k, k],
        "strides": [stride, stride],
        "dilations": [dil, dil],
        "pads": [pad] * 4,
        "activation": act,
        "act_alpha": -0.5,
        "act_beta": 0.7,
    }


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,h,w,stride,dil,act",
    [
        (3, 1, 5, 1, 1, "none"),  # one row: no tile
        (5, 2, 9, 1, 1, "relu"),  # one 2-row tile
        (7, 3, 7, 1, 1, "clip"),  # 2-row tile + a single row; 7 < one vector
        (4, 5, 16, 1, 1, "clip"),  # 4-row tile + single; exactly one AVX-512 vector
        (6, 7, 17, 1, 1, "none"),  # 4 + 2 + 1 rows; one full vector + 1 column
        (3, 9, 33, 1, 1, "relu"),  # two full AVX-512 vectors + 1 column
        (2, 14, 40, 1, 1, "sigmoid"),  # activation after the plane (not in registers)
        (5, 13, 29, 2, 1, "clip"),  # stride 2: even/odd split scratch, odd sizes
        (3, 12, 70, 2, 1, "none"),  # stride 2, 35 output columns
        (4, 11, 23, 1, 2, "relu"),  # dilation 2: strided tap offsets
        (3, 6, 5, 1, 2, "clip"),  # dilation 2 on a plane small enough to run flat
        (3, 10, 21, 2, 2, "none"),  # stride and dilation
    ],
)
def test_depthwise_row_tiles(rng, isa, threads, c, h, w, stride, dil, act):
    x, wt, b = _r(rng, 2, c, h, w), _r(rng, c, 1, 3, 3), _r(rng, c)
    attrs = _depthwise_attrs(c, 3, stride, dil, dil, act)
    check_op("Conv", [x, wt, b], attrs, isa, threads)
    check_op("Conv", [x, wt], attrs, isa, threads, constant=(1,))  # no bias


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "n,c,h,w,k,stride,pad,dil,act",
    [
        (1, 16, 7, 7, 3, 1, 1, 1, "relu"),  # one AVX-512 block, two AVX2 blocks
        (2, 13, 13, 13, 3, 1, 1, 1, "clip"),  # 13 of 16 lanes: a masked channel tail
        (1, 29, 5, 5, 3, 2, 1, 1, "none"),  # 16 + 13 channels, stride 2
        (1, 47, 1, 1, 3, 1, 1, 1, "relu"),  # 1x1 plane: every tap but the centre in padding
        (1, 23, 3, 3, 3, 2, 0, 1, "sigmoid"),  # AVX2: 8 + 8 + 7; one output pixel; act after the strip
        (2, 15, 7, 9, 3, 2, 1, 2, "clip"),  # stride and dilation, odd width
        (1, 24, 14, 14, 5, 1, 2, 1, "hard_swish"),  # 5x5 kernel: taps through the scratch
        (1, 31, 13, 11, 3, 2, 0, 1, "none"),  # no padding: input columns past the padded width
        (1, 16, 72, 45, 3, 1, 1, 1, "relu"),  # several strips: shared input rows carried down
        (1, 13, 101, 67, 3, 2, 1, 1, "clip"),  # several strips, stride 2, odd sizes
        (1, 30, 40, 33, 3, 1, 2, 2, "none"),  # strips with dilation 2
        (3, 7, 9, 17, 3, 1, 1, 1, "relu"),  # AVX2: 7 of 8 lanes; AVX-512: too few, the plane path
    ],
)
def test_depthwise_channels_last(rng, isa, threads, n, c, h, w, k, stride, pad, dil, act):
    """Depthwise convolutions the channels-last block path takes (depthwise_impl.h: dw_channels_last)
    on AVX-512 and AVX2: channel tails, small and odd planes, strips, every epilogue kind."""
    x, wt, b = _r(rng, n, c, h, w), _r(rng, c, 1, k, k), _r(rng, c)
    attrs = _depthwise_attrs(c, k, stride, pad, dil, act)
    check_op("Conv", [x, wt, b], attrs, isa, threads)
    check_op("Conv", [x, wt], attrs, isa, threads, constant=(1,))  # no bias
    check_op("Conv", [x, wt, b], attrs, isa, threads, constant=())  # weights computed at run time


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,o,h,w",
    [
        (64, 30, 13, 13),  # 169 pixels: 9 past the last full AVX-512 panel
        (24, 15, 14, 14),  # 196: 4 past it; AVX2 (16 columns): 4 past
        (300, 29, 3, 7),  # 21 pixels, K over one 256 slice (partial sums in C)
        (16, 14, 1, 40),  # 40: AVX-512 8 past, AVX2 8 past (exactly one vector)
        (8, 5, 1, 1),  # one pixel
    ],
)
def test_pointwise_narrow_last_panel(rng, isa, threads, c, o, h, w):
    x, wt, b = _r(rng, 1, c, h, w), _r(rng, o, c, 1, 1), _r(rng, o)
    check_op(
        "Conv",
        [x, wt, b],
        {"activation": "clip", "act_alpha": -1.0, "act_beta": 1.5},
        isa,
        threads,
        rtol=1e-4,
        atol=1e-4,
    )


def test_8x48_tile_for_few_rows_and_many_columns(avx512_tile):
    """Under the 14x32 tile a GEMM of few rows, many columns and K of 32 or more gets the 8x48 table
    (_x86.pyx: T8_*); a short K the 6x32 one; other shapes keep 14x32. The other process tiles keep
    their own for every shape."""
    from mnn_x86 import _x86

    if "avx512" not in x86_isa.supported():
        pytest.skip("this CPU does not run avx512")
    want = {6: (6, 6, 6, 6), 14: (8, 8, 6, 14), 8: (8, 8, 8, 8)}[_x86.avx512_rows()]
    got = tuple(
        _x86.gemm_table_rows("avx512", k, m, n)  # k, m, n
        for k, m, n in ((128, 16, 3025), (32, 128, 729), (16, 64, 3025), (512, 1000, 169))
    )
    assert got == want, avx512_tile


def test_winograd_on_16_tiles_keeps_the_tile_in_use():
    """The K rule (6x32 under 14x32 for K < 160) leaves Winograd on at most 16 tiles alone (13x13 and
    14x14 planes at batch 1: _x86.pyx, WINO_T14_MAX_TILES); on more tiles it applies, over K = C."""
    from mnn_x86 import _x86

    def geo(n, hw):
        return {"N": n, "C": 48, "OH": hw, "OW": hw, "kh": 3, "kw": 3}

    assert _x86._gemm_depth("winograd", geo(1, 13)) == 0
    assert _x86._gemm_depth("winograd", geo(1, 14)) == 0
    assert _x86._gemm_depth("winograd", geo(2, 13)) == 48  # 32 tiles
    assert _x86._gemm_depth("winograd", geo(1, 27)) == 48
    assert _x86._gemm_depth("gemm", geo(1, 13)) == 48 * 9


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,o,h,w",
    [
        (128, 16, 55, 55),  # SqueezeNet's fire3 squeeze: two 8-row panels, 63 column tiles (the last 1 wide)
        (40, 29, 23, 27),  # 621 pixels: 12 tiles and 45 columns; 29 rows: 3 panels and 5 rows
        (32, 128, 27, 27),  # the fire4 expand's 1x1: K = 32, the shortest that takes 8x48
    ],
)
def test_8x48_tile_layers(rng, isa, threads, c, o, h, w):
    """1x1 convolutions that take the 8x48 table under the 14x32 tile (the fixture runs each tile)."""
    x, wt, b = _r(rng, 1, c, h, w), 0.2 * _r(rng, o, c, 1, 1), _r(rng, o)
    check_op("Conv", [x, wt, b], {"activation": "relu"}, isa, threads, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("m,k,n", [(29, 70, 9), (15, 300, 36), (3, 5, 16), (28, 7, 8)])
def test_matmul_narrow_last_panel(rng, isa, m, k, n):
    check_op("MatMul", [_r(rng, m, k), _r(rng, k, n)], {}, isa, constant=(), rtol=1e-4, atol=1e-4)
    check_op("MatMul", [_r(rng, m, k), _r(rng, k, n)], {}, isa, constant=(1,), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,o,h,w,act,bias",
    [
        (19, 40, 13, 13, "relu", True),  # 16 tiles: one AVX-512 vector; 40 outputs = 16 + 16 + 8 lanes
        (33, 70, 14, 14, "sigmoid", False),  # 16 tiles, the last ones clipped to 14; no bias
        (8, 17, 8, 9, "clip", True),  # 6 tiles: one AVX2 vector as well
    ],
)
def test_winograd_few_tiles_transposed(rng, isa, threads, c, o, h, w, act, bias):
    """Winograd with all tiles in one vector runs its GEMMs transposed (winograd_impl.h: wino_gemm
    with gemm_t, wino_output_t along output channels)."""
    x, wt = _r(rng, 1, c, h, w), 0.3 * _r(rng, o, c, 3, 3)
    inputs = [x, wt, _r(rng, o)] if bias else [x, wt]
    attrs = {"pads": [1, 1, 1, 1], "activation": act, "act_alpha": 0.0, "act_beta": 1.0}
    graph, feeds = one_op_graph("Conv", inputs, attrs, (1, 2))
    sess = Session(
        graph,
        backend="x86",
        fallback=False,
        optimize=False,
        threads=threads,
        options={"x86.isa": isa, "x86.winograd": "on"},
    )
    want = run_reference("Conv", inputs, attrs)[0]
    for _ in range(2):
        np.testing.assert_allclose(sess.run(feeds)["out"], want, rtol=1e-4, atol=2e-5 * max(1.0, np.abs(want).max()))
