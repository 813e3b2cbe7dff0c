"""Var's methods for express.torch_more's functions (x.topk(k), x.gather(1, i), x.all(), x % 2, ...).

A separate mixin whose methods import torch_more on call: torch_more builds on Var, which inherits these.
"""

from __future__ import annotations


def _m():
    from . import torch_more

    return torch_more


class MoreTensorMethods:
    """The methods of these functions on Var (x.topk(k), x.gather(1, i), x.all(), x % 2, ...)."""

    __slots__ = ()

    def gather(self, dim, index):
        return _m().gather(self, dim, index)

    def index_select(self, dim, index):
        return _m().index_select(self, dim, index)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return _m().topk(self, k, dim, largest, sorted)  # noqa: A002

    def sort(self, dim=-1, descending=False, stable=False):
        return _m().sort(self, dim, descending)

    def argsort(self, dim=-1, descending=False, stable=False):
        return _m().argsort(self, dim, descending)

    def flip(self, *dims):
        return _m().flip(self, dims[0] if len(dims) == 1 else dims)

    def cumsum(self, dim, dtype=None):
        return _m().cumsum(self, dim, dtype)

    def all(self, dim=None, keepdim=False):
        return _m().all(self, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return _m().any(self, dim, keepdim)

    def isnan(self):
        return _m().isnan(self)

    def isinf(self):
        return _m().isinf(self)

    def isfinite(self):
        return _m().isfinite(self)

    def floor(self):
        return _m().floor(self)

    def ceil(self):
        return _m().ceil(self)

    def round(self):
        return _m().round(self)

    def sign(self):
        return _m().sign(self)

    def rsqrt(self):
        return _m().rsqrt(self)

    def reciprocal(self):
        return _m().reciprocal(self)

    def prod(self, dim=None, keepdim=False):
        return _m().prod(self, dim, keepdim)

    def unbind(self, dim=0):
        return _m().unbind(self, dim)

    def nonzero(self, as_tuple=False):
        return _m().nonzero(self, as_tuple)

    def is_floating_point(self):
        return self.dtype.kind == "f"

    def __mod__(self, other):
        return _m().remainder(self, other)

    def __rmod__(self, other):
        return _m().remainder(other, self)

    def __floordiv__(self, other):
        return _m().floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _m().floor_divide(other, self)
