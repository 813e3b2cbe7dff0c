"""Running a batch as single images on several threads at once (Session(batch_parallel=...)).

A batch-separable model (graph/batch.py) gives the same result for a batch of N as for its N images
one by one, so a session with T threads (batch_parallel="auto" or "on") can run T images at a time,
each on its own one-thread plan, instead of one batch-N plan whose every op is split over T threads.
That trades the per-op joins of the threads (each op waits for its slowest part) for none at all, and
keeps each image's activations in its core's L2 cache instead of streaming a batch-sized tensor
through L3 at every layer. The images are claimed one at a time, so a worker whose core runs slow takes fewer.

When it pays (`split_pays`, batch_parallel="auto", the default): the split reads every weight once
per image instead of once per batch, so it pays where an image's activations outweigh the model's
weights (measured: faster than the batch plan where the weights were 0.27x and 0.49x an image's
activations, slower at 2.7x; benchmarks/RESULTS.md). Small images stay whole: below SPLIT_MIN_IMAGE_BYTES of
activations an image's run is short next to the split's hand-off (a pool submission and a child
Session.run per image, in Python).

Each worker is a child Session of the same (already optimized) graph with the batch dimension set to
1, so its plan and arena are an image's; packed weights are shared where the backend caches them
(mnn-x86 does).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..graph.ir import Graph, TensorInfo
from .cancel import RunLimits

#: an image's activations (every value a one-image plan computes, in bytes) below which a batch stays
#: whole under batch_parallel="auto" (a rule of thumb, not measured: so small an image runs in well
#: under a millisecond, where the hand-off would show)
SPLIT_MIN_IMAGE_BYTES = 1 << 20


def split_pays(graph: Graph, infos: dict[str, TensorInfo], batch: int) -> bool:
    """Whether batch_parallel="auto" runs this batch as images: an image's activations (infos are the
    whole batch's) reach SPLIT_MIN_IMAGE_BYTES and are at least the model's weight bytes."""
    weights = graph.initializer_bytes()
    activations = sum(info.nbytes for name, info in infos.items() if name not in graph.initializers) // batch
    return activations >= SPLIT_MIN_IMAGE_BYTES and weights <= activations


class BatchSplit:
    """Runs batches of one set of input shapes as images on `workers` child sessions."""

    def __init__(
        self,
        make_child: Callable[[int], object],
        batch: int,
        threads: int,
        infos: dict[str, TensorInfo],
        output_names: list[str],
    ):
        self.batch = batch
        self.workers = max(1, min(threads, batch))
        per_worker = max(1, threads // self.workers)
        self.children = [make_child(per_worker) for _ in range(self.workers)]
        self.output_names = output_names
        # the outputs of the whole batch, reused by every run (copy=False hands out these arrays)
        self.outputs = {n: np.empty(infos[n].shape, dtype=infos[n].dtype) for n in output_names}
        self._pool = ThreadPoolExecutor(self.workers - 1, thread_name_prefix="mnn-batch") if self.workers > 1 else None

    def run(self, feeds: dict[str, np.ndarray], copy: bool, limits: RunLimits) -> dict[str, np.ndarray]:
        claim = itertools.count()  # next() is atomic under the GIL: each image runs once

        def work(child) -> None:
            while (i := next(claim)) < self.batch:
                got = child.run_limited({n: a[i : i + 1] for n, a in feeds.items()}, False, False, limits)
                for name in self.output_names:
                    self.outputs[name][i : i + 1] = got[name]

        helpers = [self._pool.submit(work, c) for c in self.children[1:]] if self._pool else []
        try:
            work(self.children[0])
        finally:
            for f in helpers:
                f.result()  # re-raises a worker's error, after every worker has stopped
        if copy:
            return {n: a.copy() for n, a in self.outputs.items()}
        return dict(self.outputs)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
