"""Kernel edge cases beyond the schema samples: K-blocking (K > 256), partial
register tiles, odd channel counts, 1x1 spatial, batch 0, every fused
activation in the GEMM epilogue, strided and dilated depthwise, broadcasts."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, check_op
from mnn_x86 import isa as x86_isa

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)

ACTS = [
    ("relu", 0, 0),
    ("clip", -0.5, 0.5),
    ("leaky_relu", 0.1, 0),
    ("sigmoid", 0, 0),
    ("silu", 0, 0),
    ("gelu", 0, 0),
    ("tanh", 0, 0),
    ("hard_sigmoid", 0.2, 0.5),
    ("hard_swish", 0, 0),
]


def _r(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "m,k,n",
    [
        (1, 1, 1),
        (3, 700, 5),
        (37, 300, 65),
        (130, 520, 47),
        (15, 9, 1100),
        (1, 523, 67),
        (1, 1030, 300),
        (7, 77, 33),
        (15, 263, 49),
    ],
)
def test_matmul_sizes(rng, isa, threads, m, k, n):
    check_op("MatMul", [_r(rng, m, k), _r(rng, k, n)], {}, isa, threads, constant=(1,), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "m,k,n", [(1, 1, 1), (4, 16, 8), (5, 17, 3), (130, 200, 5), (9, 33, 7), (67, 31, 2), (3, 520, 6)]
)
def test_matmul_narrow(rng, isa, threads, m, k, n):
    """A constant B of at most 8 columns (csrc/op_narrow.c): rows in fours and alone, K in 16s and a
    tail, rows cut between threads; and the same as a Gemm with every bias broadcast, alpha, beta and
    a fused activation, B transposed or not."""
    a, b = _r(rng, m, k), _r(rng, k, n)
    check_op("MatMul", [a, b], {}, isa, threads, constant=(1,), rtol=1e-4, atol=1e-4)
    check_op("MatMul", [_r(rng, 2, m, k), b], {"activation": "sigmoid"}, isa, threads, constant=(1,), atol=1e-4)
    for c_shape in [(), (n,), (m, 1), (m, n)]:
        attrs = {"transB": int(c_shape == (n,)), "alpha": 0.7, "beta": -1.5, "activation": "relu"}
        bb = np.ascontiguousarray(b.T) if attrs["transB"] else b
        check_op("Gemm", [a, bb, _r(rng, *c_shape)], attrs, isa, threads, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k,n", [(1, 9), (7, 47), (300, 128), (1536, 130), (65, 300), (9, 4100)])
def test_matmul_one_row(rng, isa, threads, k, n):
    """One row of A by a constant B (x86_matmul_row in csrc/op_narrow.c: panel by panel, K odd and even,
    a partial last panel; N above X86_ROW_MAX_N takes the GEMM), as MatMul and as Gemm with each bias
    broadcast, alpha, beta and a fused activation."""
    a, b = _r(rng, 1, k), _r(rng, k, n)
    check_op("MatMul", [a, b], {}, isa, threads, constant=(1,), rtol=1e-4, atol=1e-4)
    for c_shape in [(), (n,), (1, n)]:
        attrs = {"transB": int(c_shape == (n,)), "alpha": 0.7, "beta": -1.5, "activation": "tanh"}
        bb = np.ascontiguousarray(b.T) if attrs["transB"] else b
        check_op("Gemm", [a, bb, _r(rng, *c_shape)], attrs, isa, threads, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
def test_matmul_batch_broadcast_runtime_weights(rng, isa):
    a, b = _r(rng, 3, 1, 20, 33), _r(rng, 4, 33, 17)
    check_op("MatMul", [a, b], {"activation": "relu"}, isa, constant=())
    check_op("MatMul", [a, b], {}, isa, constant=(1,))
    check_op("MatMul", [_r(rng, 2, 5, 300), _r(rng, 300, 1)], {}, isa, constant=(), atol=1e-4)
    check_op("MatMul", [_r(rng, 300), _r(rng, 2, 300, 7)], {}, isa, constant=(), atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("act,alpha,beta", ACTS)
def test_gemm_fused_activations(rng, isa, act, alpha, beta):
    a, b, c = _r(rng, 19, 40), _r(rng, 35, 40), _r(rng, 35)
    check_op("Gemm", [a, b, c], {"transB": 1, "activation": act, "act_alpha": alpha, "act_beta": beta}, isa)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("c_shape", [(), (1,), (9,), (1, 9), (6, 1), (6, 9)])
def test_gemm_bias_broadcast(rng, isa, c_shape):
    a, b, c = _r(rng, 11, 6), _r(rng, 11, 9), _r(rng, *c_shape)
    attrs = {"transA": 1, "alpha": 0.7, "beta": -1.5}
    check_op("Gemm", [a, b, c], attrs, isa)
    check_op("Gemm", [a, b, c], attrs, isa, constant=())  # B and C at run time


CONVS = [
    # (N, C, H, W), (O, K), attrs
    ((1, 17, 9, 11), (5, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 64, 7, 7), (24, 3), {"pads": [1, 0, 2, 1], "activation": "relu"}),  # K = 576 > KC
    ((1, 3, 1, 1), (17, 1), {}),  # 1x1 spatial
    ((1, 32, 1, 1), (16, 1), {"activation": "hard_swish"}),
    ((1, 5, 13, 20), (7, 3), {"strides": [2, 3], "pads": [1, 1, 1, 1]}),
    ((1, 6, 12, 12), (9, 5), {"group": 3, "dilations": [2, 1], "pads": [4, 2, 4, 2], "activation": "silu"}),
    ((1, 16, 9, 40), (32, 1), {"strides": [2, 2]}),
    ((0, 4, 6, 6), (4, 3), {"group": 4}),  # batch 0, depthwise
    ((1, 16, 1, 1), (16, 3), {"group": 16, "pads": [1, 1, 1, 1]}),  # depthwise, 1x1 spatial
    (
        (2, 17, 21, 37),
        (17, 3),
        {"group": 17, "pads": [1, 1, 1, 1], "activation": "clip", "act_alpha": 0.0, "act_beta": 6.0},
    ),
    ((1, 8, 20, 45), (8, 3), {"group": 8, "strides": [2, 2], "pads": [0, 1, 1, 0]}),
    ((1, 8, 20, 45), (8, 3), {"group": 8, "strides": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((1, 5, 11, 19), (5, 5), {"group": 5, "auto_pad": "SAME_LOWER", "activation": "gelu"}),
    ((1, 4, 9, 9), (8, 3), {"group": 4, "pads": [1, 1, 1, 1]}),  # channel multiplier 2: grouped GEMM
    # plain 1x1s: the GEMM on the NCHW rows, packed block by block at 2 threads (gemm_impl.h: b_scratch)
    ((1, 300, 23, 29), (20, 1), {"activation": "relu"}),  # K = 300: two K slices; 667 columns
    ((2, 64, 55, 55), (16, 1), {}),  # SqueezeNet's squeeze, two images
    ((1, 96, 13, 13), (64, 1), {"activation": "relu"}),  # one row block at 2 threads: split by columns only
    ((1, 40, 13, 13), (200, 1), {}),  # 2 threads: blocks resized to share the work evenly (gemm_balance)
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,wk,attrs", CONVS, ids=[str(i) for i in range(len(CONVS))])
def test_conv_cases(rng, isa, threads, x_shape, wk, attrs):
    n, c, h, w = x_shape
    o, k = wk
    g = attrs.get("group", 1)
    ins = [_r(rng, n, c, h, w), _r(rng, o, c // g, k, k, scale=0.3), _r(rng, o)]
    check_op("Conv", ins, attrs, isa, threads, atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
def test_conv_runtime_weights(rng, isa):
    x, w, b = _r(rng, 1, 6, 8, 8), _r(rng, 4, 3, 3, 3), _r(rng, 4)
    check_op("Conv", [x, w, b], {"group": 2, "pads": [1, 1, 1, 1]}, isa, constant=())
    dw = _r(rng, 6, 1, 3, 3)
    check_op("Conv", [x, dw, None], {"group": 6, "pads": [1, 1, 1, 1]}, isa, constant=())


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((2, 17, 5, 7), (1, 17, 1, 1)),  # channel
        ((2, 17, 5, 7), (2, 17, 5, 7)),  # same shape
        ((3, 40000), ()),  # scalar, large enough to run threaded
        ((1,), (2, 3, 5)),
        ((4, 1, 6), (1, 5, 1)),  # outer product
        ((2, 3, 4, 5, 6), (2, 1, 4, 1, 6)),
        ((2, 1, 2, 1, 2, 1, 2), (1, 2, 1, 2, 1, 2, 1)),  # 7 collapsed dims
    ],
)
def test_binary_broadcasts(rng, isa, op, a_shape, b_shape):
    a, b = _r(rng, *a_shape), _r(rng, *b_shape)
    if op == "Div":
        b = np.where(np.abs(b) < 0.3, 1.0, b).astype(np.float32)
    check_op(op, [a, b], {}, isa, threads=2, constant=())


def test_broadcast_collapse():
    from mnn_x86.ops_eltwise import collapse_broadcast

    assert collapse_broadcast((2, 3, 4), (2, 3, 4), (2, 3, 4)) == ([24], [1], [1])
    assert collapse_broadcast((2, 3, 4, 5), (2, 3, 4, 5), (1, 3, 1, 1)) == ([2, 3, 20], [60, 20, 1], [0, 1, 0])
    assert collapse_broadcast((5, 7), (5, 7), ()) == ([35], [1], [0])
    assert collapse_broadcast((), (), ()) == ([1], [0], [0])
    assert collapse_broadcast((4, 5, 6), (4, 1, 6), (1, 5, 1)) == ([4, 5, 6], [6, 0, 1], [0, 1, 0])


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize(
    "op,attrs",
    [
        ("Relu", {}),
        ("Clip", {"min": -1.0, "max": 2.0}),
        ("Sigmoid", {}),
        ("Silu", {}),
        ("Gelu", {}),
        ("Tanh", {}),
        ("HardSwish", {}),
        ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
        ("LeakyRelu", {"alpha": 0.2}),
    ],
)
def test_activations_long_and_threaded(rng, isa, op, attrs):
    check_op(op, [_r(rng, 3, 50001, scale=4.0)], attrs, isa, threads=2, constant=())


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("op", ["Max", "Min"])
def test_max_min_propagate_nan(isa, op):
    a = np.array([np.nan, 1.0, 2.0, np.nan] * 5, np.float32)
    b = np.array([0.0, np.nan, 3.0, np.nan] * 5, np.float32)
    check_op(op, [a, b], {}, isa, constant=())


POOLS = [
    # (N, C, H, W), attrs: the row-then-column max path (dilation 1, stride 1 or 2) and its edges
    ((1, 3, 111, 111), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),  # SqueezeNet's
    ((2, 5, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),  # ResNet's
    ((1, 4, 9, 7), {"kernel_shape": [2, 3], "strides": [1, 2], "pads": [1, 0, 0, 2]}),  # W < a vector
    ((1, 3, 8, 37), {"kernel_shape": [3, 5], "strides": [2, 1], "pads": [2, 2, 2, 2]}),
    ((1, 2, 10, 35), {"kernel_shape": [2, 2], "strides": [2, 2]}),  # floor: the last column is read by no window
    ((1, 2, 11, 34), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "pads": [0, 1, 0, 1]}),
    ((1, 6, 17, 33), {"kernel_shape": [3, 3], "strides": [3, 3]}),  # stride 3: the padded-plane path
    ((1, 6, 17, 33), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [1, 1, 1, 1]}),  # dilated: same
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,attrs", POOLS, ids=[str(i) for i in range(len(POOLS))])
def test_maxpool_cases(rng, isa, threads, x_shape, attrs):
    check_op("MaxPool", [_r(rng, *x_shape)], attrs, isa, threads, constant=(), rtol=0, atol=0)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize(
    "x_shape,attrs", POOLS[:2] + [((1, 2, 100, 90), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})]
)
def test_maxpool_bands_at_three_threads(rng, isa, x_shape, attrs):
    """Big planes at stride 2 go by bands of output rows, one per thread (pool_impl.h): with three,
    bands start at odd rows (19 and 17 rows each) and cut the kernel's pairs of output rows."""
    check_op("MaxPool", [_r(rng, *x_shape)], attrs, isa, 3, constant=(), rtol=0, atol=0)


