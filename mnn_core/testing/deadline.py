"""A test that could block (a FIFO opened for reading, a device that never answers) fails after a
deadline instead of hanging the whole suite."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def fail_after(seconds: int, what: str) -> Iterator[None]:
    """Raise TimeoutError(what) in the block once it has run `seconds`. SIGALRM: POSIX, and only in
    the main thread (where pytest runs tests); the previous handler comes back afterwards."""

    def on_alarm(*_: object) -> None:
        raise TimeoutError(what)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
