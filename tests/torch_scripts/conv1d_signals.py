"""A 1-D CNN classifying synthetic signals (sine, square, sawtooth, noise): Conv1d, BatchNorm1d,
MaxPool1d, AdaptiveAvgPool1d, RMSprop, ReduceLROnPlateau stepped on the epoch's loss."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def build():
    return nn.Sequential(
        nn.Conv1d(1, 8, kernel_size=5, padding=2),
        nn.BatchNorm1d(8),
        nn.ReLU(),
        nn.MaxPool1d(2),
        nn.Conv1d(8, 16, kernel_size=3, padding=1),
        nn.BatchNorm1d(16),
        nn.ReLU(),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(16, 4),
    )


def make_signals(n=256, length=64):
    rng = np.random.default_rng(0)
    kind = rng.integers(0, 4, n)
    t = np.arange(length) / length * rng.uniform(2, 6, (n, 1)) * 2 * np.pi + rng.uniform(0, 6, (n, 1))
    waves = np.stack([np.sin(t), np.sign(np.sin(t)), (t % (2 * np.pi)) / np.pi - 1, rng.normal(0, 0.7, t.shape)])
    x = waves[kind, np.arange(n)] + rng.normal(0, 0.3, (n, length))
    return torch.from_numpy(x[:, None].astype(np.float32)), torch.from_numpy(kind)


def train(model, epochs=4):
    x, y = make_signals()
    loader = DataLoader(TensorDataset(x, y), batch_size=32)
    opt = torch.optim.RMSprop(model.parameters(), lr=3e-3, momentum=0.5)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        model.train()
        total = 0.0
        for signals, labels in loader:
            loss = criterion(model(signals), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            total += loss.item() * labels.size(0)
        plateau.step(total / len(loader.dataset))
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-1]:.4f} accuracy {result['accuracy']:.3f}")
