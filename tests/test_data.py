"""data: the idx format, datasets, and the DataLoader's batching, shuffling and progress bar."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pytest

from mnn_core import data
from mnn_core.errors import MnnError


@pytest.fixture
def mnist_dir(tmp_path):
    """A synthetic MNIST-format folder: 50 training and 20 test images (gzip and raw mixed)."""
    rng = np.random.default_rng(0)
    for prefix, n, gz in (("train", 50, True), ("t10k", 20, False)):
        suffix = ".gz" if gz else ""
        data.write_idx(tmp_path / f"{prefix}-images-idx3-ubyte{suffix}", rng.integers(0, 256, (n, 28, 28), np.uint8))
        data.write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte{suffix}", (np.arange(n) % 10).astype(np.uint8))
    return tmp_path


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("name", ["a.idx", "a.idx.gz"])
def test_idx_round_trip(tmp_path, dtype, name):
    arr = (np.arange(2 * 3 * 5) - 7).astype(dtype).reshape(2, 3, 5)
    data.write_idx(tmp_path / name, arr)
    back = data.read_idx(tmp_path / name)
    assert back.dtype == np.dtype(dtype) and back.dtype.isnative
    np.testing.assert_array_equal(back, arr)
    np.testing.assert_array_equal(data.read_idx(tmp_path / name, limit=1), arr[:1])


def test_idx_errors_name_the_problem(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(MnnError, match="not an idx file"):
        data.read_idx(tmp_path / "bad")
    data.write_idx(tmp_path / "short", np.zeros((4, 4), np.uint8))
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-3])
    with pytest.raises(MnnError, match="shorter"):
        data.read_idx(tmp_path / "short")
    with pytest.raises(MnnError, match="does not exist"):
        data.read_idx(tmp_path / "missing")
    with pytest.raises(MnnError, match="dataset-fashion-mnist"):
        data.MNIST(tmp_path)


def test_mnist_folder_loads_scaled_images_and_labels(mnist_dir):
    train, test = data.MNIST(mnist_dir), data.MNIST(mnist_dir, train=False)
    assert len(train) == 50 and len(test) == 20
    x, y = train[3]
    assert x.shape == (1, 28, 28) and x.dtype == np.float32 and 0 <= x.min() and x.max() <= 1
    assert y == 3 and train.arrays[1].dtype == np.int64
    assert len(data.MNIST(mnist_dir, limit=7)) == 7
    with gzip.open(mnist_dir / "train-labels-idx1-ubyte.gz") as f:
        assert f.read(4) == b"\x00\x00\x08\x01"


def test_dataloader_batches_shuffles_with_a_seed_and_drops_the_last(mnist_dir):
    ds = data.MNIST(mnist_dir)
    loader = data.DataLoader(ds, batch_size=16)
    sizes = [len(x) for x, _ in loader]
    assert sizes == [16, 16, 16, 2] and len(loader) == 4
    np.testing.assert_array_equal(next(iter(loader))[1], np.arange(16) % 10)
    assert [len(x) for x, _ in data.DataLoader(ds, 16, drop_last=True)] == [16, 16, 16]
    a = [y for _, y in data.DataLoader(ds, 16, shuffle=True, seed=1)]
    b = [y for _, y in data.DataLoader(ds, 16, shuffle=True, seed=1)]
    assert all((p == q).all() for p, q in zip(a, b))
    loader = data.DataLoader(ds, 50, shuffle=True, seed=1)
    e1, e2 = next(iter(loader))[1], next(iter(loader))[1]
    assert not (e1 == e2).all() and sorted(e1) == sorted(e2)  # a new order each epoch


def test_transforms_and_generic_datasets():
    class Squares(data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.float32(i), np.int64(i * i)

    batches = list(data.DataLoader(Squares(), batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [4, 9], [16]]
    norm = data.transforms.Normalize([0.5], [0.25])
    ds = data.TensorDataset(np.ones((4, 1, 2, 2), np.float32), np.zeros(4), transform=norm)
    np.testing.assert_allclose(ds[0][0], 2.0)
    flip = data.transforms.Compose([data.transforms.Pad(1), data.transforms.RandomHorizontalFlip(1.0)])
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    out = next(iter(data.DataLoader(data.TensorDataset(x), 1, transform=lambda b: (flip(b[0]),))))[0]
    assert out.shape == (1, 1, 4, 4) and out[0, 0, 1, 1] == 1.0
    a, b = data.random_split(data.TensorDataset(np.arange(10)), [7, 3])
    assert sorted(list(a.get_batch(np.arange(7))[0]) + list(b.get_batch(np.arange(3))[0])) == list(range(10))
    with pytest.raises(MnnError, match="differ in length"):
        data.TensorDataset(np.ones(3), np.ones(4))


def test_progress_bar_reports_every_batch(mnist_dir):
    stream = io.StringIO()
    loader = data.DataLoader(data.MNIST(mnist_dir), batch_size=10, progress="train", progress_stream=stream)
    for i, _ in enumerate(loader):
        loader.set_postfix(f"loss {i}")
    text = stream.getvalue()
    assert "train" in text and "5/5" in text and "loss 4" in text and text.endswith("\n")


@pytest.mark.skipif(
    not Path(data.FASHION_MNIST_DIR, "t10k-labels-idx1-ubyte.gz").exists(),
    reason="Fashion-MNIST not installed (apt-get install -y dataset-fashion-mnist)",
)
def test_fashion_mnist_slice():
    ds = data.FashionMNIST(train=False, limit=100)
    x, y = ds.arrays
    assert x.shape == (100, 1, 28, 28) and y.min() >= 0 and y.max() <= 9
    assert 0.2 < x.mean() < 0.4 and data.FashionMNIST.classes[9] == "Ankle boot"
