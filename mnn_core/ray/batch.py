"""Batch inference with Ray Data: a callable class for `Dataset.map_batches`, one Session per actor.

    out = predict(ds, "model.mnn", backend="x86", threads=1, workers=2)        # or, by hand:
    ref = ship("model.mnn")
    ds.map_batches(Predictor, fn_constructor_kwargs={"model": ref, "backend": "x86"}, compute=ActorPoolStrategy(size=2),
                   batch_size=256, batch_format="numpy", **actor_resources("x86", 1))

A batch (a dict of numpy columns) runs in sub-batches of a fixed size, so the session plans once and
every later sub-batch reuses that plan: the short tail of a block is padded up to the fixed size (and
the padding's rows dropped) when the model treats the rows of a batch independently, which
graph/batch.py checks; a model that mixes rows runs its tail at its own size instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError, MnnError
from ..graph.batch import not_separable
from ..graph.ir import TensorInfo
from .model import ModelRef, ship
from .resources import actor_plugins, actor_resources, load_only


class Predictor:
    """Runs a model over numpy batches: model inputs from columns, outputs returned as columns.

    `columns` maps a model input to the column holding it (default: the column of the same name);
    the columns that feed no input pass through unchanged (keep_columns), so ids stay with their rows.
    `plugins`, for an actor's own process: load only these plugins there (resources.actor_plugins,
    which `predict` passes); None loads every installed one, as anywhere else.
    """

    def __init__(
        self,
        model: ModelRef | str,
        backend: str | Sequence[str] = "auto",
        threads: int = 1,
        precision: str = "normal",
        sub_batch: int = 64,
        columns: dict[str, str] | None = None,
        keep_columns: bool = True,
        options: dict | None = None,
        plugins: Sequence[str] | None = None,
    ):
        from ..runtime.session import Session

        load_only(plugins)
        if not isinstance(sub_batch, int) or sub_batch < 1:
            raise MnnError(f"sub_batch must be a positive int, got {sub_batch!r}")
        graph = model.load() if isinstance(model, ModelRef) else None
        self.session = Session(
            graph if graph is not None else model,
            backend=backend,
            threads=threads,
            precision=precision,
            options=options,
        )
        self.inputs = self.session.input_names
        self.columns = {name: (columns or {}).get(name, name) for name in self.inputs}
        self.keep_columns = keep_columns
        fixed = {info.shape[0] for info in self.session.graph.inputs.values() if info.shape and _is_int(info.shape[0])}
        # a model built for one batch size runs at that size whatever sub_batch says
        self.sub_batch = fixed.pop() if len(fixed) == 1 else sub_batch
        self._pad_ok: dict[tuple, bool] = {}

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        feeds = self._feeds(batch)
        rows = len(next(iter(feeds.values())))
        parts = [self._run_part(feeds, i, min(i + self.sub_batch, rows)) for i in range(0, rows, self.sub_batch)]
        out: dict[str, np.ndarray] = {}
        if self.keep_columns:
            used = set(self.columns.values())
            out.update((k, v) for k, v in batch.items() if k not in used)
        for name in self.session.output_names:
            if name in out:
                raise MnnError(
                    f"output {name!r} has the name of an input column; rename the column, or pass keep_columns=False"
                )
            out[name] = np.concatenate([p[name] for p in parts]) if parts else np.empty((0,))
        return out

    def _feeds(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        feeds = {}
        for name, col in self.columns.items():
            if col not in batch:
                raise InputError(
                    f"model input {name!r} reads column {col!r}, which the batch lacks (it has "
                    f"{', '.join(batch) or 'no columns'}); map it with columns={{{name!r}: ...}}"
                )
            value = batch[col]
            if value.dtype == object:  # a column of arrays of different shapes, or of lists
                try:
                    value = np.stack([np.asarray(v) for v in value])
                except ValueError:
                    raise InputError(
                        f"column {col!r} holds arrays of different shapes; a batch must be "
                        "one shape per column (resize the rows first)"
                    ) from None
            want = self.session.graph.inputs[name].dtype
            feeds[name] = value if value.dtype == want else value.astype(want)
        lengths = {len(v) for v in feeds.values()}
        if len(lengths) > 1:
            raise InputError(f"the input columns have different numbers of rows: {sorted(lengths)}")
        return feeds

    def _run_part(self, feeds: dict[str, np.ndarray], start: int, stop: int) -> dict[str, np.ndarray]:
        part = {n: v[start:stop] for n, v in feeds.items()}
        rows = stop - start
        if rows < self.sub_batch and self._may_pad(part):
            # the tail repeats its last row: a real row, so no value the model has not seen (zeros could be a log's 0)
            part = {n: np.concatenate([v, np.repeat(v[-1:], self.sub_batch - rows, axis=0)]) for n, v in part.items()}
        got = self.session.run(part)
        for name, value in got.items():
            if value.ndim == 0 or len(value) != len(next(iter(part.values()))):
                raise MnnError(
                    f"output {name!r} has shape {value.shape}, not one row per input row; batch "
                    "inference needs outputs whose first dimension is the batch"
                )
        return {name: value[:rows] for name, value in got.items()}

    def _may_pad(self, part: dict[str, np.ndarray]) -> bool:
        key = tuple(v.shape[1:] for v in part.values())
        if key not in self._pad_ok:
            graph = self.session.graph
            shapes = {n: TensorInfo((self.sub_batch, *v.shape[1:]), graph.inputs[n].dtype) for n, v in part.items()}
            try:
                self._pad_ok[key] = not_separable(graph, graph.infer(shapes)) is None
            except MnnError:  # shapes that cannot be inferred here: do not pad
                self._pad_ok[key] = False
        return self._pad_ok[key]


def predict(
    ds: Any,
    model: ModelRef | str,
    *,
    backend: str | Sequence[str] = "auto",
    threads: int = 1,
    workers: int = 1,
    batch_size: int = 256,
    sub_batch: int = 64,
    precision: str = "normal",
    num_gpus: float | None = None,
    **predictor_options,
) -> Any:
    """`ds.map_batches` with a Predictor on `workers` actors, each with the resources its backend
    needs (resources.py); the model is shipped through the object store once."""
    if not isinstance(workers, int) or workers < 1:
        raise MnnError(f"workers must be a positive int, got {workers!r}")
    ref = ship(model)
    kwargs = dict(model=ref, backend=backend, threads=threads, precision=precision, sub_batch=sub_batch)
    kwargs["plugins"] = actor_plugins(backend, ref.suffix)
    kwargs.update(predictor_options)
    from ray.data import ActorPoolStrategy

    return ds.map_batches(
        Predictor,
        fn_constructor_kwargs=kwargs,
        compute=ActorPoolStrategy(size=workers),
        batch_size=batch_size,
        batch_format="numpy",
        **actor_resources(backend, threads, num_gpus),
    )


def _is_int(d: Any) -> bool:
    return isinstance(d, (int, np.integer))
