"""Program binaries cached on disk, so a second session skips the compiler.

    $MNN_OPENCL_CACHE_DIR or $XDG_CACHE_HOME/mnn/opencl (default ~/.cache/mnn/opencl)
        <device>-<key>.clbin      key: SHA-256 of platform, device, driver, build options
                                  and the full kernel source
        .secret                   32 random bytes (0600), written once by mnn-opencl
    MNN_OPENCL_CACHE=0 turns the cache off.

A cached binary is native code the driver loads into this process, so a file reaches
the driver only through the folder and file rules and the HMAC of
`mnn_core.backend.kit.disk_cache` (a private folder; a regular file of this user's,
opened without following links, of bounded size; the full key and an HMAC under the
folder's secret in its header), and is used only when the driver builds it:
clCreateProgramWithBinary and clBuildProgram succeed and clGetProgramBuildInfo says
CL_BUILD_SUCCESS. Anything else is deleted, rebuilt from source and reported once.
The tuning results (tuning.py) live in the same folder under the same rules.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from mnn_core.backend.kit import disk_cache

from . import _cl

PACKAGE = "mnn-opencl"
MAGIC = b"MNNCLBIN2\n"
_HEAD = len(MAGIC) + 32 + 32  # magic, key, HMAC
SECRET_NAME = disk_cache.SECRET_NAME


def private_dir() -> Path | None:
    """The cache folder when it is safe to use (created 0700 when missing), else None: caching
    off, or a folder that another user owns or that group or others may write (warned once)."""
    return disk_cache.private_dir(PACKAGE, disk_cache.cache_dir("MNN_OPENCL", "opencl"))


def device_tag(entry) -> str:
    """A file-name-safe short name of the device."""
    return re.sub(r"[^A-Za-z0-9]+", "-", entry.device["name"]).strip("-")[:40] or "device"


def full_key(entry, source: str, options: str) -> bytes:
    """SHA-256 of everything the binary depends on: platform, device, driver, options, source."""
    parts = [
        entry.platform["name"],
        entry.platform["version"],
        entry.device["name"],
        entry.device["driver_version"],
        entry.device["version"],
        options,
        source,
    ]
    return hashlib.sha256("\0".join(parts).encode()).digest()


def cache_key(entry, source: str, options: str) -> str:
    return full_key(entry, source, options).hex()[:32]


def cache_path(entry, source: str, options: str) -> Path | None:
    root = private_dir()
    if root is None:
        return None
    return root / f"{device_tag(entry)}-{cache_key(entry, source, options)}.clbin"


def pack(key: bytes, secret: bytes, payload: bytes) -> bytes:
    """A cache file of the binary `payload`, built for `key`, signed under the folder's `secret`."""
    return disk_cache.pack(MAGIC, key, secret, payload)


def _from_binary(context, path: Path, key: bytes, secret: bytes, options: str):
    """The program from the cached binary, or None (the entry discarded) when there is none to trust."""
    payload = disk_cache.load(PACKAGE, MAGIC, path, key, secret)
    if payload is None:
        return None
    try:
        program = context.build_binary(payload, options)  # (clBuildProgram, then its build status)
    except _cl.CLError as exc:
        disk_cache.discard(PACKAGE, path, f"was refused by the driver ({exc})")
        return None
    return program


def load_program(context, entry, source: str, options: str):
    """Build the program, from the cached binary when there is one to trust.
    Returns (program, "binary" | "source", cache path or "")."""
    path = cache_path(entry, source, options)
    secret = disk_cache.folder_secret(PACKAGE, path.parent) if path is not None else None
    key = full_key(entry, source, options)
    if path is not None and secret is not None:
        program = _from_binary(context, path, key, secret, options)
        if program is not None:
            return program, "binary", str(path)
    try:
        program = context.build_source(source, options)
    except _cl.BuildError as exc:
        raise RuntimeError(f"the OpenCL kernels failed to build on {entry.label}: {exc}") from None
    if path is not None and secret is not None:
        try:
            binary = program.binary()
            if binary:
                disk_cache.write_private(path, pack(key, secret, binary))
        except (OSError, _cl.CLError) as exc:  # a read-only home must not stop the session
            disk_cache.report_once(PACKAGE, path, f"cannot cache the program binary at {path}: {exc}")
    return program, "source", str(path or "")
