"""The register-tiled GEMMs (kernels/gemm.cl), each tiling forced through "opencl.gemm" (a CPU device
takes the direct kernel by default), and the 8x8 register blocks (kernels/gemm8.cl) forced through
"opencl.gemm8", and opencl.FusedMatMul (fuse.py), against the reference backend
on odd sizes: every MatMul and Gemm sample of the op schemas, plus shapes that cross the tiles' edges."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

import mnn_core as mnn
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.testing import BackendConformance

KERNELS = ("direct", "big", "wide", "mid", "one", "b128", "b64", "n64", "n96")


def _options(tiling: str) -> dict:
    """The session options that force `tiling`: a gemm.cl tiling or "direct", or a gemm8.cl block."""
    return {"opencl.gemm8": tiling} if tiling in ("b128", "b64", "n64", "n96") else {"opencl.gemm": tiling}


@pytest.mark.parametrize("tiling", KERNELS[1:])
class TestTiledGemmConformance(BackendConformance):
    backend = "opencl"
    rtol = 1e-4
    atol = 1e-5
    ops = ("MatMul", "Gemm")

    @pytest.fixture(autouse=True)
    def _force(self, tiling):
        self.options = _options(tiling)


def _session(graph, tiling, fuse=True):
    return mnn.Session(graph, backend="opencl", fallback=False, optimize=False, fuse=fuse, options=_options(tiling))


@needs_opencl
@pytest.mark.parametrize("tiling", KERNELS)
@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((37, 29), (29, 51)),  # no dimension a multiple of any block
        ((2, 3, 17, 5), (3, 5, 70)),  # broadcast batch, K below one step
        ((4, 67, 33), (33, 1)),  # one column
        ((1, 200), (200, 130)),  # one row, K past several steps
        ((65,), (3, 65, 31)),  # 1-D A against a batch of B
        ((2, 9, 40), (40,)),  # 1-D B
        ((3, 33, 70), (70, 129)),  # a shared B: A's batch folded into rows
    ],
)
def test_matmul_tilings_match_reference(rng, tiling, a_shape, b_shape):
    a = rng.uniform(-1, 1, a_shape).astype("float32")
    b = rng.uniform(-1, 1, b_shape).astype("float32")
    graph = Graph(
        inputs={"a": TensorInfo(a_shape, "float32"), "b": TensorInfo(b_shape, "float32")},
        nodes=[Node("MatMul", ["a", "b"], ["y"], {}, "mm")],
        outputs=["y"],
    )
    got = _session(graph, tiling).run({"a": a, "b": b})["y"]
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


@needs_opencl
@pytest.mark.parametrize("tiling", KERNELS)
@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_transposes_bias_and_activation(rng, tiling, trans_a, trans_b):
    m, k, n = 23, 41, 35
    a = rng.uniform(-1, 1, (k, m) if trans_a else (m, k)).astype("float32")
    b = rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype("float32")
    c = rng.uniform(-1, 1, (m, 1)).astype("float32")
    attrs = {"transA": trans_a, "transB": trans_b, "alpha": 0.7, "beta": -1.3, "activation": "relu"}
    graph = Graph(
        inputs={"a": TensorInfo(a.shape, "float32")},
        initializers={"b": b, "c": c},
        nodes=[Node("Gemm", ["a", "b", "c"], ["y"], attrs, "gemm")],
        outputs=["y"],
    )
    got = _session(graph, tiling).run({"a": a})["y"]
    want = run_reference("Gemm", [a, b, c], attrs)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _linear(rng, x_shape, n, act: str | None, bias_shape=None, bias_input=False):
    """x @ W + bias, then `act` (an op name) if given."""
    k = x_shape[-1]
    inits = {"w": rng.uniform(-1, 1, (k, n)).astype("float32")}
    inputs = {"x": TensorInfo(x_shape, "float32")}
    if bias_input:
        inputs["bias"] = TensorInfo(bias_shape or (n,), "float32")
    else:
        inits["bias"] = rng.uniform(-1, 1, bias_shape or (n,)).astype("float32")
    nodes = [Node("MatMul", ["x", "w"], ["xw"], {}, "mm"), Node("Add", ["bias", "xw"], ["s"], {}, "add")]
    if act:
        attrs = {"alpha": 0.2} if act == "LeakyRelu" else {}
        nodes.append(Node(act, ["s"], ["y"], attrs, "act"))
    return Graph(inputs=inputs, initializers=inits, nodes=nodes, outputs=["y" if act else "s"])


@needs_opencl
@pytest.mark.parametrize("tiling", KERNELS)
@pytest.mark.parametrize("act", [None, "Gelu", "Relu", "LeakyRelu"])
def test_matmul_bias_activation_fused_matches_reference(rng, tiling, act):
    graph = _linear(rng, (2, 19, 45), 37, act, bias_shape=(1, 37))
    x = rng.uniform(-2, 2, (2, 19, 45)).astype("float32")
    sess = _session(graph, tiling)
    got = sess.run({"x": x})
    want = mnn.Session(graph, backend="reference").run({"x": x})
    assert sess.plan.fused == {"mm+add" + ("+act" if act else ""): ["mm", "add"] + (["act"] if act else [])}
    np.testing.assert_allclose(got["y" if act else "s"], want["y" if act else "s"], rtol=1e-4, atol=1e-4)


def _attention_scores(q_shape, k_shape, perm_q, perm_k, scale_op, scale_first=True):
    """Transpose(q) @ Transpose(k) (an empty perm: no Transpose), then Mul or Div by a scalar."""
    nodes, a, b = [], "q", "k"
    if perm_q:
        nodes.append(Node("Transpose", ["q"], ["qt"], {"perm": perm_q}, "tq"))
        a = "qt"
    if perm_k:
        nodes.append(Node("Transpose", ["k"], ["kt"], {"perm": perm_k}, "tk"))
        b = "kt"
    nodes.append(Node("MatMul", [a, b], ["s"], {}, "mm"))
    out = "s"
    if scale_op:
        ins = ["s", "c"] if scale_first else ["c", "s"]
        nodes.append(Node(scale_op, ins, ["y"], {}, "scale"))
        out = "y"
    return Graph(
        inputs={"q": TensorInfo(q_shape, "float32"), "k": TensorInfo(k_shape, "float32")},
        initializers={"c": np.array(0.37, np.float32)},
        nodes=nodes,
        outputs=[out],
    )


@needs_opencl
@pytest.mark.parametrize("tiling", KERNELS)
@pytest.mark.parametrize(
    "q_shape, k_shape, perm_q, perm_k, scale_op",
    [
        ((2, 19, 3, 8), (2, 21, 3, 8), [0, 2, 1, 3], [0, 2, 3, 1], "Div"),  # BERT's heads, K transposed
        ((3, 17, 9), (3, 17, 9), [], [0, 2, 1], "Mul"),  # ViT's K^T
        ((9, 17), (9, 33), [1, 0], [], None),  # A transposed, 2-D
        ((5, 2, 7, 11), (2, 5, 13, 11), [1, 0, 2, 3], [0, 1, 3, 2], "Mul"),  # batch dims swapped
        ((4, 6, 10), (7, 10, 4), [], None, "Div"),  # B's default perm: reversed
    ],
)
def test_transposes_and_scale_fused_match_reference(rng, tiling, q_shape, k_shape, perm_q, perm_k, scale_op):
    graph = _attention_scores(q_shape, k_shape, perm_q, perm_k, scale_op)
    if perm_k is None:  # a Transpose without perm (reversed dims)
        graph.nodes.insert(0, Node("Transpose", ["k"], ["kt"], {}, "tk"))
        graph.nodes[1].inputs[1] = "kt"
    feeds = {"q": rng.uniform(-1, 1, q_shape).astype("float32"), "k": rng.uniform(-1, 1, k_shape).astype("float32")}
    sess = _session(graph, tiling)
    got = sess.run(feeds)[graph.outputs[0]]
    want = mnn.Session(graph, backend="reference").run(feeds)[graph.outputs[0]]
    (fused,) = sess.plan.fused.values()
    assert set(fused) == {n.name for n in graph.nodes}
    assert opencl_backend().segments[-1]["launches"] == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@needs_opencl
@pytest.mark.parametrize("tiling", KERNELS)
@pytest.mark.parametrize(
    "p_shape, v_shape, perm_v, perm_y, bias",
    [
        ((2, 3, 19, 21), (2, 21, 3, 8), [0, 2, 1, 3], [0, 2, 1, 3], False),  # BERT: P @ V, heads gathered back
        ((3, 17, 17), (3, 17, 9), [], [1, 0, 2], True),  # ViT's P @ V, and a bias row before the store
        ((2, 5, 7, 6), (5, 6, 11), [], [2, 1, 0, 3], False),  # a broadcast B
    ],
)
def test_transposed_store_fused_matches_reference(rng, tiling, p_shape, v_shape, perm_v, perm_y, bias):
    nodes, b_name = [], "v"
    if perm_v:
        nodes.append(Node("Transpose", ["v"], ["vt"], {"perm": perm_v}, "tv"))
        b_name = "vt"
    nodes.append(Node("MatMul", ["p", b_name], ["o"], {}, "mm"))
    if bias:
        nodes.append(Node("Add", ["o", "bias"], ["ob"], {}, "add"))
    nodes.append(Node("Transpose", [nodes[-1].outputs[0]], ["y"], {"perm": perm_y}, "ty"))
    n = (np.empty(v_shape).transpose(perm_v) if perm_v else np.empty(v_shape)).shape[-1]
    graph = Graph(
        inputs={"p": TensorInfo(p_shape, "float32"), "v": TensorInfo(v_shape, "float32")},
        initializers={"bias": rng.uniform(-1, 1, (n,)).astype("float32")},
        nodes=nodes,
        outputs=["y"],
    )
    feeds = {"p": rng.uniform(-1, 1, p_shape).astype("float32"), "v": rng.uniform(-1, 1, v_shape).astype("float32")}
    sess = _session(graph, tiling)
    got = sess.run(feeds)["y"]
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    (fused,) = sess.plan.fused.values()
    assert set(fused) == {node.name for node in nodes}
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@needs_opencl
def test_what_is_not_fused(rng):
    x = rng.uniform(-1, 1, (5, 24)).astype("float32")
    bias = rng.uniform(-1, 1, (16,)).astype("float32")
    cases = [
        (_linear(rng, (5, 24), 16, None, bias_input=True), {"bias": bias}, {}),  # a bias computed at run
        (_linear(rng, (5, 24), 16, None, bias_shape=(5, 16)), {}, {}),  # not one row
        (_linear(rng, (5, 24), 16, "Softmax"), {}, {"mm+add": ["mm", "add"]}),  # not an activation
    ]
    shared = _attention_scores((3, 24), (5, 24), [], [1, 0], "Div", scale_first=False)  # c / (q @ k^T)
    shared.outputs.append("kt")  # the transposed K is read outside the MatMul too
    cases.append((shared, {"q": x[:3], "k": rng.uniform(-1, 1, (5, 24)).astype("float32")}, {}))
    moved = _attention_scores((2, 3, 24), (2, 5, 24), [], [0, 2, 1], None)  # a store moving N off the last axis
    moved.nodes.append(Node("Transpose", ["s"], ["y"], {"perm": [0, 2, 1]}, "ty"))
    moved.outputs = ["y"]
    feeds = {
        "q": rng.uniform(-1, 1, (2, 3, 24)).astype("float32"),
        "k": rng.uniform(-1, 1, (2, 5, 24)).astype("float32"),
    }
    cases.append((moved, feeds, {"tk+mm": ["tk", "mm"]}))
    for graph, extra, fused in cases:
        sess = _session(graph, "mid")
        feeds = {"x": x, **extra} if "x" in graph.inputs else extra
        got = sess.run(feeds)
        assert sess.plan.fused == fused
        want = mnn.Session(graph, backend="reference").run(feeds)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)


def _fake(is_gpu: bool, **options):
    device = {"compute_units": 132}  # an H100
    runtime = SimpleNamespace(is_gpu=is_gpu, entry=SimpleNamespace(device=device))
    return SimpleNamespace(runtime=runtime, options=options)


def test_gpu_blocks8_where_they_fill_the_device(monkeypatch):
    """On a GPU 128x128 blocks where they give half a work-group per compute unit, else 64x128 ones,
    else gemm.cl's tilings; a CPU device keeps the direct kernel unless forced; a bad name is an error."""
    monkeypatch.delenv("MNN_OPENCL_GEMM8", raising=False)  # the rule, not a forced choice
    from mnn_opencl.ops_matmul import gemm_kernel

    gpu, cpu = _fake(True), _fake(False)
    assert gemm_kernel(gpu, 128 * 16, 768, 1) == "b128"  # BERT-base batch 16, FFN down: 16 x 6 = 96 blocks
    assert gemm_kernel(gpu, 197 * 16, 384, 1) == "b128"  # ViT-S/16 batch 16, projection: 25 x 3 = 75
    assert gemm_kernel(gpu, 128, 128, 192) == "b128"  # BERT-base's attention scores, 192 heads
    assert gemm_kernel(gpu, 640, 1024, 1) == "b64"  # 5 x 8 blocks of 128x128, 10 x 8 of 64x128
    assert gemm_kernel(gpu, 197, 1152, 1) == "mid"  # ViT-S/16 batch 1, qkv: 2 x 9 of 128x128, 4 x 9 of 64x128
    assert gemm_kernel(gpu, 197, 384, 1) == "one"  # batch 1, the projection: too few of either
    assert gemm_kernel(gpu, 128, 64, 192) == "n64"  # BERT-base's scores @ V: a head of 64 wide
    assert gemm_kernel(gpu, 128, 32, 192) == "wide"  # N below every block's width
    assert gemm_kernel(cpu, 4096, 4096, 1) == "direct"
    assert gemm_kernel(_fake(False, **{"opencl.gemm8": "b64"}), 8, 8, 1) == "b64"
    assert gemm_kernel(_fake(True, **{"opencl.gemm8": "off"}), 128 * 16, 768, 1) == "wide"
    with pytest.raises(ValueError, match="opencl.gemm8 must be"):
        gemm_kernel(_fake(True, **{"opencl.gemm8": "b256"}), 8, 8, 1)
    assert gemm_kernel(gpu, 16 * 3136, 96, 1) == "n64"  # ConvNeXt-T's stage-1 down projection at batch 16
    n96 = _fake(True, **{"opencl.gemm8_n96": "on"})
    assert gemm_kernel(n96, 16 * 3136, 96, 1) == "n96"  # 392 blocks of 128x96
    assert gemm_kernel(n96, 16 * 784, 192, 1) == "n96"  # stage 2: 98 x 2
    assert gemm_kernel(n96, 16 * 784, 384, 1) == "b128"  # a multiple of 128 keeps 128-wide blocks
    assert gemm_kernel(n96, 128, 96, 1) == "one"  # 1 block of 128x96: too few


