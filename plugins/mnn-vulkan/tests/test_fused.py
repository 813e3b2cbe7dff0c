"""vulkan.FusedMatMul (mnn_vulkan/fuse.py, kernels/fused.py) against the reference backend: the
Transposes an attention block reads its heads through, its scale, an added mask of shape
(N, 1, 1, S) and bias rows, GELU; odd sizes, batch 1 and 3, each GEMM path (lavapipe's tiles, a
GPU's, gemm_big, gemv for few rows) and precision="low"; what is fused, and what is not."""

from __future__ import annotations

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan


def _w(rng, *shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype("float32")


def attention(rng, seq=13, dim=36, heads=3, scale_op="Div"):
    """Self-attention with a mask input and a GELU MLP, as torch exports BERT's (bias Adds after
    the MatMuls, K transposed by its own Transpose, the scale applied to the scores)."""
    b = mnn.GraphBuilder("vk_fused_attention")
    x = b.input("x", ("N", seq, dim))
    mask = b.input("mask", ("N", 1, 1, seq))
    hd = dim // heads

    def linear(t, n_in, n_out):
        return b.Add(b.const(_w(rng, n_out)), b.MatMul(t, b.const(_w(rng, n_in, n_out))))

    def split_heads(t):  # (N, S, D) -> (N, S, H, hd)
        return b.Reshape(t, shape=[0, seq, heads, hd])

    q = b.Transpose(split_heads(linear(x, dim, dim)), perm=[0, 2, 1, 3])
    k = b.Transpose(split_heads(linear(x, dim, dim)), perm=[0, 2, 3, 1])
    v = b.Transpose(split_heads(linear(x, dim, dim)), perm=[0, 2, 1, 3])
    scores = b.MatMul(q, k)
    if scale_op == "Div":
        scores = b.Div(scores, b.const(np.float32(np.sqrt(hd))))
    else:
        scores = b.Mul(b.const(np.float32(1 / np.sqrt(hd))), scores)
    att = b.Softmax(b.Add(scores, mask), axis=-1)
    o = b.Reshape(b.Transpose(b.MatMul(att, v), perm=[0, 2, 1, 3]), shape=[0, seq, dim])
    h = b.Add(x, linear(o, dim, dim))
    f = linear(b.Gelu(linear(h, dim, 2 * dim)), 2 * dim, dim)
    b.output(b.Add(h, f), "y")
    return b.build()


def _feeds(rng, batch, seq=13, dim=36):
    x = rng.standard_normal((batch, seq, dim)).astype("float32")
    mask = np.where(rng.random((batch, 1, 1, seq)) < 0.2, -1e4, 0.0).astype("float32")
    return {"x": x, "mask": mask}


def _fused_names(sess):
    """The session's fused nodes and the dispatches of its segments."""
    import mnn_vulkan

    names = {p.node for p in sess.plan.placements}
    segments = [s for s in mnn_vulkan.segments().values() if s.names and set(s.names) <= names]
    return list(sess.plan.fused), sum(len(s.shaders) for s in segments)


def _check(graph, feeds, rtol=1e-4, **kw):
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, **kw)
    got = sess.run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * float(np.abs(want).max()))
    return sess


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"vulkan.gpu_tiling": True},
        {"vulkan.big_gemm": "64x128", "vulkan.big_gemm_shader": "big"},
        {"vulkan.big_gemm": "64x128", "vulkan.big_gemm_shader": "warp"},
        {"vulkan.gemv": True},
    ],
    ids=["cpu-tiles", "gpu-tiles", "gemm_big", "gemm_warp", "gemv"],
)
def test_attention_fused_matches_reference(rng, batch, options):
    graph = attention(rng)
    feeds = _feeds(rng, batch)
    sess = _check(graph, feeds, options=options)
    fused, dispatches = _fused_names(sess)
    # six Linear layers (bias; one with GELU), Q @ K^T (both Transposes, the scale, the mask), att @ V (V's Transpose)
    assert len(fused) == 8, fused
    assert any(n.count("+") == 4 for n in fused), fused  # Transpose+Transpose+MatMul+Div+Add
    plain = _check(graph, feeds, options=options, fuse=False)
    assert not _fused_names(plain)[0]
    # six bias Adds, three Transposes, the scale and the mask (GELU was already in its Add)
    assert dispatches == _fused_names(plain)[1] - 11, (dispatches, _fused_names(plain)[1])


