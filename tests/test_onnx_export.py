"""mnn graph -> ONNX, round-tripped through ONNX Runtime: ORT on the export equals mnn's Session."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from mnn_test_graphs import small_cnn  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import import_onnx, save_onnx, to_onnx  # noqa: E402


def ort_run(proto, feeds):
    onnx.checker.check_model(proto)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def assert_round_trip(graph, feeds, opset=17, rtol=1e-5, atol=1e-5):
    want = mnn.Session(graph, backend="reference", optimize=False).run(feeds)
    got = ort_run(to_onnx(graph, opset=opset), feeds)
    for name in graph.outputs:
        assert got[name].dtype == want[name].dtype, name
        np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=atol, err_msg=name)


def test_builder_cnn(rng):
    graph = small_cnn(rng)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    assert_round_trip(graph, {"x": x})
    proto = to_onnx(graph)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"  # dynamic batch kept


def test_fused_activations_are_unfused(rng):
    graph = small_cnn(rng)
    optimized = mnn.Session(graph, backend="reference").graph  # Relu fused into Conv by the passes
    assert any(n.attrs.get("activation", "none") != "none" for n in optimized.nodes)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    assert_round_trip(optimized, {"x": x})
    assert "Relu" in {n.op_type for n in to_onnx(optimized).graph.node}


@pytest.mark.parametrize(
    "activation,alpha,beta",
    [
        ("clip", 0.0, 6.0),
        ("leaky_relu", 0.1, 0.0),
        ("silu", 0, 0),
        ("gelu", 0, 0),
        ("hard_sigmoid", 0.2, 0.5),
        ("hard_swish", 0, 0),
        ("sigmoid", 0, 0),
        ("tanh", 0, 0),
    ],
)
@pytest.mark.parametrize("opset", [13, 20])
def test_every_fused_activation(rng, activation, alpha, beta, opset):
    b = mnn.GraphBuilder("fused")
    x = b.input("x", (3, 16))
    w = b.const(rng.standard_normal((16, 8)).astype(np.float32))
    b.output(b.Gemm(x, w, None, activation=activation, act_alpha=alpha, act_beta=beta), "y")
    assert_round_trip(b.build(), {"x": rng.standard_normal((3, 16)).astype(np.float32) * 3}, opset=opset)


@pytest.mark.parametrize("opset", [13, 17, 18, 20])
def test_attributes_that_onnx_passes_as_inputs(rng, opset):
    b = mnn.GraphBuilder("attrs")
    x = b.input("x", (2, 3, 4, 6))
    y = b.Pad(x, pads=[0, 0, 1, 0, 0, 0, 0, 2], value=0.5)
    y = b.Slice(y, starts=[1, 0], ends=[3, 100], axes=[1, 3], steps=[1, 2])
    y = b.Resize(y, scales=[1.0, 1.0, 2.0, 2.0], mode="nearest")
    y = b.Clip(y, min=-0.5, max=0.75)
    y = b.Reshape(y, shape=[0, -1, 8])
    parts = b.op("Split", y, axis=2, split=[3, 5], n_outputs=2)
    s = b.ReduceSum(parts[0], axes=[2], keepdims=0)
    m = b.ReduceMean(parts[1], axes=[1], keepdims=1)
    m = b.Squeeze(m, axes=[1])
    u = b.Unsqueeze(b.Silu(b.Gelu(s)), axes=[0])
    e = b.Expand(b.Tile(m, repeats=[1, 2]), shape=[3, 2, 10])
    t = b.Transpose(e, perm=[1, 0, 2])
    c = b.Cast(t, to="float16")
    b.output(u, "u")
    b.output(b.Cast(b.Softmax(b.Cast(c, to="float32"), axis=-1), to="float32"), "t")
    graph = b.build()
    x_val = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    assert_round_trip(graph, {"x": x_val}, opset=opset, rtol=2e-3, atol=2e-3)


def test_ops_of_the_extra_families(rng):
    b = mnn.GraphBuilder("extra")
    x = b.input("x", (4, 5))
    ks = b.op("TopK", x, k=2, axis=1, n_outputs=2)
    cs = b.CumSum(x, axis=1, exclusive=1)
    tr = b.Trilu(x, upper=0, k=1)
    oh = b.OneHot(b.const(np.array([0, 3, 1])), b.const(np.array([0.0, 1.0], np.float32)), depth=4)
    b.output(ks[0], "values")
    b.output(ks[1], "indices")
    b.output(b.Add(cs, tr), "sum")
    b.output(oh, "onehot")
    b.output(b.Where(b.GreaterOrEqual(x, b.const(np.float32(0))), x, b.Neg(x)), "abs")
    assert_round_trip(b.build(), {"x": rng.standard_normal((4, 5)).astype(np.float32)})


def test_recurrent_layers(rng):
    b = mnn.GraphBuilder("rnn")
    x = b.input("x", (5, 2, 3))
    w = b.const(rng.standard_normal((1, 16, 3)).astype(np.float32) * 0.5)
    r = b.const(rng.standard_normal((1, 16, 4)).astype(np.float32) * 0.5)
    y, h, c = b.op("LSTM", x, w, r, hidden_size=4, n_outputs=3)
    gw = b.const(rng.standard_normal((1, 9, 4)).astype(np.float32) * 0.5)
    gr = b.const(rng.standard_normal((1, 9, 3)).astype(np.float32) * 0.5)
    _, gh = b.op("GRU", b.Squeeze(y, axes=[1]), gw, gr, hidden_size=3, activation_names="Sigmoid,Tanh", n_outputs=2)
    b.output(gh, "gh")
    b.output(c, "c")
    assert_round_trip(b.build(), {"x": rng.standard_normal((5, 2, 3)).astype(np.float32)})


def test_save_and_import_again(tmp_path, rng):
    graph = small_cnn(rng)
    path = save_onnx(graph, tmp_path / "cnn.onnx")
    again = import_onnx(path)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    got = mnn.Session(again, backend="reference").run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_training_ops_have_no_onnx_form():
    b = mnn.GraphBuilder("train")
    x = b.input("x", (4,))
    g = b.input("g", (4,))
    b.output(b.ReluGrad(g, x), "y")
    with pytest.raises(mnn.MnnError, match="training"):
        to_onnx(b.build())


def test_opset_range_is_checked(rng):
    with pytest.raises(mnn.MnnError, match="opsets"):
        to_onnx(small_cnn(rng), opset=9)


def test_a_path_for_the_opset_says_save_onnx(rng, tmp_path):
    with pytest.raises(mnn.MnnError, match="save_onnx"):
        to_onnx(small_cnn(rng), str(tmp_path / "model.onnx"))


# -- every op's samples, exported one node at a time, against ONNX Runtime ------------------------------

EXPORT_OPSET = 21
#: ops whose samples ONNX Runtime does not take or computes otherwise (with the reason)
ORT_DIFFERS = {
    "Scatter": "deprecated in ONNX; exported samples would need opset 10",
    "TensorScatter": "opset 24",
    "LinearAttention": "opset 27",
    "BitCast": "opset 26",
    "SwiGLU": "opset 28",
}


def _sample_cases():
    from mnn_core.ops import all_schemas
    from mnn_core.testing.conformance import conformance_cases

    for case in conformance_cases():
        op = case.op
        if (
            op.endswith(("Grad", "Update"))
            or op in ORT_DIFFERS
            or op in ("SoftmaxCrossEntropy", "SumToShape", "BatchNormTraining")
        ):
            continue
        if not onnx.defs.has(op) or onnx.defs.get_schema(op).since_version > EXPORT_OPSET:
            continue
        if any(np.asarray(v).size == 0 for v in case.feeds.values()) or any(e.size == 0 for e in case.expected):
            continue  # ONNX Runtime rejects many empty tensors
        if op in all_schemas() and op in ("Momentum", "Adagrad", "Adam"):
            continue  # ai.onnx.preview.training: not in ONNX Runtime's CPU provider
        yield pytest.param(case, id=case.id)


@pytest.mark.parametrize("case", list(_sample_cases()))
def test_op_samples_through_onnxruntime(case):
    proto = to_onnx(case.graph, opset=EXPORT_OPSET)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    try:
        sess = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001
        if "NOT_IMPLEMENTED" in str(exc) or "Could not find an implementation" in str(exc):
            pytest.skip(f"ONNX Runtime has no kernel: {str(exc).splitlines()[0][:150]}")
        raise
    got = sess.run(None, {k: np.asarray(v) for k, v in case.feeds.items()})
    for name, g, want in zip(case.graph.outputs, got, case.expected):
        assert g.shape == want.shape and g.dtype == want.dtype, f"{case.id} [{case.label}] {name}"
        if np.issubdtype(want.dtype, np.floating):
            tol = 2e-3 if want.dtype == np.float16 else 2e-4
            np.testing.assert_allclose(g, want, rtol=tol, atol=tol, err_msg=f"{case.id} [{case.label}]")
        else:
            np.testing.assert_array_equal(g, want, err_msg=f"{case.id} [{case.label}]")
