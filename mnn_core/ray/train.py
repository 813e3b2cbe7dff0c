"""Data-parallel training of an mnn Module on Ray actors: each worker a shard, gradients averaged.

    def make_model():
        E.manual_seed(0)
        return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))

    trainer = DataParallel(make_model, lambda p: optim.SGD(p, lr=0.1), nn.CrossEntropyLoss(), workers=2)
    for x, y in batches:
        loss = trainer.step(x, y)      # the global batch: its rows are split across the workers
    state = trainer.state_dict()

Every step each worker runs forward and backward on its rows of the global batch; the driver sums
the workers' gradients, each weighted by its share of the rows (the loss is a mean over rows, so
the full batch's gradient is that weighted sum), and every worker applies the same averaged
gradient with its own optimizer. Workers start from rank 0's weights (broadcast), so they stay
identical, and N workers reach the weights one process reaches on the whole batch, up to float
rounding. The reduce goes through the driver: two object-store round trips per step, fine for the
small and medium models mnn trains on CPUs; it needs no collective library on the nodes.

Per-shard statistics break that equality: BatchNorm in training mode normalises each shard by its
own mean (as PyTorch's DDP does without SyncBatchNorm), so a model with one is refused unless
`local_batchnorm=True`; dropout draws different masks per worker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import ray

from ..errors import InputError, MnnError


class _Worker:
    """One replica: the model, its optimizer, and the loss; computes gradients on a shard, applies the mean."""

    def __init__(self, make_model: Callable, make_optimizer: Callable, loss_fn: Any, backend: str | None, seed: int):
        from ..express import manual_seed

        self.backend = backend
        manual_seed(seed)
        self.model = make_model()
        self.model.train()
        self.params = list(self.model.parameters())
        self.optimizer = make_optimizer(self.params)
        self.loss_fn = loss_fn

    def batchnorms(self) -> list[str]:
        from ..nn.layers import _BatchNorm

        return [name or type(m).__name__ for name, m in self.model.named_modules() if isinstance(m, _BatchNorm)]

    def state_dict(self) -> dict[str, np.ndarray]:
        return {k: np.array(v) for k, v in self.model.state_dict().items()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state)

    def grads(self, x: np.ndarray, y: np.ndarray, weight: float) -> tuple[list[np.ndarray | None], float]:
        """This shard's gradients times its weight (rows / global rows), and its loss times the same."""
        with self._using():
            for p in self.params:
                p.grad = None
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
        grads = [
            None if p.grad is None else np.asarray(p.grad.numpy(), np.float32) * np.float32(weight) for p in self.params
        ]
        return grads, float(loss.item()) * weight

    def apply(self, grads: list[np.ndarray | None]) -> None:
        from ..express import Var

        for p, g in zip(self.params, grads):
            p.grad = None if g is None else Var(g.astype(p.dtype, copy=False))
        with self._using():
            self.optimizer.step()

    def _using(self):
        import contextlib

        from ..express import dispatch

        return dispatch.using(self.backend) if self.backend else contextlib.nullcontext()


class DataParallel:
    """`workers` Ray actors training replicas of one model; `step(x, y)` is one optimizer step on a global batch.

    make_model() and make_optimizer(params) run on each worker (they must be picklable: module-level
    functions or lambdas of picklable values); `loss_fn(output, target)` must average over rows
    (reduction="mean", the default of mnn's losses). `backend` picks the kernels of the eager ops
    ("reference" is bit-stable across processes; None: mnn's default dispatch).
    """

    def __init__(
        self,
        make_model: Callable,
        make_optimizer: Callable,
        loss_fn: Any,
        *,
        workers: int = 2,
        backend: str | None = "reference",
        seed: int = 0,
        num_cpus: float = 1,
        local_batchnorm: bool = False,
    ):
        if not isinstance(workers, int) or workers < 1:
            raise MnnError(f"workers must be a positive int, got {workers!r}")
        reduction = getattr(loss_fn, "reduction", "mean")
        if reduction != "mean":
            raise MnnError(
                f"the loss must average over rows (reduction='mean'), got reduction={reduction!r}: "
                "the averaged gradient weights each worker by its share of the rows"
            )
        if not ray.is_initialized():
            raise MnnError("DataParallel needs a running Ray: call ray.init() (or ray.init(address=...)) first")
        actor = ray.remote(num_cpus=num_cpus)(_Worker)
        self.workers = [actor.remote(make_model, make_optimizer, loss_fn, backend, seed) for _ in range(workers)]
        norms = ray.get(self.workers[0].batchnorms.remote())
        if norms and not local_batchnorm:
            self.shutdown()
            raise MnnError(
                f"the model has BatchNorm ({', '.join(norms[:3])}): each worker would normalise by "
                "its shard's statistics, not the batch's; pass local_batchnorm=True to accept that"
            )
        state = ray.put(ray.get(self.workers[0].state_dict.remote()))  # every replica starts from rank 0's weights
        ray.get([w.load_state_dict.remote(state) for w in self.workers[1:]])

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        """One step on the rows of (x, y), split into `workers` contiguous shards; returns the batch's mean loss."""
        x, y = np.asarray(x), np.asarray(y)
        rows = len(x)
        if len(y) != rows:
            raise InputError(f"x has {rows} rows but y has {len(y)}")
        if rows < len(self.workers):
            raise InputError(f"a batch of {rows} rows cannot feed {len(self.workers)} workers a row each")
        bounds = np.linspace(0, rows, len(self.workers) + 1).astype(int)
        results = ray.get(
            [w.grads.remote(x[a:b], y[a:b], (b - a) / rows) for w, a, b in zip(self.workers, bounds[:-1], bounds[1:])]
        )
        mean = _sum_grads([g for g, _ in results])
        ref = ray.put(mean)  # one copy in the object store, read by every worker
        ray.get([w.apply.remote(ref) for w in self.workers])
        return float(sum(loss for _, loss in results))

    def fit(self, batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> list[float]:
        """step() over every (x, y) of `batches`; the losses."""
        return [self.step(x, y) for x, y in batches]

    def state_dict(self) -> dict[str, np.ndarray]:
        """The trained weights (rank 0's; every replica holds the same)."""
        return ray.get(self.workers[0].state_dict.remote())

    def shutdown(self) -> None:
        for w in self.workers:
            ray.kill(w)
        self.workers = []

    def __enter__(self) -> DataParallel:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()


def _sum_grads(per_worker: list[list[np.ndarray | None]]) -> list[np.ndarray | None]:
    """The element-wise sum over workers, parameter by parameter (None where no worker has a gradient)."""
    out: list[np.ndarray | None] = []
    for grads in zip(*per_worker):
        present = [g for g in grads if g is not None]
        out.append(
            None if not present else np.sum(present, axis=0, dtype=np.float32) if len(present) > 1 else present[0]
        )
    return out
