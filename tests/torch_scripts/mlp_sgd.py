"""An MLP classifier on synthetic blobs: SGD with momentum and weight decay, StepLR, a TensorDataset."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self, features=20, hidden=64, classes=5):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.gelu(self.fc2(x))
        return self.out(x)


def build():
    return MLP()


def make_data(n=512, features=20, classes=5):
    rng = np.random.default_rng(0)
    centers = rng.normal(0, 2, (classes, features))
    y = rng.integers(0, classes, n)
    x = centers[y] + rng.normal(0, 3.0, (n, features))
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)


def train(model, epochs=4):
    x, y = make_data()
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(epochs):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-1]:.4f} accuracy {result['accuracy']:.3f}")
