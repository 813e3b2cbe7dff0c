"""Threads (Session(threads=...)): the GEMM / convolution tiles, depthwise planes, element-wise runs and
row-wise ops split across 2 and 3 threads give exactly the outputs of one thread (every output element
is computed by the same instructions; parallel.h), and match the reference backend. Odd sizes, so the
parts end inside tiles, images and vectors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(11)
THREADS = (1, 2, 3)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _conv(x, o, k, group=1, stride=1, pad=0, dil=1, bias=True, act=None):
    c = x.shape[1]
    ins = [x, f32(o, c // group, k, k, scale=0.3)] + ([f32(o)] if bias else [])
    attrs = {"group": group, "strides": [stride] * 2, "pads": [pad] * 4, "dilations": [dil] * 2}
    if act:
        attrs["activation"] = act
    return ("Conv", ins, attrs, True)


#: each large enough to be split into 3 parts (csrc/threads.c: 64K multiply-adds, 16K elements a part)
CASES = {
    "conv3x3-winograd": _conv(f32(2, 5, 23, 21), 7, 3, pad=1),
    "conv3x3-s2-im2col": _conv(f32(1, 8, 31, 29), 13, 3, stride=2, pad=1),
    "conv1x1": _conv(f32(1, 29, 13, 11), 47, 1),
    "conv1x1-small-image": _conv(f32(1, 230, 3, 3), 101, 1),  # fewer chunks than threads: the GEMM is split
    "conv5x5-dilated": _conv(f32(1, 8, 15, 16), 9, 5, pad=2, dil=2, bias=False),
    "conv-grouped": _conv(f32(2, 12, 19, 21), 12, 3, group=3, pad=1),
    "depthwise3x3": _conv(f32(2, 13, 37, 41), 13, 3, group=13, pad=1),  # parts cut inside an image
    "depthwise3x3-s2": _conv(f32(2, 23, 45, 43), 23, 3, group=23, stride=2, pad=1),
    "depthwise5x5": _conv(f32(2, 9, 25, 27), 9, 5, group=9, pad=2),
    "convtranspose": ("ConvTranspose", [f32(1, 40, 9, 11), f32(40, 8, 3, 3, scale=0.3)], {"strides": [2, 2]}, True),
    "matmul-const": ("MatMul", [f32(97, 53), f32(53, 45)], {}, True),
    "matmul-tall": ("MatMul", [f32(301, 45), f32(45, 15)], {}, True),
    "matmul-runtime": ("MatMul", [f32(3, 41, 37), f32(37, 53)], {}, False),
    "matmul-batched": ("MatMul", [f32(3, 67, 45), f32(3, 45, 71)], {}, False),
    "gemm-bias": ("Gemm", [f32(33, 70), f32(91, 70), f32(91)], {"transB": 1}, True),
    "add-broadcast": ("Add", [f32(3, 150, 161), f32(150, 1)], {}, False),
    "mul-dense": ("Mul", [f32(70001), f32(70001)], {}, False),
    "sub-scalar": ("Sub", [f32(3, 23456), f32(1)], {}, False),
    "relu": ("Relu", [f32(50001)], {}, False),
    "sigmoid": ("Sigmoid", [f32(7, 7001)], {}, False),
    "exp": ("Exp", [f32(70001)], {}, False),
    "erf": ("Erf", [f32(5, 9999)], {}, False),
    "softmax": ("Softmax", [f32(97, 513)], {"axis": -1}, False),
    "layernorm": ("LayerNormalization", [f32(197, 257), f32(257), f32(257)], {"axis": -1}, True),
    "instancenorm": ("InstanceNormalization", [f32(2, 9, 63, 65), f32(9), f32(9)], {}, True),
    "batchnorm": (
        "BatchNormalization",
        [f32(2, 9, 63, 65), f32(9), f32(9), f32(9), np.abs(f32(9)) + 0.5],
        {},
        True,
    ),
    "maxpool": ("MaxPool", [f32(2, 9, 47, 45)], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1] * 4}, False),
    "avgpool": ("AveragePool", [f32(2, 7, 31, 33)], {"kernel_shape": [3, 3], "pads": [1] * 4}, False),
}


def _qconv(x_shape, o, k, group=1, stride=1, pad=0):
    c = x_shape[1]
    ins = [
        RNG.integers(0, 256, x_shape).astype(np.uint8),
        np.float32(0.02),
        np.uint8(128),
        RNG.integers(-127, 128, (o, c // group, k, k)).astype(np.int8),
        (RNG.random(o) * 0.01 + 0.001).astype(np.float32),
        np.zeros(o, np.int8),
        np.float32(0.7),
        np.uint8(120),
        RNG.integers(-2000, 2000, o).astype(np.int32),
    ]
    return ("QLinearConv", ins, {"group": group, "strides": [stride] * 2, "pads": [pad] * 4}, True)


#: int8 (bit-exact with the reference, so compared exactly at every thread count)
INT8_CASES = {
    "qconv3x3": _qconv((1, 16, 23, 21), 24, 3, pad=1),
    "qconv1x1-n2": _qconv((2, 32, 13, 11), 40, 1),
    "qconv-grouped": _qconv((1, 12, 17, 19), 12, 3, group=3, stride=2, pad=1),
    "qdepthwise": _qconv((2, 13, 41, 37), 13, 3, group=13, pad=1),
    "qmatmul": (
        "QLinearMatMul",
        [
            RNG.integers(0, 256, (3, 37, 61)).astype(np.uint8),
            np.float32(0.03),
            np.uint8(125),
            RNG.integers(0, 256, (61, 53)).astype(np.uint8),
            np.float32(0.02),
            np.uint8(130),
            np.float32(0.5),
            np.uint8(128),
        ],
        {},
        True,
    ),
}


def _run(graph, feeds, threads, precision="normal"):
    from mnn_core import Session

    sess = Session(graph, backend="arm", fallback=False, threads=threads, precision=precision)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    return sess.run(dict(feeds))


@needs_arm
@pytest.mark.parametrize("name", sorted(CASES))
def test_threads_give_one_threads_result(name):
    from mnn_core import Session

    op, ins, attrs, const = CASES[name]
    graph, feeds = conformance_graph(op, ins, attrs, const)
    want = Session(graph, backend="reference").run(dict(feeds))
    one = _run(graph, feeds, 1)
    for key, ref in want.items():
        np.testing.assert_allclose(one[key], ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())))
    for t in THREADS[1:]:
        got = _run(graph, feeds, t)
        for key in one:
            assert np.array_equal(got[key], one[key]), f"{name}: threads={t} differs from threads=1"


@needs_arm
@pytest.mark.parametrize(
    "name", ["conv1x1", "conv3x3-s2-im2col", "depthwise3x3", "matmul-const", "add-broadcast", "relu"]
)
def test_threads_in_the_fp16_domain(name):
    from mnn_arm import paths

    if not paths.runnable("fp16"):
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    op, ins, attrs, const = CASES[name]
    graph, feeds = conformance_graph(op, ins, attrs, const)
    one = _run(graph, feeds, 1, "low")
    for t in THREADS[1:]:
        got = _run(graph, feeds, t, "low")
        for key in one:
            assert np.array_equal(got[key], one[key]), f"{name}: threads={t} differs from threads=1 (fp16)"


@needs_arm
def test_the_session_thread_count_reaches_the_kernels():
    from mnn_arm import _arm
    from mnn_arm._common import KERNELS

    from mnn_core.backend import PrepareContext
    from mnn_core.ops import all_schemas

    op, ins, attrs, const = CASES["conv1x1"]
    attrs = {**{k: a.default for k, a in all_schemas()[op].attrs.items()}, **attrs}
    graph, feeds = conformance_graph(op, ins, attrs, const)
    infos = graph.infer()
    node = graph.nodes[0]
    io = [infos[n] for n in node.inputs], [infos[n] for n in node.outputs]
    ex = KERNELS["Conv"].impl(node, *io, graph.initializers, PrepareContext(threads=3))
    assert ex.threads == 3
    ex.set_threads(2)
    assert ex.threads == 2
    _run(graph, feeds, 3)
    assert _arm.pool_workers() >= 2  # a region of 3 parts ran on the pool's threads


@needs_arm
@pytest.mark.parametrize("name", sorted(INT8_CASES))
def test_int8_threads_bit_exact(name):
    from mnn_core import Session

    op, ins, attrs, const = INT8_CASES[name]
    graph, feeds = conformance_graph(op, ins, attrs, const)
    want = Session(graph, backend="reference").run(dict(feeds))
    for t in THREADS:
        got = _run(graph, feeds, t)
        for key, ref in want.items():
            np.testing.assert_array_equal(got[key], ref, err_msg=f"{name} threads={t}")


@needs_arm
def test_sessions_on_several_python_threads_at_once():
    """Two sessions with threads=3 run at once from Python threads (the core runs kernels without the GIL):
    one region at a time uses the pool, the other runs its parts on its own thread; no deadlock, same bits."""
    import threading

    op, ins, attrs, const = CASES["conv3x3-s2-im2col"]
    graph, feeds = conformance_graph(op, ins, attrs, const)
    one = _run(graph, feeds, 1)["out0"]
    from mnn_core import Session

    sessions = [Session(graph, backend="arm", fallback=False, threads=3) for _ in range(2)]
    results, errors = [], []

    def work(sess):
        try:
            for _ in range(5):
                results.append(sess.run(dict(feeds))["out0"])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not any(w.is_alive() for w in workers), "a session hung"
    assert not errors, errors
    assert len(results) == 10 and all(np.array_equal(r, one) for r in results)


@needs_arm
def test_a_forked_child_starts_its_own_pool():
    """After the parent's pool ran, a forked child (which has none of its threads) runs threaded kernels."""
    import os
    import signal

    op, ins, attrs, const = CASES["conv1x1"]
    graph, feeds = conformance_graph(op, ins, attrs, const)
    one = _run(graph, feeds, 3)["out0"]  # the parent's pool exists now
    pid = os.fork()
    if pid == 0:  # the child: exit 0 when its 3-thread run gives the parent's bits; SIGALRM if it hangs
        signal.alarm(60)
        ok = False
        try:
            ok = np.array_equal(_run(graph, feeds, 3)["out0"], one)
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}"
