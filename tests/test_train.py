"""The compiled training step: one graph through Session, matching the eager loop step for step."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import data, nn, optim, train
from mnn_core import express as E
from mnn_core.errors import MnnError
from mnn_core.express import dispatch
from mnn_core.express import functional as F


def small_cnn(bn: bool = False, dropout: float = 0.0) -> nn.Module:
    E.manual_seed(11)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4) if bn else nn.Identity(),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3),
        nn.ReLU(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Dropout(dropout),
        nn.Linear(24, 16),
        nn.GELU(),
        nn.Linear(16, 5),
    )


def batches(n=4, batch=8, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, 1, 12, 12)).astype(np.float32), rng.integers(0, 5, batch)) for _ in range(n)]


def eager_losses(model, opt, steps, sched=None):
    out = []
    for x, y in steps:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched:
            sched.step()
        out.append(loss.item())
    return out


@pytest.mark.parametrize(
    "make_opt, bn, dropout",
    [
        (lambda p: optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-3), False, 0.0),
        (lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True), True, 0.0),
        (lambda p: optim.Adam(p, lr=1e-2), True, 0.3),
        (lambda p: optim.AdamW(p, lr=1e-2), False, 0.0),
    ],
    ids=["sgd-momentum", "nesterov-bn", "adam-bn-dropout", "adamw"],
)
def test_compiled_step_matches_the_eager_loop(make_opt, bn, dropout):
    steps = batches()
    a, b = small_cnn(bn, dropout), small_cnn(bn, dropout)
    opt_a, opt_b = make_opt(a.parameters()), make_opt(b.parameters())
    E.manual_seed(99)
    with dispatch.using("reference"):  # the same kernels as the compiled step (x86 rounds otherwise, and Adam
        want = eager_losses(a, opt_a, steps)  # turns the rounding noise of a zero gradient into whole steps)
    E.manual_seed(99)  # dropout masks come from the same generator, in the same order
    step = train.compile(b, nn.CrossEntropyLoss(), opt_b, backend="reference")
    got = [step(x, y) for x, y in steps]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values()):
        np.testing.assert_allclose(pb, pa, rtol=1e-4, atol=1e-5, err_msg=name)


def test_one_graph_with_backward_and_update_ops_runs_without_python_per_op_in_the_step():
    model = small_cnn()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = train.compile(model, nn.CrossEntropyLoss(), opt, backend="reference")
    x, y = batches(1)[0]
    step(x, y)
    ops = step.graph.ops_histogram()
    for op in (
        "ConvGradWeight",
        "ConvGradInput",
        "MaxPoolGrad",
        "AveragePoolGrad",
        "SoftmaxCrossEntropyGrad",
        "GeluGrad",
        "SGDMomentumUpdate",
    ):
        assert op in ops, op
    assert ops["SGDMomentumUpdate"] == len(list(model.parameters()))
    assert "ConvGradInput" in ops and ops["ConvGradInput"] == 1  # the first conv needs no input gradient
    assert len(step.session.plan) >= len(step.graph.nodes) - 4  # planned by Session (views and fusions aside)
    assert step.session.memory["host"].arena_bytes > 0
    step(x, y, profile=True)
    assert len(step.profile()) > 10  # per-step milliseconds of the compiled program


def test_parameters_persist_in_place_and_the_model_stays_usable():
    model = small_cnn()
    w = model[0].weight
    before = w.numpy().copy()
    view = w.numpy()
    step = train.compile(model, nn.CrossEntropyLoss(), optim.SGD(model.parameters(), lr=0.1), backend="reference")
    for x, y in batches(3):
        step(x, y)
    assert model[0].weight is w and not np.allclose(view, before)  # updated in the same array
    x, y = batches(1, seed=5)[0]
    model.eval()
    logits = model(x)  # eager forward sees the trained weights
    assert logits.shape == (8, 5)


def test_new_batch_shape_traces_again_and_schedulers_act_without_retracing():
    model = small_cnn()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    twin = small_cnn()
    opt2 = optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    sched, sched2 = optim.StepLR(opt, 1, gamma=0.5), optim.StepLR(opt2, 1, gamma=0.5)
    step = train.compile(model, nn.CrossEntropyLoss(), opt, backend="reference")
    steps = batches(2) + batches(1, batch=3, seed=7) + batches(1, seed=8)
    got = []
    for x, y in steps:
        got.append(step(x, y))
        sched.step()
    assert len(step._compiled) == 2
    np.testing.assert_allclose(got, eager_losses(twin, opt2, steps, sched2), rtol=1e-4, atol=1e-5)


def test_training_learns_a_synthetic_task_and_returns_outputs():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 5, 200)
    x = rng.standard_normal((200, 1, 12, 12)).astype(np.float32) * 0.3
    for c in range(5):
        x[y == c, 0, 2 * c : 2 * c + 3, :] += 1.5  # a class is a bright band
    model = small_cnn()
    step = train.compile(
        model, nn.CrossEntropyLoss(), optim.Adam(model.parameters(), lr=0.02), backend="reference", return_output=True
    )
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=20, shuffle=True, seed=0)
    for _ in range(6):
        correct = 0
        for xb, yb in loader:
            loss, logits = step(xb, yb)
            correct += int((logits.argmax(1) == yb).sum())
    assert correct / len(y) > 0.9 and loss < 0.5


def test_trained_model_exports_and_runs_in_a_session(tmp_path):
    model = small_cnn(bn=True)
    step = train.compile(
        model, nn.CrossEntropyLoss(), optim.SGD(model.parameters(), lr=0.1, momentum=0.9), backend="reference"
    )
    for x, y in batches(2):
        step(x, y)
    model.eval()
    path = tmp_path / "m.mnn"
    mnn.save(model.to_graph([(1, 1, 12, 12)]), path)
    x = batches(1, seed=9)[0][0]
    got = mnn.Session(str(path), backend="reference").run({"input": x})["output"]
    np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-4, atol=1e-5)


def test_loss_must_be_a_single_value():
    model = small_cnn()
    step = train.compile(model, lambda out, y: out, optim.SGD(model.parameters(), lr=0.1), backend="reference")
    with pytest.raises(MnnError, match="single-value"):
        step(*batches(1)[0])
    with pytest.raises(MnnError, match="has not run"):
        _ = step.graph


def _x86_available() -> bool:
    from mnn_core.plugins import get_plugins

    backend = get_plugins().backends.get("x86")
    return bool(backend is not None and backend.availability())


@pytest.mark.skipif(not _x86_available(), reason="the mnn-x86 backend is not installed or not available here")
def test_compiled_step_on_x86_matches_the_reference_backend():
    steps = batches(3)
    results = {}
    for backend in ("reference", "x86"):
        model = small_cnn(bn=True)
        step = train.compile(
            model, nn.CrossEntropyLoss(), optim.SGD(model.parameters(), lr=0.05, momentum=0.9), backend=backend
        )
        results[backend] = ([step(x, y) for x, y in steps], model.state_dict())
        if backend == "x86":
            assert "x86" in step.session.plan.backends()  # the forward convolutions at least
    np.testing.assert_allclose(results["x86"][0], results["reference"][0], rtol=1e-3, atol=1e-4)
    for name, want in results["reference"][1].items():
        np.testing.assert_allclose(results["x86"][1][name], want, rtol=1e-3, atol=1e-4, err_msg=name)


def test_trained_module_saves_to_mnn_and_onnx(tmp_path):
    """mnn.save takes the Module itself: .mnn for a Session, .onnx for onnxruntime; both match it."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    model = small_cnn()
    step = train.compile(
        model, nn.CrossEntropyLoss(), optim.SGD(model.parameters(), lr=0.1, momentum=0.9), backend="reference"
    )
    for x, y in batches(2):
        step(x, y)
    model.eval()
    x = batches(1, seed=9)[0][0]
    want = model(x).numpy()
    mnn.save(model, tmp_path / "m.mnn")
    got = mnn.Session(str(tmp_path / "m.mnn"), backend="reference").run({"input": x})["output"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    mnn.save(model, tmp_path / "m.onnx")
    sess = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(MnnError, match="fp32"):
        mnn.save(model, tmp_path / "m8.onnx", weights="int8")
