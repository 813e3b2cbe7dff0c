"""Program binaries cached on disk, so a second session skips the compiler.

    $MNN_OPENCL_CACHE_DIR or $XDG_CACHE_HOME/mnn/opencl (default ~/.cache/mnn/opencl)
        <device>-<key>.clbin      key: SHA-256 of platform, device, driver, build options
                                  and the full kernel source
        .secret                   32 random bytes (0600), written once by mnn-opencl

A cached binary is native code the driver loads into this process, so a file is
used only when all of these hold, and is otherwise deleted, rebuilt from source
and reported once (a warning):

- the folder is this user's own: owned by them and not writable by group or others
  (else the cache is not used at all: programs are built from source, one warning);
  mnn-opencl creates it 0700;
- the file is a regular file owned by this user, not writable by others, at most
  MAX_FILE_BYTES: it is opened with O_NOFOLLOW | O_NONBLOCK and checked with fstat,
  so a symlink (to /dev/zero, say), a FIFO or a device is never read from;
- its header holds the full key, and an HMAC-SHA256 of key and binary under the
  folder's secret: a binary built from other source, copied from elsewhere,
  truncated or edited (even with a fresh plain digest) does not match;
- the driver builds it: clCreateProgramWithBinary and clBuildProgram succeed, and
  clGetProgramBuildInfo says CL_BUILD_SUCCESS.

MNN_OPENCL_CACHE=0 turns the cache off. The tuning results (tuning.py) live in the
same folder under the same rules.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import stat
import tempfile
import threading
import warnings
from pathlib import Path

from . import _cl

MAGIC = b"MNNCLBIN2\n"
CACHE_ENV = "MNN_OPENCL_CACHE"
CACHE_DIR_ENV = "MNN_OPENCL_CACHE_DIR"
SECRET_NAME = ".secret"
MAX_FILE_BYTES = 512 << 20  # far above any program binary: a bound on what is read, not a budget
_HEAD = len(MAGIC) + 32 + 32  # magic, key, HMAC

_reported: set = set()
_report_lock = threading.Lock()


class Unusable(Exception):
    """A cache file (or folder) that must not be trusted; the message says why."""


def report_once(subject, why: str) -> None:
    """One warning per thing and reason in this process."""
    with _report_lock:
        if (str(subject), why) in _reported:
            return
        _reported.add((str(subject), why))
    warnings.warn(f"mnn-opencl: {why}", stacklevel=3)


def cache_dir() -> Path | None:
    """Where binaries and tuning results go (not yet checked); None when caching is off."""
    if os.environ.get(CACHE_ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mnn" / "opencl"


def private_dir() -> Path | None:
    """The cache folder when it is safe to use (created 0700 when missing), else None: caching
    off, or a folder that another user owns or that group or others may write (warned once)."""
    root = cache_dir()
    if root is None:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(root)
    except OSError as exc:
        report_once(
            root, f"cannot use the program cache folder {root} ({exc.strerror or exc}); programs are built from source"
        )
        return None
    why = ""
    if not stat.S_ISDIR(st.st_mode):
        why = "is not a folder"
    elif hasattr(os, "getuid") and st.st_uid != os.getuid():
        why = f"belongs to another user (uid {st.st_uid})"
    elif st.st_mode & 0o022:
        why = f"is writable by group or others (mode {stat.filemode(st.st_mode)})"
    if why:
        report_once(
            root,
            f"the program cache folder {root} {why}, so its binaries could be anyone's: not using "
            f"it, programs are built from source (chmod go-w it, or set ${CACHE_DIR_ENV})",
        )
        return None
    return root


def read_private(path: Path, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """The bytes of a cache file, None when there is none; Unusable for a file not to trust:
    not a regular file (symlink, FIFO, device, folder), another user's, writable by others,
    larger than `limit`. Never blocks and never reads more than `limit` + 1 bytes."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise Unusable(f"is not a regular file ({stat.filemode(st.st_mode)})")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: it became a symlink since the lstat
        raise Unusable(f"cannot be opened safely ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Unusable("is not a regular file")
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise Unusable(f"belongs to another user (uid {st.st_uid})")
        if st.st_mode & 0o022:
            raise Unusable("is writable by group or others")
        if st.st_size > limit:
            raise Unusable(f"is {st.st_size} bytes, more than {limit}")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise Unusable(f"grew past {limit} bytes while being read")
    return data


def write_private(path: Path, data: bytes) -> None:
    """Write a cache file atomically (a temporary file 0600 beside it, then rename)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def discard(path: Path, why: str) -> None:
    """Remove an entry not to trust (the link itself, for a symlink) and say so once."""
    report_once(path, f"the cached program binary {path} {why}: replaced by one built from source")
    try:
        os.unlink(path)
    except OSError:
        pass  # a folder at that name, or a read-only cache: the rebuilt binary is not cached


def folder_secret(root: Path) -> bytes | None:
    """The folder's HMAC key: read, or created once (atomically, 0600); None when neither works."""
    path = root / SECRET_NAME
    for _ in range(2):
        try:
            data = read_private(path, 64)
        except Unusable as exc:
            report_once(path, f"the program cache key {path} {exc}: replaced (every cached binary is rebuilt)")
            data = b""
        if data is not None and len(data) == 32:
            return data
        try:
            if data is not None:  # damaged: replace it; the binaries it signed no longer match
                os.unlink(path)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=root)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(32))
            try:
                os.link(tmp, path)  # fails when another process made one first: then read theirs
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        except OSError:
            return None
    return None


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
    return MAGIC + key + hmac.new(secret, key + payload, hashlib.sha256).digest() + payload


def unpack(data: bytes, key: bytes, secret: bytes) -> bytes:
    """The binary of a cache file written for `key` under `secret`; Unusable otherwise."""
    if len(data) <= _HEAD or not data.startswith(MAGIC):
        raise Unusable("is not a program cache file of this version (damaged or truncated)")
    stored_key, mac, payload = data[len(MAGIC) : len(MAGIC) + 32], data[len(MAGIC) + 32 : _HEAD], data[_HEAD:]
    if not hmac.compare_digest(stored_key, key):
        raise Unusable("was built from other kernel source, options or driver (its key differs)")
    if not hmac.compare_digest(mac, hmac.new(secret, key + payload, hashlib.sha256).digest()):
        raise Unusable("was not written by this cache (its HMAC does not match: copied, damaged or edited)")
    return payload


def _from_binary(context, path: Path, key: bytes, secret: bytes, options: str):
    """The program from the cached binary, or None (the entry discarded) when there is none to trust."""
    try:
        data = read_private(path)
        if data is None:
            return None
        payload = unpack(data, key, secret)
    except Unusable as exc:
        discard(path, str(exc))
        return None
    except OSError as exc:
        discard(path, f"cannot be read ({exc.strerror or exc})")
        return None
    try:
        program = context.build_binary(payload, options)  # (clBuildProgram, then its build status)
    except _cl.CLError as exc:
        discard(path, f"was refused by the driver ({exc})")
        return None
    return program


def load_program(context, entry, source: str, options: str):
    """Build the program, from the cached binary when there is one to trust.
    Returns (program, "binary" | "source", cache path or "")."""
    path = cache_path(entry, source, options)
    secret = folder_secret(path.parent) if path is not None else None
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
                write_private(path, pack(key, secret, binary))
        except (OSError, _cl.CLError) as exc:  # a read-only home must not stop the session
            report_once(path, f"cannot cache the program binary at {path}: {exc}")
    return program, "source", str(path or "")
