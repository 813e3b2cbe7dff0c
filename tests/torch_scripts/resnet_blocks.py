"""A ResNet-style network: residual blocks of conv + batch norm with a projection shortcut, global average
pooling; SGD with weight decay, a LambdaLR warm-up, train/eval modes (batch norm running statistics)."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layers = nn.Sequential(Block(8, 8, 1), Block(8, 16, 2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.pool(self.layers(self.stem(x)))
        return self.fc(torch.flatten(x, 1))


def build():
    return ResNet()


def make_data(n=160, classes=5):
    rng = np.random.default_rng(0)
    y = rng.integers(0, classes, n)
    colour = np.eye(3)[y % 3][:, :, None, None] * (1 + y // 3)[:, None, None, None]
    x = colour + rng.normal(0, 1.0, (n, 3, 12, 12))
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)


def train(model, steps=15, batch=32):
    x, y = make_data()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 5))
    losses = []
    model.train()
    for step in range(steps):
        i = (step * batch) % len(y)
        loss = F.cross_entropy(model(x[i : i + batch]), y[i : i + batch], label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits = model(x)
        accuracy = (logits.argmax(1) == y).float().mean().item()
        losses.append(F.cross_entropy(logits, y).item())
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-2]:.4f} accuracy {result['accuracy']:.3f}")
