"""mnn_core.backend.kit.geometry judged by ONNX Runtime: for every window below, the output size is
ONNX Runtime's, and the explicit pads it resolves for auto_pad give ONNX Runtime's own auto_pad result
when handed back to ONNX Runtime as `pads`. Nothing here runs an mnn kernel: the reference and every
backend take their geometry from this module, so it is checked against an engine that shares no code."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core.backend.kit.geometry import conv_geometry, conv_transpose_geometry, pool_geometry

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

# (input spatial sizes, kernel, attributes): odd totals so SAME_UPPER and SAME_LOWER differ; no
# dilation with SAME (onnxruntime's Conv refuses it)
CONV = [
    ((9,), (4,), {"strides": [2], "auto_pad": "SAME_UPPER"}),
    ((9,), (4,), {"strides": [2], "auto_pad": "SAME_LOWER"}),
    ((7, 10), (3, 2), {"strides": [2, 3], "auto_pad": "SAME_UPPER"}),
    ((7, 10), (3, 2), {"strides": [2, 3], "auto_pad": "SAME_LOWER"}),
    ((8, 11), (4, 3), {"strides": [3, 2], "auto_pad": "SAME_UPPER"}),
    ((8, 11), (4, 3), {"strides": [3, 2], "auto_pad": "SAME_LOWER"}),
    ((8, 11), (3, 3), {"dilations": [1, 3], "strides": [1, 2], "pads": [2, 0, 1, 3]}),
    ((6, 5), (2, 2), {"auto_pad": "SAME_UPPER"}),
    ((9, 8), (3, 3), {"strides": [2, 2], "auto_pad": "VALID"}),
    ((9, 8), (3, 4), {"strides": [3, 2], "pads": [1, 0, 2, 3], "dilations": [2, 1]}),
    ((5, 6, 7), (2, 3, 2), {"strides": [2, 1, 2], "auto_pad": "SAME_UPPER"}),
    ((5, 6, 7), (2, 3, 2), {"strides": [2, 1, 2], "auto_pad": "SAME_LOWER"}),
]

# pooling: SAME with dilations is left out (onnxruntime sizes SAME pads by the undilated kernel,
# the ONNX spec by the dilated one; kit.geometry follows the spec)
POOL = [
    ("MaxPool", (9, 10), {"kernel_shape": [3, 2], "strides": [2, 3], "auto_pad": "SAME_UPPER"}),
    ("MaxPool", (9, 10), {"kernel_shape": [3, 2], "strides": [2, 3], "auto_pad": "SAME_LOWER"}),
    ("AveragePool", (8, 7), {"kernel_shape": [2, 4], "strides": [3, 2], "auto_pad": "SAME_UPPER"}),
    ("AveragePool", (8, 7), {"kernel_shape": [2, 4], "strides": [3, 2], "auto_pad": "SAME_LOWER"}),
    ("MaxPool", (11,), {"kernel_shape": [4], "strides": [3], "auto_pad": "SAME_LOWER"}),
    ("MaxPool", (10, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("MaxPool", (10, 9), {"kernel_shape": [2, 3], "strides": [2, 2], "pads": [1, 1, 0, 1], "ceil_mode": 1}),
    ("MaxPool", (12, 11), {"kernel_shape": [3, 2], "dilations": [2, 3], "strides": [2, 1]}),
    ("AveragePool", (9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 1, 2], "ceil_mode": 1}),
    ("MaxPool", (5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "auto_pad": "SAME_UPPER"}),
]

CONV_TRANSPOSE = [
    ((5, 6), (3, 3), {"strides": [2, 2]}),
    ((5, 6), (3, 4), {"strides": [2, 3], "pads": [1, 0, 0, 2], "output_padding": [1, 0]}),
    ((4, 5), (3, 3), {"strides": [2, 2], "dilations": [2, 1], "output_padding": [1, 1]}),
    ((5, 6), (3, 2), {"strides": [2, 3], "output_shape": [10, 17]}),
    ((7,), (4,), {"strides": [3], "pads": [2, 1]}),
]


def _fill(attrs: dict) -> dict:
    full = {"strides": [], "pads": [], "dilations": [], "auto_pad": "NOTSET", "group": 1, "kernel_shape": []}
    full.update({"ceil_mode": 0, "output_padding": [], "output_shape": []})
    return {**full, **attrs}


def _run(op: str, x: np.ndarray, w: np.ndarray | None, attrs: dict) -> np.ndarray:
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    inits = [] if w is None else [onnx.numpy_helper.from_array(w, "w")]
    node = helper.make_node(op, ["x"] + ([] if w is None else ["w"]), ["y"], **attrs)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph([node], "g", inputs, [y], inits), opset_imports=[helper.make_opsetid("", 19)]
    )
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _explicit(attrs: dict, pads: list[int]) -> dict:
    """The same node with the resolved pads given explicitly."""
    out = {k: v for k, v in attrs.items() if k not in ("auto_pad", "output_shape")}
    return {**out, "pads": pads}


def _check(op: str, x: np.ndarray, w: np.ndarray | None, attrs: dict, geo: dict) -> None:
    y = _run(op, x, w, attrs)
    assert y.shape == tuple(geo["out"]), f"{op} {attrs}: onnxruntime gives {y.shape}, the kit {geo['out']}"
    if attrs.get("auto_pad", "NOTSET") != "NOTSET" or "output_shape" in attrs:
        y2 = _run(op, x, w, _explicit(attrs, geo["pads"]))
        np.testing.assert_allclose(y2, y, rtol=1e-5, atol=1e-5, err_msg=f"{op} {attrs}: pads {geo['pads']}")


@pytest.mark.parametrize("sizes,kernel,attrs", CONV, ids=[f"conv{i}" for i in range(len(CONV))])
def test_conv_geometry_matches_onnxruntime(sizes, kernel, attrs):
    rng = np.random.default_rng(len(sizes) * 100 + sum(sizes))
    x = rng.standard_normal((2, 3, *sizes)).astype(np.float32)
    w = rng.standard_normal((4, 3, *kernel)).astype(np.float32)
    geo = conv_geometry(x.shape, w.shape, _fill(attrs), (1, 2, 3))
    _check("Conv", x, w, attrs, geo)


@pytest.mark.parametrize("op,sizes,attrs", POOL, ids=[f"pool{i}" for i in range(len(POOL))])
def test_pool_geometry_matches_onnxruntime(op, sizes, attrs):
    rng = np.random.default_rng(sum(sizes))
    x = rng.standard_normal((1, 2, *sizes)).astype(np.float32)
    geo = pool_geometry(x.shape, _fill(attrs), op)
    _check(op, x, None, attrs, geo)


@pytest.mark.parametrize("sizes,kernel,attrs", CONV_TRANSPOSE, ids=[f"deconv{i}" for i in range(len(CONV_TRANSPOSE))])
def test_conv_transpose_geometry_matches_onnxruntime(sizes, kernel, attrs):
    rng = np.random.default_rng(sum(sizes) + 7)
    x = rng.standard_normal((1, 3, *sizes)).astype(np.float32)
    w = rng.standard_normal((3, 2, *kernel)).astype(np.float32)
    geo = conv_transpose_geometry(x.shape, w.shape, _fill(attrs), (1, 2, 3))
    _check("ConvTranspose", x, w, attrs, geo)


def test_same_pads_put_the_odd_one_where_onnx_says():
    """Spelled out once: a 9-wide input, a 4-wide window and stride 2 need 3 cells of padding;
    SAME_UPPER puts the odd one at the end, SAME_LOWER at the start."""
    upper = conv_geometry((1, 1, 9), (1, 1, 4), _fill({"strides": [2], "auto_pad": "SAME_UPPER"}), (1,))
    lower = conv_geometry((1, 1, 9), (1, 1, 4), _fill({"strides": [2], "auto_pad": "SAME_LOWER"}), (1,))
    assert upper["pads"] == [1, 2] and lower["pads"] == [2, 1]
    assert upper["out"] == lower["out"] == (1, 1, 5)