def test_gpu_tiling_follows_the_work_groups(monkeypatch):
    """Without 8x8 blocks: on a GPU the largest block that still gives 180 work-groups (mnn-vulkan's
    rule), else the tiling with the most; a CPU device keeps the direct kernel; a bad name is an error."""
    monkeypatch.delenv("MNN_OPENCL_GEMM8", raising=False)  # the rule, not a forced choice
    from mnn_opencl.ops_matmul import gemm_kernel

    gpu = _fake(True, **{"opencl.gemm8": "off"})
    cpu = _fake(False)
    assert gemm_kernel(gpu, 197 * 16, 1152, 1) == "wide"  # ViT-S/16 batch 16, qkv: 99 x 18 blocks of 32x64
    assert gemm_kernel(gpu, 197, 1152, 1) == "mid"  # batch 1: 7 x 18 = 126 of 32x64, 7 x 36 of 32x32
    assert gemm_kernel(gpu, 197, 384, 1) == "one"  # batch 1, the projection: 13 x 24 of 16x16
    assert gemm_kernel(gpu, 64, 128, 1) == "one"  # none gives 180: the most (4, 8 or 32 work-groups)
    assert gemm_kernel(cpu, 197, 1152, 1) == "direct"
    with pytest.raises(ValueError, match="opencl.gemm must be"):
        gemm_kernel(_fake(True, **{"opencl.gemm": "huge"}), 8, 8, 1)


