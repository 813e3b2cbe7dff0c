"""A LeNet-style CNN on MNIST-shaped images (synthetic digits: a class-specific stroke pattern plus noise),
Adam, cross-entropy, max pooling, accuracy on held-out images."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def build():
    return LeNet()


def make_images(n, seed):
    rng = np.random.default_rng(seed)
    templates = np.random.default_rng(42).random((10, 28, 28)) > 0.8
    y = rng.integers(0, 10, n)
    x = templates[y] * 1.0 + rng.normal(0, 0.5, (n, 28, 28))
    return torch.from_numpy(x[:, None].astype(np.float32)), torch.from_numpy(y)


def train(model, epochs=2):
    x, y = make_images(640, 0)
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(epochs):
        for images, labels in loader:
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    test_x, test_y = make_images(256, 1)
    model.eval()
    with torch.no_grad():
        correct = (model(test_x).argmax(1) == test_y).sum().item()
    return {"losses": losses, "accuracy": correct / test_y.size(0)}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-1]:.4f} accuracy {result['accuracy']:.3f}")
