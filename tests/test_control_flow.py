"""Sequences, optionals and control flow (If/Loop/Scan/SequenceMap): imported from ONNX, run
eagerly on the reference kernels, checked against ONNX Runtime; and their IR contracts."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import OnnxImportError, import_onnx, to_onnx  # noqa: E402
from mnn_core.errors import GraphError, MnnFormatError, UnsupportedOpError  # noqa: E402
from mnn_core.graph.ir import Graph, Node, OptionalInfo, SequenceInfo, TensorInfo  # noqa: E402


def vi(name, shape, dtype=T.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def make(nodes, inputs, outputs, opset=17):
    return helper.make_model(
        helper.make_graph(nodes, "g", inputs, outputs), opset_imports=[helper.make_opsetid("", opset)]
    )


def ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def mnn_run(model, feeds):
    graph = import_onnx(model)
    out = mnn.Session(graph, backend="reference").run(feeds)
    return [out[n] for n in graph.outputs]


def check_against_ort(model, feeds, rtol=1e-6):
    want, got = ort_run(model, feeds), mnn_run(model, feeds)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        if isinstance(w, list):
            assert len(w) == len(g)
            for a, b in zip(w, g):
                np.testing.assert_allclose(b, a, rtol=rtol)
        else:
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=rtol)


def loop_model():
    """acc += y (read from the enclosing graph) n times; each iteration's acc is also stacked."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["acc_in", "y"], ["acc_out"]),
            helper.make_node("Less", ["i", "limit"], ["cond_out"]),
            helper.make_node("Mul", ["acc_out", "acc_out"], ["sq"]),
        ],
        "body",
        [vi("i", [], T.INT64), vi("cond_in", [], T.BOOL), vi("acc_in", None)],
        [vi("cond_out", [], T.BOOL), vi("acc_out", [3]), vi("sq", [3])],
    )
    limit = helper.make_node("Constant", [], ["limit"], value=helper.make_tensor("v", T.INT64, [], [100]))
    return make(
        [limit, helper.make_node("Loop", ["n", "", "x"], ["acc", "squares"], body=body)],
        [vi("n", [], T.INT64), vi("x", [3]), vi("y", [3])],
        [vi("acc", [3]), vi("squares", [None, 3])],
    )


@pytest.mark.parametrize("n", [0, 1, 4])
def test_loop_with_a_capture_matches_onnxruntime(rng, n):
    feeds = {
        "n": np.array(n, np.int64),
        "x": rng.standard_normal(3).astype(np.float32),
        "y": rng.standard_normal(3).astype(np.float32),
    }
    if n == 0:  # no iteration: the carried value comes back, the stack is empty
        acc, squares = mnn_run(loop_model(), feeds)
        np.testing.assert_array_equal(acc, feeds["x"])
        assert squares.shape[0] == 0
        return
    check_against_ort(loop_model(), feeds)


def test_loop_captures_are_explicit_inputs_of_a_closed_body():
    graph = import_onnx(loop_model())
    (loop,) = [n for n in graph.nodes if n.op == "Loop"]
    body = loop.attrs["body"]
    assert isinstance(body, Graph) and loop.attrs["num_captures"] == 1
    assert loop.inputs[-1] == "y" and list(body.inputs)[-1] == "y"
    assert "limit" in body.initializers  # an outer constant is bound inside the body, not captured
    assert graph.is_dynamic()


def test_loop_stops_on_its_condition(rng):
    body = helper.make_graph(
        [
            helper.make_node("Add", ["v_in", "one"], ["v_out"]),
            helper.make_node("Less", ["v_out", "stop"], ["cond_out"]),
        ],
        "body",
        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("v_in", [], T.INT64)],
        [vi("cond_out", [], T.BOOL), vi("v_out", [], T.INT64)],
    )
    consts = [
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", T.INT64, [], [1])),
        helper.make_node("Constant", [], ["go"], value=helper.make_tensor("g", T.BOOL, [], [True])),
    ]
    m = make(
        consts + [helper.make_node("Loop", ["", "go", "v0"], ["v"], body=body)],
        [vi("v0", [], T.INT64), vi("stop", [], T.INT64)],
        [vi("v", [], T.INT64)],
    )
    check_against_ort(m, {"v0": np.array(2, np.int64), "stop": np.array(9, np.int64)})