def test_scale_by_mul_and_low_precision(rng):
    graph = attention(rng, seq=9, dim=20, heads=2, scale_op="Mul")
    feeds = _feeds(rng, 2, seq=9, dim=20)
    sess = _check(graph, feeds)
    assert any(n.count("+") == 4 for n in _fused_names(sess)[0])
    low = _check(graph, feeds, rtol=2e-2, precision="low")
    import mnn_vulkan

    names = {p.node for p in low.plan.placements}
    mine = [seg for seg in mnn_vulkan.segments().values() if seg.names and set(seg.names) <= names]
    if any(seg.precision == "float16" for seg in mine):  # the fused GEMMs read float16 directly
        assert not [n for seg in mine for n in seg.widened if "+" in n], [seg.widened for seg in mine]
        assert "gemm_h" in [s for seg in mine for s in seg.shaders]


def test_batch_dims_that_do_not_collapse_are_left_alone(rng):
    """A Transpose that interleaves three batch dims: gemm.comp's two batch strides cannot walk
    them, so the MatMul and the Transpose stay apart."""
    b = mnn.GraphBuilder("vk_unfused")
    x = b.input("x", (2, 3, 4, 5, 7))
    t = b.Transpose(x, perm=[1, 0, 2, 4, 3])  # (3, 2, 4, 7, 5): batch (3, 2, 4), strides (140, 420, 35)
    b.output(b.MatMul(t, b.const(_w(rng, 5, 6))), "y")
    graph = b.build()
    feeds = {"x": rng.standard_normal((2, 3, 4, 5, 7)).astype("float32")}
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False)
    np.testing.assert_allclose(sess.run(feeds)["y"], want, rtol=1e-4, atol=1e-4)
    assert not _fused_names(sess)[0]


@pytest.mark.parametrize(
    "x_shape,perm,w_shape",
    [((5, 7, 11), [0, 2, 1], (7, 9)), ((3, 9, 17), [2, 0, 1], (9, 4)), ((4, 6, 5, 3), [2, 0, 3, 1], None)],
)
def test_transposed_operands(rng, x_shape, perm, w_shape):
    b = mnn.GraphBuilder("vk_transposed")
    x = b.input("x", x_shape)
    t = b.Transpose(x, perm=perm)
    tshape = [x_shape[p] for p in perm]
    other = b.Transpose(x, perm=[perm[i] for i in (*range(len(perm) - 2), len(perm) - 1, len(perm) - 2)])
    y = b.MatMul(t, b.const(_w(rng, *w_shape)) if w_shape else other)
    b.output(b.Relu(b.Add(y, b.const(_w(rng, (w_shape or tshape[-2:])[-1] if w_shape else tshape[-2])))), "y")
    graph = b.build()
    feeds = {"x": rng.standard_normal(x_shape).astype("float32")}
    sess = _check(graph, feeds)
    assert _fused_names(sess)[0]


def residual_norms(rng, rows=7, dim=45, eps=1e-5):
    """Two pre-norm residual steps: x + f(x) normalized, and that sum read again by the next Add."""
    b = mnn.GraphBuilder("vk_add_norm")
    x = b.input("x", ("N", rows, dim))
    # (the bias Add goes into the MatMul's fusion, leaving the residual Add to the norm's)
    h = b.Add(x, b.Add(b.MatMul(x, b.const(_w(rng, dim, dim))), b.const(_w(rng, dim))))
    n1 = b.LayerNormalization(h, b.const(_w(rng, dim) + 1), b.const(_w(rng, dim)), epsilon=eps)
    h2 = b.Add(h, b.Relu(b.MatMul(n1, b.const(_w(rng, dim, dim)))))
    n2 = b.LayerNormalization(h2, b.const(_w(rng, dim) + 1), None, epsilon=eps)
    b.output(n2, "y")
    b.output(h2, "h2")  # a graph output: the fused op stores the sum too
    return b.build()


