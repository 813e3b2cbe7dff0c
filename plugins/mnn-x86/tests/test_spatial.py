"""The spatial module (ops_spatial.py, csrc/spatial/): ConvTranspose over 1 to 3 axes, Resize, 3-D Conv,
and the 1-D Conv and pooling that run as 2-D planes one row high; each against the reference backend
on odd sizes, every attribute mode, batch 1 and 3, one and two threads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, one_op_graph
from mnn_x86._common import KERNELS

from mnn_core.graph.ir import Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # the GEMM behind ConvTranspose and 3-D Conv


def _r(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _check(op, inputs, attrs, threads, isa="avx512", constant=(1, 2), rtol=1e-4, atol=1e-5):
    """x86 against the reference, twice (the second run reuses scratch the first dirtied); the
    absolute tolerance scales with the output's magnitude (sums of many products)."""
    graph, feeds = one_op_graph(op, inputs, attrs, constant)
    options = {"x86.isa": isa} if isa else {}
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads, options=options)
    want = run_reference(op, list(inputs), attrs)[0]
    for _ in range(2):
        got = sess.run(feeds)["out"]
        assert got.shape == want.shape and got.dtype == want.dtype
        scale = max(1.0, float(np.abs(want).max())) if want.size and want.dtype.kind == "f" else 1.0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, err_msg=f"{op} {attrs} x86 {isa}")
    return sess


