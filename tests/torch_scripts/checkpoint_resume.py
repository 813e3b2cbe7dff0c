"""Checkpoint and resume: train, save model + optimizer + scheduler + step in one file, rebuild everything
from the file, and continue; the resumed run must continue exactly where the first stopped."""

import io

import numpy as np
import torch
import torch.nn as nn


def build():
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 1))


def make_data(n=256):
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (n, 8)).astype(np.float32)
    y = (np.sin(x[:, :1]) + x[:, 1:2] * x[:, 2:3]).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(y)


def run(model, opt, sched, x, y, first, last, batch=32):
    losses = []
    for step in range(first, last):
        i = (step * batch) % len(x)
        loss = nn.functional.mse_loss(model(x[i : i + batch]), y[i : i + batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


def train(model, steps=24):
    x, y = make_data()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.99))
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
    half = steps // 2
    losses = run(model, opt, sched, x, y, 0, half)
    buffer = io.BytesIO()
    torch.save(
        {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": half},
        buffer,
    )
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    resumed = build()
    resumed.load_state_dict(checkpoint["model"])
    opt = torch.optim.Adam(resumed.parameters(), lr=1e-2, betas=(0.8, 0.99))
    opt.load_state_dict(checkpoint["optimizer"])
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
    sched.load_state_dict(checkpoint["scheduler"])
    losses += run(resumed, opt, sched, x, y, checkpoint["step"], steps)
    return {"losses": losses, "lr": opt.param_groups[0]["lr"]}


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"final loss {train(build())['losses'][-1]:.4f}")
