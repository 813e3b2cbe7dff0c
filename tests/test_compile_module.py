"""mnn_core.compile(model) / mnn_core.torch.compile(model): the forward as planned Sessions, equal to
the eager module, seeing weight updates (live) or not (frozen until refresh), training still eager."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core
import mnn_core.torch as torch
from mnn_core import nn
from mnn_core.errors import MnnError
from mnn_core.train import CompiledModule, TrainStep


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6 * 5 * 7, 4)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(h.reshape(h.shape[0], -1))


class TwoHeads(Net):
    def forward(self, x):
        y = super().forward(x)
        return y, torch.softmax(y, dim=1)


def _x(n=2, seed=0):
    return np.random.default_rng(seed).standard_normal((n, 3, 5, 7)).astype(np.float32)


@pytest.mark.parametrize("freeze", [False, True])
def test_compiled_forward_matches_eager(freeze):
    torch.manual_seed(0)
    model = Net().eval()
    fast = mnn_core.compile(model, freeze=freeze)
    assert isinstance(fast, CompiledModule)
    with torch.no_grad():
        for n in (2, 3, 2):  # a second shape, then the first again from the cache
            x = torch.from_numpy(_x(n, seed=n))
            np.testing.assert_allclose(fast(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-5)
    assert len(fast._plans) == 2


def test_live_weights_follow_the_model_frozen_ones_wait_for_refresh():
    torch.manual_seed(1)
    model = Net().eval()
    live, frozen = mnn_core.compile(model), mnn_core.compile(model, freeze=True)
    x = torch.from_numpy(_x())
    with torch.no_grad():
        before = frozen(x).numpy()
        live(x)
        model.fc.weight.data[...] *= 2.0  # as an optimizer step writes it: in place
        want = model(x).numpy()
        np.testing.assert_allclose(live(x).numpy(), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(frozen(x).numpy(), before, rtol=1e-6)
        frozen.refresh()
        np.testing.assert_allclose(frozen(x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_a_call_needing_gradients_runs_the_eager_module_and_trains():
    torch.manual_seed(2)
    model = Net()
    fast = torch.compile(model)
    opt = torch.optim.SGD(fast.parameters(), lr=0.1)
    x, y = torch.from_numpy(_x(4)), torch.from_numpy(np.array([0, 1, 2, 3]))
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(fast(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    assert losses[-1] < losses[0]
    assert not fast._plans  # every call needed gradients


def test_tuple_outputs_and_errors():
    torch.manual_seed(3)
    model = TwoHeads().eval()
    fast = mnn_core.compile(model)
    with torch.no_grad():
        x = torch.from_numpy(_x())
        got, want = fast(x), model(x)
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(MnnError, match="nn.Module"):
        mnn_core.compile(lambda x: x)
    with pytest.raises(MnnError, match="needs all three"):
        mnn_core.compile(model, nn.CrossEntropyLoss())


def test_compile_with_loss_and_optimizer_is_still_the_training_step():
    model = Net()
    step = mnn_core.compile(model, nn.CrossEntropyLoss(), mnn_core.optim.SGD(model.parameters(), lr=0.1))
    assert isinstance(step, TrainStep)
    assert isinstance(
        mnn_core.train.compile_step(model, nn.CrossEntropyLoss(), mnn_core.optim.SGD(model.parameters(), lr=0.1)),
        TrainStep,
    )