# (input shape without batch, weight (M/group, kernel), attrs)
DECONV_CASES = [
    ((3, 5, 5), (4, (3, 3)), {}),
    ((4, 4, 6), (3, (3, 3)), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
    ((6, 5, 4), (2, (2, 2)), {"group": 3, "strides": [2, 3]}),
    ((2, 4, 4), (3, (3, 3)), {"dilations": [2, 2], "pads": [1, 0, 2, 1]}),
    ((4, 7, 5), (1, (3, 3)), {"group": 4, "strides": [2, 2], "activation": "relu"}),
    ((3, 4, 4), (2, (4, 4)), {"strides": [2, 2], "output_shape": [9, 8]}),
    ((3, 5, 3), (2, (3, 3)), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((3, 5, 3), (2, (3, 3)), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((3, 5, 3), (2, (3, 2)), {"strides": [3, 2], "auto_pad": "VALID", "dilations": [2, 3]}),
    ((2, 3, 3), (5, (2, 3)), {"activation": "leaky_relu", "act_alpha": 0.1}),
    ((24, 11, 13), (24, (4, 4)), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),  # centerface-like upsampling
    ((17, 9, 7), (5, (2, 2)), {"strides": [2, 2]}),
    ((8, 6, 5), (1, (3, 3)), {"group": 8, "strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
    ((2, 6, 5), (3, (3, 3)), {"strides": [2, 2], "output_padding": [1, 0], "pads": [0, 2, 1, 0]}),
    # 1-D and 3-D
    ((4, 7), (3, (3,)), {"group": 2, "strides": [2], "pads": [1, 2], "output_padding": [1]}),
    ((3, 5), (2, (4,)), {"strides": [3], "auto_pad": "SAME_LOWER"}),
    ((5, 9), (4, (3,)), {"dilations": [2], "output_shape": [11]}),
    ((2, 3, 5, 4), (3, (3, 3, 3)), {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1], "dilations": [1, 2, 1]}),
    ((3, 3, 3, 5), (1, (2, 2, 2)), {"group": 3, "strides": [2, 2, 1], "output_shape": [6, 5, 5]}),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("shape,weight,attrs", DECONV_CASES)
def test_conv_transpose(rng, shape, weight, attrs, batch, threads):
    (mg, kernel) = weight
    c = shape[0]
    ins = [_r(rng, batch, *shape), _r(rng, c, mg, *kernel), _r(rng, mg * attrs.get("group", 1))]
    _check("ConvTranspose", ins, attrs, threads)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("shape,weight,attrs", DECONV_CASES[:3] + DECONV_CASES[14:])
def test_conv_transpose_isas(rng, isa, shape, weight, attrs):
    mg, kernel = weight
    ins = [_r(rng, 2, *shape), _r(rng, shape[0], mg, *kernel), _r(rng, mg * attrs.get("group", 1))]
    _check("ConvTranspose", ins, attrs, 2, isa)


@pytest.mark.parametrize(
    "activation,alpha,beta",
    [
        ("relu", 0.0, 0.0),
        ("clip", -0.5, 0.7),
        ("clip", float("nan"), 0.3),
        ("leaky_relu", 0.2, 0.0),
        ("sigmoid", 0.0, 0.0),
        ("silu", 0.0, 0.0),
        ("gelu", 0.0, 0.0),
        ("tanh", 0.0, 0.0),
        ("hard_sigmoid", 0.2, 0.5),
        ("hard_swish", 0.0, 0.0),
    ],
)
def test_conv_transpose_activations(rng, activation, alpha, beta):
    attrs = {"strides": [2, 2], "activation": activation, "act_alpha": alpha, "act_beta": beta}
    _check("ConvTranspose", [_r(rng, 2, 5, 6, 7), _r(rng, 5, 3, 3, 3), _r(rng, 3)], attrs, 2)


@pytest.mark.parametrize("constant", [(), (1,), (2,)])
def test_conv_transpose_runtime_weight_and_bias(rng, constant):
    """Weight and bias read from the inputs at each run where they are not constants; no bias at all too."""
    ins = [_r(rng, 3, 4, 5, 6), _r(rng, 4, 3, 3, 2), _r(rng, 6)]
    _check("ConvTranspose", ins, {"group": 2, "strides": [2, 1]}, 2, constant=constant)
    _check("ConvTranspose", ins[:2], {"strides": [1, 2]}, 1, constant=constant[:1])


def test_conv_transpose_declines_empty_plane():
    spec = KERNELS["ConvTranspose"].spec
    node = Node("ConvTranspose", ["x", "w"], ["y"], {}, "d")
    assert spec.accepts(node, [TensorInfo((1, 2, 0, 3)), TensorInfo((2, 2, 3, 3))]) is not True


# Resize: (input shape, attrs) over the coordinate and rounding modes, up and down, scales and sizes
COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
ROUNDINGS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
SIZES = [
    {"scales": [1.0, 1.0, 2.0, 2.0]},
    {"scales": [1.0, 1.0, 1.5, 0.5]},
    {"scales": [1.0, 1.0, 0.6, 3.0]},
    {"scales": [1.0, 1.7]},
    {"scales": [1.0, 1.0, 1.0, 3.0]},  # a whole factor along W: nearest repeats without the table
    {"sizes": [9, 4]},
    {"sizes": [1, 11]},
    {"sizes": [7, 5]},  # an unscaled axis
]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("coord", COORDS)
def test_resize_nearest(rng, coord, rounding, size):
    attrs = {"mode": "nearest", "coordinate_transformation_mode": coord, "nearest_mode": rounding, **size}
    _check("Resize", [_r(rng, 3, 2, 7, 5)], attrs, 2, constant=())


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("coord", COORDS)
def test_resize_linear(rng, coord, size, batch, threads):
    attrs = {"mode": "linear", "coordinate_transformation_mode": coord, **size}
    _check("Resize", [_r(rng, batch, 3, 7, 5)], attrs, threads, constant=())


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("threads", [1, 2])
def test_resize_upsample_2x_large(rng, mode, threads):
    """The 2x upsampling of FPN/YOLO necks, on planes large enough to split among threads."""
    attrs = {"mode": mode, "scales": [1.0, 1.0, 2.0, 2.0]}
    _check("Resize", [_r(rng, 2, 32, 20, 26)], attrs, threads, constant=())


@pytest.mark.parametrize("scales", [[1.0, 1.0, 1.6, 0.7], [1.0, 1.0, 2.0, 2.0]])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "float16", "int64", "int32", "bool"])
def test_resize_nearest_dtypes(rng, dtype, scales):
    x = rng.integers(0, 100, size=(2, 3, 5, 6)).astype(dtype)
    attrs = {"scales": scales, "nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}
    _check("Resize", [x], attrs, 2, constant=())


def test_resize_linear_declines_non_float32():
    spec = KERNELS["Resize"].spec
    node = Node("Resize", ["x"], ["y"], {"mode": "linear"}, "r")
    assert spec.accepts(node, [TensorInfo((1, 2, 3, 3), "float16")]) is not True
    assert (
        spec.accepts(Node("Resize", ["x"], ["y"], {"mode": "nearest"}, "r"), [TensorInfo((1, 2, 3, 3), "uint8")])
        is True
    )


# 1-D Conv (a 2-D plane one row high), 3-D Conv (im2col and the GEMM)
CONV_CASES = [
    ((80, 33), (16, (3,)), {"pads": [1, 1]}),  # Whisper's first layer, narrower
    ((16, 34), (16, (3,)), {"pads": [1, 1], "strides": [2], "activation": "gelu"}),
    ((3, 17), (4, (5,)), {"auto_pad": "SAME_UPPER", "dilations": [2]}),
    ((6, 17), (6, (3,)), {"group": 6, "pads": [2, 0]}),
    ((8, 15), (4, (1,)), {"group": 2}),
    (
        (4, 5, 6, 7),
        (6, (3, 2, 3)),
        {"group": 2, "pads": [1, 0, 1, 1, 1, 0], "strides": [1, 2, 2], "activation": "relu"},
    ),
    ((3, 6, 5, 4), (5, (3, 3, 3)), {"auto_pad": "SAME_LOWER", "dilations": [1, 2, 1]}),
    ((4, 4, 4, 4), (4, (1, 1, 1)), {"group": 4, "strides": [2, 1, 2]}),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("shape,weight,attrs", CONV_CASES)
def test_conv_1d_3d(rng, shape, weight, attrs, batch, threads):
    og, kernel = weight
    g = attrs.get("group", 1)
    ins = [_r(rng, batch, *shape), _r(rng, og, shape[0] // g, *kernel), _r(rng, og)]
    _check("Conv", ins, attrs, threads)
    _check("Conv", ins[:2], attrs, threads, constant=())  # weight read at run, no bias


POOL_CASES = [
    ("MaxPool", {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ("MaxPool", {"kernel_shape": [2], "dilations": [2], "ceil_mode": 1, "strides": [2]}),
    ("MaxPool", {"kernel_shape": [3], "auto_pad": "SAME_UPPER", "strides": [2]}),
    ("AveragePool", {"kernel_shape": [4], "strides": [3], "pads": [1, 2], "count_include_pad": 1, "ceil_mode": 1}),
    ("AveragePool", {"kernel_shape": [3], "strides": [1], "pads": [1, 1]}),
    ("AveragePool", {"kernel_shape": [5], "auto_pad": "SAME_LOWER", "strides": [3]}),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("op,attrs", POOL_CASES)
def test_pool_1d(rng, op, attrs, batch, threads):
    _check(op, [_r(rng, batch, 5, 17)], attrs, threads, constant=())
