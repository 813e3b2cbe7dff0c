"""torch.compile's shape: a module whose forward runs as a planned Session.

    fast = mnn_core.compile(model)          # or mnn_core.torch.compile(model)
    with mnn_core.no_grad():
        y = fast(x)                          # traced once per input shape, then planned runs

A call that needs gradients (grad enabled, a parameter or an input requiring grad) runs the
eager model, so a training loop over the compiled module still trains; `mnn_core.train.compile_step`
compiles the whole training step instead. Keyword arguments also run eagerly.

Weights: by default ("live") parameters and buffers are graph inputs fed from the module's own
arrays on every call, so an optimizer step or load_state_dict is seen at once. `freeze=True`
makes them constants of the graph instead (backends pre-pack them and fold batch norms into
convolutions), for deployment: the module's weights must not change afterwards; call
`refresh()` if they do.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MnnError
from ..express import Trace, Var
from ..express.var import is_grad_enabled

#: planned sessions kept per compiled module, one per input signature (least recently used goes)
MAX_SIGNATURES = 8


@dataclass
class _Plan:
    trace: Trace
    session: Any
    inputs: list[str]
    outputs: list[str]
    structure: str  # "one" (a Var), "tuple" or "list"


class CompiledModule:
    """Callable like the module; see the module docstring."""

    def __init__(
        self,
        model: Any,
        backend: str | None = None,
        threads: int | None = None,
        options: dict | None = None,
        freeze: bool = False,
    ) -> None:
        if not callable(model) or not hasattr(model, "named_parameters"):
            raise MnnError(f"compile(model) takes an mnn_core.nn.Module, got {type(model).__name__}")
        self.model, self.freeze = model, bool(freeze)
        self.backend, self.threads, self.options = backend, threads, options
        self._plans: OrderedDict[tuple, _Plan] = OrderedDict()

    # -- module-like -----------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:  # parameters(), eval(), state_dict(), ... of the model
        return getattr(self.__dict__["model"], name)

    def __repr__(self) -> str:
        return f"CompiledModule({self.model!r}, freeze={self.freeze})"

    def refresh(self) -> None:
        """Forget the planned sessions (a frozen module's weights changed)."""
        self._plans.clear()

    # -- calling ---------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or not args or self._needs_grad(args):
            return self.model(*args, **kwargs)
        arrays = []
        for a in args:
            if isinstance(a, Var):
                if a._data is None:  # inside another trace: be part of it
                    return self.model(*args)
                arrays.append(a._data)
            elif isinstance(a, np.ndarray):
                arrays.append(a)
            else:
                return self.model(*args)
        key = (tuple((a.shape, a.dtype.str) for a in arrays), bool(getattr(self.model, "training", False)))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._trace(arrays)
            while len(self._plans) > MAX_SIGNATURES:
                self._plans.popitem(last=False)
        else:
            self._plans.move_to_end(key)
        feeds = dict(zip(plan.inputs, arrays))
        feeds.update((name, v._data) for name, v in plan.trace.state_inputs)
        outs = plan.session.run(feeds)
        results = [Var._wrap(outs[name]) for name in plan.outputs]
        if plan.structure == "one":
            return results[0]
        return tuple(results) if plan.structure == "tuple" else results

    def _needs_grad(self, args: tuple) -> bool:
        if not is_grad_enabled():
            return False
        if any(isinstance(a, Var) and a.requires_grad for a in args):
            return True
        return any(p.requires_grad for p in self.model.parameters())

    def _trace(self, arrays: list[np.ndarray]) -> _Plan:
        from ..nn.module import module_backend
        from ..runtime.session import Session

        t = Trace(type(self.model).__name__, state="constant" if self.freeze else "input")
        with t:
            for path, p in self.model.named_parameters():
                t.bind(p, name=path)
            for path, b in self.model.named_buffers():
                t.bind(b, name=path)
            names = ["input"] if len(arrays) == 1 else [f"input{i}" for i in range(len(arrays))]
            vs = [t.input(n, a.shape, a.dtype.name) for n, a in zip(names, arrays)]
            out = self.model(*vs)
            if isinstance(out, Var):
                structure, outs = "one", [out]
            elif isinstance(out, (tuple, list)) and out and all(isinstance(o, Var) for o in out):
                structure, outs = ("tuple" if isinstance(out, tuple) else "list"), list(out)
            else:
                raise MnnError(
                    f"compile: {type(self.model).__name__}.forward returned {type(out).__name__}; a compiled "
                    "module returns a tensor or a tuple/list of tensors (call the model itself for others)"
                )
            for i, o in enumerate(outs):
                t.output(o, "output" if len(outs) == 1 else f"output{i}")
        backend = self.backend or module_backend(self.model)
        kw = {"threads": self.threads} if self.threads is not None else {}
        session = Session(t.build(), backend=backend, options=self.options, **kw)
        return _Plan(t, session, [v._value for v in vs], list(t.output_names), structure)


def compile_module(
    model: Any,
    backend: str | None = None,
    threads: int | None = None,
    options: dict | None = None,
    freeze: bool = False,
) -> CompiledModule:
    """model's forward as a planned Session per input shape (torch.compile's counterpart)."""
    return CompiledModule(model, backend, threads, options, freeze)
