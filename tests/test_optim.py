"""optim: SGD, Adam, AdamW and the schedulers, step for step against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mnn_core import express as E
from mnn_core import nn, optim
from mnn_core.errors import MnnError

torch = pytest.importorskip("torch", reason="PyTorch is the reference the optimizers are compared with")


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    t = rng.standard_normal((8, 3)).astype(np.float32)
    return w0, x, t


def _run_ours(make, steps=6, sched=None):
    w0, x, t = _problem()
    w = nn.Parameter(w0)
    opt = make([w])
    s = sched(opt) if sched else None
    for _ in range(steps):
        loss = ((E.Var(x) @ w - t) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if s:
            s.step()
    return w.numpy()


def _run_torch(make, steps=6, sched=None):
    w0, x, t = _problem()
    w = torch.nn.Parameter(torch.tensor(w0))
    opt = make([w])
    s = sched(opt) if sched else None
    for _ in range(steps):
        loss = ((torch.tensor(x) @ w - torch.tensor(t)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if s:
            s.step()
    return w.detach().numpy()


CONFIGS = {
    "sgd": dict(lr=0.1),
    "sgd-wd": dict(lr=0.1, weight_decay=0.01),
    "momentum": dict(lr=0.05, momentum=0.9),
    "nesterov": dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "dampening": dict(lr=0.05, momentum=0.8, dampening=0.3),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_sgd_matches_pytorch(name):
    kw = CONFIGS[name]
    np.testing.assert_allclose(
        _run_ours(lambda p: optim.SGD(p, **kw)), _run_torch(lambda p: torch.optim.SGD(p, **kw)), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize(
    "ours, theirs, kw",
    [
        (optim.Adam, torch.optim.Adam, dict(lr=0.01)),
        (optim.Adam, torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1)),
        (optim.AdamW, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    ],
    ids=["adam", "adam-wd", "adamw"],
)
def test_adam_matches_pytorch(ours, theirs, kw):
    np.testing.assert_allclose(
        _run_ours(lambda p: ours(p, **kw)), _run_torch(lambda p: theirs(p, **kw)), rtol=1e-5, atol=1e-6
    )


@pytest.mark.filterwarnings("ignore:Detected call of")
@pytest.mark.parametrize(
    "ours, theirs",
    [
        (lambda o: optim.StepLR(o, step_size=2, gamma=0.5), lambda o: torch.optim.lr_scheduler.StepLR(o, 2, 0.5)),
        (
            lambda o: optim.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
            lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
        ),
        (lambda o: optim.MultiStepLR(o, [1, 4]), lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [1, 4])),
        (lambda o: optim.ExponentialLR(o, 0.7), lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.7)),
    ],
    ids=["step", "cosine", "multistep", "exponential"],
)
def test_schedulers_match_pytorch(ours, theirs):
    np.testing.assert_allclose(
        _run_ours(lambda p: optim.SGD(p, lr=0.1, momentum=0.9), steps=8, sched=ours),
        _run_torch(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), steps=8, sched=theirs),
        rtol=1e-5,
        atol=1e-6,
    )
    opt = optim.SGD([nn.Parameter(np.zeros(1))], lr=0.1)
    topt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    s, ts = ours(opt), theirs(topt)
    for _ in range(7):
        s.step()
        ts.step()
        assert math.isclose(s.get_last_lr()[0], ts.get_last_lr()[0], rel_tol=1e-9)


def test_inv_policy_is_caffes_formula():
    opt = optim.SGD([nn.Parameter(np.zeros(1))], lr=0.01)
    s = optim.InvLR(opt, gamma=1e-4, power=0.75)
    for _ in range(1000):
        s.step()
    assert math.isclose(opt.param_groups[0]["lr"], 0.01 * (1 + 1e-4 * 1000) ** -0.75, rel_tol=1e-12)


def test_param_groups_have_their_own_learning_rates():
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    (a.sum() + b.sum()).backward()
    opt.step()
    np.testing.assert_allclose(a.numpy(), 0.9)
    np.testing.assert_allclose(b.numpy(), 0.0)


def test_parameters_without_gradients_are_left_alone_and_state_round_trips():
    a, b = nn.Parameter(np.ones(3)), nn.Parameter(np.ones(3))
    opt = optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.numpy(), 1.0)
    sd = opt.state_dict()
    opt2 = optim.Adam([nn.Parameter(a.numpy()), nn.Parameter(b.numpy())], lr=0.1)
    opt2.load_state_dict(sd)
    np.testing.assert_array_equal(
        opt2.state_for(opt2.param_groups[0]["params"][0])["exp_avg"].numpy(), opt.state_for(a)["exp_avg"].numpy()
    )


def test_optimizer_errors_are_clear():
    with pytest.raises(MnnError, match="empty"):
        optim.SGD([], lr=0.1)
    with pytest.raises(MnnError, match="floating-point"):
        optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(MnnError, match="Nesterov"):
        optim.SGD([nn.Parameter(np.ones(1))], lr=0.1, nesterov=True)
