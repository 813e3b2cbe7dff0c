"""Ops whose output shapes follow input values (NonZero, Compress, Unique, NonMaxSuppression,
SliceDynamic): imported from ONNX, run eagerly, checked against ONNX Runtime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import import_onnx  # noqa: E402


def vi(name, shape, dtype=T.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def check(nodes, inputs, outputs, feeds, opset=17, export=False):
    model = helper.make_model(
        helper.make_graph(nodes, "g", inputs, outputs), opset_imports=[helper.make_opsetid("", opset)]
    )
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    graph = import_onnx(model)
    assert graph.is_dynamic()
    out = mnn.Session(graph).run(feeds)
    for w, name in zip(want, graph.outputs):
        assert out[name].shape == w.shape and out[name].dtype == w.dtype, name
        np.testing.assert_array_equal(out[name], w)
    if export:  # and back to ONNX: ONNX Runtime runs mnn's export alike
        from mnn_core.convert import to_onnx

        back = to_onnx(graph)
        again = ort.InferenceSession(back.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        for w, g in zip(want, again):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 0, 3)])
def test_nonzero(rng, shape):
    x = (rng.random(shape) > 0.6).astype(np.float32) * rng.standard_normal(shape).astype(np.float32)
    check([helper.make_node("NonZero", ["x"], ["y"])], [vi("x", list(shape))], [vi("y", None, T.INT64)], {"x": x})


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_compress(rng, axis):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    n = x.size if axis is None else x.shape[axis]
    cond = rng.random(n - 1) > 0.4  # a shorter condition drops the rest
    kw = {} if axis is None else {"axis": axis}
    check(
        [helper.make_node("Compress", ["x", "c"], ["y"], **kw)],
        [vi("x", [4, 5]), vi("c", [n - 1], T.BOOL)],
        [vi("y", None)],
        {"x": x, "c": cond},
    )


@pytest.mark.parametrize("sorted_, axis", [(1, None), (0, None), (1, 0), (0, 1)])
def test_unique(rng, sorted_, axis):
    x = rng.integers(0, 3, (5, 4)).astype(np.float32)
    x[3] = x[1]  # a repeated row
    kw = {"sorted": sorted_} if axis is None else {"sorted": sorted_, "axis": axis}
    outs = ["y", "idx", "inv", "cnt"]
    check(
        [helper.make_node("Unique", ["x"], outs, **kw)],
        [vi("x", [5, 4])],
        [vi("y", None)] + [vi(n, None, T.INT64) for n in outs[1:]],
        {"x": x},
    )


@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression(rng, center):
    boxes = rng.random((2, 8, 4)).astype(np.float32)
    scores = rng.random((2, 3, 8)).astype(np.float32)
    consts = {"m": np.array([4], np.int64), "iou": np.array([0.3], np.float32), "st": np.array([0.1], np.float32)}
    nodes = [helper.make_node("Constant", [], [k], value=onnx.numpy_helper.from_array(v, k)) for k, v in consts.items()]
    nodes.append(
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "m", "iou", "st"], ["sel"], center_point_box=center)
    )
    check(
        nodes,
        [vi("boxes", [2, 8, 4]), vi("scores", [2, 3, 8])],
        [vi("sel", None, T.INT64)],
        {"boxes": boxes, "scores": scores},
    )


def test_slice_following_a_loop_counter(rng):
    """Each iteration takes row i of x: a Slice whose starts come from the counter (SliceDynamic)."""
    one = helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", T.INT64, [1], [1]))
    body = helper.make_graph(
        [
            one,
            helper.make_node("Unsqueeze", ["i", "zero"], ["start"]),
            helper.make_node("Add", ["start", "one"], ["end"]),
            helper.make_node("Slice", ["x", "start", "end"], ["row"]),
            helper.make_node("Add", ["acc", "row"], ["acc2"]),
            helper.make_node("Identity", ["c"], ["c2"]),
        ],
        "body",
        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("acc", [1, 3])],
        [vi("c2", [], T.BOOL), vi("acc2", [1, 3])],
    )
    zero = helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", T.INT64, [1], [0]))
    check(
        [zero, helper.make_node("Loop", ["n", "", "a0"], ["acc"], body=body)],
        [vi("n", [], T.INT64), vi("a0", [1, 3]), vi("x", [4, 3])],
        [vi("acc", [1, 3])],
        {
            "n": np.array(3, np.int64),
            "a0": np.zeros((1, 3), np.float32),
            "x": rng.integers(0, 9, (4, 3)).astype(np.float32),
        },
        export=True,
    )


def test_value_shaped_ops_export_to_onnx(rng):
    from mnn_core.convert import to_onnx

    m = helper.make_model(
        helper.make_graph(
            [
                helper.make_node("NonZero", ["x"], ["nz"]),
                helper.make_node("Unique", ["x"], ["u"], sorted=1),
                helper.make_node("Compress", ["x", "c"], ["y"], axis=0),
            ],
            "g",
            [vi("x", [4, 3]), vi("c", [4], T.BOOL)],
            [vi("nz", None, T.INT64), vi("u", None), vi("y", None)],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    graph = import_onnx(m)
    back = to_onnx(graph)
    onnx.checker.check_model(back, full_check=True)
    x = rng.integers(0, 3, (4, 3)).astype(np.float32)
    feeds = {"x": x, "c": np.array([True, False, True, True])}
    want = mnn.Session(graph).run(feeds)
    got = ort.InferenceSession(back.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for name, g in zip(graph.outputs, got):
        np.testing.assert_array_equal(g, want[name])
