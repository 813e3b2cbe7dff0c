"""Fine-tuning: pretrain a small CNN on one task, save its state dict, load it into a new model, swap the
head for a new task, freeze the first block, and train with two parameter groups at different rates."""

import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def build():
    return Net()


def task(classes, seed, n=96):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    x = rng.normal(0, 1, (n, 1, 12, 12)) + (y[:, None, None, None] - classes / 2) * 0.5
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)


def fit(model, opt, x, y, steps, batch=32):
    losses = []
    for step in range(steps):
        i = (step * batch) % len(y)
        loss = F.cross_entropy(model(x[i : i + batch]), y[i : i + batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def train(model, steps=12):
    x, y = task(4, seed=0)
    losses = fit(model, torch.optim.Adam(model.parameters(), lr=1e-2), x, y, steps)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "pretrained.pt")
        torch.save(model.state_dict(), path)
        tuned = Net()
        tuned.load_state_dict(torch.load(path))
    tuned.head = nn.Linear(16, 3)
    nn.init.zeros_(tuned.head.weight)
    nn.init.zeros_(tuned.head.bias)
    for p in tuned.features[0].parameters():
        p.requires_grad = False
    opt = torch.optim.SGD(
        [
            {"params": tuned.features[3].parameters(), "lr": 0.01},
            {"params": tuned.head.parameters()},
        ],
        lr=0.1,
        momentum=0.9,
    )
    x2, y2 = task(3, seed=1)
    losses += fit(tuned, opt, x2, y2, steps)
    frozen = tuned.features[0].weight.grad
    assert frozen is None, "a frozen layer got a gradient"
    with torch.no_grad():
        accuracy = (tuned(x2).argmax(1) == y2).float().mean().item()
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-1]:.4f} accuracy {result['accuracy']:.3f}")
