"""The idx format of MNIST and Fashion-MNIST: read (gzip or raw), write, and load as a dataset.

idx: a 4-byte magic (0, 0, type code, rank), `rank` big-endian uint32 sizes,
then the elements in big-endian order. Debian's `dataset-fashion-mnist`
package installs the four files under /usr/share/datasets/fashion-mnist.
"""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import numpy as np

from ..errors import MnnError
from .dataset import TensorDataset

FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"
FASHION_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)

_TYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_CODES = {np.dtype(t).newbyteorder("=").str: c for c, t in _TYPES.items()}


def _open(path: Path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def read_idx(path: str | os.PathLike, limit: int | None = None) -> np.ndarray:
    """An idx file (gzip-compressed or raw) as a numpy array; `limit` reads the first items only."""
    p = Path(path)
    if not p.exists():
        raise MnnError(f"idx file {p} does not exist")
    with _open(p) as f:
        head = f.read(4)
        if len(head) != 4 or head[0] or head[1] or head[2] not in _TYPES or not 1 <= head[3] <= 8:
            raise MnnError(f"{p} is not an idx file (magic {head.hex()}); expected 0000 + type code + rank")
        dtype, rank = _TYPES[head[2]], head[3]
        dims_raw = f.read(4 * rank)
        if len(dims_raw) != 4 * rank:
            raise MnnError(f"{p}: truncated header")
        dims = list(struct.unpack(f">{rank}I", dims_raw))
        if limit is not None:
            dims[0] = min(dims[0], int(limit))
        count = int(np.prod(dims, dtype=np.int64))
        raw = f.read(count * dtype.itemsize)
    if len(raw) != count * dtype.itemsize:
        raise MnnError(f"{p}: the header promises {dims} elements of {dtype.itemsize} bytes but the file is shorter")
    return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="), copy=False).reshape(dims)


def write_idx(path: str | os.PathLike, array: np.ndarray, compress: bool | None = None) -> None:
    """Write an array as idx (gzip when the name ends in .gz, or when compress=True)."""
    arr = np.ascontiguousarray(array)
    code = _CODES.get(arr.dtype.str)
    if code is None:
        raise MnnError(f"idx cannot store {arr.dtype}; use uint8, int8, int16, int32, float32 or float64")
    body = bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    body += arr.astype(_TYPES[code], copy=False).tobytes()
    p = Path(path)
    gz = p.suffix == ".gz" if compress is None else compress
    with gzip.open(p, "wb") if gz else open(p, "wb") as f:
        f.write(body)


def _find(root: Path, stem: str) -> Path:
    for name in (f"{stem}.gz", stem):
        if (root / name).exists():
            return root / name
    raise MnnError(f"{root} has no {stem}[.gz]; for Fashion-MNIST: apt-get install -y dataset-fashion-mnist")


def load_mnist(root: str | os.PathLike = FASHION_MNIST_DIR, train: bool = True, limit: int | None = None):
    """(images float32 (N, 1, 28, 28) scaled to [0, 1], labels int64 (N,)) of an MNIST-format folder."""
    root = Path(root)
    prefix = "train" if train else "t10k"
    images = read_idx(_find(root, f"{prefix}-images-idx3-ubyte"), limit)
    labels = read_idx(_find(root, f"{prefix}-labels-idx1-ubyte"), limit)
    if len(images) != len(labels):
        raise MnnError(f"{root}: {len(images)} images but {len(labels)} labels")
    x = (images.astype(np.float32) / 255.0).reshape(len(images), 1, *images.shape[1:])
    return x, labels.astype(np.int64)


class MNIST(TensorDataset):
    """An MNIST-format folder as a dataset of (image (1, 28, 28) float32, label int64)."""

    def __init__(
        self, root: str | os.PathLike = FASHION_MNIST_DIR, train: bool = True, transform=None, limit: int | None = None
    ):
        x, y = load_mnist(root, train, limit)
        super().__init__(x, y, transform=transform)
        self.root, self.train = Path(root), train


class FashionMNIST(MNIST):
    classes = FASHION_CLASSES
