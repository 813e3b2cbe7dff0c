"""The Vulkan pipeline cache kept on disk, so a second process skips the shader compiler.

    $MNN_VULKAN_CACHE_DIR or $XDG_CACHE_HOME/mnn/vulkan (default ~/.cache/mnn/vulkan)
        <device>-<key>.vkpc   key: SHA-256 of mnn-vulkan's version and the device's name,
                              vendor, device id, driver and API versions
    MNN_VULKAN_CACHE=0 turns it off.

A device's context starts from its file, and the file is rewritten after a segment
made pipelines the cache did not hold. What the driver parses must be trusted, so
a file reaches it only through the folder and file rules and the HMAC of
`mnn_core.backend.kit.disk_cache`, and then only when its Vulkan header (vendor,
device, pipelineCacheUUID) names this device and driver build (checked in C,
mvk_context_cache_load). Anything else is deleted with a warning and the context
keeps an empty cache: pipelines are compiled from SPIR-V as on a first start.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from mnn_core.backend.kit import disk_cache

PACKAGE = "mnn-vulkan"
MAGIC = b"MNNVKPC1\n"


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
    """One device's file: `load` into a fresh context, `save` after new pipelines."""

    def __init__(self, device):
        self.path = cache_path(device)
        self.key = _key(device)
        self.secret = disk_cache.folder_secret(PACKAGE, self.path.parent) if self.path else None
        self.saved_at = 0  # pipelines the context had made when the file last matched it
        self.loaded_bytes = 0

    def load(self, context) -> bool:
        """Start `context` from the file; False (the file discarded, warned) when it is not to trust."""
        if self.path is None or self.secret is None:
            return False
        payload = disk_cache.load(PACKAGE, MAGIC, self.path, self.key, self.secret)
        if payload is None:
            return False
        why = context.load_pipeline_cache(payload)
        if why:
            disk_cache.discard(PACKAGE, self.path, why)
            return False
        self.loaded_bytes = len(payload)
        return True

    def save(self, context) -> None:
        """Rewrite the file when the context made pipelines since it was read or written."""
        created, _ = context.pipeline_stats()
        if self.path is None or self.secret is None or created == self.saved_at:
            return
        self.saved_at = created
        try:
            payload = context.pipeline_cache_data()
            if payload and len(payload) != self.loaded_bytes:
                disk_cache.write_private(self.path, disk_cache.pack(MAGIC, self.key, self.secret, payload))
                self.loaded_bytes = len(payload)
        except (OSError, RuntimeError) as exc:  # a read-only home must not stop the session
            disk_cache.report_once(PACKAGE, self.path, f"cannot save the pipeline cache at {self.path}: {exc}")
