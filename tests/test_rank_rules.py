"""ONNX's rank rules: pooling and convolution over 1, 2 and 3 spatial axes, and every normalization at
each rank its spec allows. Each case is a one-node ONNX model with odd sizes, imported, run on the
reference backend and compared with ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import import_onnx  # noqa: E402
from mnn_core.errors import GraphError  # noqa: E402
from mnn_core.graph.ir import Graph, Node, TensorInfo  # noqa: E402

RTOL, ATOL = 1e-5, 1e-5


def _model(op, shapes, consts, attrs, opset, n_outputs=1, dtypes=None):
    feeds = [f"x{i}" for i in range(len(shapes))]
    outs = [f"y{i}" for i in range(n_outputs)]
    dtypes = dtypes or [TensorProto.FLOAT] * n_outputs
    graph = helper.make_graph(
        [helper.make_node(op, feeds + [name for name, _ in consts], outs, **attrs)],
        f"rank_{op}",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in zip(feeds, shapes)],
        [helper.make_tensor_value_info(name, dt, None) for name, dt in zip(outs, dtypes)],
        [numpy_helper.from_array(value, name) for name, value in consts],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def _onnxruntime(m, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, feeds)


def check(op, shapes, attrs=None, consts=(), opset=21, seed=0):
    """Import the one-node model, run it on the reference backend, compare with onnxruntime."""
    rng = np.random.default_rng(seed)
    feeds = {f"x{i}": rng.uniform(-2, 2, shape).astype(np.float32) for i, shape in enumerate(shapes)}
    m = _model(op, shapes, list(consts), attrs or {}, opset)
    want = _onnxruntime(m, feeds)
    got = mnn.Session(import_onnx(m), backend="reference").run(feeds)
    for i, ref in enumerate(want):
        assert got[f"y{i}"].shape == ref.shape
        np.testing.assert_allclose(got[f"y{i}"], ref, rtol=RTOL, atol=ATOL, err_msg=f"{op} {shapes} {attrs}")


def _positive(*shape, seed=1):
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape).astype(np.float32)


def _weights(*shape, seed=2):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


# -- local pooling: 1, 2 and 3 spatial axes ---------------------------------------------------------

POOLS = [
    # shape, attrs; for MaxPool, AveragePool and LpPool alike
    ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ((1, 2, 10), {"kernel_shape": [3], "strides": [2], "pads": [0, 1], "ceil_mode": 1}),
    ((1, 2, 9), {"kernel_shape": [4], "strides": [3], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 13), {"kernel_shape": [2], "dilations": [3], "strides": [2]}),
    ((2, 3, 9, 7), {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1]}),
    ((1, 2, 9, 8), {"kernel_shape": [3, 2], "dilations": [2, 3], "pads": [1, 1, 2, 0]}),
    ((1, 2, 5, 7, 6), {"kernel_shape": [3, 2, 3], "strides": [2, 2, 1], "pads": [1, 0, 1, 1, 1, 0]}),
    ((1, 3, 7, 5, 5), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "ceil_mode": 1}),
    ((1, 2, 5, 6, 3), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 5, 5, 7), {"kernel_shape": [3, 3, 2], "dilations": [2, 1, 3], "pads": [2, 1, 1, 1, 0, 1]}),
    ((1, 2, 3, 5, 7), {"kernel_shape": [3, 5, 7], "auto_pad": "VALID"}),
]


def _pool_id(case):
    shape, attrs = case
    return f"{len(shape) - 2}d-{'-'.join(f'{k}{v}' for k, v in attrs.items())}".replace(" ", "")


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("case", POOLS, ids=_pool_id)
def test_pool_over_1_to_3_spatial_axes(op, case):
    shape, attrs = case
    check(op, [shape], {**attrs, **({"p": 3} if op == "LpPool" else {})})


@pytest.mark.parametrize(
    "shape, attrs",
    [
        ((2, 3, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 2], "count_include_pad": 1, "ceil_mode": 1}),
        (
            (1, 2, 5, 6, 7),
            {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1], "count_include_pad": 1},
        ),
        (
            (1, 2, 7, 6, 5),
            {"kernel_shape": [2, 3, 2], "dilations": [2, 1, 2], "pads": [1, 1, 0, 1, 2, 1], "count_include_pad": 1},
        ),
    ],
)
def test_average_pool_counts_padding_on_every_rank(shape, attrs):
    check("AveragePool", [shape], attrs)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"])
@pytest.mark.parametrize(
    "shape", [(2, 3, 7), (1, 4, 1), (2, 3, 5, 7), (1, 2, 3, 5, 7), (2, 1, 1, 3, 1)], ids=lambda s: f"{len(s) - 2}d{s}"
)
def test_global_pool_takes_any_number_of_spatial_axes(op, shape):
    check(op, [shape], {"p": 3} if op == "GlobalLpPool" else {})


# -- MaxPool's Indices output ------------------------------------------------------------------------

INDEXED = [
    ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ((1, 2, 13), {"kernel_shape": [2], "dilations": [3], "strides": [2], "ceil_mode": 1}),
    ((2, 3, 7, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 9, 9), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 1, 2, 1]}),
    ((1, 2, 5, 7, 6), {"kernel_shape": [3, 2, 3], "strides": [2, 2, 1], "pads": [1, 0, 1, 1, 1, 0]}),
    ((2, 2, 5, 6, 3), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "auto_pad": "SAME_UPPER"}),
]


def _indexed_pool(x, attrs):
    """MaxPoolWithIndices on the reference backend, through shape inference and a Session."""
    graph = Graph(name="indices")
    graph.inputs["x"] = TensorInfo(x.shape, str(x.dtype))
    graph.nodes.append(Node("MaxPoolWithIndices", ["x"], ["y", "i"], dict(attrs), "pool"))
    graph.outputs = ["y", "i"]
    out = mnn.Session(graph, backend="reference").run({"x": x})
    return out["y"], out["i"]


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("case", INDEXED, ids=_pool_id)
def test_max_pool_indices_match_onnxruntime(case, storage_order):
    shape, attrs = case
    attrs = {**attrs, "storage_order": storage_order}
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    m = _model("MaxPool", [shape], [], attrs, 12, n_outputs=2, dtypes=[TensorProto.FLOAT, TensorProto.INT64])
    want_y, want_i = _onnxruntime(m, {"x0": x})
    y, i = _indexed_pool(x, attrs)
    np.testing.assert_array_equal(y, want_y)
    assert i.dtype == np.int64
    np.testing.assert_array_equal(i, want_i)


def test_max_pool_indices_take_the_first_of_equal_maxima():
    x = np.random.default_rng(0).integers(-2, 2, (1, 2, 7, 5)).astype(np.float32)
    attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    m = _model("MaxPool", [x.shape], [], attrs, 12, n_outputs=2, dtypes=[TensorProto.FLOAT, TensorProto.INT64])
    want_y, want_i = _onnxruntime(m, {"x0": x})
    y, i = _indexed_pool(x, attrs)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(i, want_i)


def test_onnx_max_pool_with_indices_imports():
    m = _model(
        "MaxPool",
        [(1, 2, 7, 7)],
        [],
        {"kernel_shape": [3, 3], "strides": [2, 2]},
        12,
        n_outputs=2,
        dtypes=[TensorProto.FLOAT, TensorProto.INT64],
    )
    x = np.random.default_rng(0).standard_normal((1, 2, 7, 7)).astype(np.float32)
    got = mnn.Session(import_onnx(m), backend="reference").run({"x0": x})
    for name, want in zip(("y0", "y1"), _onnxruntime(m, {"x0": x})):
        np.testing.assert_array_equal(got[name], want)


@pytest.mark.parametrize("case", INDEXED[::2], ids=_pool_id)
def test_max_unpool_scatters_back_on_every_rank(case):
    shape, attrs = case
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    attrs = {k: v for k, v in attrs.items() if k in ("kernel_shape", "strides", "pads")}
    pool = _model("MaxPool", [shape], [], attrs, 12, n_outputs=2, dtypes=[TensorProto.FLOAT, TensorProto.INT64])
    y, idx = _onnxruntime(pool, {"x0": x})
    graph = helper.make_graph(
        [helper.make_node("MaxUnpool", ["y", "i"], ["z"], **attrs)],
        "unpool",
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape),
            helper.make_tensor_value_info("i", TensorProto.INT64, idx.shape),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 10
    feeds = {"y": y, "i": idx}
    got = mnn.Session(import_onnx(m), backend="reference").run(feeds)["z"]
    np.testing.assert_array_equal(got, _onnxruntime(m, feeds)[0])


# -- convolution: 1, 2 and 3 spatial axes ------------------------------------------------------------

CONVS = [
    # x shape, weight shape, attrs
    ((2, 4, 11), (6, 2, 3), {"group": 2, "pads": [1, 2], "strides": [2]}),
    ((1, 3, 9), (4, 3, 3), {"dilations": [2], "pads": [2, 1]}),
    ((1, 3, 7), (2, 3, 4), {"strides": [2], "auto_pad": "SAME_LOWER"}),
    ((1, 3, 9, 7), (4, 3, 3, 2), {"strides": [2, 1], "pads": [1, 0, 1, 1]}),
    ((1, 2, 5, 7, 6), (3, 2, 3, 3, 3), {"pads": [1, 0, 1, 1, 2, 0], "strides": [1, 2, 2]}),
    ((1, 4, 5, 3, 5), (4, 1, 3, 3, 3), {"group": 4, "strides": [2, 1, 2], "auto_pad": "SAME_UPPER"}),
    ((2, 3, 7, 5, 3), (2, 3, 2, 2, 2), {"dilations": [3, 2, 1], "strides": [2, 2, 1]}),
]


@pytest.mark.parametrize("x, w, attrs", CONVS, ids=[f"{len(c[0]) - 2}d-{i}" for i, c in enumerate(CONVS)])
def test_conv_over_1_to_3_spatial_axes(x, w, attrs):
    check("Conv", [x], attrs, [("w", _weights(*w)), ("b", _weights(w[0]))], opset=17)


CONV_TRANSPOSES = [
    ((2, 4, 7), (4, 3, 3), {"group": 2, "strides": [2], "pads": [1, 2], "output_padding": [1]}),
    ((1, 3, 5), (3, 2, 4), {"strides": [3], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 5, 3), (2, 3, 3, 2), {"strides": [2, 3], "output_shape": [10, 8]}),
    ((1, 2, 3, 5, 4), (2, 3, 3, 3, 3), {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1], "dilations": [1, 2, 1]}),
    ((1, 3, 3, 3, 5), (3, 1, 2, 2, 2), {"group": 3, "strides": [2, 2, 1], "output_shape": [6, 5, 5]}),
    ((1, 2, 3, 4, 3), (2, 2, 3, 3, 3), {"strides": [2, 2, 2], "auto_pad": "SAME_UPPER"}),
]


@pytest.mark.parametrize(
    "x, w, attrs", CONV_TRANSPOSES, ids=[f"{len(c[0]) - 2}d-{i}" for i, c in enumerate(CONV_TRANSPOSES)]
)
def test_conv_transpose_over_1_to_3_spatial_axes(x, w, attrs):
    check("ConvTranspose", [x], attrs, [("w", _weights(*w)), ("b", _weights(w[1] * attrs.get("group", 1)))], opset=17)


def test_conv3d_then_batchnorm_folds_into_the_5d_weight():
    """Session(optimize=True) folds a BatchNormalization into the Conv before it: the per-channel
    factor must broadcast along the weight's first axis whatever its rank (mnn_core/graph/passes.py)."""
    c = 4  # as many output channels as input ones: a misaligned broadcast would go through silently
    consts = [
        ("w", _weights(c, c, 3, 3, 3)),
        ("s", _positive(c)),
        ("b", _weights(c, seed=3)),
        ("m", _weights(c, seed=4)),
        ("v", _positive(c, seed=5)),
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1] * 6),
            helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"]),
        ],
        "conv_bn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, c, 5, 6, 7))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(value, name) for name, value in consts],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    x = np.random.default_rng(0).standard_normal((1, c, 5, 6, 7)).astype(np.float32)
    got = mnn.Session(import_onnx(m), backend="reference").run({"x": x})["y"]
    np.testing.assert_allclose(got, _onnxruntime(m, {"x": x})[0], rtol=1e-4, atol=1e-4)


