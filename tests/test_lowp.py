"""Low-precision dtypes (bfloat16, float8, float4, int4/int2): Cast semantics, the C ABI codes,
.mnn storage and widened reference kernels."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

import mnn_core as mnn  # noqa: E402
from mnn_core.graph.ir import DTYPES, LOW_PRECISION_DTYPES, Graph, Node, TensorInfo  # noqa: E402
from mnn_core.ops import run_reference  # noqa: E402
from mnn_core.ops.lowp import cast  # noqa: E402


def test_c_abi_codes_follow_dtypes_order():
    from mnn_core.runtime._runloop import DTYPE_CODES

    header = (Path(mnn.get_include()) / "mnn_core" / "abi.h").read_text()
    codes = {
        m[0].lower(): int(m[1])
        for m in re.findall(r"MNN_(\w+) = (\d+)", header)
        if m[0] not in ("ABI_VERSION", "MAX_DIMS")
    }
    assert codes == {name: i for i, name in enumerate(DTYPES)}
    assert DTYPE_CODES == codes


@pytest.mark.parametrize("to", ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn"])
def test_cast_saturates_by_default_and_not_when_asked(to):
    top = float(ml_dtypes.finfo(to).max)
    x = np.array([top * 4, -top * 4, np.inf, -np.inf, np.nan, 1.0], np.float32)
    sat = cast(x, to).astype(np.float32)
    np.testing.assert_array_equal(sat[:4], [top, -top, top, -top])
    assert sat[5] == 1.0 and (np.isnan(sat[4]) or to == "float4_e2m1fn")  # float4 has no NaN
    raw = cast(x, to, saturate=False).astype(np.float32)
    assert not np.isfinite(raw[0]) or to == "float4_e2m1fn"  # no inf/nan in float4: ml_dtypes saturates it


def test_cast_rounds_half_to_even_into_bfloat16():
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8)], np.float32)  # exactly halfway cases
    got = cast(x, "bfloat16").astype(np.float32)
    np.testing.assert_array_equal(got, [1.0, 1 + 2**-6, -1.0])


@pytest.mark.parametrize(
    "mode, want", [("up", [0.25, 2.0, 4.0, 0.5]), ("down", [0.125, 1.0, 2.0, 0.5]), ("nearest", [0.125, 1.0, 4.0, 0.5])]
)
def test_cast_to_e8m0_rounds_by_mode(mode, want):
    x = np.array([0.13, 1.1, 3.5, 0.5], np.float32)
    got = run_reference("Cast", [x], {"to": "float8_e8m0fnu", "round_mode": mode})[0]
    assert got.dtype.name == "float8_e8m0fnu"
    np.testing.assert_array_equal(got.astype(np.float32), want)


def test_sub_byte_integers_round_trip_and_truncate():
    x = np.array([-8.7, -1.5, 0.4, 7.9], np.float32)
    q = cast(x, "int4")
    assert q.dtype.name == "int4" and cast(q, "int8").tolist() == [-8, -1, 0, 7]
    assert cast(np.array([0, 1, 2, 3], np.uint8), "uint2").astype(np.int32).tolist() == [0, 1, 2, 3]


def test_reference_kernels_compute_widened(rng):
    x = rng.standard_normal((3, 7)).astype(np.float32).astype(ml_dtypes.bfloat16)
    g = Graph(
        inputs={"x": TensorInfo((3, 7), "bfloat16")},
        outputs=["y", "m"],
        nodes=[
            Node("Softmax", ["x"], ["s"], {"axis": -1}),
            Node("Mul", ["s", "x"], ["y"]),
            Node("ReduceMax", ["x"], ["m"], {"axes": [1]}),
        ],
    )
    out = mnn.Session(g, backend="reference").run({"x": x})
    wide = x.astype(np.float32)
    e = np.exp(wide - wide.max(-1, keepdims=True))
    s = (e / e.sum(-1, keepdims=True)).astype(ml_dtypes.bfloat16).astype(np.float32)
    want = (s * wide).astype(ml_dtypes.bfloat16)
    assert out["y"].dtype.name == "bfloat16"
    np.testing.assert_allclose(out["y"].astype(np.float32), want.astype(np.float32), rtol=2**-7)
    np.testing.assert_array_equal(out["m"].astype(np.float32), wide.max(1, keepdims=True))


@pytest.mark.parametrize("dtype", LOW_PRECISION_DTYPES)
def test_mnn_format_stores_low_precision_initializers(tmp_path, rng, dtype):
    values = rng.standard_normal((4, 5)).astype(np.float32)
    if dtype in ("int4", "uint4", "int2", "uint2"):  # within the range of the narrowest (int2: -2..1)
        values = np.clip(np.rint(values), 0 if dtype.startswith("u") else -2, 1)
    w = cast(values, dtype)
    g = Graph(
        inputs={"x": TensorInfo((4, 5), "float32")},
        outputs=["y"],
        nodes=[Node("Cast", ["w"], ["wf"], {"to": "float32"}), Node("Add", ["x", "wf"], ["y"])],
        initializers={"w": w},
    )
    mnn.save(g, tmp_path / "m.mnn")
    back = mnn.load(tmp_path / "m.mnn")
    assert back.initializers["w"].dtype == w.dtype
    np.testing.assert_array_equal(back.initializers["w"].view(np.uint8), w.view(np.uint8))


@pytest.mark.parametrize(
    "zp_type, zp_value", [("INT4", 1), ("UINT4", 8), ("INT16", -300), ("FLOAT8E4M3FN", 0.0), ("FLOAT8E5M2", 0.0)]
)
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_dequantize_beyond_int8_matches_onnxruntime(rng, zp_type, zp_value, per_axis):
    """x -> QuantizeLinear (int4, int16, float8 ...) -> DequantizeLinear -> float32, against ONNX Runtime."""
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from mnn_core.convert import import_onnx

    code = getattr(TensorProto, zp_type)
    n = 3 if per_axis else 1
    scale = helper.make_tensor("s", TensorProto.FLOAT, [n] if per_axis else [], [0.07, 0.2, 1.3][:n])
    zp = helper.make_tensor("z", code, [n] if per_axis else [], [zp_value] * n)
    axis = {"axis": 1} if per_axis else {}
    m = helper.make_model(
        helper.make_graph(
            [
                helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], **axis),
                helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], **axis),
            ],
            "qdq",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
            initializer=[scale, zp],
        ),
        opset_imports=[helper.make_opsetid("", 21)],
    )
    x = (rng.standard_normal((4, 3)) * 3).astype(np.float32)
    x[0, 0] = 1e4  # saturates
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    graph = import_onnx(m)
    got = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_ml_dtypes_loads_on_first_use_only(tmp_path):
    """Importing mnn and running a float32 model leave ml_dtypes (slow to import) unloaded; the first
    low-precision value loads it: a bfloat16 Cast traced and run, and a .mnn file holding bfloat16."""
    import subprocess
    import sys

    path = str(tmp_path / "bf16.mnn")
    code = f"""
