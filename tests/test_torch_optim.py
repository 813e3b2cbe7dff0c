"""Optimizers and learning-rate schedules against PyTorch's: parameters after several steps of each
optimizer from the same start and gradients, and the lr (and momentum) every scheduler sets, step by step."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core import nn, optim
from mnn_core.errors import MnnError

torch = pytest.importorskip("torch", reason="PyTorch is the reference these optimizers are compared with")

OPTIMIZERS = [
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.003, "momentum": 0.9}),
    ("RMSprop", {"centered": True, "weight_decay": 0.01, "alpha": 0.9}),
    ("RMSprop", {"centered": True, "momentum": 0.5, "eps": 1e-3}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.02, "initial_accumulator_value": 0.3}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 1e-3}),
    ("AdamW", {"lr": 0.01, "betas": (0.8, 0.95)}),
]


@pytest.mark.parametrize(("name", "kwargs"), OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_matches_pytorch(name, kwargs):
    rng = np.random.default_rng(0)
    shapes = [(7, 3), (5,), (2, 3, 4)]
    start = [rng.standard_normal(s) for s in shapes]
    theirs = [torch.tensor(a, requires_grad=True) for a in start]
    ours = [nn.Parameter(a) for a in start]
    t_opt = getattr(torch.optim, name)(theirs, **kwargs)
    m_opt = getattr(optim, name)(ours, **kwargs)
    for _ in range(6):
        grads = [rng.standard_normal(s) for s in shapes]
        for t, m, g in zip(theirs, ours, grads):
            t.grad = torch.tensor(g)
            m.grad = nn.Parameter(g, requires_grad=False)
        t_opt.step()
        m_opt.step()
    for t, m in zip(theirs, ours):
        np.testing.assert_allclose(m.numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


def _pair(make_sched, steps: int, opt_name: str = "SGD", metrics=None, **opt_kwargs):
    """The lr (and momentum or beta1) after each step, from PyTorch's scheduler and from mnn's."""
    out = []
    for lib in (torch, None):
        params = [torch.zeros(2, requires_grad=True)] if lib else [nn.Parameter(np.zeros(2))]
        opt_mod = torch.optim if lib else optim
        opt = getattr(opt_mod, opt_name)(params, **opt_kwargs)
        sched = make_sched(opt_mod.lr_scheduler, opt)
        seen = []
        for i in range(steps):
            opt.step()
            sched.step(metrics[i]) if metrics is not None else sched.step()
            g = opt.param_groups[0]
            seen.append((g["lr"], g.get("momentum", g.get("betas", (0,))[0])))
        out.append(np.array(seen))
    return out


SCHEDULERS = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[2, 5], gamma=0.3),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=4),
    "LinearLR-down": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=6),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=0.5, total_steps=10),
    "OneCycleLR-linear": lambda s, o: s.OneCycleLR(
        o, max_lr=0.2, epochs=2, steps_per_epoch=5, anneal_strategy="linear", pct_start=0.4
    ),
    "OneCycleLR-3phase": lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=10, three_phase=True),
}


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_matches_pytorch(name):
    steps = 10 if name.startswith("OneCycle") else 12
    theirs, ours = _pair(SCHEDULERS[name], steps, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def test_onecycle_cycles_adam_beta1():
    theirs, ours = _pair(lambda s, o: s.OneCycleLR(o, max_lr=0.01, total_steps=8), 8, "Adam", lr=1e-3)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    sched = optim.OneCycleLR(optim.SGD([nn.Parameter(np.zeros(2))], lr=0.1), max_lr=0.01, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(MnnError, match="past total_steps"):
        sched.step()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"patience": 2},
        {"patience": 1, "factor": 0.5, "cooldown": 2, "min_lr": 0.02},
        {"mode": "max", "patience": 0, "threshold": 0.1, "threshold_mode": "abs"},
    ],
)
def test_reduce_on_plateau_matches_pytorch(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.91, 0.9, 0.92, 0.5, 0.6, 0.6, 0.6, 0.7, 0.4, 0.4, 0.4, 0.4]
    theirs, ours = _pair(lambda s, o: s.ReduceLROnPlateau(o, **kwargs), len(metrics), metrics=metrics, lr=0.1)
    np.testing.assert_allclose(ours[:, 0], theirs[:, 0], rtol=1e-12)
    assert len(set(ours[:, 0])) > 1  # it did reduce


def test_bad_arguments_are_refused():
    p = [nn.Parameter(np.zeros(2))]
    with pytest.raises(MnnError, match="alpha"):
        optim.RMSprop(p, alpha=1.5)
    with pytest.raises(MnnError, match="factor"):
        optim.ReduceLROnPlateau(optim.SGD(p, lr=0.1), factor=2.0)
    with pytest.raises(MnnError, match="total_steps"):
        optim.OneCycleLR(optim.SGD(p, lr=0.1), max_lr=1.0)
    with pytest.raises(MnnError, match="momentum or betas"):
        optim.OneCycleLR(optim.Adagrad(p), max_lr=1.0, total_steps=4)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}), ("Adagrad", {"lr": 0.1, "lr_decay": 0.1})],
)
def test_compiled_step_matches_eager(name, kwargs):
    """RMSprop and Adagrad are plain ops: a compiled training step records the same update."""
    import copy

    from mnn_core import train
    from mnn_core.express import functional as F

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 4)).astype(np.float32), rng.integers(0, 3, 16)
    eager = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    compiled = copy.deepcopy(eager)
    opt = getattr(optim, name)(eager.parameters(), **kwargs)
    step = train.compile(compiled, nn.CrossEntropyLoss(), getattr(optim, name)(compiled.parameters(), **kwargs))
    for _ in range(4):
        loss = F.cross_entropy(eager(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step(x, y)
    for k, v in eager.state_dict().items():
        np.testing.assert_allclose(compiled.state_dict()[k], v, rtol=1e-5, atol=1e-6, err_msg=k)
