"""Work-group sizes: chosen without measuring ("none"), or measured per kernel
and work size and cached on disk per device ("fast": a few candidates, "wide":
many), as MNN's GPU tuning modes.

    Session(model, backend="opencl", options={"opencl.tuning": "fast"})
    MNN_OPENCL_TUNING=wide            # the default for sessions that do not say

Results go to <cache dir>/tuning-<device>-<driver hash>.json, keyed by kernel
name, work size and a hash of the kernel's shape arguments. The file is read under
the program cache's rules (mnn_core.backend.kit.disk_cache: a private folder, a
regular file of bounded size), and an entry that does not fit the launch is measured again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from mnn_core.backend.kit import disk_cache
from mnn_core.errors import BackendError

from .program_cache import PACKAGE, device_tag, private_dir

MODES = ("none", "fast", "wide")
MAX_FILE_BYTES = 16 << 20
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
            for c in last if len(gws) == 3 else (1,):
                total = a * b * c
                if total in totals and total <= limit and fits(0, a) and fits(1, b) and (len(gws) < 3 or fits(2, c)):
                    out.append((a, b, c)[: len(gws)])
    return out


def lws_fits(lws, gws: tuple, limit: int, max_items) -> bool:
    """Whether a work-group shape (from the file: anything) can launch over `gws` on this device."""
    if not isinstance(lws, (list, tuple)) or len(lws) != len(gws):
        return False
    if not all(type(w) is int and 1 <= w <= max_items[d] for d, w in enumerate(lws)):
        return False
    total = 1
    for w in lws:
        total *= w
    return total <= limit


def tuning_path(entry) -> Path | None:
    root = private_dir()
    driver = hashlib.sha256(f"{entry.device['driver_version']}|{entry.platform['version']}".encode()).hexdigest()
    return root / f"tuning-{device_tag(entry)}-{driver[:12]}.json" if root else None


class TuningCache:
    """Measured work-group sizes of one device, as a JSON file."""

    def __init__(self, entry):
        self.entry = entry
        self.path = tuning_path(entry)
        self.table: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        if self.path is not None:
            try:
                data = disk_cache.read_private(self.path, MAX_FILE_BYTES)
                table = json.loads(data) if data is not None else {}
                self.table = {k: v for k, v in table.items() if isinstance(v, list)}
            except disk_cache.Unusable as exc:
                disk_cache.report_once(
                    PACKAGE, self.path, f"the tuning file {self.path} {exc}: not used, replaced on the next save"
                )
            except (OSError, ValueError, AttributeError):
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
            disk_cache.write_private(self.path, json.dumps(self.table, indent=0, sort_keys=True).encode())
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
        limit = runtime.work_group_limit(launch.key.split("|")[0], launch.kernel)
        max_items = runtime.entry.device["max_work_items"]
        if best is not None and not lws_fits(best, launch.gws, limit, max_items):
            best = None  # damaged, or from another device: measured again
        if best is None:
            options = candidates(launch.gws, limit, max_items, mode)
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
