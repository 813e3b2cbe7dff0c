"""express: Var behaviour, eager and lazy modes, and every gradient rule against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import express as E
from mnn_core.errors import MnnError
from mnn_core.express import functional as F
from mnn_core.express.grad_rules import RULES


def r(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed + sum(shape)).uniform(low, high, size=shape)


def apart(*shape, seed=0):
    """Values at least 0.1 apart: no ties for max-like ops, no kinks within eps of a sample."""
    n = int(np.prod(shape))
    v = np.random.default_rng(seed).permutation(n).astype(np.float64) * 0.1 - n * 0.05 + 0.05 * 0.37
    return v.reshape(shape)


# -- every rule, against finite differences (float64, eager) -------------------------------------

LABELS = np.array([1, 0, 3, 2, 3, 1])

CASES = {
    "Add": (lambda a, b: a + b, [r(3, 4), r(4)]),
    "Sub": (lambda a, b: a - b, [r(2, 1, 3), r(4, 1)]),
    "Mul": (lambda a, b: a * b, [r(3, 4), r(3, 1)]),
    "Div": (lambda a, b: a / b, [r(3, 4), r(4, low=0.5, high=2)]),
    "Pow": (lambda a, b: a**b, [r(3, 4, low=0.5, high=2), r(4)]),
    "Max": (lambda a, b: F.maximum(a, b), [apart(3, 4), apart(4, seed=1)]),
    "Min": (lambda a, b: F.minimum(a, b), [apart(3, 4), apart(4, seed=1)]),
    "Where": (lambda a, b: F.where(E.Var(r(3, 4) > 0), a, b), [r(3, 4), r(4)]),
    "Relu": (F.relu, [apart(3, 5)]),
    "Clip": (F.relu6, [apart(4, 5) * 20]),
    "LeakyRelu": (lambda x: F.leaky_relu(x, 0.1), [apart(3, 5)]),
    "Sigmoid": (F.sigmoid, [r(3, 5, low=-3, high=3)]),
    "Tanh": (F.tanh, [r(3, 5, low=-3, high=3)]),
    "Gelu": (F.gelu, [r(3, 5, low=-3, high=3)]),
    "Silu": (F.silu, [r(3, 5, low=-3, high=3)]),
    "HardSwish": (F.hardswish, [apart(4, 5)]),
    "HardSigmoid": (F.hardsigmoid, [apart(4, 5) * 5]),
    "Softplus": (F.softplus, [r(3, 5, low=-3, high=3)]),
    "Exp": (F.exp, [r(3, 4)]),
    "Log": (F.log, [r(3, 4, low=0.5, high=2)]),
    "Sqrt": (F.sqrt, [r(3, 4, low=0.5, high=2)]),
    "Neg": (F.neg, [r(3, 4)]),
    "Abs": (F.abs, [apart(3, 4)]),
    "Reciprocal": (lambda x: E.apply("Reciprocal", x), [r(3, 4, low=0.5, high=2)]),
    "Erf": (F.erf, [r(3, 4)]),
    "Sin": (F.sin, [r(3, 4)]),
    "Cos": (F.cos, [r(3, 4)]),
    "Identity": (lambda x: E.apply("Identity", x), [r(3, 4)]),
    "Conv": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [r(2, 3, 7, 6), r(4, 3, 3, 3), r(4)]),
    "Conv.group": (
        lambda x, w: F.conv2d(x, w, None, padding=(2, 1), dilation=2, groups=2),
        [r(1, 4, 6, 6), r(6, 2, 3, 2)],
    ),
    "Conv.relu": (
        lambda x, w: E.apply("Conv", x, w, pads=[1, 1, 1, 1], activation="relu"),
        [r(1, 2, 5, 5), r(3, 2, 3, 3)],
    ),
    "MatMul": (lambda a, b: a @ b, [r(3, 4), r(4, 5)]),
    "MatMul.batched": (lambda a, b: a @ b, [r(2, 1, 3, 4), r(3, 4, 2)]),
    "MatMul.nd_2d": (lambda a, b: a @ b, [r(2, 3, 4), r(4, 5)]),
    "MatMul.vector": (lambda a, b: a @ b, [r(4), r(2, 4, 3)]),
    "MatMul.matvec": (lambda a, b: a @ b, [r(3, 4), r(4)]),
    "Gemm": (lambda a, b, c: E.apply("Gemm", a, b, c, transA=1, alpha=0.5, beta=2.0), [r(4, 3), r(4, 5), r(5)]),
    "Gemm.transB": (lambda a, b, c: E.apply("Gemm", a, b, c, transB=1), [r(3, 4), r(5, 4), r(3, 5)]),
    "Gemm.both": (lambda a, b: E.apply("Gemm", a, b, transA=1, transB=1), [r(4, 3), r(5, 4)]),
    "Linear.3d": (lambda x, w, b: F.linear(x, w, b), [r(2, 3, 4), r(5, 4), r(5)]),
    "MaxPool": (lambda x: F.max_pool2d(x, 2), [apart(2, 2, 6, 6)]),
    "MaxPool.padded": (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), [apart(1, 2, 7, 7)]),
    "AveragePool": (lambda x: F.avg_pool2d(x, 3, 2, 1), [r(2, 2, 7, 7)]),
    "AveragePool.exclude_pad": (
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
        [r(1, 2, 6, 6)],
    ),
    "GlobalAveragePool": (lambda x: F.adaptive_avg_pool2d(x, 1), [r(2, 3, 4, 5)]),
    "GlobalMaxPool": (lambda x: E.apply("GlobalMaxPool", x), [apart(2, 3, 3, 3)]),
    "BatchNormalization": (
        lambda x, s, b: F.batch_norm(x, E.Var(r(3)), E.Var(r(3, low=0.5, high=2)), s, b),
        [r(2, 3, 4, 4), r(3), r(3)],
    ),
    "BatchNormTraining": (
        lambda x, s, b: F.batch_norm(x, None, None, s, b, training=True),
        [r(4, 3, 3, 3), r(3), r(3)],
    ),
    "BatchNormTraining.1d": (lambda x, s, b: F.batch_norm(x, None, None, s, b, training=True), [r(6, 5), r(5), r(5)]),
    "LayerNormalization": (lambda x, s, b: F.layer_norm(x, (4,), s, b), [r(2, 3, 4), r(4), r(4)]),
    "LayerNormalization.2axes": (lambda x: F.layer_norm(x, (3, 4)), [r(2, 3, 4)]),
    "Softmax": (lambda x: F.softmax(x, 1), [r(3, 5, 2)]),
    "LogSoftmax": (lambda x: F.log_softmax(x, -1), [r(3, 5)]),
    "SoftmaxCrossEntropy": (lambda x: F.cross_entropy(x, LABELS), [r(6, 4)]),
    "SoftmaxCrossEntropy.smooth": (
        lambda x: F.cross_entropy(x, LABELS, reduction="sum", label_smoothing=0.2, ignore_index=3),
        [r(6, 4)],
    ),
    "SoftmaxCrossEntropy.none": (lambda x: F.cross_entropy(x, LABELS[:3], reduction="none"), [r(3, 4)]),
    "SoftmaxCrossEntropy.soft": (lambda x: F.cross_entropy(x, E.Var(np.full((2, 3), 1 / 3))), [r(2, 3)]),
    "ReduceSum": (lambda x: F.sum(x, axis=1), [r(3, 4, 2)]),
    "ReduceMean": (lambda x: F.mean(x, axis=(0, 2), keepdims=True), [r(3, 4, 2)]),
    "ReduceMax": (lambda x: F.amax(x, axis=-1), [apart(3, 4)]),
    "ReduceMin": (lambda x: F.amin(x), [apart(3, 4)]),
    "ReduceL2": (lambda x: E.apply("ReduceL2", x, axes=[1]), [r(3, 4)]),
    "Reshape": (lambda x: x.reshape(4, 3), [r(3, 4)]),
    "Flatten": (lambda x: F.flatten(x, 1), [r(2, 3, 4)]),
    "Squeeze": (lambda x: x.squeeze(1), [r(3, 1, 4)]),
    "Unsqueeze": (lambda x: x.unsqueeze(0), [r(3, 4)]),
    "Transpose": (lambda x: x.permute(2, 0, 1), [r(2, 3, 4)]),
    "Concat": (lambda a, b: F.cat([a, b], 1), [r(2, 3), r(2, 2)]),
    "Split": (lambda x: F.split(x, [1, 3], dim=1)[1], [r(2, 4)]),
    "Slice": (lambda x: x[1:, ::2], [r(3, 5)]),
    "Gather": (lambda x: x[:, [2, 0, 2]], [r(3, 4)]),
    "Expand": (lambda x: F.expand(x, (3, 4)), [r(1, 4)]),
    "Tile": (lambda x: E.apply("Tile", x, repeats=[2, 3]), [r(2, 3)]),
    "Pad": (lambda x: F.pad(x, (1, 2, 0, 1)), [r(2, 3)]),
    "MSE": (lambda a, b: F.mse_loss(a, b), [r(3, 4), r(3, 4)]),
    "BCEWithLogits": (lambda x: F.binary_cross_entropy_with_logits(x, E.Var(r(3, 4, low=0, high=1))), [r(3, 4)]),
    "Embedding": (lambda w: F.embedding(E.Var(np.array([[1, 0], [1, 3]])), w), [r(4, 3)]),
    "NLL": (lambda x: F.nll_loss(F.log_softmax(x, 1), LABELS), [r(6, 4)]),
    "ConvTranspose": (
        lambda x, w, b: E.apply("ConvTranspose", x, w, b, strides=[2, 2], pads=[1, 0, 1, 1], output_padding=[1, 0]),
        [r(2, 4, 3, 4), r(4, 3, 3, 3), r(3)],
    ),
    "ConvTranspose.group": (
        lambda x, w: E.apply("ConvTranspose", x, w, group=2, dilations=[2, 1]),
        [r(1, 4, 3, 3), r(4, 1, 2, 3)],
    ),
    "InstanceNormalization": (lambda x, s, b: E.apply("InstanceNormalization", x, s, b), [r(2, 3, 4, 3), r(3), r(3)]),
    "PRelu": (lambda x, s: E.apply("PRelu", x, s), [apart(2, 3, 4), r(3, 1)]),
    "Elu": (lambda x: E.apply("Elu", x, alpha=0.7), [apart(3, 4)]),
    "Mish": (lambda x: E.apply("Mish", x), [r(3, 4, low=-3, high=3)]),
    "Tan": (lambda x: E.apply("Tan", x), [r(3, 4)]),
    "Sinh": (lambda x: E.apply("Sinh", x), [r(3, 4)]),
    "Cosh": (lambda x: E.apply("Cosh", x), [r(3, 4)]),
    "Atan": (lambda x: E.apply("Atan", x), [r(3, 4)]),
    "Asin": (lambda x: E.apply("Asin", x), [r(3, 4, low=-0.8, high=0.8)]),
    "Acos": (lambda x: E.apply("Acos", x), [r(3, 4, low=-0.8, high=0.8)]),
    "Softsign": (lambda x: E.apply("Softsign", x), [apart(3, 4)]),
    "CumSum": (lambda x: E.apply("CumSum", x, axis=1, exclusive=1), [r(3, 4)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_finite_differences(case):
    fn, inputs = CASES[case]
    assert E.gradcheck(fn, *inputs, rtol=1e-5, atol=1e-7)


def test_every_differentiable_forward_op_has_a_checked_rule():
    checked = {c.split(".")[0] for c in CASES} | {"Floor", "Ceil", "Sign", "Round", "Cast"}  # Cast: below
    missing = sorted(set(RULES) - checked)
    assert not missing, f"rules without a finite-difference case: {missing}"


def test_cast_passes_the_gradient_back_in_the_input_dtype():
    x = E.Var(np.array([1.5, -2.0], np.float32), requires_grad=True)
    (F.cast(x, "float16") * 3).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), [3, 3])


# -- Var ------------------------------------------------------------------------------------------


def test_var_wraps_numpy_and_overloads_operators():
    a = E.Var(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert a.shape == (2, 3) and a.dtype == np.float32 and a.ndim == 2 and len(a) == 2
    np.testing.assert_allclose((2 * a + 1 - a / 2).numpy(), 2 * a.numpy() + 1 - a.numpy() / 2)
    np.testing.assert_allclose((a**2).numpy(), a.numpy() ** 2)
    np.testing.assert_allclose((-a).numpy(), -a.numpy())
    np.testing.assert_allclose((a @ a.T).numpy(), a.numpy() @ a.numpy().T)
    np.testing.assert_array_equal((a > 2).numpy(), a.numpy() > 2)
    np.testing.assert_array_equal((a <= 2).numpy(), a.numpy() <= 2)
    np.testing.assert_array_equal((a == 1).numpy(), a.numpy() == 1)
    np.testing.assert_array_equal((a != 1).numpy(), a.numpy() != 1)
    np.testing.assert_allclose((np.ones(3, np.float32) * a).numpy(), a.numpy())  # ndarray defers to Var
    assert np.asarray(a).shape == (2, 3)
    assert E.tensor([1.0, 2.0]).dtype == np.float32 and E.tensor([1, 2]).dtype == np.int64


def test_indexing_matches_numpy():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    v = E.Var(x)
    for index in [
        1,
        -1,
        (slice(None), 2),
        (Ellipsis, 1),
        (None, 0),
        (slice(1, None), slice(None, None, 2)),
        (slice(None), [3, 0, 3]),
        (2, slice(3, 0, -1), None),
        (slice(None, None, -1),),
    ]:
        np.testing.assert_array_equal(v[index].numpy(), x[index], err_msg=str(index))
    with pytest.raises(IndexError):
        v[3]


def test_shape_methods_and_reductions():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    v = E.Var(x)
    assert v.reshape(6, 4).shape == (6, 4) and v.reshape((-1,)).shape == (24,)
    assert v.transpose(0, 2).shape == (4, 3, 2) and v.T.shape == (4, 3, 2)
    assert v.flatten().shape == (24,) and v.flatten(1).shape == (2, 12)
    np.testing.assert_allclose(v.sum().item(), x.sum())
    np.testing.assert_allclose(v.mean(axis=1).numpy(), x.mean(axis=1))
    np.testing.assert_allclose(v.max(axis=-1, keepdims=True).numpy(), x.max(axis=-1, keepdims=True))
    np.testing.assert_array_equal(v.argmax(axis=1).numpy(), x.argmax(axis=1))


def test_backward_accumulates_and_no_grad_stops_the_tape():
    x = E.Var(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 3)
    with E.no_grad():
        y = x * 2
    assert not y.requires_grad
    assert not (x.detach() * 2).requires_grad


def test_shared_subexpression_gets_both_contributions():
    x = E.Var(np.array([0.5, -1.5]), requires_grad=True)
    y = x * x
    (y + y * x).sum().backward()  # d/dx (x^2 + x^3) = 2x + 3x^2
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + 3 * x.numpy() ** 2)


def test_grad_of_intermediate_and_unused_inputs():
    x = E.Var(np.array([1.0, 2.0]), requires_grad=True)
    z = E.Var(np.array([5.0]), requires_grad=True)
    h = x * 3
    gh, gx, gz = E.grad((h * h).sum(), [h, x, z])
    np.testing.assert_allclose(gh.numpy(), 2 * h.numpy())
    np.testing.assert_allclose(gx.numpy(), 18 * x.numpy())
    assert gz is None and x.grad is None


def test_backward_errors_are_clear():
    with pytest.raises(MnnError, match="requires_grad"):
        E.Var(np.ones(2)).sum().backward()
    x = E.Var(np.ones(2), requires_grad=True)
    with pytest.raises(MnnError, match="gradient argument"):
        (x * 2).backward()
    (x * 2).backward(np.array([1.0, 0.5]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 1.0])
    with pytest.raises(MnnError, match="floating-point"):
        E.Var(np.array([1, 2]), requires_grad=True)


# -- lazy mode --------------------------------------------------------------------------------------


def _mlp(x, w1, w2):
    return F.log_softmax(F.linear(F.relu(F.linear(x, w1)), w2), -1)


def test_lazy_mode_builds_a_graph_that_computes_what_eager_does():
    rng = np.random.default_rng(0)
    w1, w2 = E.Var(rng.standard_normal((8, 5)).astype("f")), E.Var(rng.standard_normal((3, 8)).astype("f"))
    with E.lazy("mlp") as t:
        x = t.input("x", ("N", 5))
        assert x.is_lazy
        t.output(_mlp(x, w1, w2), "y")
    graph = t.build()
    assert isinstance(graph, mnn.Graph) and graph.inputs["x"].shape == ("N", 5) and graph.outputs == ["y"]
    assert {"Gemm", "Relu", "LogSoftmax"} <= set(graph.ops_histogram())
    xv = rng.standard_normal((4, 5)).astype("f")
    got = mnn.Session(graph, backend="reference").run({"x": xv})["y"]
    np.testing.assert_allclose(got, _mlp(E.Var(xv), w1, w2).numpy(), rtol=1e-5, atol=1e-6)


def test_lazy_var_has_no_value_and_batch_capture_is_reported():
    with E.lazy() as t:
        x = t.input("x", ("N", 4))
        with pytest.raises(MnnError, match="no value"):
            x.numpy()
        with pytest.raises(mnn.GraphError, match="2\\*N is symbolic|symbolic dimension '2\\*N'"):
            x.reshape(x.shape[0] * 2, 2)  # would capture the batch size


def test_backward_in_lazy_mode_traces_the_gradient_graph():
    rng = np.random.default_rng(1)
    w = E.Var(rng.standard_normal((3, 4)), requires_grad=True)
    xv = rng.standard_normal((2, 4)).astype("f")
    w32 = E.Var(w.numpy().astype("f"), requires_grad=True)
    with E.lazy() as t:
        x = t.input("x", (2, 4))
        loss = F.sigmoid(F.linear(x, w32)).sum()
        (gw,) = E.grad(loss, [w32])
        t.output(gw, "gw")
    graph = t.build()
    assert "SigmoidGrad" in graph.ops_histogram()
    got = mnn.Session(graph, backend="reference").run({"x": xv})["gw"]
    F.sigmoid(F.linear(E.Var(xv), w32)).sum().backward()
    np.testing.assert_allclose(got, w32.grad.numpy(), rtol=1e-5, atol=1e-6)
