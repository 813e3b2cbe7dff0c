"""Var: a tensor of the express API, eager (numpy data) or lazy (a graph value).

Every operation on Vars goes through `apply(op, *inputs, **attrs)`, which
looks up the op's schema and then either

- runs its reference kernel on the numpy data (eager mode, the default), or
- adds a node to the active `Trace` (lazy mode: `with express.lazy() as t:`),

and, when an input requires a gradient, records a tape node so that
`backward()` can walk back through the op's gradient rule. The same model
code therefore computes eagerly, builds a static graph, or both.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import MnnError
from ..graph.ir import TensorInfo, numpy_dtype
from ..ops import get_schema
from . import dispatch
from .tensor_methods import TensorMethods


class _Mode(threading.local):
    grad_enabled: bool = True
    trace: Any = None  # the active express.lazy.Trace, or None


MODE = _Mode()


class no_grad:
    """Context manager (and decorator) that stops recording the tape."""

    def __enter__(self):
        self._prev = MODE.grad_enabled
        MODE.grad_enabled = False
        return self

    def __exit__(self, *exc):
        MODE.grad_enabled = self._prev

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        wrapped.__name__ = fn.__name__
        wrapped.__doc__ = fn.__doc__
        return wrapped


class enable_grad(no_grad):
    def __enter__(self):
        self._prev = MODE.grad_enabled
        MODE.grad_enabled = True
        return self


def is_grad_enabled() -> bool:
    return MODE.grad_enabled


def _default_array(data: Any, dtype) -> np.ndarray:
    """numpy arrays keep their dtype; Python numbers and lists become float32 / int64."""
    if isinstance(dtype, str):
        dtype = numpy_dtype(dtype)
    if isinstance(data, np.ndarray):
        return data if dtype is None else data.astype(dtype, copy=False)
    arr = np.asarray(data, dtype=dtype)
    if dtype is None and arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    elif dtype is None and arr.dtype.kind in "iu" and arr.dtype != np.int64:
        arr = arr.astype(np.int64)
    return arr


class Var(TensorMethods):
    """A tensor: numpy data (eager) or a named value of a graph being traced (lazy)."""

    __slots__ = (
        "_data",
        "_trace",
        "_value",
        "_info",
        "requires_grad",
        "grad",
        "_node",
        "_index",
        "_mutable",
        "name",
        "_device",
        "__weakref__",
    )
    __array_ufunc__ = None  # ndarray (op) Var defers to Var's reflected operators

    def __init__(self, data: Any, requires_grad: bool = False, dtype=None, name: str | None = None):
        if isinstance(data, Var):
            data = data.numpy()
        self._data = _default_array(data, dtype)
        self._trace = None
        self._value = None
        self._info = None
        self.requires_grad = bool(requires_grad)
        self.grad: Var | None = None
        self._node = None  # the tape node that produced this Var (None: a leaf)
        self._index = 0
        self._mutable = False  # parameters, buffers and optimizer state: traced as graph inputs
        self.name = name
        self._device = None  # None: the default device (express.device)
        if self.requires_grad and self._data.dtype.kind != "f":
            raise MnnError(f"only floating-point Vars can require gradients, got {self._data.dtype}")

    @classmethod
    def _wrap(cls, data: np.ndarray) -> Var:
        v = cls.__new__(cls)
        v._data, v._trace, v._value, v._info = np.asarray(data), None, None, None
        v.requires_grad, v.grad, v._node, v._index, v._mutable, v.name = False, None, None, 0, False, None
        v._device = None
        return v

    @classmethod
    def _lazy(cls, trace, value: str, info: TensorInfo) -> Var:
        v = cls._wrap(np.empty(0, np.float32))
        v._data, v._trace, v._value, v._info = None, trace, value, info
        return v

    # -- what it is ----------------------------------------------------------------

    @property
    def is_lazy(self) -> bool:
        return self._data is None

    @property
    def shape(self) -> tuple:
        return tuple(self._info.shape) if self._data is None else self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._info.dtype) if self._data is None else self._data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def data(self) -> np.ndarray:
        """The numpy array (eager Vars only); shared, not copied."""
        if self._data is None:
            raise MnnError(
                f"lazy Var {self._value!r} has no value: it is a node of a graph being traced; "
                "build the graph (trace.build()) and run it with mnn_core.Session"
            )
        return self._data

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    def numpy(self) -> np.ndarray:
        return self.data

    def item(self):
        return self.data.item()

    def tolist(self):
        return self.data.tolist()

    def __array__(self, dtype=None, copy=None):
        arr = self.data
        return arr.astype(dtype) if dtype is not None else arr

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d Var")
        return self.shape[0]

    def __repr__(self) -> str:
        grad = ", requires_grad=True" if self.requires_grad else ""
        if self._data is None:
            return f"Var(lazy {self._value!r}: {self._info}{grad})"
        body = np.array2string(self._data, precision=4, threshold=20, separator=", ")
        return f"Var({body}, dtype={self._data.dtype}{grad})"

    def __bool__(self) -> bool:
        return bool(self.data)

    __hash__ = object.__hash__  # == is element-wise, so hashing is by identity

    # -- autograd --------------------------------------------------------------------

    def backward(self, grad: Var | np.ndarray | None = None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's `.grad`."""
        from .autograd import backward

        backward(self, grad)

    def detach(self) -> Var:
        v = Var._wrap(self._data) if self._data is not None else Var._lazy(self._trace, self._value, self._info)
        v._device = self._device
        return v

    def requires_grad_(self, flag: bool = True) -> Var:
        if flag and self.dtype.kind != "f":
            raise MnnError(f"only floating-point Vars can require gradients, got {self.dtype}")
        self.requires_grad = flag
        return self

    def zero_grad(self) -> None:
        self.grad = None

    # -- arithmetic: element-wise ops with numpy broadcasting ----------------------------

    def __add__(self, o):
        return apply("Add", self, o)

    def __radd__(self, o):
        return apply("Add", o, self)

    def __sub__(self, o):
        return apply("Sub", self, o)

    def __rsub__(self, o):
        return apply("Sub", o, self)

    def __mul__(self, o):
        return apply("Mul", self, o)

    def __rmul__(self, o):
        return apply("Mul", o, self)

    def __truediv__(self, o):
        return apply("Div", self, o)

    def __rtruediv__(self, o):
        return apply("Div", o, self)

    def __pow__(self, o):
        return apply("Pow", self, o)

    def __rpow__(self, o):
        return apply("Pow", o, self)

    def __matmul__(self, o):
        return apply("MatMul", self, o)

    def __rmatmul__(self, o):
        return apply("MatMul", o, self)

    def __neg__(self):
        return apply("Neg", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return apply("Abs", self)

    def __eq__(self, o):
        return apply("Equal", self, o)  # noqa: E704

    def __ne__(self, o):
        return apply("Where", apply("Equal", self, o), False, True)

    def __lt__(self, o):
        return apply("Less", self, o)

    def __gt__(self, o):
        return apply("Greater", self, o)

    def __le__(self, o):
        return apply("Where", apply("Greater", self, o), False, True)

    def __ge__(self, o):
        return apply("Where", apply("Less", self, o), False, True)

    def exp(self):
        return apply("Exp", self)

    def log(self):
        return apply("Log", self)

    def sqrt(self):
        return apply("Sqrt", self)

    def relu(self):
        return apply("Relu", self)

    def sigmoid(self):
        return apply("Sigmoid", self)

    def tanh(self):
        return apply("Tanh", self)


# -- the one path every op takes -------------------------------------------------------------


def as_var(value: Any, like: Var | None = None) -> Var:
    """A Var for an operand: Vars pass through, numbers and arrays take the dtype of `like`."""
    if isinstance(value, Var):
        return value
    if isinstance(value, (bool, np.bool_)):
        return Var._wrap(np.asarray(value, dtype=bool))
    if like is None:
        return Var._wrap(_default_array(value, None))
    arr = np.asarray(value)
    if not isinstance(value, np.ndarray) or arr.dtype.kind == like.dtype.kind == "f":
        arr = arr.astype(like.dtype, copy=False)
    return Var._wrap(arr)


def _operands(inputs: Sequence) -> list:
    like = next((v for v in inputs if isinstance(v, Var)), None)
    return [None if v is None else as_var(v, like) for v in inputs]


def _active_trace(vs: list):
    trace = MODE.trace
    for v in vs:
        if v is not None and v._trace is not None:
            if trace is None:
                trace = v._trace
            elif v._trace is not trace:
                raise MnnError("a lazy Var from one trace was used in another; finish one graph before the next")
    return trace


def apply(op: str, *inputs, n_outputs: int = 1, **attrs):
    """Run (eager) or record (lazy) one op; return its output Var (a tuple if n_outputs > 1)."""
    schema = get_schema(op)
    vs = _operands(inputs)
    while vs and vs[-1] is None:  # trailing absent optional inputs are simply left out
        vs.pop()
    full = schema.check_attrs(attrs, op)
    trace = _active_trace(vs)
    if trace is None:
        outs = dispatch.run(op, schema, [None if v is None else v._data for v in vs], full, n_outputs)
        results = [Var._wrap(o) for o in outs[:n_outputs]]
    else:
        results = trace.record(op, vs, full, n_outputs)
    if MODE.grad_enabled and any(v is not None and v.requires_grad for v in vs):
        from .autograd import record

        record(op, full, vs, results)
    return results[0] if n_outputs == 1 else tuple(results)
