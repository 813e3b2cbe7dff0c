"""Training kernels on x86 against the reference backend, beyond the schema
samples the conformance suite runs: the LeNet-5 shapes of the training
benchmark, odd sizes, groups, strides, dilations and pads, the forward Conv of
a training step (weights as graph inputs), several threads, and a whole
compiled training step placed entirely on x86."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, compiled_lenet

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.session import Session


def run_x86(op, inputs, attrs, isa, threads, n_out=1):
    graph = Graph(name=op)
    feeds = {}
    for i, arr in enumerate(inputs):
        graph.inputs[f"in{i}"] = TensorInfo(arr.shape, str(arr.dtype))
        feeds[f"in{i}"] = arr
    outs = [f"out{i}" for i in range(n_out)]
    graph.nodes.append(Node(op, list(feeds), outs, dict(attrs), op.lower()))
    graph.outputs = outs
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads, options={"x86.isa": isa})
    assert set(sess.plan.backends()) == {"x86"}
    got = [sess.run(feeds)[o] for o in outs]
    again = [sess.run(feeds)[o] for o in outs]  # a second run on the same state gives the same
    for a, b in zip(got, again):
        np.testing.assert_array_equal(a, b)
    return got


def check(op, inputs, attrs, isa, threads=1, n_out=1, rtol=1e-4, atol=1e-4):
    got = run_x86(op, inputs, attrs, isa, threads, n_out)
    want = run_reference(op, list(inputs), attrs)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{op} {attrs} x86 {isa} threads {threads}")


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# (x shape, weight shape, attrs): LeNet's two convolutions, then odd geometries
CONVS = [
    ((64, 1, 28, 28), (6, 1, 5, 5), {"pads": [2, 2, 2, 2]}),
    ((64, 6, 14, 14), (16, 6, 5, 5), {}),
    ((3, 5, 11, 9), (7, 5, 3, 3), {"pads": [1, 0, 2, 1]}),
    ((2, 4, 13, 12), (6, 2, 3, 2), {"group": 2, "strides": [2, 3], "pads": [1, 1, 1, 1]}),
    ((1, 3, 17, 15), (5, 3, 3, 3), {"dilations": [2, 3], "pads": [2, 1, 0, 3]}),
    ((5, 2, 7, 7), (3, 2, 1, 1), {}),
    # the register tiles' edges: weight-gradient tiles of 4 (or 3) output channels x 5 (or 4) im2col rows
    # leave 1 and 1 / 4 and 2 over; GEMM column tails of 17 and 12 positions (P = 49, 108)
    ((2, 1, 8, 8), (9, 1, 2, 2), {}),
    ((3, 2, 9, 12), (4, 2, 1, 3), {"pads": [0, 1, 0, 1]}),
    # stride 1 (the direct path) with groups, depthwise, asymmetric pads and a dilation
    ((2, 4, 9, 8), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    ((2, 3, 7, 7), (3, 1, 3, 3), {"group": 3, "pads": [0, 2, 1, 0]}),
    ((3, 5, 12, 11), (10, 1, 3, 2), {"group": 5, "dilations": [1, 2], "pads": [2, 0, 0, 1]}),
]


def _conv_attrs(w, attrs):
    return {
        "kernel_shape": list(w[2:]),
        "strides": [1, 1],
        "pads": [0, 0, 0, 0],
        "dilations": [1, 1],
        "group": 1,
        **attrs,
    }


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("xs,ws,attrs", CONVS)
def test_conv_backward(isa, threads, xs, ws, attrs, rng):
    from mnn_core.backend.kit.geometry import conv_geometry

    full = _conv_attrs(ws, attrs)
    out = conv_geometry(xs, ws, {**full, "auto_pad": "NOTSET"})["out"]
    dy, x, w = f32(rng, *out), f32(rng, *xs), f32(rng, *ws)
    check("ConvGradWeight", [dy, x], full, isa, threads, n_out=2, rtol=1e-3, atol=1e-3)
    check("ConvGradWeight", [dy, x], full, isa, threads, n_out=1, rtol=1e-3, atol=1e-3)  # dw only
    check("ConvGradInput", [dy, w], {**full, "input_shape": list(xs)}, isa, threads)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("activation", ["none", "relu"])
@pytest.mark.parametrize("xs,ws,attrs", CONVS)
def test_conv_forward_runtime_weights(isa, threads, activation, xs, ws, attrs, rng):
    """Weights fed as graph inputs, as in a training step: the x86 training Conv path."""
    full = {**_conv_attrs(ws, attrs), "auto_pad": "NOTSET", "activation": activation}
    x, w, b = f32(rng, *xs), f32(rng, *ws), f32(rng, ws[0])
    check("Conv", [x, w, b], full, isa, threads)
    check("Conv", [x, w], full, isa, threads)


POOLS = [
    ((64, 6, 28, 28), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((64, 16, 10, 10), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((2, 3, 37, 41), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((2, 3, 9, 35), {"kernel_shape": [3, 3], "strides": [1, 1]}),
    ((1, 2, 11, 40), {"kernel_shape": [3, 2], "strides": [3, 3], "dilations": [1, 2]}),
    ((1, 3, 7, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 2, 7, 7), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    ((64, 16, 32, 32), {"kernel_shape": [2, 2], "strides": [2, 2]}),  # 2x2 past the threads' threshold (1M)
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("xs,attrs", POOLS)
def test_max_pool_grad(isa, threads, xs, attrs, rng):
    from mnn_core.ops.conv_grad import pool_grad_geometry

    full = {"strides": [], "pads": [], "dilations": [], "ceil_mode": 0, **attrs}
    x = np.round(f32(rng, *xs) * 2) / 2  # coarse values: many windows hold ties
    dy = f32(rng, *pool_grad_geometry(xs, full)["out"])
    check("MaxPoolGrad", [dy, x], attrs, isa, threads, rtol=0, atol=1e-6)


@pytest.mark.parametrize("isa", ISAS)
def test_max_pool_grad_ties_go_to_the_first(isa, rng):
    x = np.zeros((1, 1, 4, 36), np.float32)  # every window a tie: all of dy to each window's first tap
    dy = f32(rng, 1, 1, 2, 18)
    got = run_x86("MaxPoolGrad", [dy, x], {"kernel_shape": [2, 2], "strides": [2, 2]}, isa, 1)[0]
    want = np.zeros_like(x)
    want[0, 0, ::2, ::2] = dy[0, 0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("shape", [(2, 3, 28, 28), (1, 2, 9, 37), (1, 1, 2, 66)])
def test_max_pool_grad_2x2_special_values(isa, shape, rng):
    """The 2x2 stride-2 path: windows of -inf, NaN and ties pick the reference's tap (odd edges left out)."""
    x = np.round(f32(rng, *shape))
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, flat.size // 5, replace=False)] = -np.inf
    flat[rng.choice(flat.size, flat.size // 10, replace=False)] = np.nan
    x[..., :2, :4] = -np.inf  # two whole windows of -inf: dy to tap 0
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    dy = f32(rng, shape[0], shape[1], shape[2] // 2, shape[3] // 2)
    check("MaxPoolGrad", [dy, x], attrs, isa, 1, rtol=0, atol=0)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "xs,attrs",
    [
        ((64, 6, 28, 28), {}),
        ((3, 2, 9, 37), {}),
        ((2, 3, 20, 66), {}),
        ((1, 1, 2, 2), {}),
        ((64, 16, 32, 32), {}),  # past the threads' threshold (1M inputs)
        ((2, 2, 7, 9), {"ceil_mode": 1}),  # partial windows: the general kernel
        ((2, 2, 8, 8), {"pads": [1, 1, 1, 1]}),  # padded: the general kernel
    ],
)
def test_max_pool_2x2_forward(isa, threads, xs, attrs, rng):
    """MaxPool 2x2 / stride 2 (its own path): odd edges, -inf and NaN windows, as the reference."""
    x = np.round(f32(rng, *xs))
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, flat.size // 5, replace=False)] = -np.inf
    if not attrs:  # (the general kernel's max drops NaNs: not this path's business)
        flat[rng.choice(flat.size, max(flat.size // 20, 1), replace=False)] = np.nan
    full = {
        "kernel_shape": [2, 2],
        "strides": [2, 2],
        "pads": [0, 0, 0, 0],
        "dilations": [1, 1],
        "ceil_mode": 0,
        "auto_pad": "NOTSET",
        **attrs,
    }
    check("MaxPool", [x], full, isa, threads, rtol=0, atol=0)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "m,n,k,attrs,bias",
    [
        (64, 120, 400, {"transB": 1, "activation": "relu"}, True),  # LeNet's fc1 forward
        (64, 400, 120, {}, False),  # its dx
        (120, 400, 64, {"transA": 1}, False),  # its dw
        (7, 13, 9, {"transB": 1}, True),  # tile edges: 7 = 4 + 3 rows, 13 = 5 + 5 + 3 columns
        (5, 33, 17, {"transA": 1, "activation": "relu"}, True),
        (1, 1, 1, {}, False),
        (256, 255, 257, {"transB": 1}, True),  # past the threads' threshold (16M products)
        (257, 256, 255, {"activation": "relu"}, True),
        (9, 10, 31, {"transA": 1, "transB": 1}, False),  # both transposed: the inference kernel
    ],
)
def test_gemm_runtime_operands(isa, threads, m, n, k, attrs, bias, rng):
    """Gemm with B a graph input (a training step's): the unpacked path against the reference."""
    a = f32(rng, *((k, m) if attrs.get("transA") else (m, k)))
    b = f32(rng, *((n, k) if attrs.get("transB") else (k, n)))
    full = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0, **attrs}
    ins = [a, b, f32(rng, n)] if bias else [a, b]
    check("Gemm", ins, full, isa, threads)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
def test_lenet_step_ops(isa, threads, rng):
    """The element-wise, reduction, loss and update ops at the benchmark's shapes."""
    y = np.maximum(f32(rng, 64, 6, 28, 28), 0)
    check("ReluGrad", [f32(rng, 64, 6, 28, 28), y], {}, isa, threads, rtol=0, atol=0)
    check("ReluGrad", [f32(rng, 64, 83), np.maximum(f32(rng, 64, 83), 0)], {}, isa, threads, rtol=0, atol=0)
    big = f32(rng, 64, 16, 32, 33)  # past the threads' threshold (1M elements)
    check("ReluGrad", [f32(rng, *big.shape), big], {}, isa, threads, rtol=0, atol=0)
    for src, dst in [((64, 10), (10,)), ((64, 120), (120,)), ((5, 7, 3), (7, 1)), ((3, 1, 5), (1,))]:
        check("SumToShape", [f32(rng, *src)], {"shape": list(dst)}, isa, threads)
    logits, target = f32(rng, 64, 10), rng.integers(0, 10, 64)
    check("SoftmaxCrossEntropy", [logits, target], {}, isa, threads)
    check("SoftmaxCrossEntropyGrad", [np.float32(1.0).reshape(()), logits, target], {}, isa, threads)
    check(
        "SoftmaxCrossEntropyGrad",
        [np.float32(0.5).reshape(()), logits, target.astype(np.int32)],
        {"label_smoothing": 0.1, "ignore_index": 3},
        isa,
        threads,
    )
    for n in (6 * 25, 6, 16 * 150, 16, 120 * 400, 120, 10, 64 * 1024 + 3):
        p, g, buf = f32(rng, n), f32(rng, n), f32(rng, n)
        lr = np.float32(0.01).reshape(())
        check("SGDMomentumUpdate", [p, g, buf, lr], {"momentum": 0.9}, isa, threads, n_out=2, rtol=1e-5, atol=1e-6)
        check(
            "SGDMomentumUpdate",
            [p, g, buf, lr, np.float32(1).reshape(())],
            {"momentum": 0.9, "dampening": 0.1, "nesterov": 1, "weight_decay": 1e-3},
            isa,
            threads,
            n_out=2,
            rtol=1e-5,
            atol=1e-6,
        )
        check("SGDUpdate", [p, g, lr], {"weight_decay": 1e-4}, isa, threads, rtol=1e-5, atol=1e-6)
        m, v = f32(rng, n), np.abs(f32(rng, n))
        check(
            "AdamUpdate",
            [p, g, m, v, lr, np.float32(7).reshape(())],
            {"weight_decay": 0.01, "decoupled": 1},
            isa,
            threads,
            n_out=3,
            rtol=1e-4,
            atol=1e-5,
        )


def test_cross_entropy_bad_class_is_a_clear_error(rng):
    from mnn_core.errors import MnnError

    with pytest.raises(MnnError, match="out of range"):
        run_x86("SoftmaxCrossEntropy", [f32(rng, 4, 3), np.array([0, 1, 3, 2])], {}, "scalar", 1)


def _lenet_losses(backend, threads, steps=12):
    _, step = compiled_lenet(backend, threads)
    rng = np.random.default_rng(0)
    x, y = rng.random((16, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 16)
    losses = [step(x, y) for _ in range(steps)]
    return losses, step.session.plan.backends(), len(step.session.plan)


@pytest.mark.parametrize("threads", [1, 2])
def test_training_step_on_x86_matches_reference(threads):
    """A whole compiled LeNet step, every op on x86, follows the reference backend's losses."""
    got, placed, n = _lenet_losses("x86", threads)
    want, _, _ = _lenet_losses("reference", 1)
    assert placed == {"x86": n}
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-4)
    assert got[-1] < got[0]
