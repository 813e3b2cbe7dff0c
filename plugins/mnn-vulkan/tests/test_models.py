"""Whole networks built with mnn_core.GraphBuilder, entirely on Vulkan
(fallback=False), against the reference backend; and what a plan looks like:
one segment (one submit per run), weights uploaded once, staging copies."""

from __future__ import annotations

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan


def _w(rng, *shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype("float32")


def small_cnn(rng, batch="N"):
    """conv-bn-relu6 stem, an inverted residual (1x1 expand, depthwise s1, 1x1
    project, residual add), a strided 3x3, max pool, resize up, concat, global
    average pool, flatten, gemm, softmax: what MobileNet/ResNet-style models use."""
    b = mnn.GraphBuilder("vk_small_cnn")
    x = b.input("x", (batch, 3, 16, 16))
    y = b.Conv(x, b.const(_w(rng, 16, 3, 3, 3)), None, pads=[1, 1, 1, 1], strides=[2, 2])
    y = b.BatchNormalization(
        y,
        b.const(rng.uniform(0.5, 1.5, 16).astype("float32")),
        b.const(_w(rng, 16)),
        b.const(_w(rng, 16)),
        b.const(rng.uniform(0.5, 2, 16).astype("float32")),
    )
    y = b.Clip(y, min=0.0, max=6.0)
    e = b.Relu(b.Conv(y, b.const(_w(rng, 32, 16, 1, 1)), b.const(_w(rng, 32))))
    d = b.Relu(b.Conv(e, b.const(_w(rng, 32, 1, 3, 3)), b.const(_w(rng, 32)), pads=[1, 1, 1, 1], group=32))
    p = b.Conv(d, b.const(_w(rng, 16, 32, 1, 1)), b.const(_w(rng, 16)))
    y = b.Add(y, p)
    s = b.Relu(b.Conv(y, b.const(_w(rng, 24, 16, 3, 3)), b.const(_w(rng, 24)), pads=[1, 1, 1, 1], strides=[2, 2]))
    m = b.MaxPool(y, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = b.Concat(s, m, axis=1)
    u = b.Resize(c, scales=[1.0, 1.0, 2.0, 2.0], mode="linear")
    g = b.GlobalAveragePool(u)
    f = b.Flatten(g, axis=1)
    logits = b.Gemm(f, b.const(_w(rng, 10, 40)), b.const(_w(rng, 10)), transB=1)
    b.output(b.Softmax(logits, axis=-1), "probs")
    return b.build()


def encoder_block(rng, seq=12, dim=32, heads=4):
    """A transformer encoder layer: multi-head self-attention and a GELU MLP, post-norm."""
    b = mnn.GraphBuilder("vk_encoder")
    x = b.input("x", ("N", seq, dim))
    hd = dim // heads

    def heads_first(t):  # (N, S, D) -> (N, H, S, hd)
        return b.Transpose(b.Reshape(t, shape=[0, seq, heads, hd]), perm=[0, 2, 1, 3])

    q = heads_first(b.Add(b.MatMul(x, b.const(_w(rng, dim, dim))), b.const(_w(rng, dim))))
    k = heads_first(b.Add(b.MatMul(x, b.const(_w(rng, dim, dim))), b.const(_w(rng, dim))))
    v = heads_first(b.Add(b.MatMul(x, b.const(_w(rng, dim, dim))), b.const(_w(rng, dim))))
    att = b.Softmax(b.Div(b.MatMul(q, b.Transpose(k, perm=[0, 1, 3, 2])), b.const(np.float32(np.sqrt(hd)))), axis=-1)
    o = b.Reshape(b.Transpose(b.MatMul(att, v), perm=[0, 2, 1, 3]), shape=[0, seq, dim])
    o = b.MatMul(o, b.const(_w(rng, dim, dim)))
    h = b.LayerNormalization(b.Add(x, o), b.const(np.ones(dim, "float32")), b.const(np.zeros(dim, "float32")))
    f = b.Gelu(b.MatMul(h, b.const(_w(rng, dim, 4 * dim))))
    f = b.MatMul(f, b.const(_w(rng, 4 * dim, dim)))
    b.output(b.LayerNormalization(b.Add(h, f), b.const(_w(rng, dim)), b.const(_w(rng, dim))), "y")
    return b.build()


def _compare(graph, feeds, rtol=1e-4, atol=1e-5, **kw):
    ref = mnn.Session(graph, backend="reference").run(feeds)
    sess = mnn.Session(graph, backend="vulkan", fallback=False, **kw)
    for _ in range(2):
        got = sess.run(feeds)
        assert set(sess.plan.backends()) == {"vulkan"}, str(sess.plan)
        for name, want in ref.items():
            np.testing.assert_allclose(got[name], want, rtol=rtol, atol=atol, err_msg=name)
    return sess


@pytest.mark.parametrize("batch, options", [(1, {}), (3, {}), (2, {"vulkan.tiles": "huge", "vulkan.splitk": 4})])
def test_small_cnn_entirely_on_vulkan(rng, batch, options):
    graph = small_cnn(rng)
    x = rng.standard_normal((batch, 3, 16, 16)).astype("float32")
    sess = _compare(graph, {"x": x}, options=options)
    sess.run({"x": x}, profile=True)
    steps = [name for name, _ in sess.profile()]
    assert sum(s.startswith("segment:vulkan") for s in steps) == 1, steps  # one command buffer, one submit


def test_encoder_block_entirely_on_vulkan(rng):
    x = rng.standard_normal((2, 12, 32)).astype("float32")
    _compare(encoder_block(rng), {"x": x}, rtol=1e-4, atol=2e-5)


def test_weights_are_uploaded_once(rng):
    graph = small_cnn(rng, batch=1)
    sess = mnn.Session(graph, backend="vulkan", fallback=False)
    arena = sess._current.arenas["vulkan"]
    writes, reads = arena.writes, arena.reads
    before = arena.buffer.context.copy_stats()
    x = rng.standard_normal((1, 3, 16, 16)).astype("float32")
    for _ in range(3):
        sess.run({"x": x})
    after = arena.buffer.context.copy_stats()
    # no weight again through Python; each run copies the input in and the output out, in C
    assert (arena.writes - writes, arena.reads - reads) == (0, 0)
    assert [after[way]["copies"] - before[way]["copies"] for way in ("in", "out")] == [3, 3]
    assert after["in"]["bytes"] - before["in"]["bytes"] == 3 * x.nbytes


def test_staging_copies_match_mapped_memory(rng):
    graph = small_cnn(rng, batch=2)
    x = rng.standard_normal((2, 3, 16, 16)).astype("float32")
    mapped = mnn.Session(graph, backend="vulkan", fallback=False).run({"x": x})["probs"]
    staged_sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": True})
    assert not staged_sess._current.arenas["vulkan"].buffer.mapped
    np.testing.assert_array_equal(staged_sess.run({"x": x})["probs"], mapped)


def test_dynamic_batch_replans_and_matches(rng):
    graph = small_cnn(rng)
    ref = mnn.Session(graph, backend="reference")
    sess = mnn.Session(graph, backend="vulkan", fallback=False)
    for batch in (2, 1, 2, 0):
        x = rng.standard_normal((batch, 3, 16, 16)).astype("float32")
        np.testing.assert_allclose(sess.run({"x": x})["probs"], ref.run({"x": x})["probs"], rtol=1e-4, atol=1e-5)


def test_gpu_profile_names_every_dispatch(rng):
    import mnn_vulkan

    graph = small_cnn(rng, batch=1)
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.profile": True})
    sess.run({"x": rng.standard_normal((1, 3, 16, 16)).astype("float32")})
    times = [t for seg in mnn_vulkan.gpu_times().values() for t in seg]
    assert times and all(ms >= 0 for _, ms in times)
    assert any("conv2d" in name for name, _ in times)


def test_unsupported_op_names_the_reason():
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 3), dtype="int64")
    b.output(b.Div(x, x), "y")
    with pytest.raises(mnn.UnsupportedOpError, match=r"vulkan: Div of int64 tensors is not implemented"):
        mnn.Session(b.build(), backend="vulkan", fallback=False)
    b = mnn.GraphBuilder()
    b.output(b.Relu(b.input("x", (2, 3), dtype="int8")), "y")
    with pytest.raises(mnn.UnsupportedOpError, match=r"vulkan: dtype int8 not in float32"):
        mnn.Session(b.build(), backend="vulkan", fallback=False)


