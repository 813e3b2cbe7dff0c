"""The Vulkan pipeline cache kept on disk, so a second process skips the shader compiler.

    $MNN_VULKAN_CACHE_DIR or $XDG_CACHE_HOME/mnn/vulkan (default ~/.cache/mnn/vulkan)
        <device>-<key>.vkpc   key: SHA-256 of mnn-vulkan's version and the device's name,
                              vendor, device id, driver and API versions
    MNN_VULKAN_CACHE=0 turns it off.

A device's context starts from its file. The file also lists the pipelines it holds (a digest of
each one's SPIR-V, binding count and specialization constants), and is rewritten only when a
process made one that is not listed: a warm start neither reads the driver's cache back
(vkGetPipelineCacheData) nor rewrites the file. What the driver parses must be trusted, so
a file reaches it only through the folder and file rules and the HMAC of
`mnn_core.backend.kit.disk_cache`, and then only when its pipeline list is well formed and its
Vulkan header (vendor, device, pipelineCacheUUID) names this device and driver build (checked in
C, mvk_context_cache_load). Anything else is deleted with a warning and the context
keeps an empty cache: pipelines are compiled from SPIR-V as on a first start.
"""

from __future__ import annotations

import hashlib
import re
import struct
from pathlib import Path

from mnn_core.backend.kit import disk_cache

PACKAGE = "mnn-vulkan"
MAGIC = b"MNNVKPC2\n"  # 2: the payload starts with the pipeline list
DIGEST = 16  # bytes of a pipeline's digest


def pipeline_digest(code: bytes, n_bindings: int, spec: tuple) -> bytes:
    """What identifies a pipeline across processes: its SPIR-V and what it was made with."""
    return hashlib.sha256(code + repr((n_bindings, tuple(spec))).encode()).digest()[:DIGEST]


def frame(digests, data: bytes) -> bytes:
    """The file's payload: the pipeline count, their sorted digests, then the driver's cache data."""
    listed = sorted(digests)
    return struct.pack("<I", len(listed)) + b"".join(listed) + data


def unframe(payload: bytes) -> tuple[set, bytes] | None:
    """(digests, the driver's cache data), or None when the list does not fit the payload."""
    if len(payload) < 4:
        return None
    (count,) = struct.unpack_from("<I", payload)
    end = 4 + count * DIGEST
    if end > len(payload):
        return None
    return {payload[i : i + DIGEST] for i in range(4, end, DIGEST)}, payload[end:]


def _key(device) -> bytes:
    from . import __version__

    p = device.props
    parts = [__version__, device.name, p["vendor_id"], p["device_id"], p["driver_version"], p["api_version"]]
    return hashlib.sha256("\0".join(str(x) for x in parts).encode()).digest()


def cache_path(device) -> Path | None:
    """This device's cache file, or None when caching is off or the folder is not safe."""
    root = disk_cache.private_dir(PACKAGE, disk_cache.cache_dir("MNN_VULKAN", "vulkan"))
    if root is None:
        return None
    tag = re.sub(r"[^A-Za-z0-9]+", "-", device.name).strip("-")[:40] or "device"
    return root / f"{tag}-{_key(device).hex()[:32]}.vkpc"


class PipelineCache:
    """One device's file: `load` into a fresh context, `note` each pipeline made, `save` after new ones."""

    def __init__(self, device):
        self.path = cache_path(device)
        self.key = _key(device)
        self.secret = disk_cache.folder_secret(PACKAGE, self.path.parent) if self.path else None
        self.listed: set = set()  # digests of the pipelines the file holds
        self.new: set = set()  # of pipelines made here that it does not
        self.writes = 0  # files written by this process (tests)

    def load(self, context) -> bool:
        """Start `context` from the file; False (the file discarded, warned) when it is not to trust."""
        if self.path is None or self.secret is None:
            return False
        payload = disk_cache.load(PACKAGE, MAGIC, self.path, self.key, self.secret)
        if payload is None:
            return False
        framed = unframe(payload)
        if framed is None:
            disk_cache.discard(PACKAGE, self.path, "its pipeline list runs past its end")
            return False
        listed, data = framed
        why = context.load_pipeline_cache(data)
        if why:
            disk_cache.discard(PACKAGE, self.path, why)
            return False
        self.listed = listed
        return True

    def note(self, code: bytes, n_bindings: int, spec: tuple) -> None:
        """A pipeline was made in this context: the next save keeps it unless the file has it."""
        digest = pipeline_digest(code, n_bindings, spec)
        if digest not in self.listed:
            self.new.add(digest)

    def save(self, context) -> None:
        """Rewrite the file when pipelines it does not list were made since it was read or written."""
        if self.path is None or self.secret is None or not self.new:
            return
        listed = self.listed | self.new
        self.new = set()
        try:
            data = context.pipeline_cache_data()
            if data:
                payload = frame(listed, data)
                disk_cache.write_private(self.path, disk_cache.pack(MAGIC, self.key, self.secret, payload))
                self.listed = listed
                self.writes += 1
        except (OSError, RuntimeError) as exc:  # a read-only home must not stop the session
            disk_cache.report_once(PACKAGE, self.path, f"cannot save the pipeline cache at {self.path}: {exc}")
