"""Devices, contexts and programs: the control side of the OpenCL backend.

- discovery: the ICD loader (libOpenCL.so.1, or $MNN_OPENCL_LIBRARY) is opened
  once; devices are ordered GPU first, then accelerators, then the rest;
- selection: $MNN_OPENCL_DEVICE or the session option "opencl.device" picks one
  by index in that order or by a case-insensitive substring of
  "platform / device";
- one Runtime per device per process: a context, one in-order queue, and the
  program (every kernel in one source) built once per precision, through the
  on-disk binary cache (program_cache.py).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from importlib import resources

from mnn_core.backend.kit.activation import activation_defines
from mnn_core.errors import BackendError

from . import _cl
from .program_cache import load_program

LIBRARY_ENV = "MNN_OPENCL_LIBRARY"
DEVICE_ENV = "MNN_OPENCL_DEVICE"
DEVICE_OPTION = "opencl.device"
SPLIT_ENV = "MNN_OPENCL_MIN_ITEMS"
KERNEL_FILES = (
    "common",
    "eltwise",
    "conv",
    "matmul",
    "gemm",
    "gemm8",
    "conv4",
    "dwconv",
    "pool",
    "norm",
    "reduce",
    "layout",
    "rnn",
    "index",
    "ml",
    "quant",
)
BUILD_OPTIONS = "-cl-std=CL1.2"
TYPE_ORDER = {"gpu": 0, "accelerator": 1, "cpu": 2, "other": 3}


@dataclass(frozen=True)
class DeviceEntry:
    """One OpenCL device, as discovered."""

    index: int
    platform: dict
    device: dict

    @property
    def label(self) -> str:
        return f"{self.platform['name']} / {self.device['name']}"

    @property
    def kind(self) -> str:
        return self.device["type"]

    @property
    def has_fp16(self) -> bool:
        return "cl_khr_fp16" in self.device["extensions"]


@dataclass(frozen=True)
class Discovery:
    devices: tuple  # DeviceEntry, in selection order
    reason: str  # why there is no device ("" when there is one)


_lock = threading.Lock()
_discovery: dict[str, Discovery] = {}
_runtimes: dict[int, Runtime] = {}


def discover() -> Discovery:
    """Load the ICD loader and list its devices (once per process and library name)."""
    if _cl.forked():
        return Discovery((), _cl.forked())
    library = os.environ.get(LIBRARY_ENV, "")
    with _lock:
        found = _discovery.get(library)
        if found is None:
            found = _discovery[library] = _discover(library)
        return found


def _discover(library: str) -> Discovery:
    if _cl.loaded():
        error = ""
    else:
        error = _cl.load(library or None)
    if error:
        return Discovery(
            (),
            f"{error}. Install an OpenCL ICD loader and a driver (e.g. apt-get install "
            "ocl-icd-libopencl1 pocl-opencl-icd), or point $MNN_OPENCL_LIBRARY at libOpenCL.so",
        )
    try:
        platforms = _cl.platforms()
    except _cl.CLError as exc:
        return Discovery((), f"the OpenCL loader cannot list platforms: {exc}")
    if not platforms:
        return Discovery(
            (),
            "the OpenCL loader found no platform (no vendor driver registered in "
            "/etc/OpenCL/vendors; install one, e.g. pocl-opencl-icd, or the GPU driver)",
        )
    found = [(p, d) for p, devs in platforms for d in devs if d["available"]]
    if not found:
        names = ", ".join(p["name"] for p, _ in platforms)
        return Discovery((), f"OpenCL platform(s) {names} expose no available device")
    found.sort(key=lambda pd: TYPE_ORDER.get(pd[1]["type"], 3))  # stable: platform order within a type
    return Discovery(tuple(DeviceEntry(i, p, d) for i, (p, d) in enumerate(found)), "")


def select_device(choice=None) -> DeviceEntry:
    """The device for `choice` (index, or substring of "platform / device"), else
    $MNN_OPENCL_DEVICE, else the first (a GPU when there is one)."""
    found = discover()
    if not found.devices:
        raise BackendError(f"OpenCL is not available: {found.reason}")
    if choice is None or choice == "":
        choice = os.environ.get(DEVICE_ENV, "")
    if choice is None or choice == "":
        return found.devices[0]
    listing = "; ".join(f"{d.index}: {d.label}" for d in found.devices)
    text = str(choice).strip()
    if text.lstrip("-").isdigit():
        index = int(text)
        if not 0 <= index < len(found.devices):
            raise BackendError(f"OpenCL device index {index} is out of range; devices are {listing}")
        return found.devices[index]
    matches = [d for d in found.devices if text.lower() in d.label.lower()]
    if not matches:
        raise BackendError(
            f"no OpenCL device matches {text!r}; devices are {listing} "
            f"(set ${DEVICE_ENV} or the session option {DEVICE_OPTION!r} to an index or a name)"
        )
    return matches[0]


def get_runtime(entry: DeviceEntry) -> Runtime:
    with _lock:
        rt = _runtimes.get(entry.device["handle"])
        if rt is None:
            rt = _runtimes[entry.device["handle"]] = Runtime(entry)
        return rt


def forget_programs() -> None:
    """Drop every in-process program so the next session loads them again (tests, benchmarks)."""
    with _lock:
        for rt in _runtimes.values():
            rt.programs.clear()


def kernel_source() -> str:
    """Every kernel file, after the fused-activation codes of abi.h that common.cl switches on."""
    root = resources.files(__package__) / "kernels"
    return activation_defines() + "".join(
        f"/* ---- {name}.cl ---- */\n" + (root / f"{name}.cl").read_text() + "\n" for name in KERNEL_FILES
    )


class Runtime:
    """A context and queue on one device, and its programs (built once per precision)."""

    def __init__(self, entry: DeviceEntry):
        self.entry = entry
        self.context = _cl.Context(entry.platform["handle"], entry.device["handle"], entry.label)
        self.programs: dict[str, object] = {}
        self.builds: list[dict] = []  # how each program was obtained: {"precision", "how", "seconds", "path"}
        self._wg_limit: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def is_gpu(self) -> bool:
        return self.entry.kind == "gpu"

    def program(self, precision: str = "float32"):
        """The program of every kernel for `precision` ("float32" or "float16")."""
        with self._lock:
            prog = self.programs.get(precision)
            if prog is None:
                options = BUILD_OPTIONS + (" -DMNN_FP16=1" if precision == "float16" else "")
                start = time.perf_counter()
                prog, how, path = load_program(self.context, self.entry, kernel_source(), options)
                self.builds.append(
                    {"precision": precision, "how": how, "path": path, "seconds": time.perf_counter() - start}
                )
                self.programs[precision] = prog
            return prog

    def split_target(self) -> int:
        """Work-items a kernel should have to fill the device: convolutions with fewer
        split their input channels. ~1024 per compute unit on GPUs; 0 (never split)
        on CPUs, which have few cores to fill. $MNN_OPENCL_MIN_ITEMS overrides."""
        value = os.environ.get(SPLIT_ENV)
        if value:
            return int(float(value))
        return self.entry.device["compute_units"] * 1024 if self.is_gpu else 0

    def work_group_limit(self, name: str, kern) -> int:
        limit = self._wg_limit.get(name)
        if limit is None:
            limit = self._wg_limit[name] = max(
                1, min(int(kern.max_work_group_size()), int(self.entry.device["max_work_group"]))
            )
        return limit

    def default_lws(self, name: str, gws: tuple, kern) -> tuple:
        """A work-group size without measuring: powers of two filling dims in order up to
        64 work-items (GPU) or 16 (CPU), never far past the work size of a dim."""
        budget = min(64 if self.is_gpu else 16, self.work_group_limit(name, kern))
        max_items = self.entry.device["max_work_items"]
        lws = []
        for d, g in enumerate(gws):
            size = 1
            while size * 2 <= budget and size < g and size * 2 <= max_items[d]:
                size *= 2
            lws.append(size)
            budget //= size
        return tuple(lws)
