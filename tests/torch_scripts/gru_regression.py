"""A GRU regressor: predict the next value of noisy sine waves. MSE loss, SGD with Nesterov momentum,
MultiStepLR; an initial hidden state passed explicitly."""

import numpy as np
import torch
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.gru = nn.GRU(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h0 = torch.zeros(1, x.size(0), self.gru.hidden_size)
        seq, _ = self.gru(x, h0)
        return self.out(seq[:, -1, :])


def build():
    return Forecaster()


def make_batch(rng, batch=32, length=24):
    phase = rng.uniform(0, 2 * np.pi, (batch, 1))
    freq = rng.uniform(0.2, 0.6, (batch, 1))
    t = np.arange(length + 1)
    wave = np.sin(freq * t + phase) + rng.normal(0, 0.05, (batch, length + 1))
    x = torch.from_numpy(wave[:, :-1, None].astype(np.float32))
    y = torch.from_numpy(wave[:, -1:].astype(np.float32))
    return x, y


def train(model, steps=40):
    rng = np.random.default_rng(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[20, 30], gamma=0.3)
    loss_fn = nn.MSELoss()
    losses = []
    for _ in range(steps):
        x, y = make_batch(rng)
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return {"losses": losses}


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"final loss {train(build())['losses'][-1]:.4f}")