@needs_opencl
def test_tiled_kernel_is_what_runs(rng):
    graph = _linear(rng, (3, 20), 12, None)
    _session(graph, "wide").run({"x": rng.uniform(-1, 1, (3, 20)).astype("float32")})
    assert opencl_backend().segments[-1]["kernels"] == ["gemm_wide"]  # the bias in the GEMM's store


@needs_opencl
@pytest.mark.parametrize("block", ["b128", "n64", "n96"])
@pytest.mark.parametrize("slices", [2, 5])
def test_gemm8_split_k_matches_reference(rng, block, slices):
    """K in slices (one batch): the partial sums added by gemm8_splitk_reduce with alpha, beta * C and
    the activation; a batched product keeps K whole."""
    options = {"opencl.gemm8": block, "opencl.gemm8_splitk": slices}
    for trans_a, trans_b in [(0, 0), (1, 1)]:
        m, k, n = 37, 70, 45
        a = rng.uniform(-1, 1, (k, m) if trans_a else (m, k)).astype("float32")
        b = rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype("float32")
        c = rng.uniform(-1, 1, (1, n)).astype("float32")
        attrs = {"transA": trans_a, "transB": trans_b, "alpha": 0.7, "beta": -1.3, "activation": "relu"}
        graph = Graph(
            inputs={"a": TensorInfo(a.shape, "float32"), "b": TensorInfo(b.shape, "float32")},
            initializers={"c": c},
            nodes=[Node("Gemm", ["a", "b", "c"], ["y"], attrs, "gemm")],
            outputs=["y"],
        )
        sess = mnn.Session(graph, backend="opencl", fallback=False, optimize=False, options=options)
        got = sess.run({"a": a, "b": b})["y"]
        assert opencl_backend().segments[-1]["kernels"] == [f"gemm8_{block}", "gemm8_splitk_reduce"]
        np.testing.assert_allclose(got, run_reference("Gemm", [a, b, c], attrs)[0], rtol=1e-4, atol=1e-4)
    graph = _linear(rng, (2, 19, 45), 37, "Gelu", bias_shape=(37,))  # folded rows, bias row and GELU fused
    x = rng.uniform(-2, 2, (2, 19, 45)).astype("float32")
    sess = mnn.Session(graph, backend="opencl", fallback=False, optimize=False, options=options)
    got = sess.run({"x": x})["y"]
    assert opencl_backend().segments[-1]["kernels"] == [f"gemm8_{block}", "gemm8_splitk_reduce"]
    np.testing.assert_allclose(got, mnn.Session(graph, backend="reference").run({"x": x})["y"], rtol=1e-4, atol=1e-4)
    a, b = rng.uniform(-1, 1, (3, 9, 40)).astype("float32"), rng.uniform(-1, 1, (3, 40, 70)).astype("float32")
    graph = Graph(
        inputs={"a": TensorInfo(a.shape, "float32"), "b": TensorInfo(b.shape, "float32")},
        nodes=[Node("MatMul", ["a", "b"], ["y"], {}, "mm")],
        outputs=["y"],
    )
    got = mnn.Session(graph, backend="opencl", fallback=False, optimize=False, options=options).run({"a": a, "b": b})
    assert opencl_backend().segments[-1]["kernels"] == [f"gemm8_{block}"]  # batched: K whole
    np.testing.assert_allclose(got["y"], a @ b, rtol=1e-4, atol=1e-4)


def test_gemm8_fill_slices():
    """opencl.gemm8_splitk=fill on an H100 (132 compute units): slices until 198 work-groups, each at
    least 256 deep; none by default."""
    from mnn_opencl.blocks8 import gemm_slices

    fill = _fake(True, **{"opencl.gemm8_splitk": "fill"})
    assert gemm_slices(fill, "b128", 2048, 768, 3072) == 3  # BERT-base's FFN down at batch 16: 96 blocks
    assert gemm_slices(fill, "b128", 2048, 768, 768) == 3  # its 768-deep products: 3 slices of 256
    assert gemm_slices(fill, "b128", 197 * 16, 384, 384) == 1  # ViT-S/16: 75 blocks, K too short to split
    assert gemm_slices(fill, "b128", 2048, 3072, 768) == 1  # FFN up: 384 blocks
    assert gemm_slices(_fake(True), "b128", 2048, 768, 3072) == 1