# -- normalizations at every rank their spec allows ---------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 7), (2, 3, 5, 3), (2, 3, 3, 5, 3)], ids=lambda s: f"rank{len(s)}")
def test_batch_normalization_takes_rank_2_and_up(shape):
    c = shape[1]
    consts = [("s", _positive(c)), ("b", _weights(c)), ("m", _weights(c, seed=3)), ("v", _positive(c, seed=4))]
    check("BatchNormalization", [shape], {"epsilon": 1e-3}, consts, opset=15)


@pytest.mark.parametrize(
    "shape", [(2, 3, 7), (2, 3, 5, 3), (2, 3, 3, 5, 3), (1, 2, 1, 3, 1)], ids=lambda s: f"rank{len(s)}"
)
def test_instance_normalization_takes_rank_3_and_up(shape):
    check("InstanceNormalization", [shape], {}, [("s", _positive(shape[1])), ("b", _weights(shape[1]))])


@pytest.mark.parametrize(
    "shape, axis",
    [((7,), 0), ((3, 7), -1), ((2, 3, 7), 1), ((2, 3, 5, 3), -3), ((2, 3, 3, 5, 3), 2), ((2, 3, 3, 5, 3), 0)],
)
def test_layer_normalization_takes_any_rank_and_axis(shape, axis):
    norm = shape[axis % len(shape) :]
    check("LayerNormalization", [shape], {"axis": axis}, [("s", _positive(*norm)), ("b", _weights(*norm))], opset=17)


