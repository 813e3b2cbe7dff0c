"""Depthwise Conv on Arm through Session: the register-held 3x3 / 5x5 kernels (csrc/fp32.c, fp16_body.h)
at the strides PP-LCNet and MobileNet use ((1, 1), (2, 2), (2, 1), (1, 2)) and at a stride down they do
not (3), on rows of 2 and 3 under padding 2, odd widths, with Clip fused and without; the fp16 path's 7x7
stride-1 kernel (ConvNeXt's: two output rows a pass) on even and odd row counts, rows narrower than a
vector and with a partial last vector; against the reference backend (fp32 within 1e-4 of the output's
magnitude, 3 threads giving one thread's bits; precision="low", in the fp16 domain and with fp16 arithmetic
on fp32 tensors, within 1e-2)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(47)


def _case(n, c, h, w, k, strides, pad, act="none"):
    ins = [
        RNG.standard_normal((n, c, h, w)).astype(np.float32),
        (RNG.standard_normal((c, 1, k, k)) * 0.3).astype(np.float32),
        RNG.standard_normal(c).astype(np.float32),
    ]
    attrs = {"group": c, "strides": list(strides), "pads": [pad] * 4, "dilations": [1, 1], "activation": act}
    if act == "clip":
        attrs.update(act_alpha=0.0, act_beta=6.0)
    return ins, attrs


CASES = {
    "5x5-rows2": _case(1, 9, 2, 37, 5, (1, 1), 2),
    "5x5-rows3-clip": _case(2, 7, 3, 41, 5, (1, 1), 2, "clip"),
    "5x5-s21": _case(1, 6, 12, 19, 5, (2, 1), 2),
    "5x5-s12": _case(1, 5, 9, 33, 5, (1, 2), 2, "relu"),
    "5x5-s22": _case(1, 4, 11, 21, 5, (2, 2), 2),
    "5x5-s31": _case(1, 3, 13, 10, 5, (3, 1), 1),
    "3x3-s21": _case(1, 8, 24, 23, 3, (2, 1), 1, "clip"),
    "3x3-s12": _case(2, 5, 12, 35, 3, (1, 2), 1),
    "3x3-narrow": _case(1, 6, 5, 3, 3, (1, 1), 1),
    "7x7-convnext": _case(1, 5, 14, 14, 7, (1, 1), 3),
    "7x7-odd-rows-clip": _case(2, 3, 9, 21, 7, (1, 1), 3, "clip"),
    "7x7-narrow-relu": _case(1, 4, 5, 3, 7, (1, 1), 3, "relu"),
    "7x7-wide-pad2": _case(1, 2, 8, 37, 7, (1, 1), 2),
    "7x7-s2": _case(1, 3, 11, 12, 7, (2, 2), 3),
}


def _run(graph, feeds, **kw):
    from mnn_core import Session

    sess = Session(graph, backend="arm", fallback=False, **kw)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    return sess.run(dict(feeds))["out0"]


def _want(name):
    from mnn_core import Session

    ins, attrs = CASES[name]
    graph, feeds = conformance_graph("Conv", ins, attrs, True)
    return graph, feeds, Session(graph, backend="reference").run(dict(feeds))["out0"]


@needs_arm
@pytest.mark.parametrize("name", sorted(CASES))
def test_depthwise_matches_reference(name):
    graph, feeds, want = _want(name)
    one = _run(graph, feeds)
    np.testing.assert_allclose(one, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert np.array_equal(_run(graph, feeds, threads=3), one)


@needs_arm
@pytest.mark.parametrize("name", sorted(CASES))
def test_depthwise_fp16_domain(name):
    from mnn_arm import paths

    if not paths.runnable("fp16"):
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    graph, feeds, want = _want(name)
    for options in ({}, {"arm.fp16_activations": False}):
        got = _run(graph, feeds, precision="low", options=options)
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * float(np.abs(want).max()), err_msg=str(options))
