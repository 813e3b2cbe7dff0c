"""Files a GPU backend caches between processes (compiled pipelines, program binaries).

    $<PREFIX>_CACHE_DIR or $XDG_CACHE_HOME/mnn/<name> (default ~/.cache/mnn/<name>)
    $<PREFIX>_CACHE=0 turns the cache off.

What a driver loads from such a file runs in this process, so an entry is trusted
only when all of these hold, and is otherwise ignored, deleted and reported once
(a warning), the backend building from source as on a first start:

- the folder is this user's own and not writable by group or others (created 0700);
- the file is a regular file owned by this user, not writable by others, at most
  MAX_FILE_BYTES, opened with O_NOFOLLOW | O_NONBLOCK (never a symlink, FIFO, device);
- it starts with the caller's magic, the full key of what it was built from, and an
  HMAC-SHA256 of key and payload under the folder's secret (`.secret`, 32 random
  bytes, 0600): a file from another build, machine or user, truncated or edited,
  does not match.

The backend then checks the payload itself (a Vulkan pipeline cache's header names
the device and driver; an OpenCL driver must build the binary) before its driver
sees it. mnn-vulkan's pipeline_cache.py and mnn-opencl's program_cache.py use these rules.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import tempfile
import threading
import warnings
from pathlib import Path

SECRET_NAME = ".secret"
MAX_FILE_BYTES = 512 << 20  # a bound on what is read, far above any cache

_reported: set = set()
_report_lock = threading.Lock()


class Unusable(Exception):
    """A cache file (or folder) that must not be trusted; the message says why."""


def report_once(package: str, subject: object, why: str) -> None:
    """One warning per thing and reason in this process."""
    with _report_lock:
        if (str(subject), why) in _reported:
            return
        _reported.add((str(subject), why))
    warnings.warn(f"{package}: {why}", stacklevel=3)


def cache_dir(prefix: str, name: str) -> Path | None:
    """Where the cache goes (not yet checked); None when $<prefix>_CACHE turns it off."""
    if os.environ.get(f"{prefix}_CACHE", "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    explicit = os.environ.get(f"{prefix}_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mnn" / name


def private_dir(package: str, root: Path | None) -> Path | None:
    """`root` when it is safe to use (created 0700 when missing), else None (warned once)."""
    if root is None:
        return None
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(root)
    except OSError as exc:
        report_once(package, root, f"cannot use the cache folder {root} ({exc.strerror or exc}); not caching")
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
            package,
            root,
            f"the cache folder {root} {why}, so its files could be anyone's: not using it "
            "(chmod go-w it, or name another folder in the backend's *_CACHE_DIR variable)",
        )
        return None
    return root


def read_private(path: Path, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """The bytes of a cache file, None when there is none; Unusable for a file not to trust."""
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


def discard(package: str, path: Path, why: str) -> None:
    """Remove an entry not to trust (the link itself, for a symlink) and say so once."""
    report_once(package, path, f"the cache file {path} {why}: ignored, rebuilt from source")
    try:
        os.unlink(path)
    except OSError:
        pass  # a folder at that name, or a read-only cache


def folder_secret(package: str, root: Path) -> bytes | None:
    """The folder's HMAC key: read, or created once (atomically, 0600); None when neither works."""
    path = root / SECRET_NAME
    for _ in range(2):
        try:
            data = read_private(path, 64)
        except Unusable as exc:
            report_once(package, path, f"the cache key {path} {exc}: replaced (every cached entry is rebuilt)")
            data = b""
        if data is not None and len(data) == 32:
            return data
        try:
            if data is not None:  # damaged: replace it; what it signed no longer matches
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


def pack(magic: bytes, key: bytes, secret: bytes, payload: bytes) -> bytes:
    """magic, the 32-byte key, HMAC(secret, key + payload), payload."""
    return magic + key + hmac.new(secret, key + payload, hashlib.sha256).digest() + payload


def unpack(magic: bytes, data: bytes, key: bytes, secret: bytes) -> bytes:
    """The payload of a file packed for `key` under `secret`; Unusable otherwise."""
    head = len(magic) + 64
    if len(data) <= head or not data.startswith(magic):
        raise Unusable("is not a cache file of this version (damaged or truncated)")
    stored_key, mac, payload = data[len(magic) : len(magic) + 32], data[len(magic) + 32 : head], data[head:]
    if not hmac.compare_digest(stored_key, key):
        raise Unusable("was built from other inputs (device, driver, source or package version: its key differs)")
    if not hmac.compare_digest(mac, hmac.new(secret, key + payload, hashlib.sha256).digest()):
        raise Unusable("was not written by this cache (its HMAC does not match: copied, damaged or edited)")
    return payload


def load(package: str, magic: bytes, path: Path, key: bytes, secret: bytes) -> bytes | None:
    """The payload of the cache file at `path` built for `key`; None where there is no file, or (the
    file discarded, the reason reported) where it is not one to trust or cannot be read."""
    try:
        data = read_private(path)
        return None if data is None else unpack(magic, data, key, secret)
    except Unusable as exc:
        discard(package, path, str(exc))
    except OSError as exc:
        discard(package, path, f"cannot be read ({exc.strerror or exc})")
    return None
