"""A Mul / Div of the scores by a constant scalar and the Softmax over the last axis that alone reads it run
as one op, arm.ScaledSoftmax (mnn_arm/fuse.py), as in an attention block; and the softmax rows' own kernel
(16 lanes an iteration, 2^t by a polynomial) on row lengths around its loops. Oracle: the reference backend,
node by node, on random inputs of odd sizes."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core.graph.evaluate import evaluate
from mnn_core.graph.ir import Graph, Node, TensorInfo

pytestmark = needs_arm


def _scores(rng, batch, m, n, d, op="Mul", c=0.125, scale_first=False, mask=False):
    """Softmax(MatMul(q, kT) op c) over the last axis, then MatMul by v; mask: -inf at some keys first."""
    g = Graph(name="scaled_softmax")
    feeds = {}
    for name, shape in (("q", (*batch, m, d)), ("kt", (*batch, d, n)), ("v", (*batch, n, 5))):
        g.inputs[name] = TensorInfo(shape, "float32")
        feeds[name] = rng.standard_normal(shape).astype(np.float32)
    x = "s"
    g.nodes.append(Node("MatMul", ["q", "kt"], [x], {}, "qk"))
    if mask:
        g.initializers["mask"] = np.where(rng.random(n) < 0.2, -np.inf, 0.0).astype(np.float32)
        g.nodes.append(Node("Add", [x, "mask"], ["masked"], {}, "mask"))
        x = "masked"
    g.initializers["c"] = np.array(c, np.float32)
    g.nodes.append(Node(op, ["c", x] if scale_first else [x, "c"], ["scaled"], {}, "scale"))
    g.nodes.append(Node("Softmax", ["scaled"], ["p"], {"axis": -1}, "softmax"))
    g.nodes.append(Node("MatMul", ["p", "v"], ["o"], {}, "pv"))
    g.outputs = ["p", "o"]
    return g, feeds


CASES = [  # batch, m, n, d, options
    ((2, 3), 13, 17, 8, {}),
    ((1, 6), 40, 100, 64, {"scale_first": True}),
    ((2,), 7, 1501, 16, {"op": "Div", "c": 8.0}),
    ((3,), 5, 3, 4, {"c": 2.5}),
    ((1, 2), 9, 35, 8, {"mask": True}),
    ((2,), 4, 16, 4, {"c": -0.5}),  # a negative scale: the generic loop, still fused
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch, m, n, d, options", CASES)
def test_scaled_softmax_matches_reference(batch, m, n, d, options, threads):
    import mnn_core as mnn

    rng = np.random.default_rng(n * 7 + m)
    g, feeds = _scores(rng, batch, m, n, d, **options)
    sess = mnn.Session(g, backend="arm", fallback=False, threads=threads)
    assert set(sess.plan.fused.get("scale+softmax", ())) == {"scale", "softmax"}, sess.plan.fused
    want = evaluate(g, feeds)
    got = sess.run(feeds)
    for name in g.outputs:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)


def test_scaled_softmax_fp16_domain():
    """Fused the same under precision="low" (the fp32 kernel on widened rows), within fp16's 1e-2."""
    from mnn_arm import paths

    import mnn_core as mnn

    if not paths.runnable("fp16"):
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    rng = np.random.default_rng(5)
    g, feeds = _scores(rng, (1, 3), 19, 70, 16, op="Div", c=4.0)
    sess = mnn.Session(g, backend="arm", fallback=False, precision="low")
    assert "scale+softmax" in sess.plan.fused, sess.plan.fused
    want, got = evaluate(g, feeds), sess.run(feeds)
    for name in g.outputs:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-2, atol=1e-2)


def test_what_is_not_fused():
    """Scaled scores another op also reads, a scale that is not a constant scalar, and a softmax over another
    axis stay unfused (and right)."""
    import mnn_core as mnn

    rng = np.random.default_rng(3)
    for change in ("read twice", "runtime scale", "vector scale", "axis"):
        g, feeds = _scores(rng, (2,), 6, 9, 4)
        if change == "read twice":
            g.outputs.append("scaled")
        elif change == "runtime scale":
            del g.initializers["c"]
            g.inputs["c"] = TensorInfo((), "float32")
            feeds["c"] = np.float32(0.25)
        elif change == "vector scale":
            g.initializers["c"] = rng.random(9).astype(np.float32)
        else:
            g.nodes[2].attrs["axis"] = 1
        sess = mnn.Session(g, backend="arm", fallback=False)
        assert sess.plan.fused == {}, (change, sess.plan.fused)
        want, got = evaluate(g, feeds), sess.run(feeds)
        for name in g.outputs:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=change)


@pytest.mark.parametrize("n", [1, 3, 4, 15, 16, 17, 33, 100])
def test_softmax_rows(n):
    """The Softmax op alone on rows around the 16- and 4-lane loops, with large and -inf scores."""
    import mnn_core as mnn

    rng = np.random.default_rng(n)
    x = (rng.standard_normal((3, 5, n)) * 10).astype(np.float32)
    x[1, 2, n // 2] = -np.inf
    x[2, 0, :] = 80.0 + x[2, 0, :] / 10
    g = Graph(name="softmax")
    g.inputs["x"] = TensorInfo(x.shape, "float32")
    g.nodes.append(Node("Softmax", ["x"], ["y"], {"axis": -1}, "softmax"))
    g.outputs = ["y"]
    got = mnn.Session(g, backend="arm", fallback=False).run({"x": x})["y"]
    np.testing.assert_allclose(got, evaluate(g, {"x": x})["y"], rtol=1e-5, atol=1e-6)
