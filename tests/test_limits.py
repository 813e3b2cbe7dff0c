"""Resource limits a session keeps (docs/RELIABILITY.md): the arena bytes of a plan, the plans it keeps
(least recently used dropped first), a Loop's iterations; and the numeric edges where reference and
x86 must say what ONNX Runtime says (Clip with NaN bounds, integer bounds past 2**53, int32 bias
overflow in QLinearConv)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from mnn_test_graphs import small_cnn

import mnn_core as mnn
from mnn_core.backend.plugins import get_plugins
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.runtime.session import MAX_PLANS


def _x(rng, batch):
    return rng.standard_normal((batch, 3, 8, 8)).astype("float32")


# -- arena bytes -----------------------------------------------------------------------------------


def test_max_arena_bytes_refuses_a_plan_naming_its_size(rng):
    graph = small_cnn(rng)
    sess = mnn.Session(graph, backend="reference", max_arena_bytes=64 << 10)
    sess.run({"x": _x(rng, 1)})  # batch 1 fits in 64 KiB
    need = sess.memory["host"].arena_bytes
    with pytest.raises(
        mnn.LimitError,
        match=r"x \[64, 3, 8, 8\]: the plan needs [\d,]+ bytes of arenas "
        r"\(host [\d,]+\), more than max_arena_bytes=65,536",
    ):
        sess.run({"x": _x(rng, 64)})
    assert len(sess._plans) == 1 and sess.memory["host"].arena_bytes == need  # nothing kept, nothing changed
    x = _x(rng, 1)
    np.testing.assert_allclose(
        sess.run({"x": x})["y"], mnn.Session(graph, backend="reference").run({"x": x})["y"], rtol=1e-5
    )


def test_max_arena_bytes_from_the_environment(rng, monkeypatch):
    monkeypatch.setenv("MNN_MAX_ARENA_BYTES", "4096")
    with pytest.raises(mnn.LimitError, match="max_arena_bytes=4,096"):
        mnn.Session(small_cnn(rng, batch=8), backend="reference")
    monkeypatch.setenv("MNN_MAX_ARENA_BYTES", "lots")
    with pytest.raises(mnn.MnnError, match="MNN_MAX_ARENA_BYTES must be a positive integer, got 'lots'"):
        mnn.Session(small_cnn(rng), backend="reference")
    monkeypatch.setenv("MNN_MAX_ARENA_BYTES", "1_000_000")  # the argument wins over the environment
    assert mnn.Session(small_cnn(rng), backend="reference", max_arena_bytes=5).max_arena_bytes == 5


@pytest.mark.parametrize("bad", [0, -1, 1.5, "1", True])
def test_limits_must_be_positive_ints(rng, bad):
    for name in ("max_plans", "max_arena_bytes", "max_loop_iterations"):
        with pytest.raises(mnn.MnnError, match=rf"Session\({name}=\) must be a positive integer"):
            mnn.Session(small_cnn(rng), backend="reference", **{name: bad})


def test_max_arena_bytes_on_x86(rng):
    if "x86" not in get_plugins().backends or not get_plugins().backends["x86"].availability():
        pytest.skip("mnn-x86 is not available")
    sess = mnn.Session(small_cnn(rng), backend="x86", max_arena_bytes=1 << 20, batch_parallel="off")
    sess.run({"x": _x(rng, 2)})
    with pytest.raises(mnn.LimitError, match="more than max_arena_bytes=1,048,576"):
        sess.run({"x": _x(rng, 4096)})


# -- the plan cache --------------------------------------------------------------------------------


def test_plan_cache_is_lru_with_its_bound(rng):
    sess = mnn.Session(small_cnn(rng), backend="reference", max_plans=3)
    for batch in (1, 2, 3):
        sess.run({"x": _x(rng, batch)})
    sess.run({"x": _x(rng, 1)})  # batch 1 used again: batch 2 is now the least recently used
    sess.run({"x": _x(rng, 4)})
    kept = [key[0][0][0] for key in sess._plans]
    assert kept == [3, 1, 4]
    assert MAX_PLANS == 32 and mnn.Session(small_cnn(rng), backend="reference").max_plans == MAX_PLANS


def test_plan_cache_bound_holds_over_many_shapes(rng, monkeypatch):
    monkeypatch.setenv("MNN_MAX_PLANS", "4")
    sess = mnn.Session(small_cnn(rng), backend="reference")
    arenas = []
    for batch in range(1, 30):
        sess.run({"x": _x(rng, batch)})
        arenas.append(weakref.ref(sess._current.arenas["host"].base))
        assert len(sess._plans) <= 4
    gc.collect()
    assert sum(a() is not None for a in arenas) == 4  # the dropped plans' memory is freed


def _reshape_by_value() -> Graph:
    """y = reshape(x, shape): plans are per value of `shape` too."""
    g = Graph(
        inputs={"x": TensorInfo((4, 6), "float32"), "shape": TensorInfo((2,), "int64")},
        outputs=["y"],
        nodes=[Node("Reshape", ["x", "shape"], ["y"], name="reshape")],
    )
    g.validate()
    return g


def test_plans_for_fed_values_share_the_bound():
    sess = mnn.Session(_reshape_by_value(), backend="reference", max_plans=2)
    x = np.arange(24, dtype="float32").reshape(4, 6)
    for shape in ([2, 12], [3, 8], [6, 4], [24, 1]):
        assert sess.run({"x": x, "shape": np.array(shape)})["y"].shape == tuple(shape)
    assert len(sess._plans) == 2


# -- Loop iterations -------------------------------------------------------------------------------


def _counting_loop(trip: int | None, fed: bool = True) -> Graph:
    """y = x + the number of iterations of a loop while true (up to `trip` times). With fed=False the
    loop reads only constants, and the session's constant folding runs it."""
    body = Graph(
        inputs={"i": TensorInfo((), "int64"), "c": TensorInfo((), "bool"), "v": TensorInfo((), "int64")},
        outputs=["c2", "v2"],
        initializers={"one": np.array(1, np.int64)},
        nodes=[Node("Identity", ["c"], ["c2"], name="keep"), Node("Add", ["v", "one"], ["v2"], name="inc")],
    )
    inits = {"cond": np.array(True), "zero": np.array(0, np.int64)}
    ins = ["", "cond", "x" if fed else "zero"]
    if trip is not None:
        inits["trip"] = np.array(trip, np.int64)
        ins[0] = "trip"
    nodes = [Node("Loop", ins, ["v"], {"body": body}, name="count")]
    nodes += [Node("Identity", ["v"], ["y"], name="out")] if fed else [Node("Add", ["v", "x"], ["y"], name="out")]
    g = Graph(inputs={"x": TensorInfo((), "int64")}, outputs=["y"], initializers=inits, nodes=nodes)
    g.validate()
    return g


