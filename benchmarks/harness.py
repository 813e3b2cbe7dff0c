"""What the benchmark scripts share: timing a call (wall_ms) and the command line that runs a script's
own worker in a fresh process (worker_command), so each engine's memory and threads start clean.
The plugins' tools import it too, with benchmarks/ on sys.path.
"""

from __future__ import annotations

import sys
import time
from typing import Callable


def wall_ms(fn: Callable[[], object], repeat: int, warmup: int) -> list[float]:
    """The milliseconds of each of `repeat` calls of fn, after `warmup` calls that are not timed."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def worker_command(script: str, **flags: object) -> list[str]:
    """`python script --worker --name value ...`: one flag per keyword, in order, underscores as dashes."""
    cmd = [sys.executable, script, "--worker"]
    for name, value in flags.items():
        cmd += [f"--{name.replace('_', '-')}", str(value)]
    return cmd