@pytest.mark.parametrize("dim", [45, 384, 1000, 2048])
@pytest.mark.parametrize("batch", [1, 3])
def test_add_layernorm(rng, dim, batch):
    graph = residual_norms(rng, dim=dim)
    feeds = {"x": rng.standard_normal((batch, 7, dim)).astype("float32")}
    want = mnn.Session(graph, backend="reference").run(feeds)
    sess = mnn.Session(graph, backend="vulkan", fallback=False)
    got = sess.run(feeds)
    for name in ("y", "h2"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4 * float(np.abs(want[name]).max()))
    fused = [n for n in sess.plan.fused if n.startswith("add")]
    assert len(fused) == 2, sess.plan.fused
    import mnn_vulkan

    names = {p.node for p in sess.plan.placements}
    mine = [seg for seg in mnn_vulkan.segments().values() if seg.names and set(seg.names) <= names]
    shaders = [s for seg in mine for s in seg.shaders]
    assert shaders.count("add_norm_rows") == 2 and "binary" not in shaders, shaders


def test_add_layernorm_stays_apart_at_low_precision_and_for_long_rows(rng):
    graph = residual_norms(rng, dim=45)
    feeds = {"x": rng.standard_normal((2, 7, 45)).astype("float32")}
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    low = mnn.Session(graph, backend="vulkan", fallback=False, precision="low")
    np.testing.assert_allclose(low.run(feeds)["y"], want, rtol=2e-2, atol=2e-2 * float(np.abs(want).max()))
    assert not [n for n in low.plan.fused if n.startswith("add")]
    long = residual_norms(rng, rows=2, dim=2049)  # past 8 x 256 elements: norm_rows.comp, no fusion
    feeds = {"x": rng.standard_normal((1, 2, 2049)).astype("float32")}
    sess = _check(long, feeds)
    assert not [n for n in sess.plan.fused if n.startswith("add")]


def test_the_switch_turns_fusions_off(rng, monkeypatch):
    graph = attention(rng, seq=5, dim=8, heads=2)
    feeds = _feeds(rng, 1, seq=5, dim=8)
    monkeypatch.setenv("MNN_VULKAN_FUSE", "0")
    assert not _check(graph, feeds).plan.fused
    monkeypatch.delenv("MNN_VULKAN_FUSE")
    assert _check(graph, feeds).plan.fused


def convnext_block(rng, c=20, h=5, w=7):
    """ConvNeXt's block as torch exports it: depthwise 7x7, channels last, LayerNorm, Linear + GELU,
    Linear, the layer scale (a Mul by a row of C), channels first again, the residual Add."""
    b = mnn.GraphBuilder("vk_convnext_block")
    x = b.input("x", ("N", c, h, w))
    d = b.Conv(x, b.const(_w(rng, c, 1, 7, 7)), b.const(_w(rng, c)), pads=[3, 3, 3, 3], group=c)
    t = b.Transpose(d, perm=[0, 2, 3, 1])
    n = b.LayerNormalization(t, b.const(_w(rng, c) + 1), b.const(_w(rng, c)), epsilon=1e-6)
    f = b.Gelu(b.Add(b.MatMul(n, b.const(_w(rng, c, 4 * c))), b.const(_w(rng, 4 * c))))
    f = b.Add(b.MatMul(f, b.const(_w(rng, 4 * c, c))), b.const(_w(rng, c)))
    f = b.Mul(f, b.const(_w(rng, c)))
    b.output(b.Add(x, b.Transpose(f, perm=[0, 3, 1, 2])), "y")
    return b.build()


