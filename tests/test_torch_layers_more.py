"""nn.more_layers against PyTorch: outputs and gradients (input and parameters) in float64 on odd
shapes, the same weights in both; containers register what they hold."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core import express as E
from mnn_core import nn

torch = pytest.importorskip("torch", reason="PyTorch is the reference these layers are compared with")


def _compare(theirs, ours, *inputs, rtol=1e-9, atol=1e-11):
    theirs = theirs.double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    ours.double()
    t_in = [torch.tensor(a, requires_grad=True) for a in inputs]
    m_in = [E.Var(a, requires_grad=True) for a in inputs]
    t_out, m_out = theirs(*t_in), ours(*m_in)
    np.testing.assert_allclose(m_out.numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol, err_msg="output")
    g = np.random.default_rng(1).standard_normal(t_out.shape)
    t_out.backward(torch.tensor(g))
    m_out.backward(g)
    for i, (t, m) in enumerate(zip(t_in, m_in)):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"input {i}")
    mine = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(mine[name].grad.numpy(), p.grad.numpy(), rtol=rtol, atol=atol, err_msg=name)


R = np.random.default_rng(0)
X4 = R.standard_normal((3, 6, 5, 7)) * 2
X3 = R.standard_normal((2, 4, 9)) * 3

LAYERS = {
    "ELU": (lambda n: n.ELU(alpha=0.7), [X4]),
    "Softplus": (lambda n: n.Softplus(threshold=2.0), [X3]),
    "Hardtanh": (lambda n: n.Hardtanh(-0.5, 1.5), [X3]),
    "Mish": (lambda n: n.Mish(), [X3]),
    "Softsign": (lambda n: n.Softsign(), [X3]),
    "PReLU": (lambda n: n.PReLU(), [X3]),
    "PReLU-channels": (lambda n: n.PReLU(6, init=0.1), [X4]),
    "GLU": (lambda n: n.GLU(dim=1), [X4]),
    "GroupNorm": (lambda n: n.GroupNorm(3, 6), [X4]),
    "GroupNorm-plain": (lambda n: n.GroupNorm(2, 4, affine=False), [X3]),
    "InstanceNorm2d": (lambda n: n.InstanceNorm2d(6), [X4]),
    "InstanceNorm2d-affine": (lambda n: n.InstanceNorm2d(6, affine=True), [X4]),
    "Unflatten": (lambda n: n.Unflatten(2, (3, 3)), [X3]),
    "ZeroPad2d": (lambda n: n.ZeroPad2d((1, 2, 0, 3)), [X4]),
    "CosineSimilarity": (lambda n: n.CosineSimilarity(dim=2), [X3, X3[::-1].copy()]),
    "SmoothL1Loss": (lambda n: n.SmoothL1Loss(beta=0.5), [X3, X3[:, ::-1].copy()]),
    "HuberLoss": (lambda n: n.HuberLoss(delta=2.0, reduction="sum"), [X3, X3[:, ::-1].copy()]),
    "KLDivLoss": (lambda n: n.KLDivLoss(reduction="batchmean", log_target=True), [X3 / 9, X3[:, ::-1] / 7]),
}


@pytest.mark.parametrize("name", LAYERS)
def test_layer_matches_pytorch(name):
    make, inputs = LAYERS[name]
    torch.manual_seed(0)
    theirs = make(torch.nn)
    for p in theirs.parameters():  # not the default init: every weight different
        p.data = torch.randn(p.shape, dtype=p.dtype)
    _compare(theirs, make(nn), *inputs)


def test_bce_loss_matches_pytorch():
    p = 1 / (1 + np.exp(-X3))
    t = (R.random(X3.shape) > 0.5).astype(np.float64)
    theirs = torch.nn.BCELoss()(torch.tensor(p), torch.tensor(t))
    ours = nn.BCELoss()(E.Var(p), E.Var(t))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_containers_register_their_members():
    d = nn.ModuleDict({"enc": nn.Linear(2, 3), "dec": nn.Linear(3, 2)})
    d["head"] = nn.Linear(2, 1)
    assert list(d) == ["enc", "dec", "head"] and "dec" in d and len(d) == 3
    names = [f"{m}.{w}" for m in ("enc", "dec", "head") for w in ("weight", "bias")]
    assert [n for n, _ in d.named_parameters()] == names
    pl = nn.ParameterList([np.zeros(2), nn.Parameter(np.ones(3))])
    assert len(pl) == 2 and [n for n, _ in pl.named_parameters()] == ["0", "1"]
    assert isinstance(pl[0], nn.Parameter) and pl[1].shape == (3,)
    theirs = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 3)})
    ours = nn.ModuleDict({"a": nn.Linear(2, 3)})
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
