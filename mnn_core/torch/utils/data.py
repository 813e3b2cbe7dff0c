"""torch.utils.data: mnn_core.data's datasets, with a DataLoader that yields tensors.

mnn_core.data.DataLoader yields numpy arrays (what a compiled step feeds on);
a PyTorch script calls `x.to(device)` and `y.size(0)` on its batches, so this
one wraps every array of a batch in a Var (no copy), takes PyTorch's
arguments, and shuffles from the generator `torch.manual_seed` seeds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Callable

import numpy as np

from ...data import DataLoader as _ArrayLoader
from ...data import Dataset, Subset, TensorDataset
from ...errors import MnnError
from ...express import Var
from ...express.rng import generator as _generator


def _tensors(batch: Any) -> Any:
    if isinstance(batch, np.ndarray):
        return Var._wrap(batch)
    if isinstance(batch, (tuple, list)):
        return type(batch)(_tensors(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _tensors(v) for k, v in batch.items()}
    return batch


def _rng(generator) -> np.random.Generator:
    """The numpy stream behind a torch-style generator argument (None: the one torch.manual_seed seeds)."""
    if generator is None:
        return _generator()
    if isinstance(generator, np.random.Generator):
        return generator
    if hasattr(generator, "rng"):  # mnn_core.torch.Generator
        return generator.rng
    raise MnnError(f"generator must be a mnn_core.torch.Generator, got {type(generator).__name__}")


def random_split(dataset: Dataset, lengths, generator=None) -> list[Subset]:
    """torch.utils.data.random_split: lengths as counts, or fractions that sum to 1 (remainders go
    round-robin to the first parts, as PyTorch does)."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(0 <= f <= 1 for f in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != n:
        counts = [int(np.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise MnnError(f"random_split: lengths {lengths} do not add up to the dataset's {n}")
    order = _rng(generator).permutation(n)
    bounds = np.cumsum([0] + lengths)
    return [Subset(dataset, order[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def default_collate(items: list) -> Any:
    """PyTorch's collation: tensors, arrays and numbers stack; tuples, lists and dicts collate per field."""
    first = items[0]
    if isinstance(first, dict):
        return {k: default_collate([it[k] for it in items]) for k in first}
    if isinstance(first, (tuple, list)):
        if any(len(it) != len(first) for it in items):
            raise MnnError("DataLoader: items of one batch have different numbers of fields")
        return (
            type(first)(default_collate(list(field)) for field in zip(*items))
            if isinstance(first, tuple)
            else [default_collate(list(field)) for field in zip(*items)]
        )
    if isinstance(first, str):
        return list(items)
    return np.stack([np.asarray(it) for it in items])


class DataLoader(_ArrayLoader):
    """PyTorch's DataLoader: batches of tensors. Loading runs in the calling thread (num_workers is
    accepted and ignored); samplers other than sequential and shuffled are not supported."""

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool = False,
        sampler=None,
        batch_sampler=None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn=None,
        generator=None,
        prefetch_factor=None,
        persistent_workers: bool = False,
        **kwargs,
    ):
        if sampler is not None or batch_sampler is not None:
            raise MnnError("DataLoader: sampler and batch_sampler are not supported; use shuffle=True or False")
        if batch_size is None:
            raise MnnError("DataLoader: batch_size=None (unbatched loading) is not supported")
        seed = int(_rng(generator).integers(2**63))
        super().__init__(
            dataset,
            batch_size=batch_size,
            shuffle=shuffle,
            seed=seed,
            drop_last=drop_last,
            collate_fn=collate_fn or default_collate,
            **kwargs,
        )

    def __iter__(self) -> Iterator:
        for batch in super().__iter__():
            yield _tensors(batch)


__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "random_split"]
