"""A CNN on the real Fashion-MNIST (the first 1024 training and 512 test images, read from the idx files):
a Dataset subclass that normalizes item by item, DataLoader batching, BatchNorm, SGD with momentum and
a cosine schedule, test accuracy in eval mode."""

import gzip
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

DATA_DIR = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def read_idx(name, count):
    """The first `count` items of an idx file (big-endian header: magic, then one size per dimension)."""
    with gzip.open(os.path.join(DATA_DIR, name)) as f:
        rank = f.read(4)[3]
        dims = [int.from_bytes(f.read(4), "big") for _ in range(rank)]
        dims[0] = count
        return np.frombuffer(f.read(int(np.prod(dims))), np.uint8).reshape(dims)


class FashionMNIST(Dataset):
    def __init__(self, train, count):
        prefix = "train" if train else "t10k"
        self.images = read_idx(f"{prefix}-images-idx3-ubyte.gz", count)
        self.labels = read_idx(f"{prefix}-labels-idx1-ubyte.gz", count)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        image = torch.from_numpy(self.images[i].astype(np.float32) / 255.0)
        return (image.unsqueeze(0) - 0.286) / 0.353, int(self.labels[i])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(x.view(x.size(0), -1))


def build():
    return Net()


def train(model, epochs=2):
    loader = DataLoader(FashionMNIST(True, 1024), batch_size=64, shuffle=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    losses = []
    for _ in range(epochs):
        model.train()
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in DataLoader(FashionMNIST(False, 512), batch_size=128):
            correct += (model(images).argmax(1) == labels).sum().item()
    return {"losses": losses, "accuracy": correct / 512}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-1]:.4f} test accuracy {result['accuracy']:.3f}")
