"""Stopping a run from outside: a cancel token, a deadline, and the checks that honour them.

    token = mnn_core.CancelToken()
    threading.Timer(0.5, token.cancel).start()
    sess.run(feeds, cancel=token)            # RunCancelled once the token is cancelled
    sess.run(feeds, timeout=2.0)             # RunTimeout after 2 s

A run stops between two ops, never inside one: the compiled run loop reads the token's flag
and the clock before each step (a few nanoseconds), eager graphs before each node and each
Loop iteration. The session stays usable after a stop; outputs of a stopped run are not returned.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from ..errors import RunCancelled, RunTimeout


class CancelToken:
    """A flag one thread sets and the runs that hold the token read. Once cancelled it stays so:
    a run handed a cancelled token stops before its first op."""

    __slots__ = ("_flag",)

    def __init__(self) -> None:
        self._flag = np.zeros(1, np.int32)  # read by the run loop without the GIL (Program.run)

    def cancel(self) -> None:
        self._flag[0] = 1

    @property
    def cancelled(self) -> bool:
        return bool(self._flag[0])

    @property
    def address(self) -> int:
        return self._flag.ctypes.data


@dataclass(frozen=True)
class RunLimits:
    """What may stop one run: a token and a deadline on time.monotonic()'s clock (None: none)."""

    token: CancelToken
    deadline: float | None = None

    @classmethod
    def make(cls, cancel: CancelToken | None, timeout: float | None) -> RunLimits:
        if cancel is not None and not isinstance(cancel, CancelToken):
            raise TypeError(f"cancel must be a mnn_core.CancelToken, got {type(cancel).__name__}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        return cls(cancel or CancelToken(), None if timeout is None else time.monotonic() + float(timeout))

    @property
    def deadline_ms(self) -> float:
        """The deadline in milliseconds of CLOCK_MONOTONIC (the run loop's clock), 0 for none."""
        return 0.0 if self.deadline is None else self.deadline * 1000.0

    def check(self, where: str) -> None:
        """Raise if the run must stop; `where` names the next op."""
        if self.token.cancelled:
            raise RunCancelled(f"run cancelled before {where}")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise RunTimeout(f"run timed out before {where}")


#: the limits of the eager run in progress in this context (graph/evaluate.py, Loop)
current_limits: ContextVar[RunLimits | None] = ContextVar("mnn_run_limits", default=None)