def if_model():
    then = helper.make_graph([helper.make_node("Add", ["x", "y"], ["t"])], "then", [], [vi("t", [2, 3])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [], [vi("e", [2, 3])])
    return make(
        [
            helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other),
        ],
        [vi("x", [2, 3]), vi("y", [2, 3]), vi("zero", [])],
        [vi("z", [2, 3])],
        opset=13,
    )


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_on_a_runtime_condition_takes_either_branch(rng, sign):
    x = (np.abs(rng.standard_normal((2, 3))) * sign).astype(np.float32)
    feeds = {"x": x, "y": rng.standard_normal((2, 3)).astype(np.float32), "zero": np.array(0, np.float32)}
    check_against_ort(if_model(), feeds)
    graph = import_onnx(if_model())
    (node,) = [n for n in graph.nodes if n.op == "If"]
    # both branches take the union of captures, in the node's order
    assert (
        list(node.attrs["then_branch"].inputs) == list(node.attrs["else_branch"].inputs) == ["x", "y"]
        or len(node.attrs["then_branch"].inputs) == len(node.inputs) - 1
    )


def test_scan_running_sum_matches_onnxruntime(rng):
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y_t"])],
        "body",
        [vi("s_in", [4]), vi("x_t", [4])],
        [vi("s_out", [4]), vi("y_t", [4])],
    )
    for axis, direction in ((0, 0), (1, 1)):
        shape = [5, 4] if axis == 0 else [4, 5]
        m = make(
            [
                helper.make_node(
                    "Scan",
                    ["s0", "xs"],
                    ["s", "ys"],
                    body=body,
                    num_scan_inputs=1,
                    scan_input_axes=[axis],
                    scan_input_directions=[direction],
                )
            ],
            [vi("s0", [4]), vi("xs", shape)],
            [vi("s", [4]), vi("ys", [5, 4])],
        )
        feeds = {"s0": rng.standard_normal(4).astype(np.float32), "xs": rng.standard_normal(shape).astype(np.float32)}
        check_against_ort(m, feeds, rtol=1e-5)


def test_sequence_ops_match_onnxruntime(rng):
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["parts"], axis=1, keepdims=0),
        helper.make_node("SequenceInsert", ["parts", "z"], ["more"]),
        helper.make_node("SequenceErase", ["more", "first"], ["less"]),
        helper.make_node("SequenceLength", ["less"], ["n"]),
        helper.make_node("SequenceAt", ["less", "last"], ["tail"]),
        helper.make_node("ConcatFromSequence", ["less"], ["stacked"], axis=0, new_axis=1),
    ]
    consts = [
        helper.make_node("Constant", [], [n], value=helper.make_tensor(n, T.INT64, [], [v]))
        for n, v in (("first", 0), ("last", -1))
    ]
    m = make(
        consts + nodes,
        [vi("x", [3, 5]), vi("z", [3])],
        [vi("n", [], T.INT64), vi("tail", [3]), vi("stacked", [5, 3])],
        opset=17,
    )
    feeds = {"x": rng.standard_normal((3, 5)).astype(np.float32), "z": rng.standard_normal(3).astype(np.float32)}
    check_against_ort(m, feeds)


def test_sequence_inputs_and_outputs_and_sequence_map(rng):
    # elements differ in length; the body declares their rank (1) with a symbolic size
    body = helper.make_graph([helper.make_node("Mul", ["e", "e"], ["sq"])], "body", [vi("e", ["n"])], [vi("sq", ["n"])])
    seq_in = helper.make_tensor_sequence_value_info("xs", T.FLOAT, None)
    seq_out = helper.make_tensor_sequence_value_info("ys", T.FLOAT, None)
    m = make([helper.make_node("SequenceMap", ["xs"], ["ys"], body=body)], [seq_in], [seq_out], opset=17)
    xs = [rng.standard_normal(s).astype(np.float32) for s in ((2,), (5,), (4,))]
    graph = import_onnx(m)
    assert isinstance(graph.inputs["xs"], SequenceInfo)
    ys = mnn.Session(graph).run({"xs": xs})["ys"]
    assert isinstance(ys, list) and [y.shape for y in ys] == [x.shape for x in xs]
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(y, x * x)