@pytest.mark.parametrize(
    "shape, axis, p", [((7,), 0, 2), ((3, 5), 0, 1), ((2, 3, 7), 1, 2), ((2, 3, 5, 3), -1, 1), ((2, 3, 3, 5, 3), 2, 2)]
)
def test_lp_normalization_takes_any_rank_and_axis(shape, axis, p):
    check("LpNormalization", [shape], {"axis": axis, "p": p})


@pytest.mark.parametrize(
    "shape, groups", [((2, 6, 7), 3), ((2, 6, 3, 5), 2), ((2, 6, 3, 5, 3), 6)], ids=lambda v: str(v)
)
def test_group_normalization_takes_rank_3_and_up(shape, groups):
    c = shape[1]
    check(
        "GroupNormalization",
        [shape],
        {"num_groups": groups, "epsilon": 1e-3},
        [("s", _positive(c)), ("b", _weights(c))],
    )


@pytest.mark.parametrize(
    "shape, axes", [((2, 3, 7), [0, 2]), ((2, 3, 5, 3), None), ((2, 3, 3, 5, 3), [0, 2, 3, 4]), ((3, 7), [1])]
)
def test_mean_variance_normalization_over_its_axes(shape, axes):
    check("MeanVarianceNormalization", [shape], {} if axes is None else {"axes": axes}, opset=13)


