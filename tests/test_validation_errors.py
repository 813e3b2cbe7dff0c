"""Degenerate graphs are refused when their shapes are inferred (before any backend sees them),
folding errors name their node, and misuse of Session.run and the CLI ends in one clear error
(docs/RELIABILITY.md)."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.graph.ir import Graph, Node, TensorInfo


def _conv_graph(op: str, w_shape: tuple, x_shape=(1, 2, 5, 5)) -> Graph:
    x, w = TensorInfo(x_shape, "uint8" if op != "Conv" and op != "ConvTranspose" else "float32"), None
    if op in ("Conv", "ConvTranspose"):
        w = np.ones(w_shape, "float32")
        inits, ins = {"w": w}, ["x", "w"]
    elif op == "ConvInteger":
        inits, ins = {"w": np.ones(w_shape, "uint8")}, ["x", "w"]
    else:  # QLinearConv
        inits = {
            "xs": np.float32(0.1),
            "xz": np.uint8(0),
            "w": np.ones(w_shape, "int8"),
            "ws": np.float32(0.1),
            "wz": np.int8(0),
            "ys": np.float32(0.1),
            "yz": np.uint8(0),
        }
        ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    return Graph(
        inputs={"x": x},
        outputs=["y"],
        initializers={k: np.asarray(v) for k, v in inits.items()},
        nodes=[Node(op, ins, ["y"], name="conv")],
    )


@pytest.mark.parametrize("op", ["Conv", "QLinearConv", "ConvInteger", "ConvTranspose"])
@pytest.mark.parametrize("w_shape", [(3, 2, 0, 3), (3, 2, 3, 0), (2, 3, 0, 0)])
def test_zero_sized_kernel_is_refused_before_planning(op, w_shape):
    g = _conv_graph(op, w_shape)
    g.validate()  # names and attributes are fine: shape inference refuses it
    with pytest.raises(mnn.GraphError, match=r"weight \(\d+, \d+, \d+, \d+\) has a kernel dimension of 0"):
        g.infer()
    with pytest.raises(mnn.GraphError, match="kernel dimension of 0"):
        mnn.Session(g, backend="reference")


def test_zero_sized_kernel_in_an_onnx_file(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    node = helper.make_node("Conv", ["x", "w"], ["y"])
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2, 5, 5])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones((3, 2, 3, 0), np.float32), "w")],
    )
    path = tmp_path / "zero.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    with pytest.raises(mnn.GraphError, match="kernel dimension of 0"):
        mnn.Session(str(path), backend="reference")


def _folding(op: str, attrs: dict, const: np.ndarray, second: np.ndarray | None = None) -> Graph:
    """y = x + op(constants): the session's constant folding computes op(...)."""
    inits = {"c": const}
    ins = ["c"]
    if second is not None:
        inits["d"] = second
        ins.append("d")
    return Graph(
        inputs={"x": TensorInfo((1,), "float32")},
        outputs=["y"],
        initializers=inits,
        nodes=[Node(op, ins, ["t"], attrs, name="fold_me"), Node("Add", ["x", "t"], ["y"], name="add")],
    )


@pytest.mark.parametrize(
    "graph, why",
    [
        (_folding("Gather", {}, np.arange(5, dtype="float32"), np.array([100], "int64")), "IndexError"),
        (_folding("Softmax", {"axis": 7}, np.ones((1,), "float32")), "axis 7 is out of range"),
        (_folding("ReduceSum", {"axes": [5]}, np.ones((1,), "float32")), "axis 5 is out of range"),
    ],
)
def test_constant_folding_errors_name_the_node(graph, why):
    with pytest.raises(
        mnn.GraphError,
        match=rf"node 'fold_me' \(\w+\): its inputs are all constants, and computing "
        rf"it failed: .*{why}",
    ):
        mnn.Session(graph, backend="reference")


def test_batchnorm_folding_errors_name_the_node():
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 2, 4, 4))
    c = b.Conv(x, b.const(np.ones((3, 2, 1, 1), "float32")))
    b.output(b.BatchNormalization(c, *[b.const(np.ones(3, "float32")) for _ in range(4)]), "y")
    g = b.build()
    bn = g.nodes[-1]
    g.initializers[bn.inputs[1]] = np.array(["a", "b", "c"])  # not numbers: loads, validates, cannot fold
    with pytest.raises(
        mnn.GraphError,
        match=rf"node '{bn.name}' \(BatchNormalization\): folding it into Conv "
        r"'conv' failed: ValueError",
    ):
        mnn.Session(g, backend="reference")


@pytest.mark.parametrize(
    "feeds", [{0: np.ones(2, "float32")}, {("x",): np.ones(2, "float32")}, {b"x": np.ones(2, "float32")}]
)
def test_run_with_keys_that_are_not_names(feeds):
    b = mnn.GraphBuilder()
    x = b.input("x", (2,))
    b.output(b.Relu(x), "y")
    sess = mnn.Session(b.build(), backend="reference")
    with pytest.raises(mnn.InputError, match=r"keyed by the inputs' names \(x\), got key .* \((int|tuple|bytes)\)"):
        sess.run(feeds)


# -- the command line: one line, whatever goes wrong -------------------------------------------------


@pytest.fixture
def model(tmp_path):
    b = mnn.GraphBuilder()
    x = b.input("x", ("N", 3, 8, 8))
    w = b.const(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype("float32"))
    b.output(b.Relu(b.Conv(x, w, pads=[1, 1, 1, 1])), "y")
    path = tmp_path / "m.mnn"
    mnn.save(b.build(), path)
    return path


def _one_line_error(capsys, argv, code=2) -> str:
    from mnn_core.cli import main

    assert main([str(a) for a in argv]) == code
    err = capsys.readouterr().err
    assert err.startswith("mnnx: error: ") and err.count("\n") == 1, err
    return err


def test_cli_quantize_with_an_npy_calibration_file(capsys, model, tmp_path):
    np.save(tmp_path / "x.npy", np.ones((2, 3, 8, 8), "float32"))
    err = _one_line_error(capsys, ["quantize", model, "-o", tmp_path / "q.mnn", "--calibration", tmp_path / "x.npy"])
    assert "holds one array; calibration data is an .npz keyed by input name (x)" in err


@pytest.mark.parametrize("command", ["run", "bench"])
def test_cli_shape_too_big_for_memory(capsys, model, command):
    extra = ["--random"] if command == "run" else ["--repeat", "1"]
    err = _one_line_error(capsys, [command, model, "--shape", "x=100000000,3,224,224", *extra])
    assert "input 'x' of shape 100000000,3,224,224 (float32) is more than this machine's memory holds" in err


def test_cli_unexpected_error_is_one_line(capsys, model, monkeypatch):
    import mnn_core.cli as cli

    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "cmd_info", broken)
    monkeypatch.delenv("MNN_DEBUG", raising=False)
    err = _one_line_error(capsys, ["info", model], code=3)
    assert "RuntimeError: a bug (unexpected: MNN_DEBUG=1 shows where" in err
    monkeypatch.setenv("MNN_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["info", str(model)])
