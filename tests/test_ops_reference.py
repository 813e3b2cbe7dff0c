"""The op schemas themselves: inference agrees with the reference kernels on every
sample, attributes are validated, bad shapes are rejected, and a few kernels give
values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core.errors import GraphError
from mnn_core.graph.ir import Graph, Node, SequenceInfo, TensorInfo
from mnn_core.ops import all_schemas, get_schema, run_reference
from mnn_core.ops.schema import REQUIRED


def _info(x):
    if isinstance(x, list):
        return SequenceInfo(_info(x[0]) if x else None, str(np.asarray(x[0]).dtype) if x else "float32")
    return None if x is None else TensorInfo(np.shape(x), str(np.asarray(x).dtype))


def _agrees(where: str, out, info) -> None:
    """A kernel result against its inferred info; a symbolic size (a dynamic op's) matches any size."""
    if isinstance(info, SequenceInfo):
        assert isinstance(out, list), f"{where} is a {type(out).__name__}, infer says {info}"
        for k, x in enumerate(out):
            assert str(x.dtype) == info.dtype, f"{where}[{k}]: reference {x.dtype}, infer {info.dtype}"
            if info.elem is not None:
                _agrees(f"{where}[{k}]", x, info.elem)
        return
    assert isinstance(out, np.ndarray), f"{where} is a {type(out).__name__}"
    assert out.ndim == len(info.shape) and all(isinstance(d, str) or d == s for d, s in zip(info.shape, out.shape)), (
        f"{where}: reference {out.shape}, infer {info.shape}"
    )
    assert str(out.dtype) == info.dtype, f"{where}: reference {out.dtype}, infer {info.dtype}"


def _samples():
    for op, schema in all_schemas().items():
        if schema.samples is None:
            continue
        for i, sample in enumerate(schema.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{op}-{i}")


# -- every sample: inference agrees with the kernel ------------------------------------------


@pytest.mark.parametrize("op, sample", list(_samples()))
def test_infer_agrees_with_reference(op, sample):
    schema = get_schema(op)
    attrs = schema.check_attrs(sample.attrs, op)
    lo, hi = schema.n_inputs
    assert lo <= len(sample.inputs) <= hi, f"{op} [{sample.label}]: {len(sample.inputs)} inputs, schema says {lo}..{hi}"
    before = [x if x is None or isinstance(x, list) else np.array(x, copy=True) for x in sample.inputs]
    outs = schema.reference(list(sample.inputs), attrs)
    infos = schema.infer([_info(x) for x in sample.inputs], attrs)
    assert 1 <= len(outs) <= schema.n_outputs, f"{op} [{sample.label}]: {len(outs)} outputs"
    assert len(infos) == len(outs), f"{op} [{sample.label}]: infer gives {len(infos)} outputs, reference {len(outs)}"
    for k, (out, info) in enumerate(zip(outs, infos)):
        where = f"{op} [{sample.label}] output {k}"
        if not schema.dynamic:
            assert isinstance(info, TensorInfo) and info.is_static, f"{where}: a static op inferred {info}"
        _agrees(where, out, info)
    for x, y in zip(before, sample.inputs):
        if x is not None and not isinstance(x, list):
            np.testing.assert_array_equal(x, y, err_msg=f"{op} [{sample.label}]: the reference changed its input")
    if schema.dynamic:
        return  # the cost model plans static graphs only
    flops = schema.estimate_flops([_info(x) for x in sample.inputs if x is not None], infos, attrs)
    assert np.isfinite(flops) and flops >= 0


# -- attribute validation ---------------------------------------------------------------------

_WRONG = {
    "int": "3",
    "float": "x",
    "number": "x",
    "str": 3,
    "ints": "1,2",
    "floats": "x",
    "tensor": 3,
    "graph": 3,
    "strs": "a",
}
_WRONG_ITEMS = {"ints": [1.5], "floats": ["a"], "strs": [1]}


@pytest.mark.parametrize("op", sorted(all_schemas()))
def test_attributes_are_validated(op):
    schema = get_schema(op)
    # start from a valid set (a sample's, which gives the required attributes), spoil one at a time
    first = next(iter(schema.samples(np.random.default_rng(0))), None) if schema.samples else None
    valid = dict(first.attrs) if first is not None else {}
    schema.check_attrs(valid, op)
    with pytest.raises(GraphError, match="unknown attribute"):
        schema.check_attrs({**valid, "no_such_attribute": 1}, op)
    for name, spec in schema.attrs.items():
        with pytest.raises(GraphError, match=name):
            schema.check_attrs({**valid, name: _WRONG[spec.kind]}, op)
        if spec.kind in _WRONG_ITEMS:
            with pytest.raises(GraphError, match=name):
                schema.check_attrs({**valid, name: _WRONG_ITEMS[spec.kind]}, op)
        if spec.choices and spec.kind == "str":
            with pytest.raises(GraphError, match="expected one of"):
                schema.check_attrs({**valid, name: "not-a-choice"}, op)
        if spec.default is REQUIRED:
            without = {k: v for k, v in valid.items() if k != name}
            with pytest.raises(GraphError, match=f"needs attribute {name!r}"):
                schema.check_attrs(without, op)


# -- inference rejects bad shapes ------------------------------------------------------------------

F = "float32"
BAD_SHAPES = [
    # existing families
    ("Add", [(2, 3), (4,)], {}),
    ("MatMul", [(2, 3), (4, 5)], {}),
    ("Gemm", [(2, 3, 1), (3, 4)], {}),
    ("Conv", [(1, 3, 5, 5), (4, 2, 3, 3)], {}),
    ("Conv", [(1, 3, 2, 2), (4, 3, 3, 3)], {}),
    # pool
    ("MaxPool", [(1, 3, 5)], {"kernel_shape": [2, 2]}),
    ("MaxPool", [(1, 3, 2, 2)], {"kernel_shape": [3, 3]}),
    ("MaxPool", [(1, 3, 6, 6)], {"kernel_shape": [2, 2], "pads": [2, 0, 0, 0]}),
    ("MaxPool", [(1, 3, 6, 6)], {"kernel_shape": [2]}),
    ("AveragePool", [((1, 3, 6, 6), "int32")], {"kernel_shape": [2, 2]}),
    ("AveragePool", [(1, 3, 6, 6)], {"kernel_shape": [2, 2], "strides": [0, 1]}),
    ("GlobalAveragePool", [(2, 3)], {}),
    ("GlobalMaxPool", [(2, 3, 0, 4)], {}),
    # norm
    ("BatchNormalization", [(2, 3, 4, 4), (3,), (3,), (4,), (3,)], {}),
    ("BatchNormalization", [(3,), (3,), (3,), (3,), (3,)], {}),
    ("LayerNormalization", [(2, 5), (4,)], {}),
    ("LayerNormalization", [(2, 5)], {"axis": 2}),
    ("InstanceNormalization", [(2, 3), (3,), (3,)], {}),
    ("InstanceNormalization", [(2, 3, 4), (2,), (3,)], {}),
    ("Softmax", [(2, 3)], {"axis": 2}),
    ("LogSoftmax", [((2, 3), "int64")], {}),
    # reduce
    ("ReduceSum", [(2, 3)], {"axes": [2]}),
    ("ReduceMean", [(2, 3)], {"axes": [1, -1]}),
    ("ReduceSum", [((2, 3), "bool")], {}),
    ("ArgMax", [(2, 3)], {"axis": -3}),
    ("ArgMin", [(2, 0)], {"axis": 1}),
    # shape
    ("Reshape", [(2, 3)], {"shape": [4, 2]}),
    ("Reshape", [(2, 3)], {"shape": [-1, -1]}),
    ("Reshape", [(2, 3)], {"shape": [0, 0, 0]}),
    ("Reshape", [(0, 3)], {"shape": [-1, 0], "allowzero": 1}),
    ("Flatten", [(2, 3)], {"axis": 3}),
    ("Transpose", [(2, 3, 4)], {"perm": [0, 1]}),
    ("Transpose", [(2, 3)], {"perm": [1, 1]}),
    ("Concat", [(2, 3), (2, 4)], {"axis": 0}),
    ("Concat", [(2, 3), (2, 3, 1)], {"axis": 0}),
    ("Concat", [(2, 3), ((2, 3), "int64")], {"axis": 0}),
    ("Split", [(6, 2)], {"split": [2, 3]}),
    ("Split", [(6, 2)], {}),
    ("Split", [(6, 2)], {"split": [3, 3], "num_outputs": 2}),
    ("Split", [(5, 2)], {"num_outputs": 4}),
    ("Slice", [(5,)], {"starts": [0], "ends": [3], "steps": [0]}),
    ("Slice", [(5, 4)], {"starts": [0, 1], "ends": [3]}),
    ("Slice", [(5, 4)], {"starts": [0, 1], "ends": [3, 3], "axes": [1, -1]}),
    ("Gather", [(5, 4), ((2,), "float32")], {}),
    ("Gather", [(5, 4), ((2,), "int64")], {"axis": 2}),
    ("Gather", [(0, 4), ((2,), "int64")], {}),
    ("Pad", [(3, 4)], {"pads": [1, 1]}),
    ("Pad", [(3, 4)], {"pads": [0, 4, 0, 0], "mode": "reflect"}),
    ("Pad", [(3, 4)], {"pads": [0, -3, 0, -2]}),
    ("Pad", [(0, 4)], {"pads": [1, 0, 0, 0], "mode": "edge"}),
    ("Squeeze", [(1, 3)], {"axes": [1]}),
    ("Unsqueeze", [(3, 4)], {"axes": [0, 0]}),
    ("Unsqueeze", [(3, 4)], {"axes": [3]}),
    ("Expand", [(2, 3)], {"shape": [4, 3]}),
    ("Tile", [(2, 3)], {"repeats": [2]}),
    ("Tile", [(2, 3)], {"repeats": [2, -1]}),
    # resize
    ("Resize", [(1, 3, 4)], {"scales": [2.0, 2.0], "axes": [1, -2]}),
    ("Resize", [(1, 3, 4, 4)], {"scales": [1.0, 1.0, 2.0, 2.0], "sizes": [1, 3, 8, 8]}),
    ("Resize", [(1, 3, 4, 4)], {}),
    ("Resize", [(1, 3, 4, 4)], {"scales": [2.0, 2.0, 2.0], "axes": [2, 3]}),
    ("Resize", [(1, 3, 4, 4)], {"scales": [1.0, 2.0], "mode": "nearest", "antialias": 1}),
    ("Resize", [(1, 3, 4, 4)], {"sizes": [1, 3, 8]}),
    ("Resize", [((1, 3, 4, 4), "int32")], {"sizes": [8, 8], "mode": "linear"}),
    # convtranspose
    ("ConvTranspose", [(1, 3, 4, 4), (4, 2, 3, 3)], {}),
    ("ConvTranspose", [(1, 4, 4, 4), (4, 2, 3, 3), (3,)], {}),
    ("ConvTranspose", [(1, 4, 4, 4), (4, 2, 3, 3)], {"strides": [2, 2], "output_padding": [2, 0]}),
    ("ConvTranspose", [(1, 4, 4, 4), (4, 2, 3, 3)], {"output_shape": [20, 20]}),
    ("ConvTranspose", [(1, 4, 4, 4), (4, 2, 3, 3)], {"group": 3}),
    ("ConvTranspose", [(1, 4, 1, 1), (4, 2, 1, 1)], {"pads": [1, 0, 0, 0]}),
]


@pytest.mark.parametrize("op, shapes, attrs", BAD_SHAPES, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_SHAPES)])
def test_infer_rejects_bad_shapes(op, shapes, attrs):
    schema = get_schema(op)
    infos = [TensorInfo(*s) if isinstance(s[0], tuple) else TensorInfo(s, F) for s in shapes]
    with pytest.raises(GraphError):
        schema.infer(infos, schema.check_attrs(attrs, op))


