"""Finding Vulkan: the loader, the devices, the choice among them, and why not.

The loader (`libvulkan.so.1`, or MNN_VULKAN_LIBRARY) is opened on first use,
once per process, with the Khronos validation layer when it is asked for
(MNN_VULKAN_VALIDATION=1, or VK_INSTANCE_LAYERS naming it). Usable devices
have a compute queue and Vulkan 1.1. The default is the first discrete GPU,
then integrated, virtual, then a CPU implementation (lavapipe);
MNN_VULKAN_DEVICE or the session option "vulkan.device" picks one by index
or by a case-insensitive substring of its name.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from mnn_core.backend import DeviceInfo
from mnn_core.backend.kit.segments import load_native
from mnn_core.errors import BackendError

_vulkan, _LOAD_ERROR = load_native(__package__, "_vulkan", "mnn-vulkan")

LIBRARY_ENV = "MNN_VULKAN_LIBRARY"
DEVICE_ENV = "MNN_VULKAN_DEVICE"
VALIDATION_ENV = "MNN_VULKAN_VALIDATION"
DEVICE_OPTION = "vulkan.device"
VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
TYPE_RANK = {"discrete": 0, "integrated": 1, "virtual": 2, "cpu": 3, "other": 4}
_LOCK = threading.RLock()
#: guards only the start of open_early's thread: _LOCK is held for all of vkCreateDevice, and a
#: second open_early (the session's fuse after its device_info) must not wait for that
_STARTING = threading.Lock()


@dataclass
class Device:
    """One usable physical device; `context` opens it (once) on first use, or `open_early` in a thread."""

    index: int
    name: str
    type: str
    props: dict
    _context: object = field(default=None, repr=False)
    _opener: object = field(default=None, repr=False)  # the thread of open_early
    open_seconds: float = field(default=0.0, repr=False)  # what opening took, in whichever thread (tools)
    pipelines: dict = field(default_factory=dict, repr=False)
    disk_cache: object = field(default=None, repr=False)

    @property
    def context(self):
        with _LOCK:  # one logical device per physical device, even when sessions start in threads
            if self._context is None:
                from .pipeline_cache import PipelineCache

                started = time.perf_counter()
                context = _vulkan.Context(self.index)  # vkCreateDevice without the GIL
                self.disk_cache = PipelineCache(self)
                self.disk_cache.load(context)
                self._context = context
                self.open_seconds = time.perf_counter() - started
            return self._context

    def open_early(self) -> None:
        """Start opening the logical device (and reading the pipeline-cache file) in a thread, once:
        a session asks at creation, so vkCreateDevice overlaps its planning instead of waiting in
        the first run. The thread holds the lock `context` takes, so the first user waits for it;
        a fork waits for it too (`_before_fork`), and its child then finds the device opened."""
        if self._context is not None or self._opener is not None:
            return  # opened, or opening: never wait here (the opener holds _LOCK)
        with _STARTING:
            if self._context is not None or self._opener is not None:
                return
            self._opener = threading.Thread(target=self._open_quietly, name="mnn-vulkan-open")
            self._opener.start()

    def _open_quietly(self) -> None:
        try:
            _ = self.context
        except Exception:  # noqa: BLE001  (the first real use raises it again, with its reason)
            pass

    def save_pipeline_cache(self) -> None:
        """Keep new pipelines on disk for the next process (see pipeline_cache.py)."""
        with _LOCK:
            if self._context is not None:
                self.disk_cache.save(self._context)

    @property
    def host_shared(self) -> bool:
        """Memory the host reaches directly (CPU and integrated devices): no staging copies."""
        return self.type in ("cpu", "integrated")

    def pipeline(self, shader: str, n_bindings: int, spec: tuple):
        """The compute pipeline of a shader for these specialization constants, made once."""
        from .shaders import spirv

        key = (shader, n_bindings, spec)
        pipe = self.pipelines.get(key)
        if pipe is None:
            code = spirv(shader)
            pipe = _vulkan.Pipeline(self.context, code, n_bindings, spec, shader)
            self.pipelines[key] = pipe
            self.disk_cache.note(code, n_bindings, spec)
        return pipe

    def info(self) -> DeviceInfo:
        """Roofline numbers for the scheduler: rough, per device type."""
        peak, bandwidth, launch = {
            "discrete": (15000.0, 2000.0, 4.0),
            "integrated": (400.0, 40.0, 10.0),
            "cpu": (8.0, 8.0, 40.0),
        }.get(self.type, (50.0, 10.0, 20.0))
        return DeviceInfo(
            name=f"{self.name} (Vulkan {self.props['api_version']}, {self.type})",
            kind="gpu",
            peak_gflops=peak,
            bandwidth_gbs=bandwidth,
            launch_us=launch,
            memory_bytes=self.props["device_local_bytes"],
            extra={
                "vulkan_index": self.index,
                "vulkan_type": self.type,
                "subgroup_size": self.props["subgroup_size"],
                "fp16": self.props["fp16"],
                "coopmat": self.props.get("coopmat", False),
                "sm_count": self.props.get("sm_count", 0),  # 0: the driver does not say
                "precision_low": "float16 storage and arithmetic"
                if self.props["fp16"]
                else "float32 (no shaderFloat16 with 16-bit storage buffers on this device)",
            },
        )


class _State:
    tried = False
    reason = ""  # why Vulkan cannot be used at all; empty when it can
    devices: list = []
    skipped: list = []  # (name, why) of devices that cannot run compute


def _after_fork_in_child() -> None:
    """A device does not survive fork (the driver's queue threads stay in the parent):
    the child of a process that opened one reports Vulkan unavailable instead of hanging."""
    if any(d._context is not None for d in _State.devices) and not _State.reason:
        _State.reason = (
            "a Vulkan device was opened before this process was forked and cannot be used in the "
            "child; start workers with the 'spawn' method, or open Vulkan only in the workers"
        )


#: threads making device memory (arena.py): a fork waits for them as for the opener
_WORKERS: set = set()


def in_thread(work, name: str) -> threading.Thread:
    """Run work() in a thread that a fork waits for (device calls must not be cut in half by one)."""

    def run():
        try:
            work()
        finally:
            _WORKERS.discard(thread)

    thread = threading.Thread(target=run, name=name, daemon=True)
    _WORKERS.add(thread)
    thread.start()
    return thread


def _before_fork() -> None:
    """No fork while a thread is inside vkCreateDevice or vkAllocateMemory (the child would inherit
    the driver's locks half-taken)."""
    busy = [d._opener for d in _State.devices] + list(_WORKERS)
    for thread in busy:
        if thread is not None and thread is not threading.current_thread():
            thread.join()


os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def validation_requested() -> bool:
    if os.environ.get(VALIDATION_ENV, "").lower() in ("1", "true", "yes"):
        return True
    return VALIDATION_LAYER in os.environ.get("VK_INSTANCE_LAYERS", "").split(":")


#: held while the instance is made (_start), by the thread of start_early or the first caller
_START_LOCK = threading.Lock()


def start_early() -> None:
    """Create the instance (load the loader and the drivers, list the devices) in a thread, as the
    package is imported: the core imports it while it loads a model, so vkCreateInstance (~0.09 s
    on NVIDIA) overlaps the import instead of the session's availability check, which then waits
    for it. No logical device is opened here (that waits for a session). MNN_VULKAN_EARLY=0: not."""
    if _State.tried or os.environ.get("MNN_VULKAN_EARLY", "") == "0" or _vulkan is None:
        return
    in_thread(_start, "mnn-vulkan-instance")


def _start() -> None:
    if _State.tried:
        return
    with _START_LOCK:  # a caller while start_early's thread makes the instance waits for it
        if not _State.tried:
            _start_locked()
            _State.tried = True


def _start_locked() -> None:
    if _vulkan is None:
        _State.reason = _LOAD_ERROR
        return
    library = os.environ.get(LIBRARY_ENV) or "libvulkan.so.1"
    status, message = _vulkan.init(library, validation_requested())
    if status == 1:
        _State.reason = (
            f"no Vulkan loader: {message}. Install one (Debian: apt-get install libvulkan1) "
            f"or set {LIBRARY_ENV} to its path"
        )
        return
    if status != 0:
        _State.reason = f"Vulkan instance creation failed: {message}"
        return
    for props in _vulkan.devices():
        if props["compute_family"] < 0:
            _State.skipped.append((props["name"], "no compute queue"))
        elif props["api_version_int"] < (1 << 22 | 1 << 12):
            _State.skipped.append((props["name"], f"Vulkan {props['api_version']} < 1.1"))
        else:
            _State.devices.append(Device(props["index"], props["name"], props["type"], props))
    if not _State.devices:
        skipped = "; ".join(f"{n}: {why}" for n, why in _State.skipped)
        _State.reason = "no Vulkan device" + (
            f" can run compute ({skipped})"
            if skipped
            else " found: the loader sees no driver. Install one (NVIDIA's, or Mesa's lavapipe: "
            "apt-get install mesa-vulkan-drivers) or point VK_DRIVER_FILES at its ICD file"
        )


def unavailable_reason() -> str:
    """Empty when Vulkan can run here, else why not (no loader, no device, bad choice)."""
    _start()
    if _State.reason:
        return _State.reason
    try:
        choose(None)
    except BackendError as exc:
        return str(exc)
    return ""


def devices() -> list[Device]:
    _start()
    return list(_State.devices)


def choose(choice=None) -> Device:
    """The device for a session: the option's choice, else MNN_VULKAN_DEVICE, else the best type."""
    _start()
    if _State.reason:
        raise BackendError(f"Vulkan is unavailable: {_State.reason}")
    where = DEVICE_OPTION
    if choice is None or choice == "":
        choice, where = os.environ.get(DEVICE_ENV, ""), DEVICE_ENV
    found = _State.devices
    listing = ", ".join(f"{d.index}: {d.name} ({d.type})" for d in found)
    if choice == "":
        return min(found, key=lambda d: (TYPE_RANK.get(d.type, 9), d.index))
    text = str(choice).strip()
    if text.isdigit():
        for d in found:
            if d.index == int(text):
                return d
    else:
        for d in found:
            if text.lower() in d.name.lower():
                return d
    raise BackendError(f"{where}={choice!r} matches no usable Vulkan device; devices: {listing}")


start_early()
