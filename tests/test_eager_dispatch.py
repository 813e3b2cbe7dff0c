"""Eager dispatch (mnn_core.express.dispatch): eager ops on the best host backend's kernels.

Every result is checked against the same code run on the numpy reference (`dispatch.using("reference")`),
forward and gradients, on random inputs of odd shapes; where mnn-x86 is available the ops must really
have run there (dispatch.placement()).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mnn_core import express as E
from mnn_core import optim
from mnn_core.errors import MnnError
from mnn_core.express import _eager, dispatch
from mnn_core.express import functional as F
from mnn_core.express.device import set_default_device
from mnn_core.testing.models import lenet
from mnn_core.testing.required import check_required, unavailable_reason

check_required("x86")
X86 = unavailable_reason("x86") == ""
needs_x86 = pytest.mark.skipif(not X86, reason=f"x86 backend unavailable: {unavailable_reason('x86')}")


def _inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _run(fn, arrays, seed=0):
    """fn's output and the gradients of a random projection of it, for each input."""
    xs = [E.Var(a, requires_grad=True) for a in arrays]
    y = fn(*xs)
    w = np.random.default_rng(seed + 1).standard_normal(y.shape).astype(np.float32)
    grads = E.grad((y * E.Var(w)).sum(), xs)
    return [y.numpy().copy()] + [None if g is None else g.numpy().copy() for g in grads]


CASES = {
    "conv": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [(3, 5, 11, 9), (7, 5, 3, 3), (7,)], ["Conv"]),
    "conv-strided": (
        lambda x, w: F.conv2d(x, w, stride=2, padding=(0, 2), dilation=2),
        [(2, 3, 13, 10), (4, 3, 3, 5)],
        ["Conv", "ConvGradInput", "ConvGradWeight"],
    ),
    "conv-groups": (lambda x, w, b: F.conv2d(x, w, b, groups=2), [(2, 6, 9, 7), (4, 3, 3, 3), (4,)], ["Conv"]),
    "lenet-conv-relu-pool": (
        lambda x, w, b: F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=2)), 2),
        [(5, 1, 15, 13), (6, 1, 5, 5), (6,)],
        ["Conv", "MaxPool", "MaxPoolGrad", "ReluGrad"],
    ),
    "maxpool-3x3": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1), [(2, 3, 11, 8)], ["MaxPool"]),
    "avgpool": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), [(2, 3, 11, 8)], ["AveragePool"]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(13, 17), (11, 17), (11,)], ["Gemm", "SumToShape"]),
    "mlp": (lambda x, w1, w2: F.linear(F.relu(F.linear(x, w1)), w2), [(9, 31), (19, 31), (5, 19)], ["Gemm"]),
    "matmul-3d": (lambda a, b: a @ b, [(2, 5, 7), (7, 3)], ["MatMul"]),
    "activations": (lambda x: F.sigmoid(x) + F.tanh(x) * F.gelu(x) - F.leaky_relu(x, 0.1), [(7, 13)], ["Sigmoid"]),
    "softmax": (lambda x: F.softmax(x, 1) + F.log_softmax(x, 1), [(5, 11)], ["Softmax"]),
    "broadcast": (lambda a, b: (a + b) * b - a / (b * b + 1), [(5, 1, 7), (3, 7)], ["Add", "Mul"]),
    "reductions": (lambda x: F.sum(x, 1) + F.mean(x, 1), [(4, 9, 6)], ["ReduceSum"]),
    "layer-norm": (lambda x, g, b: F.layer_norm(x, 10, g, b), [(4, 9, 10), (10,), (10,)], ["LayerNormalization"]),
    "batch-norm": (lambda x, g, b: F.batch_norm(x, weight=g, bias=b, training=True), [(6, 5, 7, 3), (5,), (5,)], []),
    "transposed-input": (lambda x, w: F.relu(x.transpose(0, 1)) @ w, [(7, 5), (7, 3)], ["Relu"]),
    "concat-slice": (lambda a, b: F.cat([a, b], 1)[:, 1:6] * 2.0, [(3, 4), (3, 5)], []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_dispatched_ops_match_the_reference(name):
    fn, shapes, on_x86 = CASES[name]
    arrays = _inputs(shapes, seed=len(name))
    with dispatch.using("reference"):
        want = _run(fn, arrays)
        assert set(sum(dispatch.placement().values(), [])) <= {"reference"}
    got = _run(fn, arrays)
    placed = dispatch.placement()
    for i, (g, w) in enumerate(zip(got, want)):
        what = "output" if i == 0 else f"gradient of input {i - 1}"
        np.testing.assert_allclose(
            g, w, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(w).max())), err_msg=f"{name}: {what}"
        )
    if X86:
        for op in on_x86:
            assert placed.get(op) == ["x86"], f"{name}: {op} ran on {placed.get(op)}, not x86"


