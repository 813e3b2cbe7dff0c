"""Datasets and the DataLoader, with PyTorch's names.

Batches are tuples of numpy arrays, ready for a compiled step or a Module
(which wraps arrays in Vars). A dataset that can index many items at once
(`TensorDataset`, anything with `get_batch(indices)`) is batched by one
fancy-index per array instead of per-item Python calls.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Callable

import numpy as np

from ..errors import MnnError
from ..progress import Progress


class Dataset:
    """Subclass and define __getitem__(i) -> tuple of arrays, and __len__."""

    def __getitem__(self, index: int):
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class TensorDataset(Dataset):
    """Arrays of equal length; item i is (a[i] for each array), transformed if given."""

    def __init__(self, *arrays, transform: Callable | None = None):
        arrays = [a.numpy() if hasattr(a, "numpy") else np.asarray(a) for a in arrays]
        if not arrays:
            raise MnnError("TensorDataset needs at least one array")
        n = len(arrays[0])
        if any(len(a) != n for a in arrays):
            raise MnnError(f"TensorDataset: arrays differ in length: {[len(a) for a in arrays]}")
        self.arrays = arrays
        self.transform = transform

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, index):
        return self.get_batch(index)

    def get_batch(self, indices) -> tuple:
        """Items at `indices` (an int or an index array); the transform sees the first array."""
        items = tuple(a[indices] for a in self.arrays)
        if self.transform is not None:
            items = (self.transform(items[0]),) + items[1:]
        return items


class Subset(Dataset):
    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset, self.indices = dataset, np.asarray(indices, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i):
        return self.dataset[int(self.indices[i])]

    def get_batch(self, indices) -> tuple:
        return _fetch(self.dataset, self.indices[indices])


def random_split(dataset: Dataset, lengths: Sequence[int], seed: int = 0) -> list[Subset]:
    if sum(lengths) != len(dataset):
        raise MnnError(f"random_split: lengths {list(lengths)} do not add up to the dataset's {len(dataset)}")
    order = np.random.default_rng(seed).permutation(len(dataset))
    bounds = np.cumsum([0] + list(lengths))
    return [Subset(dataset, order[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def default_collate(items: list) -> tuple:
    first = items[0]
    if isinstance(first, tuple):
        return tuple(np.stack([np.asarray(it[k]) for it in items]) for k in range(len(first)))
    return (np.stack([np.asarray(it) for it in items]),)


def _fetch(dataset, indices: np.ndarray, collate=default_collate) -> tuple:
    if hasattr(dataset, "get_batch"):
        return dataset.get_batch(indices)
    return collate([dataset[int(i)] for i in indices])


class DataLoader:
    """Batches of a dataset: shuffled per epoch (seeded), last partial batch kept or dropped.

    `transform(batch) -> batch` runs on each whole batch (tuple of arrays).
    `progress=True` (or a label) draws a bar; `set_postfix("loss 0.31")` adds a note to it."""

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int = 1,
        shuffle: bool = False,
        seed: int | None = None,
        drop_last: bool = False,
        transform: Callable | None = None,
        collate_fn: Callable | None = None,
        progress: bool | str = False,
        progress_stream: Any = None,
    ):
        if batch_size < 1:
            raise MnnError(f"batch_size must be at least 1, got {batch_size}")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.transform, self.collate_fn = transform, collate_fn or default_collate
        self.progress, self.progress_stream = progress, progress_stream
        self._rng = np.random.default_rng(seed)
        self._bar: Progress | None = None
        self._note = ""
        self.epoch = 0

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def set_postfix(self, note: str) -> None:
        self._note = note

    def __iter__(self) -> Iterator[tuple]:
        n = len(self.dataset)
        order = self._rng.permutation(n) if self.shuffle else np.arange(n)
        self.epoch += 1
        bar = None
        if self.progress:
            label = self.progress if isinstance(self.progress, str) else f"epoch {self.epoch}"
            bar = Progress(
                len(self),
                label,
                stream=self.progress_stream,
                enabled=True if self.progress_stream is not None else None,
            )
        try:
            for b in range(len(self)):
                idx = order[b * self.batch_size : (b + 1) * self.batch_size]
                batch = _fetch(self.dataset, idx, self.collate_fn)
                if self.transform is not None:
                    batch = self.transform(batch)
                yield batch
                if bar is not None:
                    bar.update(1, self._note)
        finally:
            if bar is not None:
                bar.close()
