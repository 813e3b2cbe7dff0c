"""Memory planner: placement is valid, near the lower bound, aliases in-place ops."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.memory._planner import lower_bound, place
from mnn_core.memory.planner import TensorUse, plan_arena


def _overlaps(a, b):
    return not (a[1] > b[2] or b[1] > a[2])


@pytest.mark.parametrize("seed", range(20))
def test_placement_never_overlaps_live_buffers(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    sizes = rng.integers(1, 5000, n).tolist()
    first = rng.integers(-1, 40, n).tolist()
    last = [f + int(rng.integers(0, 10)) for f in first]
    offsets, total = place(sizes, first, last, 64)
    for i in range(n):
        assert offsets[i] % 64 == 0 and offsets[i] + sizes[i] <= total
        for j in range(i):
            if _overlaps((None, first[i], last[i]), (None, first[j], last[j])):
                assert offsets[i] + sizes[i] <= offsets[j] or offsets[j] + sizes[j] <= offsets[i]
    assert total >= lower_bound(sizes, first, last, 64)


def test_chain_of_50_ops_is_within_5_percent_of_lower_bound():
    rng = np.random.default_rng(0)
    b = mnn.GraphBuilder("chain50")
    widths = rng.integers(16, 300, 26).tolist()
    v = b.input("x", (32, widths[0]))
    for i in range(25):  # 25 x (MatMul + Tanh) = 50 ops with varying widths
        w = b.const(rng.standard_normal((widths[i], widths[i + 1])).astype("float32") * 0.1)
        v = b.Tanh(b.MatMul(v, w))
    b.output(v, "y")
    sess = mnn.Session(b.build(), backend="reference", optimize=False)
    assert len(sess.plan) == 50
    report = sess.memory["host"]
    assert report.arena_bytes <= 1.05 * report.lower_bound_bytes, report
    assert report.arena_bytes < report.naive_bytes / 5


def test_aliases_share_a_buffer():
    uses = [TensorUse("a", 4096, -1, 0), TensorUse("b", 4096, 0, 1, alias_of="a"), TensorUse("c", 4096, 1, 2)]
    plan = plan_arena("host", uses)
    assert plan.offsets["a"] == plan.offsets["b"] != plan.offsets["c"]
    assert plan.report.arena_bytes == 8192


def test_view_ops_alias_their_input_and_take_no_step():
    b = mnn.GraphBuilder()
    x = b.input("x", (4, 6))
    y = b.Exp(x)
    z = b.Reshape(y, shape=[6, 4]) if "Reshape" in mnn.ops.all_schemas() else None
    if z is None:
        pytest.skip("Reshape not registered")
    b.output(b.Neg(z), "out")
    sess = mnn.Session(b.build(), backend="reference")
    assert sess.plan.elided == ["reshape"]
    x_val = np.arange(24, dtype="float32").reshape(4, 6) / 10
    np.testing.assert_allclose(sess.run({"x": x_val})["out"], -np.exp(x_val).reshape(6, 4), rtol=1e-6)


def test_memory_report_mentions_sizes():
    b = mnn.GraphBuilder()
    x = b.input("x", (256, 256))
    b.output(b.Exp(b.Neg(x)), "y")
    text = str(mnn.Session(b.build()).memory["host"])
    assert "arena" in text and "lower bound" in text and "MiB" in text


def test_members_at_offsets_extend_their_buffer():
    uses = [
        TensorUse("a", 128, 0, 2, alias_of="y", at=0),
        TensorUse("b", 192, 1, 2, alias_of="y", at=128),
        TensorUse("y", 320, 2, 3),
        TensorUse("t", 64, 0, 1),
        TensorUse("c", 64, 1, 2, alias_of="b", at=64),
    ]
    plan = plan_arena("host", uses)
    y = plan.offsets["y"]
    assert (plan.offsets["a"], plan.offsets["b"], plan.offsets["c"]) == (y, y + 128, y + 192)
    assert not y <= plan.offsets["t"] < y + 320  # the merged buffer lives from step 0, t beside it


def test_an_alias_cycle_is_an_error_not_a_hang():
    uses = [TensorUse("a", 64, 0, 1, alias_of="b"), TensorUse("b", 64, 0, 1, alias_of="a")]
    with pytest.raises(ValueError, match="aliases itself"):
        plan_arena("host", uses)


def test_a_long_in_place_chain_does_not_recurse():
    chain = [TensorUse(f"v{i}", 64, i, i + 1, alias_of=f"v{i - 1}") for i in range(1, 5000)]
    uses = [TensorUse("v0", 64, 0, 1), *chain]
    plan = plan_arena("host", uses)
    assert len(set(plan.offsets.values())) == 1 and plan.report.arena_bytes == 64
