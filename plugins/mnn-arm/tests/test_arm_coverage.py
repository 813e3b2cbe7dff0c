"""tools/arm_coverage.py's portable graph files (host-side): a graph with a Loop body, its initializers (one
a strided view) and a numpy scalar attribute comes back equal and runs the same, and the pickle names no
numpy module (numpy 2 names numpy._core, which the arm64 root's numpy 1.24 cannot import)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from mnn_core.graph.ir import Graph, Node, TensorInfo

TOOL = Path(__file__).resolve().parents[1] / "tools" / "arm_coverage.py"


def _tool():
    spec = importlib.util.spec_from_file_location("arm_coverage", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pickle finds the reconstructors by their module's name
    spec.loader.exec_module(module)
    return module


def _graph() -> Graph:
    body = Graph(name="body")
    body.inputs.update(i=TensorInfo((), "int64"), cond=TensorInfo((), "bool"), acc=TensorInfo((3,), "float32"))
    body.initializers["step"] = np.arange(3, dtype=np.float32)
    body.nodes.append(Node("Add", ["acc", "step"], ["acc_out"], {}, "add"))
    body.nodes.append(Node("Identity", ["cond"], ["cond_out"], {}, "id"))
    body.outputs = ["cond_out", "acc_out"]
    g = Graph(name="loop")
    g.inputs["x"] = TensorInfo((3,), "float32")
    g.initializers.update(n=np.array(4, np.int64), c=np.array(True))
    g.nodes.append(Node("Loop", ["n", "c", "x"], ["y"], {"body": body}, "loop"))
    g.nodes.append(Node("Mul", ["y", "k"], ["z"], {}, "mul"))
    g.initializers["k"] = np.float32([[1.5, 9.0], [-2.0, 9.0], [0.25, 9.0]])[:, 0]  # a strided view
    g.nodes.append(Node("LeakyRelu", ["z"], ["w"], {"alpha": np.float32(0.5)}, "leaky"))
    g.outputs = ["z", "w"]
    return g


def test_graph_round_trip(tmp_path):
    tool, graph = _tool(), _graph()
    path = tmp_path / f"loop{tool.GRAPH_SUFFIX}"
    tool.save_graph(graph, path)
    assert b"numpy" not in path.read_bytes()
    back = tool.load_graph(path)
    assert [n.op for n in back.nodes] == [n.op for n in graph.nodes]
    body = back.nodes[0].attrs["body"]
    np.testing.assert_array_equal(body.initializers["step"], np.arange(3, dtype=np.float32))
    for name, value in graph.initializers.items():
        assert back.initializers[name].dtype == value.dtype and back.initializers[name].shape == value.shape
        np.testing.assert_array_equal(back.initializers[name], value)
    assert type(back.nodes[2].attrs["alpha"]) is np.float32
    feeds = {"x": np.array([1.0, 2.0, 3.0], np.float32)}
    import mnn_core as mnn

    want = mnn.Session(graph, backend="reference").run(feeds)
    got = mnn.Session(back, backend="reference").run(feeds)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
