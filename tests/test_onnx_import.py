"""ONNX import: op mapping across opsets, shape folding, functions, external data, errors.

Every converted model is checked against ONNX Runtime on the same inputs."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import OnnxImportError, import_onnx  # noqa: E402

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=17, name="m"):
    graph = helper.make_graph(nodes, name, inputs, outputs, [numpy_helper.from_array(v, k) for k, v in initializers])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = min(m.ir_version, 8)  # ONNX Runtime reads IR 8 for every opset used here
    return m


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def check_against_ort(m, feeds, rtol=1e-5, atol=1e-6, **options):
    graph = import_onnx(m, **options)
    got = mnn.Session(graph, backend="reference").run(feeds)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for out, ref in zip(m.graph.output, want):
        assert got[out.name].shape == ref.shape, out.name
        assert got[out.name].dtype == ref.dtype, out.name
        np.testing.assert_allclose(got[out.name], ref, rtol=rtol, atol=atol, err_msg=out.name)
    return graph


@pytest.fixture
def x4(rng):
    return rng.standard_normal((2, 3, 8, 8)).astype(np.float32)


def test_conv_relu_pool_gemm(rng, x4):
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    fc = rng.standard_normal((10, 4 * 4 * 4)).astype(np.float32)
    m = model(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Flatten", ["p"], ["f"]),
            helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1),
        ],
        [vi("x", ["N", 3, 8, 8])],
        [vi("y", None)],
        [("w", w), ("fc", fc)],
    )
    graph = check_against_ort(m, {"x": x4})
    assert graph.inputs["x"].shape == ("N", 3, 8, 8)  # the dynamic batch stays dynamic


@pytest.mark.parametrize("opset", [7, 11, 13])
def test_softmax_before_and_after_opset_13(rng, opset):
    # before 13 Softmax flattens to 2-D at `axis`; from 13 it normalizes that one axis
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    m = model([helper.make_node("Softmax", ["x"], ["y"], axis=1)], [vi("x", [2, 3, 4])], [vi("y", None)], opset=opset)
    check_against_ort(m, {"x": x})


@pytest.mark.parametrize("opset", [6, 13])
def test_clip_attributes_then_inputs(rng, x4, opset):
    if opset < 11:
        nodes = [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)]
        inits = []
    else:
        nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])]
        inits = [("lo", np.array(-0.5, np.float32)), ("hi", np.array(0.25, np.float32))]
    check_against_ort(model(nodes, [vi("x", [2, 3, 8, 8])], [vi("y", None)], inits, opset=opset), {"x": x4})


@pytest.mark.parametrize("opset", [9, 13])
def test_slice_squeeze_reduce_across_opsets(rng, x4, opset):
    if opset < 10:
        nodes = [
            helper.make_node("Slice", ["x"], ["s"], starts=[1, 0], ends=[3, 8], axes=[1, 3]),
            helper.make_node("ReduceSum", ["s"], ["r"], axes=[2], keepdims=1),
            helper.make_node("Squeeze", ["r"], ["y"], axes=[2]),
        ]
        inits = []
    else:
        nodes = [
            helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
            helper.make_node("ReduceSum", ["s", "rax"], ["r"], keepdims=1),
            helper.make_node("Squeeze", ["r", "rax"], ["y"]),
        ]
        inits = [
            ("st", np.array([1, 7])),
            ("en", np.array([3, -100])),
            ("ax", np.array([1, 3])),
            ("sp", np.array([1, -2])),
            ("rax", np.array([2])),
        ]
    check_against_ort(model(nodes, [vi("x", [2, 3, 8, 8])], [vi("y", None)], inits, opset=opset), {"x": x4})


@pytest.mark.parametrize("opset", [2, 11, 18])
def test_pad_attribute_then_input_then_axes(rng, x4, opset):
    if opset < 11:
        node = helper.make_node("Pad", ["x"], ["y"], pads=[0, 0, 1, 2, 0, 0, 3, 0], value=1.5)
        inits = []
    elif opset < 18:
        node = helper.make_node("Pad", ["x", "pads", "v"], ["y"], mode="reflect")
        inits = [("pads", np.array([0, 0, 1, 2, 0, 0, 3, 0])), ("v", np.array(0, np.float32))]
    else:
        node = helper.make_node("Pad", ["x", "pads", "v", "axes"], ["y"])
        inits = [("pads", np.array([1, 2, 3, 0])), ("v", np.array(-1, np.float32)), ("axes", np.array([2, -1]))]
    check_against_ort(model([node], [vi("x", [2, 3, 8, 8])], [vi("y", None)], inits, opset=opset), {"x": x4})


@pytest.mark.parametrize("opset", [9, 13])
def test_upsample_and_resize(rng, x4, opset):
    scales = np.array([1, 1, 2, 2], np.float32)
    if opset == 9:
        node = helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")
        inits = [("s", scales)]
    else:
        node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")
        inits = [("s", scales)]
    check_against_ort(model([node], [vi("x", [2, 3, 8, 8])], [vi("y", None)], inits, opset=opset), {"x": x4})


def test_split_concat_transpose_and_variadic_ops(rng):
    x = rng.standard_normal((2, 6, 5)).astype(np.float32)
    m = model(
        [
            helper.make_node("Split", ["x", "sp"], ["a", "b", "c"], axis=1),
            helper.make_node("Sum", ["a", "b", "c"], ["s"]),
            helper.make_node("Mean", ["a", "b"], ["mean"]),
            helper.make_node("Max", ["a", "b", "c"], ["mx"]),
            helper.make_node("Concat", ["s", "mean", "mx"], ["cat"], axis=1),
            helper.make_node("Transpose", ["cat"], ["y"], perm=[2, 0, 1]),
        ],
        [vi("x", [2, 6, 5])],
        [vi("y", None)],
        [("sp", np.array([2, 2, 2]))],
        opset=13,
    )
    check_against_ort(m, {"x": x})


def test_constants_and_shape_subgraph_fold_away(rng):
    # torch-style flatten: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    m = model(
        [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0))),
            helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
            helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
            helper.make_node("Constant", [], ["minus1"], value_ints=[-1]),
            helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
            helper.make_node("Reshape", ["x", "target"], ["y"]),
        ],
        [vi("x", ["batch", 4, 5])],
        [vi("y", None)],
        [("ax0", np.array([0]))],
        opset=13,
    )
    graph = check_against_ort(m, {"x": x})
    # the shape sub-graph stays in the model (the batch is dynamic) and is computed at resize:
    # the plan holds the Reshape alone, its target bound for the real batch
    assert graph.nodes[0].op == "Shape" and graph.nodes[-1].op == "Reshape"
    assert graph.infer()["y"].shape == ("batch", 20)
    sess = mnn.Session(graph, backend="reference")
    assert sess.run({"x": x[:1]})["y"].shape == (1, 20)
    assert [p.op for p in sess.plan] == ["Reshape"]
    assert sess.run({"x": x})["y"].shape == (3, 20)


def test_static_shape_subgraph_becomes_constants(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    m = model(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node(
                "ConstantOfShape", ["s"], ["ones"], value=numpy_helper.from_array(np.array([1.0], np.float32))
            ),
            helper.make_node("Size", ["x"], ["size"]),
            helper.make_node("Cast", ["size"], ["sizef"], to=F),
            helper.make_node("Div", ["ones", "sizef"], ["w"]),
            helper.make_node("Mul", ["x", "w"], ["y"]),
        ],
        [vi("x", [2, 3, 4])],
        [vi("y", None)],
        opset=13,
    )
    graph = check_against_ort(m, {"x": x})
    assert [n.op for n in graph.nodes] == ["Mul"]


def test_ops_defined_as_onnx_functions_are_inlined(rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    m = model(
        [
            helper.make_node("Celu", ["x"], ["a"], alpha=0.7),
            helper.make_node("MeanVarianceNormalization", ["a"], ["y"], axes=[1]),
        ],
        [vi("x", [4, 5])],
        [vi("y", None)],
        opset=13,
    )
    graph = check_against_ort(m, {"x": x}, rtol=1e-4, atol=1e-5)
    assert "Celu" in graph.ops_histogram() or "Elu" not in graph.ops_histogram()


def test_one_d_convolution_runs_as_two_d(rng):
    x = rng.standard_normal((2, 4, 11)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3)).astype(np.float32)
    m = model(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], group=2, pads=[1, 2], strides=[2]),
            helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2]),
        ],
        [vi("x", [2, 4, 11])],
        [vi("y", None)],
        [("w", w)],
    )
    check_against_ort(m, {"x": x}, rtol=1e-4, atol=1e-5)


def test_lstm_gru_nodes(rng):
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    h = 4
    w = rng.standard_normal((2, 4 * h, 3)).astype(np.float32) * 0.5
    r = rng.standard_normal((2, 4 * h, h)).astype(np.float32) * 0.5
    b = rng.standard_normal((2, 8 * h)).astype(np.float32) * 0.5
    gw = rng.standard_normal((1, 3 * h, 2 * h)).astype(np.float32) * 0.5
    gr = rng.standard_normal((1, 3 * h, h)).astype(np.float32) * 0.5
    m = model(
        [
            helper.make_node("LSTM", ["x", "w", "r", "b"], ["y", "yh", ""], hidden_size=h, direction="bidirectional"),
            helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", ["yt", "shape"], ["seq"]),
            helper.make_node("GRU", ["seq", "gw", "gr"], ["", "gh"], hidden_size=h, linear_before_reset=1),
        ],
        [vi("x", [5, 2, 3])],
        [vi("gh", None), vi("yh", None)],
        [("w", w), ("r", r), ("b", b), ("shape", np.array([5, 2, 2 * h])), ("gw", gw), ("gr", gr)],
        opset=14,
    )
    check_against_ort(m, {"x": x}, rtol=1e-4, atol=1e-5)


def test_graph_output_that_is_an_input_or_a_constant():
    m = model(
        [
            helper.make_node("Identity", ["x"], ["y"]),
            helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.arange(3, dtype=np.int64))),
        ],
        [vi("x", [2])],
        [vi("y", None), vi("c", None), vi("x", None)],
        opset=13,
    )
    graph = import_onnx(m)
    out = mnn.Session(graph, backend="reference").run({"x": np.array([1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(out["y"], [1.0, 2.0])
    np.testing.assert_array_equal(out["x"], [1.0, 2.0])
    np.testing.assert_array_equal(out["c"], [0, 1, 2])


def test_every_unsupported_op_is_listed_in_one_error():
    m = model(
        [
            helper.make_node("RandomUniformLike", ["x"], ["nz"], name="find_them"),
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("FancyOp", ["r"], ["f"], domain="com.example", name="custom"),
            helper.make_node("Zork", ["f"], ["y"], domain="com.example", name="uniq"),
        ],
        [vi("x", [4])],
        [vi("y", None), vi("nz", None)],
        opset=13,
    )
    m.opset_import.append(helper.make_opsetid("com.example", 3))
    with pytest.raises(OnnxImportError) as info:
        import_onnx(m)
    err = info.value
    listed = {(u.op, u.domain, u.opset, u.node) for u in err.unsupported}
    assert ("RandomUniformLike", "ai.onnx", 13, "find_them") in listed
    assert ("FancyOp", "com.example", 3, "custom") in listed
    assert ("Zork", "com.example", 3, "uniq") in listed  # after another problem, still reported
    text = str(err)
    assert "RandomUniformLike" in text and "com.example" in text and "opset 3" in text and "'uniq'" in text


def test_shape_fed_as_an_input_is_bound_at_resize(rng):
    m = model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])],
        [vi("x", [2, 6]), vi("shape", [2], TensorProto.INT64)],
        [vi("y", None)],
        opset=13,
    )
    sess = mnn.Session(import_onnx(m), backend="reference")
    assert sess.value_inputs == ["shape"]
    x = rng.standard_normal((2, 6)).astype(np.float32)
    assert sess.run({"x": x, "shape": np.array([3, 4])})["y"].shape == (3, 4)
    assert sess.run({"x": x, "shape": np.array([4, -1])})["y"].shape == (4, 3)  # a plan per value
    with pytest.raises(mnn.MnnError, match="Reshape"):
        sess.run({"x": x, "shape": np.array([5, 5])})
    graph = import_onnx(m, constant_inputs={"shape": np.array([3, 4])})  # bound: now static
    assert list(graph.inputs) == ["x"] and graph.nodes[0].attrs["shape"] == [3, 4]


def test_unsupported_dtype_is_reported():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2], TensorProto.COMPLEX64)], [vi("y", None)])
    with pytest.raises(OnnxImportError, match="complex64"):
        import_onnx(m)


def test_bfloat16_runs_widened_and_rounds_back():
    import ml_dtypes

    m = model([helper.make_node("Mul", ["x", "x"], ["y"])], [vi("x", [5], TensorProto.BFLOAT16)], [vi("y", None)])
    graph = import_onnx(m)
    x = np.array([1.5, -2.25, 3.0078125, 0.1, 300.0], np.float32).astype(ml_dtypes.bfloat16)
    y = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    assert y.dtype == ml_dtypes.bfloat16
    want = (x.astype(np.float32) ** 2).astype(ml_dtypes.bfloat16)  # computed wide, rounded once
    np.testing.assert_array_equal(y.astype(np.float32), want.astype(np.float32))


@pytest.mark.parametrize("damage", ["random", "truncated", "empty"])
def test_corrupt_files_give_a_clear_error(tmp_path, rng, damage):
    good = model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [vi("x", [2, 3])],
        [vi("y", None)],
        [("w", rng.standard_normal((64, 64)).astype(np.float32))],
    ).SerializeToString()
    data = {"random": rng.bytes(3000), "truncated": good[: len(good) // 2], "empty": b""}[damage]
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    with pytest.raises(mnn.MnnError) as info:
        mnn.load(path)
    assert "bad.onnx" in str(info.value)
    assert "google.protobuf" not in type(info.value).__module__


def test_external_data_loads_from_the_model_folder(tmp_path, rng, x4):
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    m = model([helper.make_node("Conv", ["x", "w"], ["y"])], [vi("x", [2, 3, 8, 8])], [vi("y", None)], [("w", w)])
    path = tmp_path / "model.onnx"
    onnx.save_model(
        m,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="model.onnx.data",
        size_threshold=0,
    )
    assert (tmp_path / "model.onnx.data").exists()
    graph = mnn.load(path)
    np.testing.assert_array_equal(graph.initializers["w"], w)
    out = mnn.Session(graph, backend="reference").run({"x": x4})["y"]
    assert out.shape == (2, 8, 6, 6)
    (tmp_path / "model.onnx.data").unlink()
    with pytest.raises(mnn.MnnError, match="external data"):
        mnn.load(path)


def test_cli_convert_to_mnn_fp16(tmp_path, rng, x4, capsys):
    from mnn_core.cli import main

    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    m = model(
        [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Sigmoid", ["c"], ["y"])],
        [vi("x", ["N", 3, 8, 8])],
        [vi("y", None)],
        [("w", w)],
    )
    src, dst = tmp_path / "m.onnx", tmp_path / "m.mnn"
    onnx.save_model(m, str(src))
    assert main(["convert", str(src), "-o", str(dst), "--fp16"]) == 0
    assert "wrote" in capsys.readouterr().out
    got = mnn.Session(str(dst), backend="reference").run({"x": x4})["y"]
    want = ort.InferenceSession(str(src)).run(None, {"x": x4})[0]
    np.testing.assert_allclose(got, want, atol=2e-3)  # fp16 weights
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x01\x02garbage")
    assert main(["convert", str(bad), "-o", str(dst)]) == 2
    assert "not a valid ONNX file" in capsys.readouterr().err


def test_mnn_core_does_not_import_onnx():
    code = "import sys, mnn_core, mnn_core.convert, mnn_core.conformance; print('onnx' in sys.modules)"
    env = dict(os.environ, MNN_DISABLE_PLUGIN_AUTOLOAD="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_batchnorm_training_mode_outputs_running_statistics(rng):
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    scale, bias = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    mean, var = rng.standard_normal(3).astype(np.float32), rng.random(3).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((scale, "s"), (bias, "b"), (mean, "m"), (var, "v"))]
    m = model(
        [
            helper.make_node(
                "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1, momentum=0.8
            )
        ],
        [vi("x", [4, 3, 5])],
        [vi("y", None), vi("rm", None), vi("rv", None)],
        opset=15,
    )
    m.graph.initializer.extend(inits)
    out = mnn.Session(import_onnx(m)).run({"x": x})
    batch_mean, batch_var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))  # population variance, as ONNX says
    want = (x - batch_mean[:, None]) / np.sqrt(batch_var[:, None] + 1e-5) * scale[:, None] + bias[:, None]
    np.testing.assert_allclose(out["y"], want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["rm"], mean * 0.8 + batch_mean * 0.2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["rv"], var * 0.8 + batch_var * 0.2, rtol=1e-5, atol=1e-6)


def test_cli_convert_lists_every_unknown_op_in_one_error(tmp_path, capsys):
    from mnn_core.cli import main

    m = model(
        [
            helper.make_node("Frobnicate", ["x"], ["a"], domain="com.example", name="frob"),
            helper.make_node("Relu", ["a"], ["b"]),
            helper.make_node("ImageDecoder", ["x"], ["c"], name="decode"),
        ],
        [vi("x", [4])],
        [vi("b", None), vi("c", None)],
        opset=20,
    )
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    src = tmp_path / "unknown.onnx"
    onnx.save_model(m, str(src))
    assert main(["convert", str(src), "-o", str(tmp_path / "u.mnn")]) == 2
    err = capsys.readouterr().err
    assert "2 unsupported node(s)" in err and "Traceback" not in err
    assert "Frobnicate (com.example opset 1), node 'frob'" in err
    assert "ImageDecoder (ai.onnx opset 20), node 'decode'" in err
