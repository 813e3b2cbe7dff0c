"""The methods of a PyTorch tensor that Var has: shape, dtype and device, reductions with `dim=`.

Var inherits them (class Var(TensorMethods)); each maps onto a function of
express.functional or express.torch_ops, so a method runs eagerly, traces
and differentiates exactly like the function. `axis=`/`keepdims=` stay
accepted as numpy-style aliases of `dim=`/`keepdim=`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..errors import MnnError
from .more_methods import MoreTensorMethods

#: what `x.max(dim)` and `x.min(dim)` return, as torch.return_types.max
MaxMin = namedtuple("MaxMin", ["values", "indices"])


class _Size(int):
    """`x.size`: the element count (numpy's meaning, kept), callable as PyTorch's `x.size(dim)`."""

    def __new__(cls, shape: tuple):
        obj = super().__new__(cls, int(np.prod(shape, dtype=np.int64)))
        obj._shape = shape
        return obj

    def __call__(self, dim: int | None = None):
        if dim is None:
            return self._shape
        if not -len(self._shape) <= dim < len(self._shape):
            raise IndexError(f"dimension {dim} is out of range for a tensor of rank {len(self._shape)}")
        return self._shape[dim]


def _shape_args(shape) -> list:
    return list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else list(shape)


class TensorMethods(MoreTensorMethods):
    __slots__ = ()

    # -- shape, dtype, device -------------------------------------------------------------------

    @property
    def size(self) -> _Size:
        return _Size(self.shape)

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def dim(self) -> int:
        return len(self.shape)

    @property
    def device(self):
        from .device import default_device

        return self._device or default_device()

    def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False):
        """to(device), to(dtype), to(device, dtype), to(other): a cast, or the same data on another device."""
        from .device import Device
        from .device import device as as_device
        from .var import Var

        for a in args:
            if isinstance(a, Var):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, Device)) and not _is_dtype_name(a):
                device = a
            else:
                dtype = a
        out = self
        if dtype is not None and np.dtype(dtype) != self.dtype:
            out = self.astype(dtype)
        if device is not None and as_device(device) != self.device:
            out = out.clone() if out is self else out
            out._device = as_device(device)
        return out.clone() if copy and out is self else out

    def cpu(self):
        return self.to("cpu")

    def cuda(self, *args, **kwargs):
        from .device import device

        device("cuda")  # raises, saying what to use instead

    def float(self):
        return self.astype(np.float32)

    def double(self):
        return self.astype(np.float64)

    def half(self):
        return self.astype(np.float16)

    def long(self):
        return self.astype(np.int64)

    def int(self):
        return self.astype(np.int32)

    def bool(self):
        return self.astype(np.bool_)

    def type_as(self, other):
        return self.astype(other.dtype)

    def astype(self, dtype):
        from .functional import cast

        return self if np.dtype(dtype) == self.dtype else cast(self, dtype)

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer tensors of one element can be an index, got {self.dtype}")
        return int(self.item())

    # -- views and copies ----------------------------------------------------------------------

    def __getitem__(self, index):
        from .functional import getitem

        return getitem(self, index)

    def reshape(self, *shape):
        from .functional import reshape

        return reshape(self, _shape_args(shape))

    def view(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
            return self.astype(shape[0])  # view(dtype) reinterprets in PyTorch; here it converts
        return self.reshape(*shape)

    def view_as(self, other):
        return self.reshape(other.shape)

    reshape_as = view_as

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        from .functional import flatten

        return flatten(self, start_dim, end_dim)

    def transpose(self, *axes):
        """transpose(a, b) swaps two axes (PyTorch); transpose() reverses them; more give a permutation."""
        from .functional import transpose

        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        elif len(axes) == 2:
            perm = list(range(self.ndim))
            a, b = (ax % self.ndim for ax in axes)
            perm[a], perm[b] = perm[b], perm[a]
            axes = tuple(perm)
        return transpose(self, list(axes) if axes else None)

    def t(self):
        if self.ndim > 2:
            raise MnnError(f"t() transposes a tensor of rank 2 or less, got shape {self.shape}; use transpose(a, b)")
        return self.transpose() if self.ndim == 2 else self

    def permute(self, *axes):
        from .functional import transpose

        return transpose(self, _shape_args(axes))

    @property
    def T(self):  # noqa: N802
        from .functional import transpose

        return transpose(self, None)

    def squeeze(self, dim=None, *, axis=None):
        from .functional import squeeze

        return squeeze(self, dim, axis=axis)

    def unsqueeze(self, dim=None, *, axis=None):
        from .functional import unsqueeze

        return unsqueeze(self, dim, axis=axis)

    def expand(self, *sizes):
        from .functional import expand

        sizes = _shape_args(sizes)
        lead = len(sizes) - self.ndim
        return expand(self, [self.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes)])

    def expand_as(self, other):
        return self.expand(other.shape)

    def repeat(self, *reps):
        from .var import apply

        reps = _shape_args(reps)
        x = self.reshape([1] * (len(reps) - self.ndim) + list(self.shape)) if len(reps) > self.ndim else self
        return apply("Tile", x, repeats=[int(r) for r in reps])

    def chunk(self, chunks: int, dim: int = 0):
        from .functional import chunk

        return chunk(self, chunks, dim)

    def split(self, split_size, dim: int = 0):
        from .functional import split

        return split(self, split_size, dim)

    def clone(self):
        from .var import apply

        out = apply("Identity", self)
        if out._data is not None and np.shares_memory(out._data, self._data):
            out._data = out._data.copy()  # a clone never aliases: in-place updates of one leave the other
        return out

    def contiguous(self):
        return self

    # -- reductions ----------------------------------------------------------------------------

    def sum(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
        from .functional import sum as sum_

        x = self if dtype is None else self.astype(dtype)
        if x.dtype == np.bool_:  # PyTorch counts: True is 1
            x = x.astype(np.int64)
        return sum_(x, dim, keepdim, axis=axis, keepdims=keepdims)

    def mean(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
        from .functional import mean

        x = self if dtype is None else self.astype(dtype)
        return mean(x, dim, keepdim, axis=axis, keepdims=keepdims)

    def _extreme(self, which: str, dim, keepdim, axis, keepdims):
        from . import functional as F
        from .var import Var

        if isinstance(dim, (Var, np.ndarray, float)):  # max(other): the element-wise maximum
            return (F.maximum if which == "max" else F.minimum)(self, dim)
        d = F.pick_dim(dim, axis, which)
        reduce = F.amax if which == "max" else F.amin
        keep = keepdims if keepdims is not None else keepdim
        if d is None or axis is not None:  # numpy's x.max(axis=...) gives the values only
            return reduce(self, d, keep)
        arg = F.argmax if which == "max" else F.argmin
        return MaxMin(reduce(self, d, keep), arg(self, d, keep))

    def max(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        """max() the largest value; max(dim) (values, indices) as PyTorch; max(other) element-wise;
        max(axis=...) the values, as numpy."""
        return self._extreme("max", dim, keepdim, axis, keepdims)

    def min(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        return self._extreme("min", dim, keepdim, axis, keepdims)

    def amax(self, dim=None, keepdim: bool = False):
        from .functional import amax

        return amax(self, dim, keepdim)

    def amin(self, dim=None, keepdim: bool = False):
        from .functional import amin

        return amin(self, dim, keepdim)

    def argmax(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        from .functional import argmax

        return argmax(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def argmin(self, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
        from .functional import argmin

        return argmin(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def var(self, dim=None, unbiased: bool = True, keepdim: bool = False, *, correction=None):
        from .torch_ops import var

        return var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased: bool = True, keepdim: bool = False, *, correction=None):
        from .torch_ops import std

        return std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p=2, dim=None, keepdim: bool = False):
        from .torch_ops import norm

        return norm(self, p, dim, keepdim)

    # -- element-wise ----------------------------------------------------------------------------

    def clamp(self, min=None, max=None):  # noqa: A002
        from .torch_ops import clamp

        return clamp(self, min, max)

    clip = clamp

    def clamp_min(self, min):  # noqa: A002
        return self.clamp(min, None)

    def clamp_max(self, max):  # noqa: A002
        return self.clamp(None, max)

    def masked_fill(self, mask, value):
        from .torch_ops import masked_fill

        return masked_fill(self, mask, value)

    def softmax(self, dim: int = -1):
        from .functional import softmax

        return softmax(self, dim)

    def log_softmax(self, dim: int = -1):
        from .functional import log_softmax

        return log_softmax(self, dim)

    def add(self, other, alpha=1):
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other, alpha=1):
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def pow(self, exponent):
        return self**exponent

    def matmul(self, other):
        return self @ other

    def eq(self, other):
        return self == other

    def ne(self, other):
        return self != other

    def lt(self, other):
        return self < other

    def gt(self, other):
        return self > other

    def le(self, other):
        return self <= other

    def ge(self, other):
        return self >= other

    def abs(self):
        return abs(self)

    def neg(self):
        return -self

    def square(self):
        return self * self

    # -- masks: ~, &, |, ^ are logical on bool tensors and bitwise on integer ones (as PyTorch) ----------

    def _logic(self, other, logical: str, bitwise: str, reflected: bool = False):
        from .var import apply, as_var

        other = as_var(other, self)
        a, b = (other, self) if reflected else (self, other)
        return apply(logical if self.dtype == np.bool_ else bitwise, a, b)

    def __invert__(self):
        from .var import apply

        if self.dtype.kind not in "biu":
            raise MnnError(f"~ needs a bool or integer tensor, got {self.dtype}")
        return apply("Not" if self.dtype == np.bool_ else "BitwiseNot", self)

    def __and__(self, other):
        return self._logic(other, "And", "BitwiseAnd")

    def __rand__(self, other):
        return self._logic(other, "And", "BitwiseAnd", True)

    def __or__(self, other):
        return self._logic(other, "Or", "BitwiseOr")

    def __ror__(self, other):
        return self._logic(other, "Or", "BitwiseOr", True)

    def __xor__(self, other):
        return self._logic(other, "Xor", "BitwiseXor")

    def __rxor__(self, other):
        return self._logic(other, "Xor", "BitwiseXor", True)

    def logical_not(self):
        return ~self.bool()

    def logical_and(self, other):
        return self.bool() & other

    def logical_or(self, other):
        return self.bool() | other

    # -- in place: the data change, nothing is recorded (like PyTorch on a leaf under no_grad) ---------

    def _inplace(self, fn: str, value) -> object:
        from .var import MODE, Var

        if self._data is None:
            raise MnnError(f"{fn}() on a lazy tensor: in-place updates happen on eager data only")
        if self.requires_grad and self.is_leaf and MODE.grad_enabled:
            raise MnnError(f"{fn}() on a leaf that requires a gradient: wrap the update in `with no_grad():`")
        src = value.data if isinstance(value, Var) else np.asarray(value)
        if not self._data.flags.writeable:
            self._data = np.array(self._data)
        if fn == "copy_":
            np.copyto(self._data, np.broadcast_to(src, self.shape), casting="unsafe")
        else:
            op = {"add_": np.add, "sub_": np.subtract, "mul_": np.multiply, "div_": np.divide}[fn]
            op(self._data, src, out=self._data, casting="unsafe")
        return self

    def zero_(self):
        return self._inplace("copy_", 0)

    def fill_(self, value):
        return self._inplace("copy_", value)

    def copy_(self, src):
        return self._inplace("copy_", src)

    def add_(self, other, alpha=1):
        return self._inplace("add_", other if alpha == 1 else np.asarray(other) * alpha)

    def sub_(self, other, alpha=1):
        return self._inplace("sub_", other if alpha == 1 else np.asarray(other) * alpha)

    def mul_(self, other):
        return self._inplace("mul_", other)

    def div_(self, other):
        return self._inplace("div_", other)

    def clamp_(self, min=None, max=None):  # noqa: A002
        from .var import no_grad

        with no_grad():
            return self.copy_(self.clamp(min, max))


def _is_dtype_name(value) -> bool:
    if not isinstance(value, str) or ":" in value:
        return False
    try:
        np.dtype(value)
    except TypeError:
        return False
    return True
