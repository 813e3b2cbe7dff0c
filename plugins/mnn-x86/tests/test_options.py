"""Session options of the x86 backend: a misspelt name or a bad value is an error at once, whatever the model."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import one_op_graph

from mnn_core.errors import MnnError
from mnn_core.session import Session


def _relu_session(options):
    graph, feeds = one_op_graph("Relu", [np.ones((2, 3), np.float32)], {})
    return Session(graph, backend="x86", fallback=False, options=options), feeds


@pytest.mark.parametrize(
    "options, message",
    [
        ({"x86.winograd": "maybe"}, r"x86.winograd='maybe'; use 'auto', 'on' or 'off'"),
        ({"x86.winogard": "on"}, r"unknown option\(s\) x86.winogard; the options are x86.isa"),
        ({"x86.bf16": "yes"}, r"x86.bf16"),
    ],
)
def test_bad_options_fail_even_where_no_op_reads_them(options, message):
    with pytest.raises(MnnError, match=message):
        sess, feeds = _relu_session(options)
        sess.run(feeds)


def test_good_options_pass():
    sess, feeds = _relu_session({"x86.winograd": "off", "x86.direct": "ON", "x86.layouts": "auto"})
    np.testing.assert_array_equal(sess.run(feeds)["out"], np.ones((2, 3), np.float32))


@pytest.mark.parametrize("bounds", [{"max": 1.0}, {"min": 0.0}, {}])
def test_clip_with_an_absent_bound_matches_the_reference_on_infinities(bounds):
    """An absent bound is float32's finite extreme, so +-inf come out finite (mnn_core's clip_bounds)."""
    from mnn_core.ops import run_reference

    x = np.array([-np.inf, -2.0, 0.5, 3.0, np.inf, np.nan], np.float32)
    graph, feeds = one_op_graph("Clip", [x], bounds)
    got = Session(graph, backend="x86", fallback=False, optimize=False).run(feeds)["out"]
    np.testing.assert_array_equal(got, run_reference("Clip", [x], bounds)[0])
