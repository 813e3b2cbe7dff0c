"""The exceptions mnn raises. Each message names what was wrong and what to do."""

from __future__ import annotations


class MnnError(Exception):
    """Base of every error mnn raises on purpose."""


class GraphError(MnnError, ValueError):
    """A graph is malformed: unknown op, bad attribute, shape mismatch, undefined value."""


class UnsupportedOpError(MnnError):
    """No selected backend can run an op (raised with fallback=False)."""


class BackendError(MnnError):
    """A backend is missing, unavailable, or failed while preparing or running."""


class MnnFormatError(MnnError, ValueError):
    """A .mnn file is truncated, damaged, hostile or of an unknown version."""


class InputError(MnnError, ValueError):
    """Session inputs do not match the model: missing name, wrong dtype or shape."""


class LimitError(MnnError):
    """A limit the caller set was reached: a plan's arena bytes, a Loop's iterations (docs/RELIABILITY.md)."""


class RunTimeout(LimitError, TimeoutError):
    """A run passed the `timeout` given to Session.run; it stopped between two ops."""


class RunCancelled(MnnError):
    """A run was cancelled (CancelToken.cancel or Session.cancel); it stopped between two ops."""
