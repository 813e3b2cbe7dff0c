"""Symbolic dimensions: sizes known only when real input shapes arrive (at resize).

A `Sym` is a string (so shapes holding one print, compare, hash and serialize as before) that
also does integer arithmetic: `Sym("H") // 2 + 1` is `Sym("(H//2+1)")`. Inference functions
written for ints then run on symbolic shapes unchanged, and their output keeps the symbols.

Comparisons with integers follow one assumption: a symbolic size is at least 2 and smaller than
the "to the end" sentinels (2**31 and up) of Slice and friends. So `Sym == 1` is False and
`min(H, 2**62)` is H; `min(H, 3)` cannot be told (TypeError), and the inference that asked leaves
its output's sizes unknown. Nothing but an import-time sketch of the shapes follows from it:
resize computes every shape again from the real inputs. Two
different symbols compare in a fixed arbitrary order, so min() and max() of them pick one.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError


class SymbolicSizeError(GraphError, TypeError):
    """A real size was needed where a dimension is symbolic."""


#: integers at least this large are "to the end" sentinels, larger than any symbolic size
SENTINEL = 1 << 31
#: the name of a dimension nothing is known about
UNKNOWN = "?"


def _int_like(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


class Sym(str):
    """A symbolic dimension: a symbol ("N"), an expression over symbols ("2*H+1"), or "?".

    An expression is kept as coef * base + off where that is exact (base: a symbol or an
    expression in parentheses), so the chains of +1, -3, //2 that convolutions make stay short."""

    __array_ufunc__ = None  # numpy integers defer to these methods instead of repeating a string

    def __new__(cls, text: str, base: str | None = None, coef: int = 1, off: int = 0):
        obj = super().__new__(cls, text)
        obj.base, obj.coef, obj.off = (str(text) if base is None else base), coef, off
        return obj

    @property
    def atom(self) -> str:
        """The text as one operand of a larger expression."""
        return str(self) if self.coef == 1 and self.off == 0 else f"({self})"

    def _known(self) -> bool:
        return str.__ne__(self, UNKNOWN)

    def __add__(self, o):
        if _int_like(o):
            return _linear(self.base, self.coef, self.off + int(o)) if self._known() else self
        if isinstance(o, Sym):
            if not (self._known() and o._known()):
                return Sym(UNKNOWN)
            if o.base == self.base:
                return _linear(self.base, self.coef + o.coef, self.off + o.off)
            return _atom(f"{self.atom}+{o.atom}")
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, o):
        if _int_like(o):
            k = int(o)
            return 0 if k == 0 else _linear(self.base, self.coef * k, self.off * k) if self._known() else self
        if isinstance(o, Sym):
            return _atom(f"{self.atom}*{o.atom}") if self._known() and o._known() else Sym(UNKNOWN)
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, o):
        return self + (-o) if _int_like(o) or isinstance(o, Sym) else NotImplemented

    def __rsub__(self, o):
        return (-self) + o if _int_like(o) else NotImplemented

    def __floordiv__(self, o):
        if _int_like(o) and int(o) > 0:
            k = int(o)
            if not self._known() or k == 1:
                return self
            if self.coef % k == 0 and self.off % k == 0:
                return _linear(self.base, self.coef // k, self.off // k)
            return _atom(f"{self.atom}//{k}")
        if (
            isinstance(o, Sym)
            and self._known()
            and o.base == self.base
            and self.off == o.off == 0
            and self.coef % o.coef == 0
        ):
            return self.coef // o.coef  # (512*N) // N
        return self._other("//", o)

    def __rfloordiv__(self, o):
        return self._other("//", o, True)

    def __mod__(self, o):
        return self._other("%", o)

    def __rmod__(self, o):
        return self._other("%", o, True)

    def _other(self, op: str, o, flip: bool = False):
        if not (_int_like(o) or isinstance(o, Sym)):
            return NotImplemented
        if not self._known() or isinstance(o, Sym) and not o._known():
            return Sym(UNKNOWN)
        b = o.atom if isinstance(o, Sym) else str(int(o))
        return _atom(f"{b}{op}{self.atom}" if flip else f"{self.atom}{op}{b}")

    def __index__(self):  # range(), slicing and numpy sizes need a real size: a clear failure
        raise SymbolicSizeError(
            f"dimension {self} is symbolic: its size is known only at resize "
            "(trace with a concrete size, or use -1 in a reshape)"
        )

    def __eq__(self, o):
        return isinstance(o, str) and str.__eq__(self, o) and self._known() or self is o

    def __ne__(self, o):
        return not self.__eq__(o)

    __hash__ = str.__hash__

    def _cmp(self, o) -> int:
        """-1, 0, 1: self against o under the module's assumption (above literals, below SENTINEL)."""
        if _int_like(o):
            return -1 if int(o) >= SENTINEL else 1 if int(o) <= 1 else _undecided(self, o)
        if isinstance(o, str):  # two symbols: an arbitrary but fixed order (min/max pick one)
            return 0 if self == o else -1 if str(self) < str(o) else 1
        return _undecided(self, o)

    def __lt__(self, o):
        return self._cmp(o) < 0

    def __le__(self, o):
        return self._cmp(o) <= 0

    def __gt__(self, o):
        return self._cmp(o) > 0

    def __ge__(self, o):
        return self._cmp(o) >= 0


def _atom(text: str) -> Sym:
    return Sym(text)


def _linear(base: str, coef: int, off: int):
    """coef * base + off, as an int where coef is 0."""
    if coef == 0:
        return off
    wrapped = base if coef == 1 or base.isidentifier() else f"({base})"
    term = base if coef == 1 else f"-{wrapped}" if coef == -1 else f"{coef}*{wrapped}"
    text = term if off == 0 else f"{term}+{off}" if off > 0 else f"{term}-{-off}"
    return Sym(text, base, coef, off)


def _undecided(a, b):
    raise TypeError(f"cannot compare symbolic size {a} with {b} before resize")


def is_sym(d) -> bool:
    return isinstance(d, Sym)


def as_dim(d):
    """A dimension as an int or a Sym (strings from files or users become Syms; None is unknown)."""
    if d is None:
        return Sym(UNKNOWN)
    if isinstance(d, str):
        return d if isinstance(d, Sym) else Sym(d)
    return int(d)


def prod(dims):
    """The product of dimensions: an int, or a Sym when one is symbolic."""
    out = 1
    for d in dims:
        out = as_dim(d) * out if is_sym(d) else out * int(d)
    return out


def unify(a, b):
    """The size two dimensions that must be equal share: the known one if one is known. Two
    different symbols are taken to be equal (resize checks the real sizes)."""
    if a == b:
        return a
    if not is_sym(a) and not is_sym(b):
        return None
    return b if is_sym(a) else a