def test_loop_iteration_cap_stops_a_runaway_loop(monkeypatch):
    zero = {"x": np.array(0, np.int64)}
    sess = mnn.Session(_counting_loop(None), max_loop_iterations=1000)
    with pytest.raises(
        mnn.LimitError,
        match=r"node 'count' \(Loop\): Loop ran 1000 iterations \(no trip count, its "
        r"condition still true\).*Session\(max_loop_iterations=\)",
    ):
        sess.run(zero)
    assert mnn.Session(_counting_loop(1000), max_loop_iterations=1000).run({"x": np.array(1, np.int64)})["y"] == 1001
    with pytest.raises(mnn.LimitError, match="a trip count of 10000000000"):
        mnn.Session(_counting_loop(10**10), max_loop_iterations=50).run(zero)
    monkeypatch.setenv("MNN_MAX_LOOP_ITERATIONS", "7")
    with pytest.raises(mnn.LimitError, match="Loop ran 7 iterations"):
        mnn.Session(_counting_loop(8)).run(zero)
    assert mnn.Session(_counting_loop(7)).run(zero)["y"] == 7


def test_loop_iteration_cap_holds_when_folding_constants():
    with pytest.raises(
        mnn.LimitError,
        match=r"node 'count' \(Loop\), folded as its inputs are constants: Loop ran 100 "
        "iterations",
    ):
        mnn.Session(_counting_loop(None, fed=False), max_loop_iterations=100)
    sess = mnn.Session(_counting_loop(100, fed=False), max_loop_iterations=100)
    assert sess.run({"x": np.array(5, np.int64)})["y"] == 105