def test_optionals():
    opt = helper.make_tensor_type_proto(T.FLOAT, [2])
    m = make(
        [
            helper.make_node("OptionalHasElement", ["o"], ["has"]),
            helper.make_node(
                "If",
                ["has"],
                ["v"],
                then_branch=helper.make_graph(
                    [helper.make_node("OptionalGetElement", ["o"], ["g"])], "t", [], [vi("g", [2])]
                ),
                else_branch=helper.make_graph(
                    [helper.make_node("Constant", [], ["d"], value=helper.make_tensor("d", T.FLOAT, [2], [7, 7]))],
                    "e",
                    [],
                    [vi("d", [2])],
                ),
            ),
        ],
        [helper.make_value_info("o", helper.make_optional_type_proto(opt))],
        [vi("has", [], T.BOOL), vi("v", [2])],
        opset=18,
    )
    graph = import_onnx(m)
    assert isinstance(graph.inputs["o"], OptionalInfo)
    sess = mnn.Session(graph)
    out = sess.run({"o": np.array([1, 2], np.float32)})
    assert bool(out["has"]) and out["v"].tolist() == [1, 2]
    out = sess.run({"o": None})
    assert not bool(out["has"]) and out["v"].tolist() == [7, 7]


def test_an_eager_graph_has_no_plan_and_fallback_false_names_an_op_only_the_reference_runs(rng):
    graph = import_onnx(loop_model())
    sess = mnn.Session(graph)
    with pytest.raises(mnn.MnnError, match="eagerly"):
        _ = sess.plan
    backends = mnn.plugins.get_plugins().backends
    other = next((n for n, b in backends.items() if n != "reference" and b.availability()), None)
    if other is None:
        pytest.skip("no backend other than reference is installed and available")
    # a Loop's body runs planned on the backend (tests/test_eager_program.py); a NonZero, whose output
    # is sized by its input's values, only on the reference kernels
    nonzero = import_onnx(
        make([helper.make_node("NonZero", ["x"], ["y"])], [vi("x", [3])], [vi("y", [1, None], T.INT64)])
    )
    with pytest.raises(UnsupportedOpError, match="NonZero"):
        mnn.Session(nonzero, backend=other, fallback=False)


def test_loop_exports_to_onnx_and_round_trips_through_onnxruntime(rng):
    graph = import_onnx(loop_model())
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=True)
    feeds = {
        "n": np.array(3, np.int64),
        "x": rng.standard_normal(3).astype(np.float32),
        "y": rng.standard_normal(3).astype(np.float32),
    }
    want = mnn.Session(graph).run(feeds)
    got = ort_run(model, feeds)
    np.testing.assert_allclose(got[0], want["acc"], rtol=1e-6)
    np.testing.assert_allclose(got[1], want["squares"], rtol=1e-6)


def test_if_exports_to_onnx(rng):
    graph = import_onnx(if_model())
    model = to_onnx(graph, opset=13)
    onnx.checker.check_model(model, full_check=True)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    feeds = {"x": x, "y": x + 1, "zero": np.array(0, np.float32)}
    np.testing.assert_allclose(ort_run(model, feeds)[0], mnn.Session(graph).run(feeds)["z"], rtol=1e-6)


def test_mnn_format_rejects_control_flow_with_a_clear_error(tmp_path):
    graph = import_onnx(loop_model())
    with pytest.raises(MnnFormatError, match="sub-graph attribute 'body'.*keep such a model as .onnx"):
        mnn.save(graph, tmp_path / "m.mnn")
    assert not (tmp_path / "m.mnn").exists()


def test_a_body_with_an_unsupported_op_is_listed_with_the_others():
    body = helper.make_graph(
        [
            helper.make_node("Frobnicate", ["a"], ["b"], domain="com.example"),
            helper.make_node("Identity", ["c"], ["c2"]),
        ],
        "body",
        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("a", [2])],
        [vi("c2", [], T.BOOL), vi("b", [2])],
    )
    m = helper.make_model(
        helper.make_graph(
            [
                helper.make_node("Loop", ["n", "", "x"], ["y"], body=body),
                helper.make_node("Zork", ["y"], ["z"], domain="com.example"),
            ],
            "g",
            [vi("n", [], T.INT64), vi("x", [2])],
            [vi("z", [2])],
        ),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
    )
    with pytest.raises(OnnxImportError) as info:
        import_onnx(m)
    ops = {u.op for u in info.value.unsupported}
    assert {"Frobnicate", "Zork"} <= ops


def test_a_graph_attribute_must_be_a_closed_valid_graph():
    body = Graph(inputs={"a": TensorInfo((2,))}, outputs=["b"], nodes=[Node("Relu", ["outer"], ["b"])])
    g = Graph(
        inputs={"c": TensorInfo((), "bool"), "x": TensorInfo((2,))},
        outputs=["y"],
        nodes=[Node("If", ["c", "x"], ["y"], {"then_branch": body, "else_branch": body})],
    )
    with pytest.raises(GraphError, match="attribute 'then_branch'.*reads 'outer'"):
        g.validate()
