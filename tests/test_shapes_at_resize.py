"""Shapes resolved at resize: models with dynamic sizes load once and run at any input size.

Import keeps dynamic dimensions symbolic; `Session.resize` computes every shape (and the values of
shape sub-graphs) from the real inputs. Each model here is checked against ONNX Runtime.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.convert import import_onnx
from mnn_core.graph.symbolic import Sym

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _ort(m, feeds):
    data = m if isinstance(m, (bytes, str)) else m.SerializeToString()
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)


def _backends():
    names = ["reference"]
    from mnn_core.plugins import get_plugins

    backends = get_plugins().backends
    if "x86" in backends and backends["x86"].availability():
        names.append("x86")
    return names


# -- a detector with an FPN neck: strided convolutions down, nearest upsampling up, Concat ---------------


def _fpn_detector(path):
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class FPN(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.c3 = nn.Conv2d(16, 16, 3, stride=2, padding=1)
            self.lat = nn.Conv2d(16, 16, 1)
            self.head = nn.Conv2d(32, 6, 3, padding=1)

        def forward(self, x):
            p1 = torch.relu(self.c1(x))
            p2 = torch.relu(self.c2(p1))
            p3 = torch.relu(self.c3(p2))
            up = nn.functional.interpolate(self.lat(p3), size=p2.shape[-2:], mode="nearest")
            y = self.head(torch.cat([p2, up], 1))
            return y.flatten(2).transpose(1, 2)  # (N, anchors, 6), the anchors from H and W

    torch.manual_seed(0)
    model = FPN().eval()
    x = torch.randn(1, 3, 64, 48)
    torch.onnx.export(
        model,
        (x,),
        str(path),
        input_names=["x"],
        output_names=["boxes"],
        dynamo=False,
        dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}, "boxes": {0: "N", 1: "A"}},
    )


@pytest.mark.parametrize("backend", _backends())
def test_fpn_detector_loads_once_and_runs_at_three_sizes(tmp_path, backend):
    path = tmp_path / "fpn.onnx"
    _fpn_detector(path)
    graph = mnn.load(path)
    assert graph.inputs["x"].shape == ("N", 3, "H", "W")
    infos = graph.infer()
    assert len(infos["boxes"].shape) == 3 and infos["boxes"].shape[2] == 6
    sess = mnn.Session(graph, backend=backend)
    rng = np.random.default_rng(0)
    for shape in [(1, 3, 64, 48), (2, 3, 37, 91), (1, 3, 129, 17)]:  # odd sizes: the branches' sizes differ
        x = rng.standard_normal(shape).astype(np.float32)
        got = sess.run({"x": x})["boxes"]
        (want,) = _ort(str(path), {"x": x})
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert not {"Shape", "Gather", "Unsqueeze"} & {p.op for p in sess.plan}  # the shape arithmetic ran at resize


def test_a_wrong_size_is_reported_at_resize_naming_the_node():
    # y = x + Slice(x, 0, 4): only inputs whose axis 1 has 4 elements fit
    m = helper.make_model(
        helper.make_graph(
            [helper.make_node("Slice", ["x", "s", "e", "a"], ["part"]), helper.make_node("Add", ["x", "part"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "C"])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("s", [0]), ("e", [4]), ("a", [1]))],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    sess = mnn.Session(import_onnx(m), backend="reference")
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(sess.run({"x": x})["y"], 2 * x)
    with pytest.raises(mnn.MnnError, match=r"Add.*\(2, 6\).*\(2, 4\)|\(2, 6\) and \(2, 4\)"):
        sess.run({"x": np.ones((2, 6), np.float32)})


# -- shape arithmetic ops: Size, ConstantOfShape, Range, Expand to a computed shape ----------------------


def _shape_arith_model():
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["len"], axis=0),  # x's axis 1
        helper.make_node("Range", ["zero", "len", "step"], ["pos"]),  # 0 .. len-1
        helper.make_node("Cast", ["pos"], ["posf"], to=TensorProto.FLOAT),
        helper.make_node(
            "ConstantOfShape", ["shape"], ["ones"], value=numpy_helper.from_array(np.array([1.5], np.float32))
        ),
        helper.make_node("Expand", ["posf", "shape"], ["grid"]),
        helper.make_node("Size", ["x"], ["n"]),
        helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["ones", "grid"], ["a"]),
        helper.make_node("Add", ["a", "nf"], ["b"]),
        helper.make_node("Add", ["b", "x"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("one", 1), ("zero", 0), ("step", 1))]
    return helper.make_model(
        helper.make_graph(
            nodes,
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T"])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            inits,
        ),
        opset_imports=[helper.make_opsetid("", 17)],
    )


@pytest.mark.parametrize("backend", _backends())
def test_size_constant_of_shape_range_and_expand_follow_the_input(backend):
    m = _shape_arith_model()
    graph = import_onnx(m)
    assert {"Range", "ConstantOfShape", "Size", "Expand"} <= set(graph.ops_histogram())
    assert graph.infer()["y"].shape == ("B", "T")
    sess = mnn.Session(graph, backend=backend)
    rng = np.random.default_rng(1)
    for shape in [(2, 5), (3, 1), (1, 17)]:
        x = rng.standard_normal(shape).astype(np.float32)
        (want,) = _ort(m, {"x": x})
        np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-6)
        assert not {"Range", "ConstantOfShape", "Size", "Shape"} & {p.op for p in sess.plan}
    # the constants folded for a plan live as long as the plan: freed memory, reused, would show here
    gc.collect()
    junk = [np.full(1 << 12, 7.0, np.float32) for _ in range(256)]
    np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-6)
    del junk


def test_symbolic_arithmetic_keeps_expressions_short():
    h = Sym("H")
    assert (h - 1) // 2 + 1 == "(H-1)//2+1"
    assert ((h + 1 + 1 - 3) // 2 + 1) * 2 == "2*((H-1)//2)+2"
    assert (h * 512) // h == 512 and h - h == 0 and h * 1 == "H" and h * 0 == 0
    assert min(h, 1 << 62) == "H" and h > 1 and h != 1
    with pytest.raises(TypeError):
        h < 5  # noqa: B015  (cannot be told before resize)
    with pytest.raises(mnn.GraphError, match="symbolic"):
        range(h)


def test_info_shows_symbolic_dimensions(tmp_path, capsys):
    from mnn_core.cli import main

    path = tmp_path / "m.onnx"
    onnx.save(_shape_arith_model(), path)
    main(["info", str(path)])
    out = capsys.readouterr().out
    assert "[B, T]" in out


def test_dynamic_models_export_to_onnx_with_their_shape_arithmetic(tmp_path):
    """Value inputs go back to ONNX as inputs, so the exported model keeps its dynamic sizes."""
    from mnn_core.convert import save_onnx

    _fpn_detector(tmp_path / "fpn.onnx")
    models = {
        "fpn": (mnn.load(tmp_path / "fpn.onnx"), [(1, 3, 40, 24), (2, 3, 33, 57)]),
        "arith": (import_onnx(_shape_arith_model()), [(2, 5), (1, 9)]),
    }
    rng = np.random.default_rng(2)
    for name, (graph, shapes) in models.items():
        path = save_onnx(graph, tmp_path / f"{name}.mnn.onnx")
        sess = mnn.Session(graph, backend="reference")
        for shape in shapes:
            x = rng.standard_normal(shape).astype(np.float32)
            (got,) = _ort(str(path), {"x": x})
            want = sess.run({"x": x})[graph.outputs[0]]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{name} {shape}")
