"""The thread pool with every core busy (one spinning process per core, started here): results stay
right while workers lose their cores mid-item and the pool falls back to the caller alone and back
(op_threadpool.c, "starved workers"). Correctness only: no timing is asserted. The training kernels
sum in an order that does not depend on the thread count (grad_impl.h), so a LeNet step at two
threads gives the floats of one thread, bit for bit."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import compiled_lenet

# a spinning interpreter that dies with its parent (prctl PR_SET_PDEATHSIG, SIGKILL)
SPIN = "import ctypes\ntry: ctypes.CDLL(None).prctl(1, 9)\nexcept Exception: pass\nwhile True: pass"


@pytest.fixture(scope="module")
def busy_cores():
    """One CPU-bound process per core for the module's tests; stopped however they end."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(os.cpu_count() or 1)]
    try:
        yield len(procs)
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


STEPS = 30


def _train(threads: int, steps: int, backend: str = "x86"):
    """losses and final parameters of `steps` steps on batches of 64 (8 partial sums of each conv's dw)"""
    model, step = compiled_lenet(backend, threads)
    rng = np.random.default_rng(1)
    x, y = rng.random((STEPS, 64, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, (STEPS, 64))
    losses = [float(step(x[i], y[i])) for i in range(steps)]
    return losses, {k: np.array(v) for k, v in model.state_dict().items()}


def test_lenet_steps_at_two_threads_equal_one_thread_while_busy(busy_cores):
    one_loss, one_params = _train(1, STEPS)
    two_loss, two_params = _train(2, STEPS)
    assert two_loss == one_loss
    for name, p in one_params.items():
        np.testing.assert_array_equal(two_params[name], p, err_msg=name)
    ref_loss, _ = _train(1, 5, backend="reference")
    np.testing.assert_allclose(one_loss[:5], ref_loss, rtol=2e-3, atol=1e-4)
    assert one_loss[-1] < one_loss[0]


def test_inference_while_busy_matches_the_reference(busy_cores):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    from build_models import MODELS

    import mnn_core as mnn

    graph = MODELS["squeezenet1_1"](1)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    want = mnn.Session(graph, backend="reference").run({"input": x})
    one = mnn.Session(graph, backend="x86", threads=1)
    two = mnn.Session(graph, backend="x86", threads=2)
    first = one.run({"input": x})
    for _ in range(20):  # enough jobs for the pool to judge its workers, and to fall back and try again
        for sess in (two, one):
            got = sess.run({"input": x})
            for name, w in want.items():
                np.testing.assert_allclose(got[name], w, rtol=1e-3, atol=1e-4, err_msg=name)
                np.testing.assert_allclose(got[name], first[name], rtol=1e-5, atol=1e-6, err_msg=name)