def test_segments_around_a_declined_op_share_the_arena(rng):
    """vulkan -> reference (CumSum is not claimed) -> vulkan: two segments, one arena, copies between."""
    b = mnn.GraphBuilder()
    x = b.input("x", (4, 6))
    y = b.Relu(b.MatMul(x, b.const(_w(rng, 6, 5))))
    z = b.Add(b.CumSum(y, axis=1), y)
    b.output(z, "z")
    graph = b.build()
    sess = mnn.Session(graph, backend="vulkan")
    backends = [p.backend for p in sess.plan]
    assert "reference" in backends and backends[0] == backends[-1] == "vulkan", str(sess.plan)
    feeds = {"x": rng.standard_normal((4, 6)).astype("float32")}
    np.testing.assert_allclose(
        sess.run(feeds)["z"], mnn.Session(graph, backend="reference").run(feeds)["z"], rtol=1e-5, atol=1e-6
    )
    sess.run(feeds, profile=True)
    assert sum(name.startswith("segment:vulkan") for name, _ in sess.profile()) == 2


def test_activation_after_a_binary_op_is_fused_only_when_in_place(rng):
    import mnn_vulkan

    b = mnn.GraphBuilder()
    x, y = b.input("x", (2, 8, 5, 5)), b.input("y", (2, 8, 5, 5))
    fused = b.Clip(b.Add(x, y), min=0.0, max=0.5)  # the sum's only reader: in place, fused
    s = b.Mul(x, y)
    kept = b.Add(b.Relu(s), s)  # the product has two readers: Relu stays its own dispatch
    b.output(fused, "fused")
    b.output(kept, "kept")
    graph = b.build()
    feeds = {
        "x": rng.standard_normal((2, 8, 5, 5)).astype("float32"),
        "y": rng.standard_normal((2, 8, 5, 5)).astype("float32"),
    }
    sess = _compare(graph, feeds, options={"vulkan.profile": True})
    sess.run(feeds)
    names = [
        n for seg in mnn_vulkan.gpu_times().values() for n, _ in seg if n.split(":")[0] in {p.node for p in sess.plan}
    ]
    assert not any(n.startswith("clip") for n in names) and any(n.startswith("relu") for n in names), names


THREADS = """
import sys, threading, numpy as np, mnn_core as mnn
sys.path.insert(0, {tests!r})
from test_models import small_cnn
graph = small_cnn(np.random.default_rng(0))
errors = []
def work(seed):
    rng = np.random.default_rng(seed)
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={{"vulkan.staging": seed % 2 == 0}})
    ref = mnn.Session(graph, backend="reference")
    for _ in range(5):
        x = rng.standard_normal((2, 3, 16, 16)).astype("float32")
        errors.append(float(np.abs(sess.run({{"x": x}})["probs"] - ref.run({{"x": x}})["probs"]).max()))
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print(len(errors), max(errors))
"""


def test_sessions_in_threads_from_a_fresh_process():
    """Sessions created and run in four threads at once, the device opened by whichever comes first."""
    import os
    import subprocess
    import sys

    tests = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run(
        [sys.executable, "-c", THREADS.format(tests=tests)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    count, worst = proc.stdout.split()
    assert int(count) == 20 and float(worst) < 1e-4