@pytest.mark.parametrize("batch", [1, 3])
def test_convnext_block_layer_scale_and_transposed_residual(rng, batch):
    graph = convnext_block(rng)
    feeds = {"x": rng.standard_normal((batch, 20, 5, 7)).astype("float32")}
    sess = _check(graph, feeds)
    fused = list(sess.plan.fused)
    assert any(n.endswith("+mul") and n.startswith("matmul_1") for n in fused), fused  # layer scale folded
    assert any(n.startswith("transpose_1+") for n in fused), fused  # the residual reads channels last
    plain = _check(graph, feeds, fuse=False)
    # the two bias Adds, the layer scale, the Transpose back (GELU was already in its Add)
    assert _fused_names(sess)[1] == _fused_names(plain)[1] - 4, (_fused_names(sess)[1], _fused_names(plain)[1])
    low = _check(graph, feeds, rtol=2e-2, precision="low")
    assert not any(n.endswith("+mul") for n in low.plan.fused), low.plan.fused  # float16 weights stay unscaled


@pytest.mark.parametrize(
    "x_shape,perm,other_shape,op",
    [
        ((2, 3, 4, 5), [0, 2, 3, 1], (2, 4, 5, 3), "Sub"),
        ((6, 7), [1, 0], (1, 6), "Mul"),
        ((2, 3, 4), [2, 0, 1], (3,), "Div"),
    ],
)
def test_binary_reads_a_transposed_operand(rng, x_shape, perm, other_shape, op):
    b = mnn.GraphBuilder("vk_binary_t")
    x = b.input("x", x_shape)
    other = b.const(rng.uniform(0.5, 2, other_shape).astype("float32"))
    b.output(getattr(b, op)(other, b.Transpose(x, perm=perm)), "y")
    graph = b.build()
    sess = _check(graph, {"x": rng.standard_normal(x_shape).astype("float32")})
    assert list(sess.plan.fused) == [f"transpose+{op.lower()}"], sess.plan.fused


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("precision", ["normal", "low"])
def test_vit_qkv_split_reads_the_product_by_strides(rng, batch, precision):
    """ViT's attention as torch exports it: one qkv product reshaped to (N, S, 3, H, hd), transposed
    to (3, N, H, S, hd) and split into q, k and v: the Split copies straight from the product."""
    seq, dim, heads = 11, 24, 3
    hd = dim // heads
    b = mnn.GraphBuilder("vk_vit_qkv")
    x = b.input("x", ("N", seq, dim))
    qkv = b.Add(b.const(_w(rng, 3 * dim)), b.MatMul(x, b.const(_w(rng, dim, 3 * dim))))
    t = b.Transpose(b.Reshape(qkv, shape=[0, seq, 3, heads, hd]), perm=[2, 0, 3, 1, 4])
    pieces = b.op("Split", t, b.const(np.array([1, 1, 1], "int64")), n_outputs=3, axis=0)
    q, k, v = (b.Squeeze(p, b.const(np.array([0], "int64"))) for p in pieces)
    att = b.Softmax(b.Mul(b.MatMul(q, b.Transpose(k, perm=[0, 1, 3, 2])), b.const(np.float32(hd**-0.5))), axis=-1)
    o = b.Reshape(b.Transpose(b.MatMul(att, v), perm=[0, 2, 1, 3]), shape=[0, seq, dim])
    b.output(o, "y")
    graph = b.build()
    feeds = {"x": rng.standard_normal((batch, seq, dim)).astype("float32")}
    sess = _check(graph, feeds, rtol=2e-2 if precision == "low" else 1e-4, precision=precision)
    assert any(n.startswith("transpose+split") for n in sess.plan.fused), sess.plan.fused


def test_sum_of_two_products_is_fused_once(rng):
    """y = a @ w1 + b @ w2 (a decoder's residual of two projections): the Add is either MatMul's
    added tensor, never both's."""
    b = mnn.GraphBuilder("vk_two_products")
    a, c = b.input("a", (3, 7, 10)), b.input("c", (3, 7, 6))
    y = b.Add(b.MatMul(a, b.const(_w(rng, 10, 9))), b.MatMul(c, b.const(_w(rng, 6, 9))))
    b.output(b.Relu(y), "y")
    graph = b.build()
    feeds = {
        "a": rng.standard_normal((3, 7, 10)).astype("float32"),
        "c": rng.standard_normal((3, 7, 6)).astype("float32"),
    }
    sess = _check(graph, feeds)
    assert len(_fused_names(sess)[0]) == 1