def test_symbolic_batch_flows_through_shape_ops():
    graph = Graph(inputs={"x": TensorInfo(("N", 3, 4, 4))}, outputs=["z"])
    graph.nodes = [
        Node("Resize", ["x"], ["r"], {"sizes": [8, 6], "mode": "linear"}),
        Node("MaxPool", ["r"], ["p"], {"kernel_shape": [2, 2], "strides": [2, 2]}),
        Node("Reshape", ["p"], ["y"], {"shape": [0, -1]}),
        Node("Softmax", ["y"], ["z"]),
    ]
    graph.validate()
    infos = graph.infer()
    assert infos["p"].shape == ("N", 3, 4, 3)
    assert infos["z"].shape == ("N", 36)


# -- values worked out by hand ---------------------------------------------------------------


def _ref(op, inputs, **attrs):
    return run_reference(op, [np.asarray(x) for x in inputs], attrs)


def test_maxpool_2x2():
    x = np.array([[1, 2, 5, 0], [3, 4, 1, 1], [0, 0, -1, -2], [7, 0, -3, -4]], dtype="float32").reshape(1, 1, 4, 4)
    y = _ref("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])[0]
    np.testing.assert_array_equal(y.reshape(2, 2), [[4, 5], [7, -1]])


def test_maxpool_padding_never_wins():
    x = -np.ones((1, 1, 2, 2), dtype="float32")
    y = _ref("MaxPool", [x], kernel_shape=[2, 2], pads=[1, 1, 1, 1])[0]
    np.testing.assert_array_equal(y, -np.ones((1, 1, 3, 3)))


def test_averagepool_count_include_pad():
    x = np.ones((1, 1, 3, 3), dtype="float32")
    excl = _ref("AveragePool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1])[0][0, 0]
    incl = _ref("AveragePool", [x], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)[0][0, 0]
    np.testing.assert_allclose(excl, np.ones((3, 3)))
    np.testing.assert_allclose(incl, [[4 / 9, 6 / 9, 4 / 9], [6 / 9, 1, 6 / 9], [4 / 9, 6 / 9, 4 / 9]], rtol=1e-6)


def test_pool_ceil_mode_adds_a_partial_window():
    x = np.arange(25, dtype="float32").reshape(1, 1, 5, 5)
    floor = _ref("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])[0]
    ceil = _ref("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)[0]
    assert floor.shape == (1, 1, 2, 2) and ceil.shape == (1, 1, 3, 3)
    np.testing.assert_array_equal(ceil[0, 0], [[6, 8, 9], [16, 18, 19], [21, 23, 24]])
    avg = _ref("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)[0]
    assert avg[0, 0, 2, 2] == 24.0  # the corner window holds one input element


def test_global_pools():
    x = np.arange(12, dtype="float32").reshape(1, 2, 2, 3)
    np.testing.assert_allclose(_ref("GlobalAveragePool", [x])[0].ravel(), [2.5, 8.5])
    np.testing.assert_array_equal(_ref("GlobalMaxPool", [x])[0].ravel(), [5, 11])


def test_reshape_zero_and_minus_one():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    assert _ref("Reshape", [x], shape=[0, -1])[0].shape == (2, 12)
    assert _ref("Reshape", [x], shape=[1, -1, 0])[0].shape == (1, 6, 4)
    assert _ref("Reshape", [np.zeros((0, 4), "float32")], shape=[4, 0], allowzero=1)[0].shape == (4, 0)
    np.testing.assert_array_equal(_ref("Reshape", [x], shape=[-1])[0], np.arange(24))


def test_slice_negative_steps():
    x = np.arange(10, dtype="int64")
    np.testing.assert_array_equal(_ref("Slice", [x], starts=[-1], ends=[-(2**63 - 1)], steps=[-1])[0], x[::-1])
    np.testing.assert_array_equal(_ref("Slice", [x], starts=[8], ends=[1], steps=[-3])[0], [8, 5, 2])
    np.testing.assert_array_equal(_ref("Slice", [x], starts=[100], ends=[-100], steps=[-4])[0], [9, 5, 1])
    np.testing.assert_array_equal(_ref("Slice", [x], starts=[-3], ends=[100])[0], [7, 8, 9])
    assert _ref("Slice", [x], starts=[5], ends=[2])[0].shape == (0,)
    m = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(
        _ref("Slice", [m], starts=[-1, 0], ends=[0, 4], axes=[1, 0], steps=[-2, 2])[0], [[3, 1], [11, 9]]
    )


def test_softmax_rows_sum_to_one():
    x = np.random.default_rng(3).uniform(-50, 50, size=(6, 9)).astype("float32")
    x[0] = 1e4  # would overflow exp without the max shift
    for axis in (-1, 0):
        y = _ref("Softmax", [x], axis=axis)[0]
        assert np.isfinite(y).all()
        np.testing.assert_allclose(y.sum(axis=axis), 1.0, rtol=1e-6)
        logy = _ref("LogSoftmax", [x], axis=axis)[0]
        np.testing.assert_allclose(np.exp(logy.astype(np.float64)).sum(axis=axis), 1.0, rtol=1e-5)
    np.testing.assert_allclose(_ref("Softmax", [x])[0][0], np.full(9, 1 / 9), rtol=1e-6)


def test_normalizations():
    x = np.array([[1, 2, 3, 4], [2, 2, 2, 2]], dtype="float32")
    y = _ref("LayerNormalization", [x[:1]], epsilon=0.0)[0]
    np.testing.assert_allclose(y[0], (x[0] - 2.5) / np.sqrt(1.25), rtol=1e-6)
    np.testing.assert_array_equal(_ref("LayerNormalization", [x])[0][1], 0.0)  # a constant row, kept finite by epsilon
    x = np.arange(8, dtype="float32").reshape(1, 2, 2, 2)
    ones, zeros = np.ones(2, "float32"), np.zeros(2, "float32")
    bn = _ref("BatchNormalization", [x, 2 * ones, ones, np.array([1.5, 5.5], "float32"), 4 * ones], epsilon=0.0)[0]
    np.testing.assert_allclose(bn, (x - np.array([1.5, 5.5]).reshape(1, 2, 1, 1)) + 1.0)
    inst = _ref("InstanceNormalization", [x, ones, zeros], epsilon=0.0)[0]
    np.testing.assert_allclose(inst.reshape(2, 4), np.tile((np.arange(4) - 1.5) / np.sqrt(1.25), (2, 1)), rtol=1e-6)


def test_reductions():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(_ref("ReduceSum", [x], axes=[1])[0], [[3], [12]])
    np.testing.assert_array_equal(_ref("ReduceMean", [x], keepdims=0)[0], 2.5)
    np.testing.assert_array_equal(_ref("ReduceMax", [x], axes=[-2], keepdims=0)[0], [3, 4, 5])
    np.testing.assert_array_equal(_ref("ReduceProd", [x + 1], axes=[0])[0], [[4, 10, 18]])
    np.testing.assert_allclose(_ref("ReduceL2", [x], axes=[1], keepdims=0)[0], [np.sqrt(5), np.sqrt(50)], rtol=1e-6)
    np.testing.assert_array_equal(_ref("ReduceSum", [np.zeros((2, 0), "float32")], axes=[1], keepdims=0)[0], [0, 0])
    t = np.array([[1, 3, 3, 0], [2, 2, 1, 2]], dtype="int32")
    np.testing.assert_array_equal(_ref("ArgMax", [t], axis=1, keepdims=0)[0], [1, 0])
    np.testing.assert_array_equal(_ref("ArgMax", [t], axis=1, keepdims=0, select_last_index=1)[0], [2, 3])
    np.testing.assert_array_equal(_ref("ArgMin", [t], axis=0)[0], [[0, 1, 1, 0]])
    assert _ref("ArgMin", [t], axis=0)[0].dtype == np.int64


def test_shape_ops():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(_ref("Transpose", [x])[0], x.T)
    assert _ref("Flatten", [np.zeros((2, 3, 4, 5), "float32")], axis=-1)[0].shape == (24, 5)
    assert _ref("Flatten", [np.zeros((2, 3, 4, 5), "float32")], axis=0)[0].shape == (1, 120)
    pieces = _ref("Split", [np.arange(7, dtype="float32")], num_outputs=3)
    assert [p.tolist() for p in pieces] == [[0, 1, 2], [3, 4, 5], [6]]
    np.testing.assert_array_equal(_ref("Gather", [x, np.array([-1, 0])], axis=1)[0], [[2, 0], [5, 3]])
    np.testing.assert_array_equal(
        _ref("Pad", [np.array([1, 2, 3], "float32")], pads=[2, 2], mode="reflect")[0], [3, 2, 1, 2, 3, 2, 1]
    )
    np.testing.assert_array_equal(_ref("Pad", [np.array([1, 2, 3], "float32")], pads=[1, -1], value=9.0)[0], [9, 1, 2])
    np.testing.assert_array_equal(
        _ref("Pad", [np.array([1, 2, 3], "float32")], pads=[2, 1], mode="edge")[0], [1, 1, 1, 2, 3, 3]
    )
    assert _ref("Squeeze", [np.zeros((1, 3, 1), "float32")])[0].shape == (3,)
    assert _ref("Unsqueeze", [x], axes=[-1, 0])[0].shape == (1, 2, 3, 1)
    assert _ref("Expand", [np.zeros((3, 1), "float32")], shape=[2, 1, 4])[0].shape == (2, 3, 4)
    np.testing.assert_array_equal(_ref("Tile", [np.array([1, 2], "int64")], repeats=[3])[0], [1, 2, 1, 2, 1, 2])
    np.testing.assert_array_equal(_ref("Cast", [np.array([-1.7, 1.7, 0.0], "float32")], to="int32")[0], [-1, 1, 0])
    np.testing.assert_array_equal(_ref("Cast", [np.array([-1.7, 0.0], "float32")], to="bool")[0], [True, False])
    np.testing.assert_array_equal(_ref("Shape", [np.zeros((2, 0, 5), "float32")])[0], [2, 0, 5])
    np.testing.assert_array_equal(_ref("Concat", [x, x[:, :1]], axis=-1)[0], [[0, 1, 2, 0], [3, 4, 5, 3]])


def test_resize_values():
    x = np.array([[1, 2], [3, 4]], dtype="float32").reshape(1, 1, 2, 2)
    y = _ref("Resize", [x], scales=[1.0, 1.0, 2.0, 2.0])[0]
    np.testing.assert_array_equal(y[0, 0], np.repeat(np.repeat(x[0, 0], 2, 0), 2, 1))
    row = np.array([1, 2, 3, 4], dtype="float32").reshape(1, 1, 1, 4)
    half = _ref("Resize", [row], sizes=[1, 8], mode="linear")[0]
    np.testing.assert_allclose(half.ravel(), [1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4])
    corners = _ref("Resize", [row], sizes=[1, 7], mode="linear", coordinate_transformation_mode="align_corners")[0]
    np.testing.assert_allclose(corners.ravel(), [1, 1.5, 2, 2.5, 3, 3.5, 4])
    asym = _ref("Resize", [row], scales=[1.0, 0.5], coordinate_transformation_mode="asymmetric")[0]
    np.testing.assert_array_equal(asym.ravel(), [1, 3])


def test_conv_transpose_is_the_adjoint_of_conv():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 3, 7, 7)).astype("float32")
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    u = rng.standard_normal((1, 4, 4, 4)).astype("float32")
    conv = _ref("Conv", [x, w], strides=[2, 2], pads=[1, 1, 1, 1])[0]
    convt = _ref("ConvTranspose", [u, w], strides=[2, 2], pads=[1, 1, 1, 1])[0]
    assert conv.shape == u.shape and convt.shape == x.shape
    np.testing.assert_allclose(np.vdot(conv.astype(np.float64), u), np.vdot(x.astype(np.float64), convt), rtol=1e-4)


def test_conv_transpose_values():
    x = np.array([[1, 2], [3, 4]], dtype="float32").reshape(1, 1, 2, 2)
    w = np.ones((1, 1, 1, 1), dtype="float32")
    y = _ref("ConvTranspose", [x, w, np.array([0.5], "float32")], strides=[2, 2], output_padding=[1, 1])[0]
    np.testing.assert_array_equal(
        y[0, 0], [[1.5, 0.5, 2.5, 0.5], [0.5, 0.5, 0.5, 0.5], [3.5, 0.5, 4.5, 0.5], [0.5, 0.5, 0.5, 0.5]]
    )
    k = np.arange(9, dtype="float32").reshape(1, 1, 3, 3)
    two = np.full((1, 1, 1, 1), 2.0, "float32")
    y = _ref("ConvTranspose", [two, k], activation="clip", act_alpha=0.0, act_beta=9.0)[0]
    np.testing.assert_array_equal(y[0, 0], np.minimum(2 * k[0, 0], 9))
