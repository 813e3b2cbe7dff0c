"""Inference kernels beyond the GEMM path (x86infer): Winograd F(4x4, 3x3) on
odd sizes, partial tiles, every padding, fused bias and activations, both
thread plans; each against the reference backend on every ISA this CPU runs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, one_op_graph

from mnn_core.ops import run_reference
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)


def _r(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


#: the stride-2 tests of the GEMM paths: auto gives most of those convolutions to the output-channel direct
#: kernel on AVX-512 (test_direct_oc_conv.py)
NO_DCO = {"x86.direct_oc": "off"}


def _run_conv(inputs, attrs, isa, threads, options, constant=(1, 2)):
    graph, feeds = one_op_graph("Conv", inputs, attrs, constant)
    sess = Session(
        graph, backend="x86", fallback=False, optimize=False, threads=threads, options={"x86.isa": isa, **options}
    )
    want = run_reference("Conv", list(inputs), attrs)[0]
    for _ in range(2):  # the second run reuses scratch the first one dirtied
        got = sess.run(feeds)["out"]
        assert got.shape == want.shape
        # Winograd F(4x4) rounds differently from a direct sum: bound the error by the output's scale
        np.testing.assert_allclose(
            got,
            want,
            rtol=1e-4,
            atol=2e-5 * max(1.0, float(np.abs(want).max())),
            err_msg=f"Conv {attrs} on x86 {isa} {options}",
        )
    return sess


@pytest.fixture
def conv_kinds(monkeypatch):
    """The names of the Conv executions prepared while the test runs (x86.Conv.winograd, ...)."""
    from mnn_x86._common import KERNELS, Kernel

    seen = []
    base = KERNELS["Conv"]

    def recording(*args, **kwargs):
        ex = base.impl(*args, **kwargs)
        seen.append(ex.name)
        return ex

    monkeypatch.setitem(KERNELS, "Conv", Kernel(base.spec, recording))
    return seen


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,o,h,w,pads",
    [
        # one chunk of tiles, cut into a chunk per thread at 2 and 3 threads (x86_wino_plan): 49 tiles,
        # transposed GEMMs (64 channels), and 81 untransposed (16 channels)
        (1, 64, 40, 27, 27, [1, 1, 1, 1]),
        (1, 16, 24, 36, 35, [1, 1, 1, 1]),
        (1, 3, 5, 6, 6, [0, 0, 0, 0]),  # one tile, nothing padded
        (1, 8, 8, 9, 11, [1, 1, 1, 1]),  # partial tiles on both edges
        (2, 7, 13, 17, 5, [1, 0, 2, 1]),  # asymmetric pads, batch 2
        (1, 16, 24, 33, 30, [1, 1, 1, 1]),  # several chunks of tiles
        (1, 70, 9, 14, 14, [1, 1, 1, 1]),  # many channels, few tiles
        (1, 2, 1, 3, 3, [0, 0, 0, 0]),  # 1x1 output, one output channel
        # the batch's tiles are one sequence: runs and chunks that end inside an image or at its edge
        (3, 16, 24, 7, 7, [1, 1, 1, 1]),  # 2x2 tiles per image, partial on both edges
        (8, 64, 40, 7, 7, [1, 1, 1, 1]),  # 32 tiles: one vector of them twice (gemm_t off, several items)
        (5, 70, 9, 14, 14, [1, 1, 1, 1]),  # 80 tiles over several chunks
        (4, 5, 6, 13, 17, [1, 0, 2, 1]),  # odd planes, asymmetric pads
    ],
)
def test_winograd_matches_reference(rng, conv_kinds, isa, threads, n, c, o, h, w, pads):
    x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c, 3, 3, scale=0.3), _r(rng, o)
    _run_conv([x, wt, b], {"pads": pads}, isa, threads, {"x86.winograd": "on"})
    assert conv_kinds == [f"x86.Conv.winograd [{isa}]"]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "n,c,o,h,w,pads,act",
    [
        (1, 5, 6, 1, 1, [1, 1, 1, 1], "relu"),  # 1x1 plane: one tile, 8 of its 9 inputs padding
        (1, 9, 17, 5, 5, [1, 1, 1, 1], None),  # 5x5: two tiles per row, the second partial
        (1, 16, 64, 55, 55, [1, 1, 1, 1], "relu"),  # SqueezeNet's 55x55: 14 tiles a row, runs cross rows
        (1, 19, 33, 27, 27, [1, 1, 1, 1], "clip"),  # 27x27: 7 tiles a row, several rows a vector
        (1, 64, 20, 27, 27, [1, 1, 1, 1], "relu"),  # 49 tiles, 64 channels: transposed GEMM, 4 MR panels
        (2, 70, 12, 19, 30, [0, 0, 0, 0], None),  # 17x28 out, 35 tiles, batch 2: transposed, V over NR
        (1, 20, 21, 13, 13, [0, 0, 0, 0], None),  # 13x13 unpadded: 11x11 output, partial last tiles
        (2, 17, 30, 13, 13, [1, 1, 1, 1], "relu"),  # 13x13, batch 2
        (1, 3, 5, 6, 75, [1, 1, 1, 1], None),  # wide rows: 19 tiles a row, more than one vector
        (1, 7, 9, 11, 37, [0, 1, 1, 0], "leaky_relu"),  # odd width, asymmetric pads
    ],
)
def test_winograd_row_runs(rng, isa, threads, n, c, o, h, w, pads, act):
    """The gather and scatter move runs of tiles of one tile row through (de)interleaved vectors:
    runs that start mid-vector, cross tile rows, start at the left pad or end in a partial tile."""
    x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c, 3, 3, scale=0.3), _r(rng, o)
    attrs = {"pads": pads}
    if act:
        attrs.update(
            activation=act, act_alpha=0.1 if act == "leaky_relu" else 0.0, act_beta=6.0 if act == "clip" else 0.0
        )
    _run_conv([x, wt, b], attrs, isa, threads, {"x86.winograd": "on"})


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize(
    "act,alpha,beta", [("relu", 0, 0), ("clip", 0.0, 6.0), ("sigmoid", 0, 0), ("leaky_relu", 0.1, 0)]
)
def test_winograd_fused_activation_no_bias(rng, isa, act, alpha, beta):
    x, wt = _r(rng, 1, 12, 15, 13), _r(rng, 10, 12, 3, 3, scale=0.3)
    attrs = {"pads": [1, 1, 1, 1], "activation": act, "act_alpha": alpha, "act_beta": beta}
    _run_conv([x, wt], attrs, isa, 2, {"x86.winograd": "on"}, constant=(1,))


@pytest.mark.parametrize("isa", ISAS)
def test_winograd_many_chunks_two_threads(rng, isa):
    """A 56x56 layer: enough chunks of tiles that each thread takes whole chunks."""
    x, wt, b = _r(rng, 1, 32, 56, 56), _r(rng, 32, 32, 3, 3, scale=0.2), _r(rng, 32)
    _run_conv([x, wt, b], {"pads": [1, 1, 1, 1], "activation": "relu"}, isa, 2, {"x86.winograd": "on"})


def test_winograd_choice(rng, conv_kinds):
    x, wt = _r(rng, 1, 16, 20, 20), _r(rng, 16, 16, 3, 3)
    _run_conv([x, wt], {"pads": [1, 1, 1, 1]}, "scalar", 1, {}, constant=(1,))
    _run_conv([x, wt], {"pads": [1, 1, 1, 1]}, "scalar", 1, {"x86.winograd": "off"}, constant=(1,))
    # strided, dilated, grouped, depthwise and runtime weights never take it, even when asked
    # (runtime weights, as in a training step, take the training Conv of ops_conv_train.py)
    on = {"x86.winograd": "on"}
    for attrs in ({"strides": [2, 2]}, {"dilations": [2, 2]}):
        _run_conv([x, wt], attrs, "scalar", 1, on, constant=(1,))
    _run_conv([x, wt[:, :8]], {"group": 2}, "scalar", 1, on, constant=(1,))
    _run_conv([x, wt[:, :1]], {"group": 16}, "scalar", 1, on, constant=(1,))
    _run_conv([x, wt], {}, "scalar", 1, on, constant=())
    _run_conv([x, wt[:, :, :1, :1]], {}, "scalar", 1, on, constant=(1,))  # 1x1
    _run_conv([x, wt[:, :, :2, :]], {}, "scalar", 1, on, constant=(1,))  # 2x3
    assert [k.split(" ")[0].split(".")[-1] for k in conv_kinds] == [
        "winograd",
        "gemm",
        "gemm",
        "gemm",
        "gemm",
        "depthwise",
        "train",
        "gemm",
        "gemm",
    ]


def test_winograd_choice_counts_the_batchs_tiles(rng, conv_kinds):
    """A 7x7 output (4 tiles an image) takes Winograd from batch 2 on (8 tiles), a 6x6 one never."""
    wt = _r(rng, 16, 16, 3, 3, scale=0.3)
    for n, size in ((1, 7), (2, 7), (8, 7), (8, 6)):
        _run_conv([_r(rng, n, 16, size, size), wt], {"pads": [1, 1, 1, 1]}, "scalar", 1, {}, constant=(1,))
    assert ["winograd" in k for k in conv_kinds] == [False, True, True, False]


def test_winograd_bad_option(rng):
    from mnn_core.errors import MnnError

    x, wt = _r(rng, 1, 4, 8, 8), _r(rng, 4, 4, 3, 3)
    with pytest.raises(MnnError, match="x86.winograd"):
        _run_conv([x, wt], {}, "scalar", 1, {"x86.winograd": "yes"}, constant=(1,))


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "n,c,o,h,w,group,act",
    [
        (1, 3, 5, 1, 1, 1, "none"),  # one pixel: one masked column panel
        (2, 37, 13, 5, 7, 1, "relu"),  # 35 columns: partial last panel, batch 2
        (1, 150, 70, 9, 9, 1, "clip"),  # K over several slices, M over several row panels
        (1, 24, 18, 17, 19, 2, "none"),  # two groups
        (1, 16, 96, 32, 32, 1, "clip"),  # many full panels, blocks split between threads
        (1, 8, 9, 3, 5, 1, "sigmoid"),  # an activation applied after the stores
    ],
)
def test_pointwise_conv_direct(rng, isa, threads, n, c, o, h, w, group, act):
    """1x1 stride-1 convolutions run as a GEMM on the NCHW input itself (no im2col copy)."""
    x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c // group, 1, 1), _r(rng, o)
    attrs = {"group": group, "activation": act, "act_alpha": 0.0, "act_beta": 6.0}
    _run_conv([x, wt, b], attrs, isa, threads, {})
    _run_conv([x, wt], attrs, isa, threads, {}, constant=(1,))


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "c,o,h,w,k,pads",
    [
        (3, 16, 45, 47, 7, [3, 3, 3, 3]),  # a stem: long rows, odd widths, the left taps start inside the padding
        (5, 7, 20, 37, 3, [1, 0, 1, 2]),  # asymmetric padding
        (4, 6, 9, 33, 1, [0, 0, 0, 0]),  # 1x1 stride 2: only even columns
        (2, 5, 7, 9, 3, [1, 1, 1, 1]),  # rows shorter than a vector: masked loads only
    ],
)
def test_stride2_im2col(rng, isa, threads, c, o, h, w, k, pads):
    """Stride-2 im2col copies rows with deinterleaving vector loads where they stay inside the row,
    and the rest of each row segment with masked ones (vf_load_even_n)."""
    x, wt, b = _r(rng, 1, c, h, w), _r(rng, o, c, k, k, scale=0.3), _r(rng, o)
    _run_conv([x, wt, b], {"pads": pads, "strides": [2, 2], "activation": "relu"}, isa, threads, NO_DCO)


@pytest.mark.parametrize("isa", ISAS)
def test_shared_chunk_threads(rng, isa):
    """Big weights and few output columns: both threads share one im2col chunk and its GEMM
    (items claimed from the pool), and a 3x3 stride-1 layer of one Winograd chunk."""
    x, wt, b = _r(rng, 1, 96, 15, 13), _r(rng, 70, 96, 3, 3, scale=0.1), _r(rng, 70)
    _run_conv([x, wt, b], {"pads": [1, 1, 1, 1], "strides": [2, 2]}, isa, 2, NO_DCO)
    _run_conv([x, wt, b], {"pads": [1, 1, 1, 1], "activation": "relu"}, isa, 2, {"x86.winograd": "on"})


@pytest.mark.parametrize(
    "shape,attrs,options",
    [
        ((1, 16, 20, 20), {"pads": [1, 1, 1, 1]}, {"x86.winograd": "on"}),  # Winograd's transformed weights
        ((1, 16, 7, 7), {"pads": [1, 1, 1, 1]}, {"x86.winograd": "off", "x86.conv_t": "on"}),  # W^T
        ((1, 16, 20, 20), {"pads": [1, 1, 1, 1], "strides": [2, 2]}, {"x86.conv_t": "off"}),  # GEMM panels
    ],
)
def test_sessions_of_one_model_share_packed_weights_safely(rng, shape, attrs, options):
    """Sessions of one graph (batch_parallel's one-image sessions, say) share the weights packed for
    them (_x86.pyx: _packed_cache); each stays correct, also after the session that packed them is gone,
    and a session of another model, or of the same arrays changed since, is not handed them."""
    import gc

    x, wt, b = _r(rng, *shape), _r(rng, 24, shape[1], 3, 3, scale=0.2), _r(rng, 24)
    graph, feeds = one_op_graph("Conv", [x, wt, b], attrs, (1, 2))
    want = run_reference("Conv", [x, wt, b], attrs)[0]
    first = Session(graph, backend="x86", fallback=False, optimize=False, threads=2, options=options)
    second = Session(graph, backend="x86", fallback=False, optimize=False, threads=1, options=options)
    wt2 = wt * -0.5  # the same shape, other values: must not reuse the first model's packing
    other_graph, _ = one_op_graph("Conv", [x, wt2, b], attrs, (1, 2))
    other = Session(other_graph, backend="x86", fallback=False, optimize=False, options=options)
    np.testing.assert_allclose(first.run(feeds)["out"], want, rtol=1e-4, atol=1e-3)
    del first
    gc.collect()
    np.testing.assert_allclose(second.run(feeds)["out"], want, rtol=1e-4, atol=1e-3)
    other_want = run_reference("Conv", [x, wt2, b], attrs)[0]
    np.testing.assert_allclose(other.run(feeds)["out"], other_want, rtol=1e-4, atol=1e-3)
    # the same array changed in place (a fine-tuning step) while `second` still holds its packing
    graph.initializers["in1"] *= -0.5
    third = Session(graph, backend="x86", fallback=False, optimize=False, options=options)
    np.testing.assert_allclose(third.run(feeds)["out"], other_want, rtol=1e-4, atol=1e-3)


def test_pool_shared_by_concurrent_sessions(rng):
    """Two sessions running at once on two Python threads (the core releases the GIL): one gets
    the pool, the other runs its items on its own thread; both stay correct."""
    import threading

    x, wt, b = _r(rng, 1, 32, 30, 30), _r(rng, 48, 32, 3, 3, scale=0.2), _r(rng, 48)
    graph, feeds = one_op_graph("Conv", [x, wt, b], {"pads": [1, 1, 1, 1]}, (1, 2))
    want = run_reference("Conv", [x, wt, b], {"pads": [1, 1, 1, 1]})[0]
    sessions = [Session(graph, backend="x86", fallback=False, optimize=False, threads=2) for _ in range(2)]
    errors = []

    def work(sess):
        try:
            for _ in range(20):
                np.testing.assert_allclose(sess.run(feeds)["out"], want, rtol=1e-4, atol=1e-3)
        except Exception as exc:  # reported below, in the test's own thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "n,c,o,h,w,k,stride,dil,pads,act",
    [
        (1, 37, 45, 3, 3, 1, 1, 1, [0, 0, 0, 0], "relu"),  # 1x1 on 3x3 planes: the input packed in place
        (2, 19, 70, 7, 7, 1, 1, 1, [0, 0, 0, 0], "clip"),  # batch 2, O not a multiple of NR
        (1, 23, 33, 7, 7, 3, 1, 1, [1, 1, 1, 1], "none"),  # 3x3 with padding: the padded copy
        (1, 13, 17, 6, 5, 3, 2, 1, [1, 0, 1, 1], "sigmoid"),  # stride 2, asymmetric pads, 3x3 output
        (1, 300, 9, 1, 1, 1, 1, 1, [0, 0, 0, 0], "none"),  # one pixel, K over several slices
        (1, 8, 5, 13, 13, 3, 4, 1, [0, 0, 0, 0], "relu"),  # stride 4, no padding: taps read in place
        (1, 40, 24, 5, 5, 3, 1, 1, [1, 1, 1, 1], "relu"),  # 5x5: 25 pixels, 24 outputs (1.5 AVX-512 vectors)
        (1, 21, 50, 9, 9, 3, 1, 1, [1, 1, 1, 1], "hard_swish"),  # 9x9: 81 pixels, activation after the store
        (2, 16, 33, 14, 14, 3, 2, 1, [1, 1, 1, 1], "clip"),  # stride 2 to 7x7, O = 2 * 16 + 1
        (1, 24, 40, 14, 14, 1, 2, 1, [0, 0, 0, 0], "relu"),  # 1x1 stride 2 unpadded: in place, every other column
        (1, 12, 20, 7, 7, 1, 1, 1, [1, 1, 1, 1], "none"),  # 1x1 with padding: zero border pixels
        (1, 17, 31, 11, 11, 3, 1, 2, [2, 2, 2, 2], "leaky_relu"),  # dilation 2: 11x11 = 121 pixels
        (1, 9, 35, 16, 16, 3, 1, 1, [1, 1, 1, 1], "relu"),  # 16x16: 256 pixels, whole vectors of them
        (1, 50, 64, 14, 14, 3, 3, 1, [1, 1, 1, 1], "none"),  # stride 3: strided copies, 5x5 output
        (1, 6, 19, 28, 28, 5, 2, 1, [2, 2, 2, 2], "tanh"),  # 5x5 kernel, stride 2, 14x14 output
        # stride 2 with whole panels in each output row (gemm_impl.h: im2col_a_panels): 42 = 3 x 14 = 7 x 6
        (1, 64, 12, 84, 84, 3, 2, 1, [1, 1, 1, 1], "none"),  # 1764 pixels: several chunks
        (1, 3, 8, 83, 83, 3, 2, 2, [2, 2, 2, 2], "relu"),  # dilation 2, 42x42 output
        (2, 5, 9, 24, 24, 3, 2, 1, [1, 1, 1, 1], "none"),  # 12x12 output (2 x 6), batch 2
    ],
)
def test_transposed_conv_matches_reference(rng, conv_kinds, isa, threads, n, c, o, h, w, k, stride, dil, pads, act):
    """C^T = X^T W^T with the pixels along the tile's rows (op_conv.c: conv_transposed), forced on
    for every shape (x86.conv_t=on): X^T packed straight into the GEMM's A panels (im2col_a), the
    bias and the activation in the GEMM epilogue, the transpose into NCHW in register blocks."""
    x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c, k, k, scale=0.2), _r(rng, o)
    attrs = {
        "pads": pads,
        "strides": [stride, stride],
        "dilations": [dil, dil],
        "activation": act,
        "act_alpha": 0.1 if act == "leaky_relu" else 0.0,
        "act_beta": 6.0,
    }
    options = {"x86.winograd": "off", "x86.conv_t": "on"}
    _run_conv([x, wt, b], attrs, isa, threads, options)
    _run_conv([x, wt], attrs, isa, threads, options, constant=(1,))
    assert {c.split(" ")[0] for c in conv_kinds} == {"x86.Conv.gemm_t"}


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize(
    "n,c,o,h,w,k,stride,pads",
    [
        (1, 16, 40, 40, 40, 3, 2, [1, 1, 1, 1]),  # 20x20 = 400 pixels in 3 chunks, one a thread
        (2, 9, 33, 23, 17, 3, 1, [1, 1, 1, 1]),  # 391 pixels: a short last chunk, batch 2
        (1, 24, 20, 15, 15, 1, 1, [0, 0, 0, 0]),  # plain 1x1: X^T packed from the input in place
    ],
)
def test_transposed_conv_chunk_per_thread(rng, conv_kinds, isa, n, c, o, h, w, k, stride, pads):
    """At three threads a one-chunk plane is cut into a chunk per thread, each taken whole by one
    thread (op_conv.c: conv_t_chunk_task) on its own part of the scratch."""
    x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c, k, k, scale=0.2), _r(rng, o)
    attrs = {"pads": pads, "strides": [stride, stride], "activation": "relu"}
    _run_conv([x, wt, b], attrs, isa, 3, {"x86.winograd": "off", "x86.conv_t": "on"})
    assert {c.split(" ")[0] for c in conv_kinds} == {"x86.Conv.gemm_t"}


def test_transposed_conv_option(rng, conv_kinds):
    """x86.conv_t=off keeps a 7x7 plane on the usual GEMM; a bad value names the choices."""
    from mnn_core.errors import BackendError

    x, wt = _r(rng, 1, 16, 7, 7), _r(rng, 32, 16, 1, 1)
    _run_conv([x, wt], {}, "avx2" if "avx2" in _supported() else "scalar", 1, {"x86.conv_t": "off"}, constant=(1,))
    assert {c.split(" ")[0] for c in conv_kinds} == {"x86.Conv.gemm"}
    with pytest.raises(BackendError, match="x86.conv_t"):
        _run_conv([x, wt], {}, "scalar", 1, {"x86.conv_t": "sometimes"}, constant=(1,))


def _supported():
    from mnn_x86 import isa as x86_isa

    return x86_isa.supported()


def test_transposed_conv_choice(rng, conv_kinds):
    """The lane rule (_x86._transposed_pays) on AVX-512's 6x32 tiles and AVX2's 6x16: plain 1x1 on
    7x7 planes (the usual orientation fills 49 of 64 columns), not on 14x14 or 13x13; im2col
    convolutions where the swapped tiles use at least 4 % more lanes, up to 28x28 when K is long
    enough to hide the transpose; never the stem's 112x112."""
    from mnn_x86 import _x86

    def pays(pixels, o, taps, plain, mr=6, nr=32, vlen=16):
        return _x86._transposed_pays(pixels, o, taps, plain, mr, nr, vlen)

    assert pays(49, 512, 256, True) and pays(49, 960, 160, True) and pays(49, 160, 960, True)
    assert not pays(196, 576, 96, True) and not pays(196, 64, 384, True) and not pays(169, 64, 512, True)
    assert not pays(784, 32, 144, True)
    assert pays(49, 512, 4608, False) and pays(196, 256, 1152, False) and pays(196, 256, 128, False)
    # 28x28: only with a long K, and only while output channels pad the rows more than pixels pad
    # the columns: 128 channels fill 140 rows of 14-row tiles (it pays), 132 of 6-row ones (not)
    assert pays(784, 128, 576, False, 14) and not pays(784, 128, 64, False, 14)
    assert not pays(784, 128, 576, False)
    assert not pays(12544, 64, 147, False) and not pays(3136, 24, 96, True)
    assert not pays(49, 512, 4608, True, 6, 16, 8)  # AVX2, 1x1: 56 columns for 49 pixels, 54 rows
    assert pays(49, 512, 2304, False, 6, 16, 8)  # AVX2, im2col: 4.5 % more lanes
    assert not pays(196, 256, 1152, False, 6, 16, 8) and not pays(784, 128, 576, False, 6, 16, 8)  # 2-3 %
    assert pays(9, 64, 64, True, 6, 16, 8) and pays(2, 16, 144, False, 4, 8, 1)  # 16 columns for 9 pixels
    assert not pays(49, 20, 200, False)  # 20 outputs fill 32 columns worse than 49 pixels fill 64
    assert not pays(0, 64, 9, False) and not pays(49, 0, 9, False)
    x, wt = _r(rng, 1, 16, 3, 3), _r(rng, 16, 16, 3, 3)
    _run_conv(
        [np.ascontiguousarray(x[:, :, :1, :2]), wt], {"pads": [1, 1, 1, 1]}, "scalar", 1, {}, constant=(1,)
    )  # 1x2 output: gemm_t
    _run_conv([x, wt[:, :8]], {"pads": [1, 1, 1, 1], "group": 2}, "scalar", 1, {}, constant=(1,))  # grouped: no
    _run_conv([x, wt], {"pads": [1, 1, 1, 1]}, "scalar", 1, {"x86.winograd": "on"}, constant=(1,))
    assert [k.split(" ")[0].split(".")[-1] for k in conv_kinds] == ["gemm_t", "gemm", "winograd"]


@pytest.mark.skipif("avx512" not in _supported(), reason="the rule is AVX-512's (this CPU lacks it)")
@pytest.mark.parametrize("threads", [1, 2])
def test_stride2_transposed_at_even_lanes(rng, conv_kinds, threads, avx512_tile):
    """With x86.direct_oc off, on AVX-512's 14-row tile a stride-2 3x3 runs transposed where that fills at least as many
    lanes as the usual orientation (ops_conv._stride2_transposed; the lane rule asks for 4 % more): 48 -> 96 and
    80 -> 80 on 40x40, 128 -> 256 on 20x20. The same 48 -> 96 at stride 1 (Winograd off), on AVX2, or where the
    usual orientation fills more (56 outputs, an 8x8 output plane) keeps the usual GEMM. All match the reference;
    the other tiles (not measured) keep the lane rule's choice."""
    if avx512_tile != "14x32":
        pytest.skip("the rule is the 14-row tile's (ops_conv.STRIDE2_TRANSPOSED_MR)")
    relu = {"pads": [1, 1, 1, 1], "strides": [2, 2], "activation": "relu"}
    for c, o, hw in [(48, 96, 40), (80, 80, 40), (128, 256, 20)]:
        x, wt, b = _r(rng, 2, c, hw, hw), _r(rng, o, c, 3, 3, scale=0.1), _r(rng, o)
        _run_conv([x, wt, b], relu, "avx512", threads, NO_DCO)
    assert [k.split(" ")[0].split(".")[-1] for k in conv_kinds] == ["gemm_t"] * 3
    conv_kinds.clear()
    x, wt = _r(rng, 2, 48, 20, 20), _r(rng, 96, 48, 3, 3, scale=0.1)
    _run_conv([x, wt], {"pads": [1, 1, 1, 1]}, "avx512", threads, {"x86.winograd": "off"}, constant=(1,))
    _run_conv([_r(rng, 2, 48, 16, 16), _r(rng, 56, 48, 3, 3, scale=0.1)], relu, "avx512", threads, NO_DCO, (1,))
    if "avx2" in _supported():
        _run_conv([_r(rng, 2, 48, 40, 40), wt], relu, "avx2", threads, {}, constant=(1,))
    assert [k.split(" ")[0].split(".")[-1] for k in conv_kinds] == ["gemm"] * (2 + ("avx2" in _supported()))


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [2, 3, 5, 16])
@pytest.mark.parametrize("shape", [(1, 600, 37, 41, 70), (1, 8, 3, 3, 5)])
def test_pool_parts_run_every_item_once(rng, isa, threads, shape):
    """The pool's owned parts (op_threadpool.c) with more threads than cores (parts left to
    thieves while their owners wait for a core) and more than items (empty parts): every GEMM
    block runs, so the output is whole (a skipped item would leave the caller waiting)."""
    n, c, h, w, o = shape
    _run_conv([_r(rng, n, c, h, w, scale=0.1), _r(rng, o, c, 1, 1, scale=0.1), _r(rng, o)], {}, isa, threads, {})
