"""Conv of 1 and 3 spatial axes on Arm: 1-D as the 2-D kernels over a height of 1, 3-D as im2col of the
volume + the packed GEMM (csrc/conv3d.c). Random inputs of odd sizes with strides, dilations,
asymmetric pads, groups and depthwise, against the reference backend (fp32 within 1e-4 of the output's
magnitude; 3 threads give one thread's bits), and in the fp16 domain (precision="low") within 1e-2."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(31)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _case(x_shape, o, k, group=1, strides=None, pads=None, dil=None, bias=True, act="none"):
    nd = len(x_shape) - 2
    c = x_shape[1]
    ks = [k] * nd if isinstance(k, int) else list(k)
    ins = [f32(*x_shape), f32(o, c // group, *ks, scale=0.3)] + ([f32(o)] if bias else [])
    attrs = {
        "group": group,
        "strides": strides or [1] * nd,
        "pads": pads or [0] * (2 * nd),
        "dilations": dil or [1] * nd,
        "activation": act,
    }
    return ins, attrs


CASES = {
    "3d-basic": _case((1, 3, 5, 6, 7), 4, 3, pads=[1] * 6),
    "3d-strided-dilated": _case(
        (2, 4, 9, 8, 11), 5, (3, 2, 3), strides=[2, 1, 2], dil=[1, 2, 1], pads=[1, 0, 2, 0, 1, 1]
    ),
    "3d-grouped": _case((1, 6, 5, 7, 5), 9, 3, group=3, pads=[1] * 6, bias=False),
    "3d-depthwise": _case((2, 5, 4, 9, 6), 5, 3, group=5, pads=[1, 1, 1, 1, 1, 1]),
    "3d-pointwise": _case((1, 7, 3, 5, 13), 11, 1),
    "3d-relu-big": _case((1, 8, 9, 17, 15), 13, 3, pads=[1] * 6, act="relu"),
    "1d-basic": _case((2, 5, 23), 7, 3, pads=[1, 1]),
    "1d-strided": _case((1, 6, 41), 9, 5, strides=[3], dil=[2], pads=[2, 0]),
    "1d-grouped": _case((3, 8, 17), 4, 3, group=2, bias=False),
    "1d-depthwise": _case((2, 9, 31), 9, 7, group=9, pads=[3, 3]),
    "1d-pointwise": _case((1, 12, 19), 5, 1),
}


def _run(graph, feeds, **kw):
    from mnn_core import Session

    sess = Session(graph, backend="arm", fallback=False, **kw)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    return sess.run(dict(feeds))


@needs_arm
@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_nd_matches_reference(name):
    from mnn_core import Session

    ins, attrs = CASES[name]
    graph, feeds = conformance_graph("Conv", ins, attrs, True)
    want = Session(graph, backend="reference").run(dict(feeds))["out0"]
    one = _run(graph, feeds)["out0"]
    np.testing.assert_allclose(one, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    three = _run(graph, feeds, threads=3)["out0"]
    assert np.array_equal(three, one)


@needs_arm
@pytest.mark.parametrize("name", ["3d-basic", "3d-grouped", "1d-basic", "1d-depthwise"])
def test_conv_nd_fp16_domain(name):
    from mnn_arm import paths

    from mnn_core import Session

    if not paths.runnable("fp16"):
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    ins, attrs = CASES[name]
    graph, feeds = conformance_graph("Conv", ins, attrs, True)
    want = Session(graph, backend="reference").run(dict(feeds))["out0"]
    got = _run(graph, feeds, precision="low")["out0"]
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * float(np.abs(want).max()))