@pytest.mark.parametrize("isa", ISAS)
def test_maxpool_propagates_nan(rng, isa):
    """A NaN in a window makes that output NaN, wherever in the window it sits (first, middle, last
    row and column), as numpy's max does in the reference."""
    x = _r(rng, 1, 2, 23, 41)
    x[0, 0, 0, 0] = x[0, 0, 5, 7] = x[0, 1, 22, 40] = x[0, 1, 10, 20] = np.nan
    for attrs in (
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [3, 3], "strides": [1, 1]},
    ):
        check_op("MaxPool", [x], attrs, isa, constant=(), rtol=0, atol=0)


NAN_ACTS = [
    ("Relu", {}),
    ("Clip", {"min": -1.0, "max": 2.0}),
    ("Sigmoid", {}),
    ("Tanh", {}),
    ("Silu", {}),
    ("Gelu", {}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("HardSwish", {}),
    ("LeakyRelu", {"alpha": 0.2}),
]


def _with_nans(x):
    x.reshape(-1)[::7] = np.nan
    return x


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("op,attrs", NAN_ACTS, ids=[a[0] for a in NAN_ACTS])
def test_activations_propagate_nan(rng, isa, op, attrs):
    """NaN in, NaN out, as in the reference (numpy): the max/min instructions return their second
    operand when either is NaN, so a clamp written max(x, lo) would turn NaN into lo."""
    check_op(op, [_with_nans(_r(rng, 3, 37))], attrs, isa, constant=())


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("act", [{"activation": "relu"}, {"activation": "clip", "act_alpha": 0.0, "act_beta": 6.0}])
@pytest.mark.parametrize(
    "x_shape,wk,group",
    [((1, 8, 9, 9), (16, 1), 1), ((1, 4, 12, 12), (16, 3), 1), ((1, 5, 9, 9), (5, 3), 5), ((1, 32, 7, 7), (32, 3), 32)],
)
def test_fused_activations_propagate_nan(rng, isa, act, x_shape, wk, group):
    """A NaN input pixel makes exactly the reference's NaN outputs through the GEMM (1x1 and
    im2col) and depthwise (plane and channels-last) epilogues. Not Winograd: its input transform
    mixes a whole 6x6 tile, so a NaN there reaches all 16 outputs of the tile (README)."""
    o, k = wk
    x = _r(rng, *x_shape)
    x[0, :, 2, 3] = np.nan
    w, b = _r(rng, o, x_shape[1] // group, k, k), _r(rng, o)
    check_op("Conv", [x, w, b], {"group": group, "pads": [k // 2] * 4, **act}, isa, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "float16"])
@pytest.mark.parametrize(
    "axis,shapes",
    [
        (1, [(3, 37, 41, 43), (3, 5, 41, 43), (3, 0, 41, 43), (3, 64, 41, 43)]),  # batch 3 along channels
        (2, [(2, 7, 1000, 33), (2, 7, 1, 33)]),
        (0, [(5, 9001), (1, 9001)]),
    ],
)
def test_concat_in_byte_ranges(rng, threads, dtype, axis, shapes):
    """Concat copies ranges of its output's bytes on the pool (from 256 KB on, so most of these run
    in several ranges); a range may start or end inside any input's block, an empty input included."""
    inputs = [(rng.standard_normal(s) * 50).astype(dtype) for s in shapes]
    check_op("Concat", inputs, {"axis": axis}, x86_isa.best(), threads, constant=(), rtol=0, atol=0)