def _lenet():
    E.manual_seed(3)
    return lenet()


def _train(steps=6):
    model = _lenet()
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(7)
    losses = []
    for _ in range(steps):
        x, y = rng.standard_normal((16, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 16)
        loss = F.cross_entropy(model(E.Var(x)), E.Var(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.copy() for k, v in model.state_dict().items()}


def test_lenet_training_matches_the_reference():
    with dispatch.using("reference"):
        want, want_state = _train()
    got, state = _train()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)
    for k in want_state:
        np.testing.assert_allclose(state[k], want_state[k], rtol=1e-3, atol=1e-4, err_msg=k)
    if X86:  # every op with a kernel ran there, the optimizer's updates included
        placed = dispatch.placement()
        off = {op: b for op, b in placed.items() if b != ["x86"] and op not in dispatch.VIEW_OPS}
        assert not off, f"ops left on the reference: {off}"
        assert placed["SGDMomentumUpdate"] == ["x86"]


@needs_x86
def test_two_threads_give_the_same_results():
    arrays = _inputs([(4, 3, 12, 12), (8, 3, 3, 3)], seed=5)
    fn = CASES["conv-strided"][0]
    one = _run(fn, arrays)
    with dispatch.using(threads=2):
        assert dispatch.get_num_threads() == 2
        two = _run(fn, arrays)
    assert dispatch.get_num_threads() == 1
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_outputs_from_the_block_cache_never_share_memory():
    """Large outputs reuse freed blocks: ones still alive must keep their own values."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((64, 257)).astype(np.float32) for _ in range(12)]  # 64 KiB and more each
    kept = []
    for x in xs:
        kept.append(F.relu(E.Var(x)))
        F.relu(E.Var(x * 2))  # freed at once: its block goes back to the cache for the next call
    for x, y in zip(xs, kept):
        np.testing.assert_array_equal(y.numpy(), np.maximum(x, 0))
    assert len({y.numpy().ctypes.data for y in kept}) == len(kept)


def test_cache_limit_and_empty_cache():
    before = _eager.cache_limit()
    try:
        F.relu(E.Var(np.ones((128, 256), np.float32)))
        _eager.set_cache_limit(0)
        assert _eager.cached_bytes() == 0
        F.relu(E.Var(np.ones((128, 256), np.float32)))  # freed, not kept
        assert _eager.cached_bytes() == 0
    finally:
        _eager.set_cache_limit(before)
    _eager.empty_cache()
    assert _eager.cached_bytes() == 0


def test_threads_run_eager_ops_at_once():
    """Each thread prepares its own executions (one may not run on two threads at once)."""
    arrays = _inputs([(2, 3, 10, 10), (4, 3, 3, 3), (4,)], seed=9)
    fn = CASES["conv"][0]
    with dispatch.using("reference"):
        want = _run(fn, arrays)
    errors, results = [], []

    def work():
        try:
            for _ in range(20):
                results.append(_run(fn, arrays))
        except Exception as exc:  # reported below: pytest sees nothing raised in a thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 60
    for got in results:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_the_default_device_chooses_the_backend():
    x = E.Var(np.random.default_rng(1).standard_normal((64, 300)).astype(np.float32))
    try:
        set_default_device("reference")
        F.relu(x)
        assert dispatch.placement()["Relu"] == ["reference"]
    finally:
        set_default_device("cpu")
    F.relu(x)
    assert dispatch.placement()["Relu"] == (["x86"] if X86 else ["reference"])


def test_bad_settings_are_errors():
    with pytest.raises(MnnError, match="positive int"):
        dispatch.set_num_threads(0)
    with pytest.raises(MnnError, match="no backend 'nope'"):
        dispatch.set_backend("nope")
    assert dispatch.get_backend() == "auto"
    with dispatch.using("reference"):
        assert dispatch.get_backend() == "reference"
    assert dispatch.get_backend() == "auto"


def test_a_lazy_trace_is_not_dispatched():
    with E.lazy("g") as t:
        t.output(F.relu(t.input("x", ("N", 3))), "y")
    assert [n.op for n in t.build().nodes] == ["Relu"]
