"""A small progress bar for long CLI work (no dependency): shown on a terminal only."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str = "", stream=None, enabled: bool | None = None):
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.start = time.perf_counter()

    def update(self, n: int = 1, note: str = "") -> None:
        self.done += n
        if not self.enabled:
            return
        frac = min(self.done / self.total, 1.0)
        bar = "#" * int(frac * 30)
        elapsed = time.perf_counter() - self.start
        self.stream.write(f"\r{self.label} [{bar:<30}] {self.done}/{self.total} {elapsed:5.1f}s {note[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
