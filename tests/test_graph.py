"""Graph IR checks, symbolic shape inference and the optimization passes."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.graph.passes import eliminate_dead, fold_batchnorm, fold_constants, fuse_activations, optimize


def test_unknown_op_lists_known_ones():
    g = Graph(inputs={"x": TensorInfo((2,))}, outputs=["y"], nodes=[Node("Frobnicate", ["x"], ["y"])])
    with pytest.raises(mnn.GraphError, match="unknown op 'Frobnicate'; mnn knows: .*Conv"):
        g.validate()


@pytest.mark.parametrize(
    "node, message",
    [
        (Node("Relu", ["nope"], ["y"]), "reads 'nope', which is not"),
        (Node("Add", ["x"], ["y"]), "takes 2 inputs, got 1"),
        (Node("Conv", ["x", "w"], ["y"], {"strides": "2"}), "attribute 'strides' must be ints"),
        (Node("Conv", ["x", "w"], ["y"], {"stride": [2, 2]}), "unknown attribute"),
        (Node("Conv", ["x", "w"], ["y"], {"auto_pad": "SOMETIMES"}), "expected one of"),
        (Node("Relu", ["x"], ["x"]), "defined twice"),
    ],
)
def test_validation_names_the_problem(node, message):
    g = Graph(
        inputs={"x": TensorInfo((1, 3, 4, 4))},
        outputs=[node.outputs[0]],
        nodes=[node],
        initializers={"w": np.zeros((2, 3, 3, 3), "float32")},
    )
    with pytest.raises(mnn.GraphError, match=message):
        g.validate()


def test_shape_errors_name_node_and_shapes():
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 3, 4, 4))
    w = b.const(np.zeros((2, 5, 3, 3), "float32"))
    b.output(b.Conv(x, w))
    with pytest.raises(mnn.GraphError, match=r"node 'conv' \(Conv\).*3 channels"):
        b.build().infer()


def test_symbolic_batch_is_carried_through():
    b = mnn.GraphBuilder()
    x = b.input("x", ("N", 3, 8, 8))
    w = b.const(np.zeros((4, 3, 3, 3), "float32"))
    y = b.Conv(x, w, strides=[2, 2], pads=[1, 1, 1, 1])
    b.output(b.MatMul(y, b.const(np.zeros((4, 7), "float32"))), "out")
    infos = b.build().infer()
    assert infos["out"].shape == ("N", 4, 4, 7)


def test_dtype_inference_of_comparisons():
    b = mnn.GraphBuilder()
    x = b.input("x", (3,))
    b.output(b.Less(x, b.const(np.zeros(3, "float32"))), "m")
    assert b.build().infer()["m"].dtype == "bool"


def _conv_bn_relu(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 3, 6, 6))
    w = b.const(rng.standard_normal((4, 3, 3, 3)).astype("float32"))
    bias = b.const(rng.standard_normal(4).astype("float32"))
    y = b.Conv(x, w, bias, pads=[1, 1, 1, 1])
    if "BatchNormalization" in mnn.ops.all_schemas():
        stats = [b.const(rng.uniform(0.5, 1.5, 4).astype("float32")) for _ in range(4)]
        y = b.BatchNormalization(y, *stats, epsilon=1e-3)
    b.output(b.Clip(y, min=0.0, max=6.0), "y")
    return b.build()


def test_batchnorm_folding_and_activation_fusion_keep_results(rng):
    graph = _conv_bn_relu(rng)
    optimized = optimize(graph)
    assert [n.op for n in optimized.nodes] == ["Conv"]
    assert optimized.nodes[0].attrs["activation"] == "clip"
    x = rng.standard_normal((2, 3, 6, 6)).astype("float32")
    want = mnn.Session(graph, backend="reference", optimize=False).run({"x": x})["y"]
    got = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_fusion_skips_producers_with_other_readers(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 4))
    y = b.MatMul(x, b.const(rng.standard_normal((4, 4)).astype("float32")))
    b.output(b.Add(b.Relu(y), y), "out")  # y is read twice: no fusion
    g = fuse_activations(b.build().copy())
    assert [n.op for n in g.nodes] == ["MatMul", "Relu", "Add"]


def test_constant_folding_and_dead_code(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (3,))
    c = b.Exp(b.const(np.zeros(3, "float32")))  # constant: folded
    b.Neg(x)  # nobody reads it: dropped
    b.output(b.Add(x, c), "out")
    g = eliminate_dead(fold_constants(b.build().copy()))
    assert [n.op for n in g.nodes] == ["Add"]
    np.testing.assert_array_equal(g.initializers[g.nodes[0].inputs[1]], np.ones(3, "float32"))


def test_plugin_passes_run_in_order(rng):
    seen = []
    graph = _conv_bn_relu(rng)

    def mark(g):
        seen.append([n.op for n in g.nodes])
        return g

    optimize(graph, extra=[("mark", mark, "fold_constants")])
    assert seen and "Clip" in seen[0]  # ran before fusion


def test_fold_batchnorm_needs_constant_statistics(rng):
    if "BatchNormalization" not in mnn.ops.all_schemas():
        pytest.skip("BatchNormalization not registered")
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 2, 3, 3))
    s = b.input("scale", (2,))
    y = b.Conv(x, b.const(np.ones((2, 2, 1, 1), "float32")))
    c = [b.const(np.ones(2, "float32")) for _ in range(3)]
    b.output(b.BatchNormalization(y, s, *c), "y")
    g = fold_batchnorm(b.build().copy())
    assert [n.op for n in g.nodes] == ["Conv", "BatchNormalization"]


def test_builder_rejects_inputs_that_are_not_value_names():
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 2), "float32")
    with pytest.raises(mnn.GraphError, match=r"Concat: input 0 is a list.*b\.Concat\(x, y, \.\.\.\)"):
        b.Concat([x, x], axis=0)
    with pytest.raises(mnn.GraphError, match=r"Relu: input 0 is a ndarray, not a value name"):
        b.Relu(np.zeros(2, np.float32))
    assert b.Concat(x, x, axis=0)  # the right call still works