import sys, numpy as np, mnn_core as mnn
from mnn_core.graph.ir import Graph, Node, TensorInfo
g = Graph(name="f32")
g.inputs["x"] = TensorInfo((2, 3), "float32")
g.nodes.append(Node("Relu", ["x"], ["y"], {{}}, "relu"))
g.outputs = ["y"]
mnn.Session(g, backend="reference").run({{"x": np.ones((2, 3), np.float32)}})
print("after float32:", "ml_dtypes" in sys.modules)
g = Graph(name="bf16")
g.inputs["x"] = TensorInfo((2, 3), "float32")
g.nodes.append(Node("Cast", ["x"], ["h"], {{"to": "bfloat16"}}, "down"))
g.nodes.append(Node("Cast", ["h"], ["y"], {{"to": "float32"}}, "up"))
g.outputs = ["y", "h"]
out = mnn.Session(g, backend="reference").run({{"x": np.full((2, 3), 1.00390625, np.float32)}})
print("bfloat16:", out["h"].dtype.name, float(out["y"][0, 0]))
w = Graph(name="bf16-weight")
w.inputs["x"] = TensorInfo((2, 3), "float32")
w.initializers["c"] = out["h"]
w.nodes.append(Node("Cast", ["c"], ["z"], {{"to": "float32"}}, "widen"))
w.nodes.append(Node("Add", ["x", "z"], ["y"], {{}}, "add"))
w.outputs = ["y"]
mnn.save(w, {path!r})
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "after float32: False" in out
    assert "bfloat16: bfloat16 1.0" in out  # 1 + 2**-8 rounds to even in bfloat16's 8-bit mantissa
    load = f"""
import sys, mnn_core as mnn
import numpy as np
g = mnn.load({path!r})
y = mnn.Session(g, backend="reference").run({{"x": np.zeros((2, 3), np.float32)}})["y"]
print("loaded:", g.initializers["c"].dtype.name, float(y.sum()))
"""
    out = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, check=True).stdout
    assert "loaded: bfloat16 6.0" in out
