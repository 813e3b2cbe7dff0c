"""Program binaries cached on disk, so a second session skips the compiler.

A cache file is keyed by the device name, driver version, platform version,
build options and the kernel source's hash:

    $MNN_OPENCL_CACHE_DIR or $XDG_CACHE_HOME/mnn/opencl (default ~/.cache/mnn/opencl)
        <device>-<key>.clbin

Each file is a small header (magic, sha256 of the payload) followed by what
clGetProgramInfo(CL_PROGRAM_BINARIES) returned. A file that is truncated,
corrupted, or that the driver refuses is deleted and the program is built from
source again (and re-cached). MNN_OPENCL_CACHE=0 turns the cache off.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import warnings
from pathlib import Path

from . import _cl

MAGIC = b"MNNCLBIN1\n"
CACHE_ENV = "MNN_OPENCL_CACHE"
CACHE_DIR_ENV = "MNN_OPENCL_CACHE_DIR"


def cache_dir() -> Path | None:
    """Where binaries and tuning results go; None when caching is off."""
    if os.environ.get(CACHE_ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mnn" / "opencl"


def device_tag(entry) -> str:
    """A file-name-safe short name of the device."""
    return re.sub(r"[^A-Za-z0-9]+", "-", entry.device["name"]).strip("-")[:40] or "device"


def cache_key(entry, source: str, options: str) -> str:
    parts = [entry.platform["name"], entry.platform["version"], entry.device["name"],
             entry.device["driver_version"], entry.device["version"], options, source]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def cache_path(entry, source: str, options: str) -> Path | None:
    root = cache_dir()
    if root is None:
        return None
    return root / f"{device_tag(entry)}-{cache_key(entry, source, options)}.clbin"


def _read_payload(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 32
    if len(data) <= head or not data.startswith(MAGIC):
        return None
    digest, payload = data[len(MAGIC):head], data[head:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def _write_atomically(path: Path, payload: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_program(context, entry, source: str, options: str):
    """Build the program, from the cached binary when there is a good one.
    Returns (program, "binary" | "source", cache path or "")."""
    path = cache_path(entry, source, options)
    if path is not None and path.exists():
        payload = _read_payload(path)
        if payload is not None:
            try:
                return context.build_binary(payload, options), "binary", str(path)
            except _cl.CLError:
                pass  # the driver refused it (another driver build, a damaged file): rebuild
        try:
            path.unlink()
        except OSError:
            pass
    try:
        program = context.build_source(source, options)
    except _cl.BuildError as exc:
        raise RuntimeError(f"the OpenCL kernels failed to build on {entry.label}: {exc}") from None
    if path is not None:
        try:
            binary = program.binary()
            if binary:
                _write_atomically(path, binary)
        except (OSError, _cl.CLError) as exc:  # a read-only home must not stop the session
            warnings.warn(f"mnn-opencl: cannot cache the program binary at {path}: {exc}", stacklevel=2)
    return program, "source", str(path or "")
