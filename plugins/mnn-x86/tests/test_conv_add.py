"""A plain 1x1 convolution, the Add of its output and a residual, and an activation after, as one op
(mnn_x86/fuse.py, x86.ConvAdd): the pointwise kernel adds the residual in registers
(csrc/pointwise_impl.h); any other path adds it in a pass after (csrc/op_conv.c).

Oracles: the same session unfused (Session(fuse=False)) and the reference backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS
from mnn_x86 import isa as x86_isa
from mnn_x86 import layouts

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)

RELU = {"activation": "relu"}


def _conv(g, rng, name, x, cin, cout, attrs=None, kernel=1):
    g.initializers[f"{name}_w"] = (rng.standard_normal((cout, cin, kernel, kernel)) * 0.3).astype(np.float32)
    g.initializers[f"{name}_b"] = rng.standard_normal(cout).astype(np.float32)
    pads = {"pads": [kernel // 2] * 4} if kernel > 1 else {}
    g.nodes.append(
        Node(
            "Conv",
            [x, f"{name}_w", f"{name}_b"],
            [name],
            {"kernel_shape": [kernel, kernel], **pads, **(attrs or {})},
            name,
        )
    )
    return name


def _block(rng, n, c, o, h, w, residual="net", act=None, read_after=True, kernel=1, conv_act=None):
    """x -> a (1x1, relu) -> b (the convolution under test) -> Add(b, residual) [-> act] -> z
    [-> a last 1x1], where the residual is a (`net`), a graph input of b's shape (`input`) or a
    constant (`constant`). With read_after, a 1x1 reads z, so z may stay NC16 (a graph output
    leaves the backend dense)."""
    g = Graph(name="residual")
    g.inputs["x"] = TensorInfo((n, c, h, w), "float32")
    feeds = {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}
    a = _conv(g, rng, "a", "x", c, o, RELU)
    b = _conv(g, rng, "b", a, o, o, conv_act, kernel=kernel)
    if residual == "input":
        g.inputs["r"] = TensorInfo((n, o, h, w), "float32")
        feeds["r"] = rng.standard_normal((n, o, h, w)).astype(np.float32)
        res = "r"
    elif residual == "constant":
        g.initializers["r"] = rng.standard_normal((n, o, h, w)).astype(np.float32)
        res = "r"
    else:
        res = a
    g.nodes.append(Node("Add", [res, b], ["s"], {}, "add"))  # the residual first: either order fuses
    z = "s"
    if act:
        op, attrs = act
        g.nodes.append(Node(op, ["s"], ["z"], dict(attrs), "act"))
        z = "z"
    g.outputs = [_conv(g, rng, "out", z, o, 5)] if read_after else [z]
    return g, feeds


def _reference(g, feeds):
    values = {**feeds, **g.initializers}
    for node in g.nodes:
        outs = run_reference(node.op, [values[n] for n in node.inputs], node.attrs)
        values.update(zip(node.outputs, outs))
    return values[g.outputs[0]]


def _sessions(g, isa, threads, layout="auto"):
    kw = {"backend": "x86", "fallback": False, "threads": threads, "options": {"x86.isa": isa, "x86.layouts": layout}}
    return Session(g, **kw), Session(g, **kw, fuse=False)


def _fused_names(act):
    return ["b", "add", "act"] if act else ["b", "add"]


ACTS = [
    None,
    ("Relu", {}),
    ("Clip", {"min": -0.5, "max": 0.75}),
    ("Sigmoid", {}),  # not done in registers: a pass over the stored tile or rows
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,o,h,w,act",
    [
        (1, 24, 32, 14, 14, None),  # MobileNetV2's 14x14 projection, smaller: whole blocks
        (1, 16, 24, 7, 9, ("Relu", {})),  # a partial block (24 of 32 lanes), 63 pixels
        (2, 20, 40, 13, 13, ("Clip", {"min": -0.5, "max": 0.75})),  # two images, 169 pixels
        (1, 8, 70, 5, 5, ("Sigmoid", {})),  # 70 channels: a partial 48-wide panel under 8x48
        (3, 12, 16, 28, 28, ("HardSigmoid", {"alpha": 0.3, "beta": 0.4})),  # more items than threads
    ],
)
def test_fused_residual_matches_unfused_and_reference(rng, isa, threads, n, c, o, h, w, act):
    g, feeds = _block(rng, n, c, o, h, w, act=act)
    fused, plain = _sessions(g, isa, threads)
    names = _fused_names(act)
    assert fused.plan.fused == ({} if isa == "scalar" or not layouts.enabled({}, isa) else {"+".join(names): names})
    got, want = fused.run(feeds)["out"], plain.run(feeds)["out"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, _reference(g, feeds), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(fused.run(feeds)["out"], got)


def _supported(level):
    return pytest.param(
        level, marks=pytest.mark.skipif(level not in x86_isa.supported(), reason=f"this CPU does not run {level}")
    )


@pytest.mark.parametrize("isa", [_supported("avx512"), _supported("avx2")])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "case,kw",
    [
        # the sum is a graph output, so it and its residual stay dense: the GEMM's path, then the
        # residual and the activation in passes over the output
        ("dense output, dense GEMM", {"read_after": False, "act": ("Relu", {})}),
        # a graph input as the residual: dense, and so the sum; the convolution's input stays NC16:
        # the pointwise kernel with a dense output adds it as it writes the rows
        ("NC16 input, dense output", {"residual": "input", "act": ("Sigmoid", {})}),
        ("a constant residual", {"residual": "constant", "act": ("Clip", {"min": 0.0, "max": 6.0})}),
        ("no activation, dense output", {"read_after": False}),
    ],
)
def test_each_path_adds_the_residual(rng, isa, threads, case, kw):
    """Under x86.layouts="on" (AVX2 too), the layouts decide which path runs the fused op; every path
    matches the unfused session and the reference."""
    g, feeds = _block(rng, 2, 12, 24, 9, 11, **kw)
    fused, plain = _sessions(g, isa, threads, layout="on")
    assert len(fused.plan.fused) == 1, case
    got = fused.run(feeds)[g.outputs[0]]
    np.testing.assert_allclose(got, plain.run(feeds)[g.outputs[0]], rtol=1e-5, atol=1e-5, err_msg=case)
    np.testing.assert_allclose(got, _reference(g, feeds), rtol=1e-4, atol=1e-4, err_msg=case)


def _needs_avx512():
    if "avx512" not in x86_isa.supported():
        pytest.skip("this CPU does not run AVX-512, where NC16 is offered by default")


def test_residual_and_sum_share_a_layout():
    """The fused op's residual and output walk the same offsets: the plan keeps them in one layout,
    NC16 between 1x1s, dense where the sum leaves the backend."""
    _needs_avx512()
    rng = np.random.default_rng(5)
    for read_after, want in ((True, layouts.NC16), (False, None)):
        g, _ = _block(rng, 1, 16, 32, 8, 8, read_after=read_after)
        sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx512"})
        assert sess.plan.fused == {"b+add": ["b", "add"]}
        assert sess.plan.layouts.get("a") == want and sess.plan.layouts.get("s") == want, str(sess.plan)


@pytest.mark.parametrize(
    "why,kw,options",
    [
        ("the convolution has its own activation", {"conv_act": RELU}, {}),
        ("a 3x3 convolution", {"kernel": 3}, {}),
        ("no NC16 offered (x86.layouts=off)", {}, {"x86.layouts": "off"}),
    ],
)
def test_what_is_not_fused(rng, why, kw, options):
    _needs_avx512()
    g, feeds = _block(rng, 1, 16, 32, 8, 8, **kw)
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx512", **options})
    assert sess.plan.fused == {}, why
    np.testing.assert_allclose(sess.run(feeds)["out"], _reference(g, feeds), rtol=1e-4, atol=1e-4)


def test_broadcast_and_shared_outputs_are_not_fused(rng):
    """An Add that broadcasts, and a convolution whose output something else reads too, keep their ops;
    an activation another op also reads stays out of the fused op."""
    _needs_avx512()
    g, feeds = _block(rng, 1, 16, 32, 8, 8)
    g.initializers["r"] = rng.standard_normal((1, 32, 1, 1)).astype(np.float32)
    g.nodes[2].inputs = ["r", "b"]  # the Add: a per-channel term
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx512"})
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["out"], _reference(g, feeds), rtol=1e-4, atol=1e-4)

    g, feeds = _block(rng, 1, 16, 32, 8, 8)
    g.outputs.append("b")  # the convolution's output leaves the graph
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx512"})
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["out"], _reference(g, feeds), rtol=1e-4, atol=1e-4)

    g, feeds = _block(rng, 1, 16, 32, 8, 8, act=("Relu", {}))
    g.outputs.append("s")  # the sum is read outside: the Relu stays its own op
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx512"})
    assert sess.plan.fused == {"b+add": ["b", "add"]}
    got = sess.run(feeds)
    np.testing.assert_allclose(got["out"], _reference(g, feeds), rtol=1e-4, atol=1e-4)


def test_an_add_of_two_convolutions_fuses_one(rng):
    """Both operands of the Add are convolutions it alone reads (a projection shortcut): one of them
    takes the Add, the other stays a Conv (two fused ops cannot replace one Add)."""
    _needs_avx512()
    g, feeds = _block(rng, 1, 16, 32, 8, 8)
    shortcut = _conv(g, rng, "shortcut", "x", 16, 32)
    next(n for n in g.nodes if n.op == "Add").inputs = [shortcut, "b"]
    g.nodes.sort(key=lambda n: ["a", "shortcut", "b", "add", "out"].index(n.name))  # (topological)
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx512"})
    assert len(sess.plan.fused) == 1 and [v for v in sess.plan.fused.values()][0][1] == "add"
    np.testing.assert_allclose(sess.run(feeds)["out"], _reference(g, feeds), rtol=1e-4, atol=1e-4)


def test_bf16_gemms_are_not_fused(rng):
    """Under precision="low" (bf16 GEMMs, where the CPU has AVX-512 BF16) no NC16 is offered, so the
    1x1 is left to the bf16 GEMM and its Add."""
    from mnn_x86 import _x86

    _needs_avx512()
    if not _x86.bf16_runs("avx512"):
        pytest.skip("this CPU does not run the bf16 GEMMs")
    g, feeds = _block(rng, 1, 64, 64, 14, 14)
    sess = Session(g, backend="x86", fallback=False, precision="low", options={"x86.isa": "avx512"})
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["out"], _reference(g, feeds), rtol=5e-2, atol=5e-1)
