"""Where the values that decide shapes come from (graph/shapes.py value_sources, value_nodes) and
which nodes an eager graph folds at resize instead of running them (runtime/backend_choice.py
shape_nodes): one walk back from the value inputs, strict for a plan, lenient for the eager check."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core.errors import GraphError
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.graph.shapes import value_nodes, value_sources
from mnn_core.runtime.backend_choice import shape_nodes


def _graph(nodes: list[Node], inputs: dict | None = None) -> Graph:
    return Graph(
        inputs=inputs or {"x": TensorInfo(("N", 6)), "k": TensorInfo((1,), "int64")},
        outputs=[n.outputs[0] for n in nodes if n.op in ("Reshape", "Relu")],
        nodes=nodes,
        initializers={"axis0": np.array([0], np.int64), "minus1": np.array([-1], np.int64)},
    )


# x's batch size and input k decide the Reshape's target; Relu reads data only
RESHAPE_BY_SHAPE = [
    Node("Shape", ["x"], ["s"], name="shape"),
    Node("Gather", ["s", "axis0"], ["n"], name="gather"),
    Node("Mul", ["n", "k"], ["nk"], name="mul"),
    Node("Concat", ["nk", "minus1"], ["target"], {"axis": 0}, name="concat"),
    Node("Reshape", ["x", "target"], ["y"], name="reshape"),
    Node("Relu", ["x"], ["r"], name="relu"),
]


def test_value_sources_follows_a_target_back_to_shapes_and_small_inputs():
    inputs, values = value_sources(_graph(RESHAPE_BY_SHAPE))
    assert inputs == {"k"}
    assert values == {"s", "n", "nk", "target"}
    assert value_nodes(_graph(RESHAPE_BY_SHAPE), ["target"]) == {"shape", "gather", "mul", "concat"}
    assert shape_nodes(_graph(RESHAPE_BY_SHAPE)) == {"shape", "gather", "mul", "concat"}


def test_a_target_read_from_data_is_refused_by_value_sources_and_passed_over_by_shape_nodes():
    nodes = [
        Node("NonZero", ["x"], ["nz"], name="nonzero"),  # sized by x's values
        Node("Shape", ["nz"], ["snz"], name="shape_nz"),
        Node("Cast", ["nz"], ["cnz"], {"to": "int64"}, name="cast"),
        Node("Concat", ["snz", "cnz"], ["target"], {"axis": 0}, name="concat"),
        Node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    with pytest.raises(GraphError, match="NonZero node 'nonzero'"):
        value_sources(_graph(nodes))
    assert value_nodes(_graph(nodes), ["target"]) == {"concat", "shape_nz", "cast"}
    assert shape_nodes(_graph(nodes)) == {"concat", "shape_nz", "cast"}


def test_a_large_input_as_a_target_is_refused_by_value_sources_only():
    nodes = [Node("Reshape", ["x", "t"], ["y"], name="reshape")]
    graph = _graph(nodes, {"x": TensorInfo(("N", 6)), "t": TensorInfo((2, 2), "int64")})
    with pytest.raises(GraphError, match="input 't'"):
        value_sources(graph)
    assert value_nodes(graph, ["t"]) == set() and shape_nodes(graph) == set()


def test_shape_nodes_also_takes_what_reads_only_shapes_and_constants():
    nodes = [
        Node("Shape", ["x"], ["s"], name="shape"),
        Node("Gather", ["s", "axis0"], ["n"], name="gather"),  # leads to no value input
        Node("Relu", ["x"], ["r"], name="relu"),
    ]
    assert shape_nodes(_graph(nodes)) == {"shape", "gather"}
