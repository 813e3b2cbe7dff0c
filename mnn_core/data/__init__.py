"""Datasets, batching and the MNIST idx format.

train = data.FashionMNIST(train=True)                # /usr/share/datasets/fashion-mnist
loader = data.DataLoader(train, batch_size=64, shuffle=True, seed=0, progress=True)
for x, y in loader: ...
"""

from __future__ import annotations

from . import transforms
from .dataset import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split
from .mnist import FASHION_CLASSES, FASHION_MNIST_DIR, MNIST, FashionMNIST, load_mnist, read_idx, write_idx

__all__ = [
    "FASHION_CLASSES",
    "FASHION_MNIST_DIR",
    "MNIST",
    "DataLoader",
    "Dataset",
    "FashionMNIST",
    "Subset",
    "TensorDataset",
    "default_collate",
    "load_mnist",
    "random_split",
    "read_idx",
    "transforms",
    "write_idx",
]
