"""A compiled training step: forward, backward and update as one static graph.

    step = mnn_core.train.compile(model, nn.CrossEntropyLoss(), optimizer)
    for x, y in loader:
        loss = step(x, y)

The first call for a given input shape traces model(x), loss_fn(out, y), the
gradient rules and the optimizer's fused update ops into one Graph (with
`express.Trace(state="input")`) and plans it with `mnn_core.Session`, so it
goes through the passes, scheduler, memory planner and whichever backends
claim the ops; later calls with that shape only run the planned program.

State: parameters, buffers and optimizer state are graph inputs, and their
new values graph outputs. Each call feeds the current arrays in and copies
the new values back into the same arrays, so the eager model, the optimizer
and the compiled step always share one set of weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import MnnError
from ..express import Trace, Var, grad
from ..graph.ir import Graph


@dataclass
class _Compiled:
    trace: Trace
    graph: Graph
    session: Any
    inputs: list  # names of the batch inputs (x, y)
    loss: str
    output: str | None
    state: tuple  # ids of the state Vars fed in, to notice a swapped parameter


class TrainStep:
    """Callable `step(x, y) -> loss` (and the model output with return_output=True)."""

    def __init__(
        self,
        model,
        loss_fn: Callable,
        optimizer,
        backend="auto",
        threads: int = 1,
        return_output: bool = False,
        options: dict | None = None,
    ):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.backend, self.threads, self.options = backend, threads, options
        self.return_output = return_output
        self._compiled: dict[tuple, _Compiled] = {}
        self.last: _Compiled | None = None

    # -- tracing ------------------------------------------------------------------------

    def _key(self, batch: Sequence[np.ndarray]) -> tuple:
        shapes = tuple((a.shape, a.dtype.str) for a in batch)
        return shapes, bool(getattr(self.model, "training", True)), self.optimizer.signature()

    def _trace(self, batch: Sequence[np.ndarray]) -> _Compiled:
        model, opt = self.model, self.optimizer
        t = Trace("train_step", state="input")
        with t:
            for path, p in model.named_parameters():
                t.bind(p, name=path)
            for path, b in model.named_buffers():
                t.bind(b, name=path)
            names = ["x", "y"] if len(batch) == 2 else [f"input{i}" for i in range(len(batch))]
            vs = [t.input(n, a.shape, a.dtype.name) for n, a in zip(names, batch)]
            out = model(*vs[:-1])
            loss = self.loss_fn(out, vs[-1])
            if not isinstance(loss, Var) or loss.size != 1:
                raise MnnError(f"the loss function must return a single-value Var, got {loss!r}")
            params = [p for g in opt.param_groups for p in g["params"] if p.requires_grad]
            grads = grad(loss, params)
            opt.update({id(p): g for p, g in zip(params, grads) if g is not None}, t)
            t.output(loss, "loss")
            if self.return_output:
                t.output(out if isinstance(out, Var) else out[0], "output")
        graph = t.build()
        from ..runtime.session import Session

        session = Session(graph, backend=self.backend, threads=self.threads, options=self.options)
        inputs = [v._value for v in vs]
        state = tuple(id(v) for _, v in t.state_inputs)
        return _Compiled(
            t, graph, session, inputs, t.output_names[0], t.output_names[1] if self.return_output else None, state
        )

    # -- running ---------------------------------------------------------------------------

    def __call__(self, *batch, profile: bool = False):
        if len(batch) < 2:
            raise MnnError("step(x, y): give the model input(s) and the target")
        arrays = [b.numpy() if isinstance(b, Var) else np.asarray(b) for b in batch]
        key = self._key(arrays)
        c = self._compiled.get(key)
        if c is not None and c.state != tuple(id(v) for _, v in c.trace.state_inputs):
            c = None
        if c is None:
            c = self._compiled[key] = self._trace(arrays)
        self.last = c
        t = c.trace
        for hook in t.before_run:
            hook()
        feeds = dict(zip(c.inputs, arrays))
        feeds.update((name, v._data) for name, v in t.state_inputs)
        feeds.update((name, provider()) for name, provider in t.feeds)
        outs = c.session.run(feeds, copy=False, profile=profile)
        for target, name in t.assignments:
            np.copyto(target._data, outs[name])
        loss = float(outs[c.loss])
        if self.return_output:
            return loss, outs[c.output].copy()
        return loss

    # -- introspection -----------------------------------------------------------------------

    def _need(self) -> _Compiled:
        if self.last is None:
            raise MnnError("the step has not run yet: call step(x, y) once first")
        return self.last

    def profile(self) -> list[tuple[str, float]]:
        """Per-step milliseconds of the last call made with profile=True."""
        return self._need().session.profile()

    @property
    def graph(self) -> Graph:
        return self._need().graph

    @property
    def session(self):
        return self._need().session


def compile_step(
    model,
    loss_fn: Callable,
    optimizer,
    backend="auto",
    threads: int = 1,
    return_output: bool = False,
    options: dict | None = None,
) -> TrainStep:
    """Compile forward + backward + optimizer update into one graph run by a Session."""
    return TrainStep(model, loss_fn, optimizer, backend, threads, return_output, options)


def compile(  # noqa: A001
    model,
    loss_fn: Callable | None = None,
    optimizer=None,
    backend=None,
    threads: int | None = None,
    return_output: bool = False,
    options: dict | None = None,
    freeze: bool = False,
):
    """compile(model): the module's forward as planned Sessions (torch.compile's counterpart,
    mnn_core.train.forward); compile(model, loss_fn, optimizer): the whole training step
    (compile_step)."""
    if loss_fn is None and optimizer is None:
        from .forward import CompiledModule

        return CompiledModule(model, backend, threads, options, freeze)
    if loss_fn is None or optimizer is None:
        raise MnnError("compile(model, loss_fn, optimizer) compiles a training step and needs all three")
    return compile_step(model, loss_fn, optimizer, backend or "auto", threads or 1, return_output, options)
