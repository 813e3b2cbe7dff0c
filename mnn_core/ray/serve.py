"""A Ray Serve deployment of an mnn model, with dynamic batching.

    from ray import serve
    app = mray.serve_app("model.mnn", backend="x86", max_batch_size=32, batch_wait_timeout_s=0.005,
                         num_replicas=2)
    handle = serve.run(app, route_prefix="/mnn")
    handle.predict.remote({"x": rows}).result()          # from Python: {output name: array}
    # over HTTP: POST /mnn  {"x": [[...], ...]}  ->  {"probs": [[...], ...]}

Each request carries one or more rows (the first dimension of every input). Requests that arrive
within `batch_wait_timeout_s` of each other, up to `max_batch_size` of them, run as one batch
(`@serve.batch`), through a Predictor whose sub-batch is `max_batch_size`: every run has that
size (short batches are padded when the model treats rows independently), so a replica plans once.
Rows come back to the request that sent them. The model bytes travel in the deployment's arguments
(once per replica start), so replicas need no shared path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from ray import serve

from ..errors import InputError, MnnError
from .model import load_bytes, model_bytes, shippable
from .resources import actor_plugins, actor_resources, load_only


class MnnModel:
    """One replica: a Session (inside a Predictor) behind a batching queue."""

    def __init__(
        self,
        data: bytes,
        suffix: str,
        backend: str | Sequence[str],
        threads: int,
        precision: str,
        max_batch_size: int,
        batch_wait_timeout_s: float,
        options: dict | None,
        plugins: Sequence[str] | None = None,
    ):
        from .batch import Predictor

        load_only(plugins)  # before the model loads: loading it loads the plugins
        self.predictor = Predictor(
            load_bytes(data, suffix),
            backend=backend,
            threads=threads,
            precision=precision,
            sub_batch=max_batch_size,
            keep_columns=False,
            options=options,
        )
        self.graph_inputs = self.predictor.session.graph.inputs
        self.batch.set_max_batch_size(max_batch_size)
        self.batch.set_batch_wait_timeout_s(batch_wait_timeout_s)
        self.batch_sizes: list[int] = []  # requests per batch run: what dynamic batching achieved

    async def predict(self, feeds: dict[str, Any]) -> dict[str, np.ndarray]:
        """The outputs for the rows of one request (a dict of input name -> array, rows first)."""
        return await self.batch(self._check(feeds))

    async def __call__(self, request) -> dict[str, list]:
        """HTTP: a JSON object of input name -> nested lists (rows first); answers output name -> lists."""
        try:
            body = await request.json()
        except ValueError as exc:
            return _http_error(f"the body is not JSON: {exc}")
        if not isinstance(body, dict):
            return _http_error("the body must be a JSON object of input name -> rows")
        try:
            out = await self.predict(body)
        except InputError as exc:
            return _http_error(str(exc))
        return {name: value.tolist() for name, value in out.items()}

    def stats(self) -> dict[str, Any]:
        return {
            "batches": len(self.batch_sizes),
            "max_requests_per_batch": max(self.batch_sizes, default=0),
            "requests": sum(self.batch_sizes),
        }

    @serve.batch(max_batch_size=32, batch_wait_timeout_s=0.01)  # replaced per deployment in __init__
    async def batch(self, requests: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
        self.batch_sizes.append(len(requests))
        results: list[dict[str, np.ndarray] | None] = [None] * len(requests)
        groups: dict[tuple, list[int]] = {}  # requests whose rows have one shape run together
        for i, feeds in enumerate(requests):
            groups.setdefault(tuple(v.shape[1:] for v in feeds.values()), []).append(i)
        for members in groups.values():
            counts = [len(next(iter(requests[i].values()))) for i in members]
            joined = {name: np.concatenate([requests[i][name] for i in members]) for name in requests[members[0]]}
            out = self.predictor(joined)
            starts = np.concatenate([[0], np.cumsum(counts)])
            for i, a, b in zip(members, starts[:-1], starts[1:]):
                results[i] = {name: value[a:b] for name, value in out.items()}
        return results

    def _check(self, feeds: dict[str, Any]) -> dict[str, np.ndarray]:
        """The request's inputs as arrays of the model's dtypes and ranks, one row count; else an InputError."""
        if not isinstance(feeds, dict):
            raise InputError(f"a request is a dict of input name -> rows, got {type(feeds).__name__}")
        missing = [n for n in self.graph_inputs if n not in feeds]
        extra = [n for n in feeds if n not in self.graph_inputs]
        if missing or extra:
            raise InputError(
                f"the model's inputs are {', '.join(self.graph_inputs)}; the request "
                + (f"lacks {', '.join(missing)}" if missing else f"has unknown {', '.join(extra)}")
            )
        out = {}
        for name, info in self.graph_inputs.items():
            try:
                value = np.asarray(feeds[name], dtype=info.dtype)
            except (TypeError, ValueError) as exc:
                raise InputError(f"input {name!r}: not an array of {info.dtype} ({exc})") from None
            if info.shape is not None:
                want = tuple(info.shape)
                if value.ndim != len(want) or any(
                    isinstance(d, int) and d != g for d, g in zip(want[1:], value.shape[1:])
                ):
                    raise InputError(
                        f"input {name!r}: rows of shape {value.shape[1:]}, the model takes "
                        f"{want[1:]} (shape {want}, rows first)"
                    )
            out[name] = value
        if len({len(v) for v in out.values()}) > 1:
            raise InputError(f"the inputs have different numbers of rows: {sorted({len(v) for v in out.values()})}")
        return out


def _http_error(message: str):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=400)


def serve_app(
    model: Any,
    *,
    backend: str | Sequence[str] = "auto",
    threads: int = 1,
    precision: str = "normal",
    max_batch_size: int = 32,
    batch_wait_timeout_s: float = 0.01,
    num_replicas: int = 1,
    num_gpus: float | None = None,
    name: str = "mnn",
    options: dict | None = None,
    suffix: str | None = None,
):
    """A Serve application (for serve.run) of `num_replicas` replicas of `model` (a path, Graph, Module, or
    the bytes of a model file of type `suffix`, ".mnn" or ".onnx"), each with the resources its backend
    needs (resources.py)."""
    if not isinstance(max_batch_size, int) or max_batch_size < 1:
        raise MnnError(f"max_batch_size must be a positive int, got {max_batch_size!r}")
    if not batch_wait_timeout_s >= 0:
        raise MnnError(f"batch_wait_timeout_s must be >= 0, got {batch_wait_timeout_s!r}")
    if not isinstance(num_replicas, int) or num_replicas < 1:
        raise MnnError(f"num_replicas must be a positive int, got {num_replicas!r}")
    data, suffix, label = model_bytes(model, suffix)
    data, suffix = shippable(data, suffix, label)
    resources = actor_resources(backend, threads, num_gpus)
    deployment = serve.deployment(
        MnnModel,
        name=name,
        num_replicas=num_replicas,
        max_ongoing_requests=max(2 * max_batch_size, 8),
        ray_actor_options={"num_cpus": resources["num_cpus"], "num_gpus": resources["num_gpus"]},
    )
    plugins = actor_plugins(backend, suffix)
    return deployment.bind(
        data, suffix, backend, threads, precision, max_batch_size, batch_wait_timeout_s, options, plugins
    )
