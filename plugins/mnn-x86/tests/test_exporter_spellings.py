"""torch's dynamo and legacy exporters write global pooling and a packed qkv projection's split
differently; after the core's spelling passes (mnn_core/graph/spellings.py) x86 fuses both alike:
x86.ConvGlobalAvgPool over a 1x1 Conv and ReduceMean(H, W), x86.Attention taking ViT's qkv Slices in.
Oracle: ONNX Runtime on the same ONNX file."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mnn_core as mnn

ort = pytest.importorskip("onnxruntime")


def _save(tmp_path, nodes, inits, x_shape, out="y"):
    graph = helper.make_graph(
        nodes,
        "spelling",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def _against_ort(path, x, threads):
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    sess = mnn.Session(mnn.load(path), backend="x86", threads=threads, fallback=False)
    np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-4, atol=2e-5)
    return sess.plan


def _conv_pool(rng, c, o, pooling):
    """A 1x1 Conv, HardSwish and global pooling as `pooling` writes it, then a Flatten."""
    inits = {"w": (rng.standard_normal((o, c, 1, 1)) * 0.3).astype(np.float32), "b": rng.standard_normal(o)}
    inits["b"] = inits["b"].astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1], name="conv"),
        helper.make_node("HardSwish", ["c"], ["a"], name="act"),
    ]
    if pooling == "ReduceMean":  # dynamo: x.mean((-2, -1), keepdim=True)
        inits["axes"] = np.array([-1, -2])
        nodes.append(helper.make_node("ReduceMean", ["a", "axes"], ["p"], keepdims=1, name="pool"))
    else:
        nodes.append(helper.make_node("GlobalAveragePool", ["a"], ["p"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["p"], ["y"], name="flatten"))
    return nodes, inits


@pytest.mark.parametrize("pooling", ["GlobalAveragePool", "ReduceMean"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n, c, o, h, w", [(1, 96, 576, 7, 7), (3, 19, 37, 9, 11)])
def test_global_pooling_after_a_conv_fuses_in_both_spellings(tmp_path, rng, pooling, threads, n, c, o, h, w):
    nodes, inits = _conv_pool(rng, c, o, pooling)
    path = _save(tmp_path, nodes, inits, ["batch", c, h, w])
    plan = _against_ort(path, rng.standard_normal((n, c, h, w)).astype(np.float32), threads)
    assert [p.op for p in plan] == ["x86.ConvGlobalAvgPool", "Flatten"], [p.op for p in plan]


def _vit_attention(rng, seq, heads, d, spelling):
    """ViT's attention from a packed qkv projection [b, seq, 3 * heads * d]: Reshape, Transpose to
    [3, b, heads, seq, d], its parts by one Split (legacy) or three Slices (dynamo), each Squeezed."""
    inits = {
        "shape": np.array([0, seq, 3, heads, d]),
        "zero": np.array([0]),
        "scale": np.array(d**-0.5, np.float32),
        "back": np.array([0, seq, heads * d]),
    }
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Transpose", ["r"], ["rt"], perm=[2, 0, 3, 1, 4], name="permute"),
    ]
    if spelling == "Split":
        inits["ones"] = np.array([1, 1, 1])
        nodes.append(helper.make_node("Split", ["rt", "ones"], ["p0", "p1", "p2"], axis=0, name="split"))
    else:
        for i in range(3):
            inits[f"s{i}"], inits[f"e{i}"] = np.array([i]), np.array([i + 1])
            nodes.append(helper.make_node("Slice", ["rt", f"s{i}", f"e{i}", "zero", "ones1"], [f"p{i}"], name=f"sl{i}"))
        inits["ones1"] = np.array([1])
    nodes += [helper.make_node("Squeeze", [f"p{i}", "zero"], [f"qkv{i}"], name=f"squeeze{i}") for i in range(3)]
    nodes += [
        helper.make_node("Transpose", ["qkv1"], ["kt"], perm=[0, 1, 3, 2], name="kt"),
        helper.make_node("MatMul", ["qkv0", "kt"], ["s"], name="qk"),
        helper.make_node("Mul", ["s", "scale"], ["ss"], name="scale"),
        helper.make_node("Softmax", ["ss"], ["sm"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["sm", "qkv2"], ["o"], name="pv"),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3], name="heads"),
        helper.make_node("Reshape", ["ot", "back"], ["y"], name="merge"),
    ]
    return nodes, inits


@pytest.mark.parametrize("spelling", ["Split", "Slice"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("b, seq, heads, d", [(1, 197, 6, 64), (2, 23, 3, 9)])
def test_vit_attention_takes_the_qkv_parts_in_both_spellings(tmp_path, rng, spelling, threads, b, seq, heads, d):
    nodes, inits = _vit_attention(rng, seq, heads, d, spelling)
    path = _save(tmp_path, nodes, inits, ["batch", seq, 3 * heads * d])
    x = (rng.standard_normal((b, seq, 3 * heads * d)) * 0.5).astype(np.float32)
    plan = _against_ort(path, x, threads)
    assert [p.op for p in plan] == ["Reshape", "x86.Attention", "Reshape"], [p.op for p in plan]