@pytest.mark.parametrize("shape, axis", [((3, 7), -1), ((2, 3, 7), 1), ((2, 3, 3, 5, 3), 2)])
def test_rms_normalization_takes_any_rank_and_axis(shape, axis):
    if not onnx.defs.has("RMSNormalization"):
        pytest.skip("this onnx has no RMSNormalization (opset 23)")
    check("RMSNormalization", [shape], {"axis": axis}, [("s", _positive(*shape[axis % len(shape) :]))], opset=23)


def test_lrn_on_nchw():
    check("LRN", [(2, 5, 7, 3)], {"size": 3, "alpha": 0.1, "bias": 2.0})  # onnxruntime takes 4-D only


# -- ranks the spec does not allow are refused at shape inference -------------------------------------

REFUSED = [
    ("GlobalAveragePool", [(2, 3)], {}, "at least one spatial axis"),
    ("GlobalLpPool", [(2, 3, 0)], {}, "nothing to pool"),
    ("MaxPool", [(2, 3)], {"kernel_shape": []}, "at least one spatial axis"),
    ("AveragePool", [(1, 2, 5, 5, 5)], {"kernel_shape": [2, 2]}, "3 values each"),
    ("MaxPoolWithIndices", [(1, 2, 7)], {"kernel_shape": [2], "pads": [1, 1, 1, 1]}, "pads must be 2"),
    ("Conv", [(1, 2, 3, 3, 3, 3), (1, 2, 1, 1, 1, 1)], {}, "3, 4 or 5"),
    ("Conv", [(1, 2, 5, 5), (1, 2, 3)], {}, "one rank"),
    ("ConvTranspose", [(1, 2, 5, 5, 5), (2, 1, 3, 3)], {}, "one rank"),
    ("InstanceNormalization", [(2, 3), (3,), (3,)], {}, "rank 3 or more"),
    ("BatchNormalization", [(3,), (3,), (3,), (3,), (3,)], {}, "rank 2 or more"),
    ("LayerNormalization", [()], {}, "rank 1 or more"),
]


@pytest.mark.parametrize("op, shapes, attrs, message", REFUSED, ids=[f"{r[0]}-{i}" for i, r in enumerate(REFUSED)])
def test_ranks_outside_the_spec_are_refused(op, shapes, attrs, message):
    from mnn_core.ops import get_schema

    schema = get_schema(op)
    with pytest.raises(GraphError, match=message):
        schema.infer([TensorInfo(s, "float32") for s in shapes], schema.check_attrs(attrs, op))
