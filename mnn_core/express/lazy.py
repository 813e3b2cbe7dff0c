"""Lazy mode: the same express code records a static Graph instead of computing.

    with express.lazy("mlp") as t:
        x = t.input("x", ("N", 784))
        t.output(model(x), "logits")
    graph = t.build()            # an mnn_core.Graph, ready for Session or save

Eager Vars used inside a trace enter the graph as constants (initializers),
except *mutable* ones (parameters, buffers, optimizer state) when the trace
was made with `state="input"`: those become graph inputs fed from their arrays
at every run, and `assign(target, value)` makes `value` a graph output that
the runner writes back into `target` afterwards. That is how a compiled
training step keeps its parameters between steps.

A symbolic dimension ("N") is traced as a symbol (graph.symbolic.Sym): shapes
carry it through, and an op whose attributes would capture it (a reshape to the
batch size) is reported when it is recorded, since an attribute is one size.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import GraphError, MnnError
from ..graph.builder import GraphBuilder
from ..graph.ir import Graph, TensorInfo
from ..graph.symbolic import is_sym
from ..ops import get_schema
from .var import MODE, Var


class Trace:
    """Records express ops as nodes of a Graph."""

    def __init__(self, name: str = "graph", state: str = "constant"):
        if state not in ("constant", "input"):
            raise MnnError(f"Trace state must be 'constant' or 'input', got {state!r}")
        self.state = state
        self.builder = GraphBuilder(name)
        self.infos: dict[str, TensorInfo] = {}
        self._bound: dict[int, str] = {}  # id(eager Var) -> value name
        self._keep: list[Var] = []  # bound eager Vars stay alive, so their ids stay unique
        self.state_inputs: list[tuple[str, Var]] = []  # graph inputs fed from an eager Var's array
        self.feeds: list[tuple[str, Callable[[], np.ndarray]]] = []  # graph inputs computed per run
        self.assignments: list[tuple[Var, str]] = []  # after a run: target Var <- output value
        self.before_run: list[Callable[[], None]] = []  # called before every run (step counters)
        self._outputs: list[tuple[str, str | None]] = []
        self.output_names: list[str] = []
        self._built: Graph | None = None

    def __enter__(self) -> Trace:
        self._prev = MODE.trace
        MODE.trace = self
        return self

    def __exit__(self, *exc) -> None:
        MODE.trace = self._prev

    # -- inputs ----------------------------------------------------------------------

    def input(self, name: str, shape, dtype: str = "float32") -> Var:
        """A graph input; a dimension may be a symbol such as "N"."""
        dtype = np.dtype(dtype).name
        value = self.builder.input(name, tuple(shape), dtype)
        info = TensorInfo(tuple(shape), dtype)
        self.infos[value] = info
        return Var._lazy(self, value, info)

    def feed(self, name: str, provider: Callable[[], np.ndarray], shape=(), dtype: str = "float32") -> Var:
        """A graph input whose value `provider()` returns before every run (a learning rate, a mask)."""
        v = self.input(name, shape, dtype)
        self.feeds.append((v._value, provider))
        return v

    def bind(self, var: Var, name: str | None = None) -> str:
        """The value name of `var` in this graph, taking an eager Var in if needed."""
        if var._data is None:
            if var._trace is not self:
                raise MnnError("a lazy Var from another trace was used here")
            return var._value
        key = id(var)
        if key in self._bound:
            return self._bound[key]
        arr = var._data
        if var._mutable and self.state == "input":
            value = self.builder.input(name or var.name or "state", arr.shape, arr.dtype.name)
            self.state_inputs.append((value, var))
        else:
            # parameters keep training: the graph gets a snapshot, not a view
            value = self.builder.const(arr.copy() if var._mutable else arr, name=name or var.name or "const")
            arr = self.builder.graph.initializers[value]
        self.infos[value] = TensorInfo(arr.shape, arr.dtype.name)
        self._bound[key] = value
        self._keep.append(var)
        return value

    # -- ops ---------------------------------------------------------------------------

    def record(self, op: str, vs: list, attrs: dict, n_outputs: int) -> list[Var]:
        _refuse_symbolic_attrs(op, attrs)
        names = [None if v is None else self.bind(v) for v in vs]
        ins = [None if n is None else self.infos[n] for n in names]
        try:
            outs = get_schema(op).infer(ins, attrs)
        except MnnError as exc:
            raise GraphError(f"{op} cannot take inputs ({', '.join(map(str, ins))}): {exc}") from None
        values = self.builder.op(op, *names, n_outputs=n_outputs, **attrs)
        values = [values] if n_outputs == 1 else list(values)
        result = []
        for value, info in zip(values, outs):
            self.infos[value] = info
            result.append(Var._lazy(self, value, info))
        return result

    def assign(self, target: Var, value: Var | np.ndarray) -> None:
        """After each run of the graph, `target` (an eager Var) takes `value`."""
        if self.state != "input":
            return  # an inference graph keeps no state
        if target._data is None or not target._mutable:
            raise MnnError("assign() targets a parameter, buffer or optimizer state (a mutable eager Var)")
        self.bind(target)
        src = self.bind(value if isinstance(value, Var) else Var._wrap(np.asarray(value)))
        self.assignments.append((target, src))

    def output(self, var: Var, name: str | None = None) -> None:
        self._outputs.append((self.bind(var), name))

    # -- the graph -----------------------------------------------------------------------

    def build(self) -> Graph:
        """Finish the graph: outputs (values assigned to state last), validated."""
        if self._built is not None:
            return self._built
        b = self.builder
        first: dict[str, str] = {}  # value -> the output name it took first
        names = []
        for value, name in self._outputs + [(src, f"new:{self._bound[id(t)]}") for t, src in self.assignments]:
            if value in first:  # the same value under a second name: give it a node of its own
                final = b.output(b.op("Identity", first[value]), name)
            else:
                final = first[value] = b.output(value, name)
            names.append(final)
        n_user = len(self._outputs)
        self.output_names = names[:n_user]
        self.assignments = [(t, names[n_user + i]) for i, (t, _) in enumerate(self.assignments)]
        self._built = b.build()
        return self._built


def _refuse_symbolic_attrs(op: str, attrs: dict) -> None:
    """An attribute is one size: one computed from a symbolic dimension would fix the graph to it."""
    for key, val in attrs.items():
        for v in val if isinstance(val, (list, tuple)) else [val]:
            if is_sym(v):
                raise GraphError(
                    f"{op} attribute {key!r} depends on the size of symbolic dimension {str(v)!r}; trace with a "
                    "concrete size, or reshape with -1 in place of that dimension"
                )


def lazy(name: str = "graph", state: str = "constant") -> Trace:
    """A Trace to use as a context manager: express ops inside it build a Graph."""
    return Trace(name, state)


def assign(target: Var, value: Var | np.ndarray) -> None:
    """target := value. Eager: copies now. In a trace: when the compiled graph has run."""
    trace = MODE.trace
    if trace is None and isinstance(value, Var) and value._trace is not None:
        trace = value._trace
    if trace is not None:
        trace.assign(target, value)
        return
    src = value.data if isinstance(value, Var) else np.asarray(value)
    if target._data.flags.writeable:
        np.copyto(target._data, src, casting="same_kind")
    else:
        target._data = np.array(src, dtype=target._data.dtype)
