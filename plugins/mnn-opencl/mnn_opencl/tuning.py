"""Work-group sizes: chosen without measuring ("none"), or measured per kernel
and work size and cached on disk per device ("fast": a few candidates, "wide":
many), as MNN's GPU tuning modes.

    Session(model, backend="opencl", options={"opencl.tuning": "fast"})
    MNN_OPENCL_TUNING=wide            # the default for sessions that do not say

Results go to <cache dir>/tuning-<device>-<driver hash>.json, keyed by kernel
name, work size and a hash of the kernel's shape arguments.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from mnn_core.errors import BackendError

from .program_cache import cache_dir, device_tag

MODES = ("none", "fast", "wide")
OPTION = "opencl.tuning"
ENV = "MNN_OPENCL_TUNING"
DEFAULT = "none"


def tuning_mode(options: dict) -> str:
    mode = str(options.get(OPTION) or os.environ.get(ENV) or DEFAULT).strip().lower()
    if mode not in MODES:
        raise BackendError(f"{OPTION} must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def candidates(gws: tuple, limit: int, max_items, mode: str) -> list[tuple]:
    """Work-group shapes worth timing for `gws`."""
    totals = (32, 64, 128, 256) if mode == "fast" else (16, 32, 64, 128, 256, 512, 1024)
    pows = [1 << i for i in range(11)]

    def fits(d, size):
        return size <= max_items[d] and (size == 1 or size // 2 < gws[d])

    if len(gws) == 1:
        return [(t,) for t in totals if t <= limit and fits(0, t)]
    last = (1,) if mode == "fast" or len(gws) < 3 else (1, 2, 4)
    out = []
    for a in pows:
        for b in pows:
            for c in (last if len(gws) == 3 else (1,)):
                total = a * b * c
                if total in totals and total <= limit and fits(0, a) and fits(1, b) and (len(gws) < 3 or fits(2, c)):
                    out.append((a, b, c)[:len(gws)])
    return out


def tuning_path(entry) -> Path | None:
    root = cache_dir()
    driver = hashlib.sha256(f"{entry.device['driver_version']}|{entry.platform['version']}".encode()).hexdigest()
    return root / f"tuning-{device_tag(entry)}-{driver[:12]}.json" if root else None


class TuningCache:
    """Measured work-group sizes of one device, as a JSON file."""

    def __init__(self, entry):
        self.entry = entry
        self.path = tuning_path(entry)
        self.table: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            try:
                table = json.loads(self.path.read_text())
                self.table = {k: v for k, v in table.items() if isinstance(v, list)}
            except (OSError, ValueError):
                self.table = {}  # a damaged file is rewritten on the next save

    def get(self, key: str) -> tuple | None:
        value = self.table.get(key)
        return tuple(value) if value else None

    def put(self, key: str, lws: tuple) -> None:
        with self._lock:
            self.table[key] = list(lws)

    def save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(self.table, indent=0, sort_keys=True))
            os.replace(tmp, self.path)
        except OSError:
            pass  # tuning still applies to this process


_caches: dict[int, TuningCache] = {}


def cache_for(entry) -> TuningCache:
    cache = _caches.get(entry.device["handle"])
    if cache is None or cache.path != tuning_path(entry):  # the cache folder moved (tests)
        cache = _caches[entry.device["handle"]] = TuningCache(entry)
    return cache


def tune(runtime, launches: list, mode: str) -> int:
    """Set each tunable launch's work-group size from the cache or by timing; returns how
    many launches were measured."""
    if mode == "none":
        return 0
    cache = cache_for(runtime.entry)
    measured = 0
    runtime.context.finish()  # packing and uploads are done before anything is timed
    for launch in launches:
        if not launch.tunable:
            continue
        key = f"{mode}|{launch.key}"
        best = cache.get(key)
        if best is None:
            limit = runtime.work_group_limit(launch.key.split("|")[0], launch.kernel)
            options = candidates(launch.gws, limit, runtime.entry.device["max_work_items"], mode)
            if launch.lws is not None and launch.lws not in options:
                options.append(launch.lws)
            reps = 3 if mode == "fast" else 5
            timed = []
            for lws in options:
                gws = tuple(-(-g // w) * w for g, w in zip(launch.gws, lws))
                ms = runtime.context.time_kernel(launch.kernel, gws, lws, reps)
                if ms is not None:
                    timed.append((ms, lws))
            if not timed:
                continue
            best = min(timed)[1]
            cache.put(key, best)
            measured += 1
        launch.lws = tuple(best)
    if measured:
        cache.save()
    return measured
