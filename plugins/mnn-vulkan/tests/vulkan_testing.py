"""Helpers shared by the mnn-vulkan tests (conftest.py sets up the environment first)."""

from __future__ import annotations

import pytest

from mnn_core.plugins import get_plugins


def vulkan_backend():
    return get_plugins().backends.get("vulkan")


def unavailable_reason() -> str:
    backend = vulkan_backend()
    if backend is None:
        record = next((r for r in get_plugins().records if r.name == "vulkan"), None)
        return f"mnn-vulkan is not loaded ({record.error if record else 'not installed'})"
    avail = backend.availability()
    return "" if avail else avail.reason


needs_vulkan = pytest.mark.skipif(bool(unavailable_reason()), reason=f"no Vulkan device: {unavailable_reason()}")


def last_segment_shaders(sess) -> list:
    """The shaders of the last Vulkan segment that runs only nodes of `sess`'s plan (fused "a+b" included)."""
    import mnn_vulkan

    names = {p.node for p in sess.plan.placements}
    return [s for s in mnn_vulkan.segments().values() if s.names and set(s.names) <= names][-1].shaders


def check_vulkan(graph, feeds, options: dict, rtol: float = 1e-4) -> list:
    """Runs `graph` on Vulkan (fallback off, `options`) and on the reference backend, asserts the outputs agree
    within `rtol` (absolute: rtol times the reference's magnitude), and returns the shaders that ran."""
    import numpy as np

    import mnn_core as mnn

    want = mnn.Session(graph, backend="reference").run(feeds)
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options=options)
    got = sess.run(feeds)
    for name, ref in want.items():
        np.testing.assert_allclose(got[name], ref, rtol=rtol, atol=rtol * max(1.0, float(np.abs(ref).max())))
    return last_segment_shaders(sess)


def matmul_case(rng, a_shape, b_shape):
    """A MatMul of input "x" (`a_shape`) by a random constant (`b_shape`), and random feeds for "x"."""
    import mnn_core as mnn

    b = mnn.GraphBuilder()
    x = b.input("x", a_shape)
    b.output(b.MatMul(x, b.const(rng.standard_normal(b_shape).astype("float32"))), "y")
    return b.build(), {"x": rng.standard_normal(a_shape).astype("float32")}


def gemm_case(rng, m: int, k: int, n: int, trans_a: int, trans_b: int, bias_shape):
    """Relu(Gemm(x, W, C)) with alpha 0.5 and beta 2, the transposes asked for and a random bias of `bias_shape`
    (None: no bias), and random feeds for "x"."""
    import mnn_core as mnn

    b = mnn.GraphBuilder()
    x = b.input("x", (k, m) if trans_a else (m, k))
    w = b.const(rng.standard_normal((n, k) if trans_b else (k, n)).astype("float32"))
    c = None if bias_shape is None else b.const(rng.standard_normal(bias_shape).astype("float32"))
    b.output(b.Relu(b.Gemm(x, w, c, transA=trans_a, transB=trans_b, alpha=0.5, beta=2.0)), "y")
    return b.build(), {"x": rng.standard_normal((k, m) if trans_a else (m, k)).astype("float32")}
