"""The dynamo exporter's spellings made the legacy exporter's (mnn_core/graph/spellings.py): Slices that
tile an axis become one Split, ReduceMean over H and W with the dimensions kept becomes GlobalAveragePool;
anything else stays. Oracle: ONNX Runtime on the same ONNX file."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mnn_core as mnn

ort = pytest.importorskip("onnxruntime")

BIG = 2**63 - 1  # the exporters' "to the end"


def _model(nodes, inits, x_shape, outputs, dtype=TensorProto.FLOAT):
    graph = helper.make_graph(
        nodes,
        "spelling",
        [helper.make_tensor_value_info("x", dtype, x_shape)],
        [helper.make_tensor_value_info(o, dtype, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _slices(ranges, axis, order=None):
    """One Slice per (start, end) of x along `axis`, each read by a Neg (so every part is used),
    the nodes in `order` (default: as given)."""
    nodes, inits = [], {"axes": np.array([axis])}
    for i in order or range(len(ranges)):
        start, end = ranges[i]
        inits[f"s{i}"], inits[f"e{i}"] = np.array([start]), np.array([end])
        nodes.append(helper.make_node("Slice", ["x", f"s{i}", f"e{i}", "axes"], [f"p{i}"], name=f"slice{i}"))
        nodes.append(helper.make_node("Neg", [f"p{i}"], [f"y{i}"], name=f"neg{i}"))
    return nodes, inits, [f"y{i}" for i in range(len(ranges))]


def _run_both(tmp_path, model, x, backend="reference"):
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    sess = mnn.Session(mnn.load(path), backend=backend)
    got = sess.run({"x": x})
    for name, ref in zip([o.name for o in model.graph.output], want):
        np.testing.assert_allclose(got[name], ref, rtol=1e-5, atol=1e-6)  # a sum's order differs
    return [n.op for n in sess.graph.nodes]


TILING = [  # x shape, axis, ranges, node order
    ((3, 2, 5), 0, [(0, 1), (1, 2), (2, 3)], None),  # a packed qkv's parts
    ((4, 7, 3), 1, [(0, 3), (3, BIG)], None),  # the last part "to the end"
    ((2, 9), -1, [(-9, 2), (2, -3), (-3, 9)], [2, 0, 1]),  # negative bounds, nodes out of order
    ((5, 1, 6), 2, [(4, 6), (0, 1), (1, 4)], None),  # ranges not in order
]


@pytest.mark.parametrize("shape, axis, ranges, order", TILING)
def test_slices_that_tile_an_axis_are_one_split(tmp_path, shape, axis, ranges, order):
    nodes, inits, outs = _slices(ranges, axis, order)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ops = _run_both(tmp_path, _model(nodes, inits, list(shape), outs), x)
    assert ops.count("Split") == 1 and "Slice" not in ops, ops


NOT_TILING = [  # x shape, axis, ranges
    ((3, 4), 0, [(0, 1), (2, 3)]),  # a gap
    ((3, 4), 0, [(0, 2), (1, 3)]),  # an overlap
    ((6, 4), 1, [(0, 2)]),  # one Slice alone
    ((3, 4), 0, [(0, 1), (1, 2), (1, 3)]),  # a part taken twice
]


@pytest.mark.parametrize("shape, axis, ranges", NOT_TILING)
def test_slices_that_do_not_tile_stay(tmp_path, shape, axis, ranges):
    nodes, inits, outs = _slices(ranges, axis)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    ops = _run_both(tmp_path, _model(nodes, inits, list(shape), outs), x)
    assert "Split" not in ops and ops.count("Slice") == len(ranges), ops


def test_slices_along_a_dynamic_axis_stay(tmp_path):
    nodes, inits, outs = _slices([(0, 1), (1, BIG)], 0)
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    ops = _run_both(tmp_path, _model(nodes, inits, ["n", 4], outs), x)
    assert "Split" not in ops, ops


def _mean(axes, keepdims, shape, dtype=TensorProto.FLOAT):
    nodes = [
        helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=keepdims, name="mean"),
        helper.make_node("Neg", ["m"], ["y"], name="neg"),
    ]
    return _model(nodes, {"axes": np.array(axes)}, shape, ["y"], dtype)


@pytest.mark.parametrize("axes", [[-1, -2], [2, 3], [3, -2]])
@pytest.mark.parametrize("shape", [(1, 72, 28, 28), (3, 5, 7, 9), ("batch", 4, 1, 13)])
def test_a_mean_over_h_and_w_kept_is_global_pooling(tmp_path, axes, shape):
    real = tuple(2 if d == "batch" else d for d in shape)
    x = np.random.default_rng(3).standard_normal(real).astype(np.float32)
    ops = _run_both(tmp_path, _mean(axes, 1, list(shape)), x)
    assert "GlobalAveragePool" in ops and "ReduceMean" not in ops, ops


@pytest.mark.parametrize(
    "axes, keepdims, shape",
    [([-1, -2], 0, (2, 3, 4, 5)), ([1, 2], 1, (2, 3, 4, 5)), ([-1, -2], 1, (2, 3, 4)), ([2, 3], 1, (2, 3, 4, 5, 6))],
)
def test_other_means_stay(tmp_path, axes, keepdims, shape):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    ops = _run_both(tmp_path, _mean(axes, keepdims, list(shape)), x)
    assert "ReduceMean" in ops and "GlobalAveragePool" not in ops, ops


def test_an_integer_mean_stays(tmp_path):
    x = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    ops = _run_both(tmp_path, _mean([2, 3], 1, [2, 3, 4, 5], TensorProto.INT32), x)
    assert "ReduceMean" in ops, ops