# -- numeric edges, against ONNX Runtime -----------------------------------------------------------

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper, numpy_helper  # noqa: E402


def _backends():
    names = ["reference"]
    x86 = get_plugins().backends.get("x86")
    if x86 is not None and x86.availability():
        names.append("x86")
    return names


def _compare(model, feeds, tmp_path, exact=True):
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    for backend in _backends():
        got = mnn.Session(str(path), backend=backend).run(feeds)["y"]
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=backend)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=backend)


def _clip_model(x: np.ndarray, lo, hi):
    inits, ins = [], ["x"]
    for name, v in (("lo", lo), ("hi", hi)):
        if v is None:
            ins.append("")
            continue
        inits.append(numpy_helper.from_array(np.array(v, x.dtype), name))
        ins.append(name)
    t = helper.np_dtype_to_tensor_dtype(x.dtype)
    g = helper.make_graph(
        [helper.make_node("Clip", ins, ["y"])],
        "clip",
        [helper.make_tensor_value_info("x", t, list(x.shape))],
        [helper.make_tensor_value_info("y", t, list(x.shape))],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("lo, hi", [(np.nan, 1.0), (-1.0, np.nan), (np.nan, np.nan), (1.0, -1.0), (-0.5, 0.5)])
def test_clip_with_nan_bounds_matches_onnxruntime(tmp_path, lo, hi):
    x = np.array([-2, -0.5, 0, 0.5, 2, np.nan, np.inf, -np.inf] * 4, "float32")
    _compare(_clip_model(x, lo, hi), {"x": x}, tmp_path)


@pytest.mark.parametrize(
    "dtype, lo, hi",
    [
        ("int32", 2**31 - 50, 2**31 - 2),
        ("int64", 2**53 + 1, 2**62),
        ("int64", -(2**62) - 1, -(2**53) - 1),
        ("uint8", 3, 254),
    ],
)
def test_clip_with_integer_bounds_is_exact(tmp_path, dtype, lo, hi):
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 0], dtype=object)
    x = np.clip(x, info.min, info.max).astype(dtype)
    _compare(_clip_model(x, lo, hi), {"x": x}, tmp_path)


def test_fused_clip_with_a_nan_bound_matches_reference(rng):
    """x86 runs Clip as its convolution's activation; NaN bounds are no bounds there too."""
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 8, 6, 6))
    w = b.const(rng.standard_normal((16, 8, 3, 3)).astype("float32"))
    b.output(b.Clip(b.Conv(x, w, pads=[1, 1, 1, 1]), min=float("nan"), max=1.0), "y")
    g = b.build()
    xv = rng.standard_normal((1, 8, 6, 6)).astype("float32")
    xv[0, 0, 0, 0] = np.nan
    want = mnn.Session(g, backend="reference").run({"x": xv})["y"]
    assert np.nanmax(want) <= 1.0 and np.nanmin(want) < -1.0  # (the NaN min bound bounds nothing)
    for backend in _backends()[1:]:
        np.testing.assert_allclose(mnn.Session(g, backend=backend).run({"x": xv})["y"], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bias", [1000, 2**31 - 1, 2**31 - 20000, -(2**31)])
def test_qlinearconv_int32_bias_wraps_as_onnxruntime(tmp_path, bias):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 255, (1, 4, 5, 5)).astype(np.uint8)
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
        numpy_helper.from_array(np.array(128, np.uint8), "xz"),
        numpy_helper.from_array(rng.integers(-100, 100, (3, 4, 3, 3)).astype(np.int8), "w"),
        numpy_helper.from_array(np.full(3, 0.01, np.float32), "ws"),
        numpy_helper.from_array(np.zeros(3, np.int8), "wz"),
        numpy_helper.from_array(np.array(0.2, np.float32), "ys"),
        numpy_helper.from_array(np.array(100, np.uint8), "yz"),
        numpy_helper.from_array(np.array([bias, -bias - 1, 0], np.int64).astype(np.int32), "b"),
    ]
    node = helper.make_node(
        "QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=[1, 1, 1, 1]
    )
    g = helper.make_graph(
        [node],
        "qconv",
        [helper.make_tensor_value_info("x", onnx.TensorProto.UINT8, [1, 4, 5, 5])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, None)],
        inits,
    )
    _compare(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), {"x": x}, tmp_path)
