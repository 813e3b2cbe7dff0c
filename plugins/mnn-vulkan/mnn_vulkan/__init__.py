"""mnn-vulkan: the Vulkan compute backend of mnn.

GLSL compute shaders, compiled to SPIR-V and committed with the package, run
on any Vulkan 1.1 device: an NVIDIA or AMD GPU, an integrated GPU, or Mesa's
lavapipe on the CPU. The loader is opened at run time, so the package
installs anywhere and `mnnx backends` says why Vulkan is unavailable.

A run of consecutive ops placed here is one *segment*: at resize its
dispatches are recorded into one command buffer, with descriptor sets
pointing into the plan's single device arena (weights uploaded once); each
run is one submit and one fence wait. Host copies go through a staging
buffer (or the mapping, where the device shares host memory).

    sess = mnn_core.Session(model, backend="vulkan", options={"vulkan.device": "H200"})

Session options: "vulkan.device" (index or name substring; default: discrete
GPU, then integrated, then CPU; also MNN_VULKAN_DEVICE), "vulkan.staging"
(True: force staging copies even where memory is shared), "vulkan.profile"
(True: GPU timestamps per dispatch, see `gpu_times`). With precision="low" on a
device with fp16, every float tensor is stored as float16 in the arena and the
ops that have float16 shaders compute on it directly (`use_fp16`).
"""

from __future__ import annotations

import weakref

from mnn_core.backend import CExecution, DeviceInfo, hookimpl
from mnn_core.backend.kit.segments import SegmentBackend, segment_name
from mnn_core.errors import BackendError

from . import device as _device

__version__ = "0.1.0"

try:
    from mnn_core.backend.kit.codes import fuse_activations

    from .arena import VulkanArena
    from .kernels import KERNELS
    from .kernels.eltwise import record_fused
    from .recorder import Recorder
except ImportError:  # the compiled runtime is missing: availability() says so
    KERNELS = {}

_PROGRAMS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class Segment:
    """What a prepared segment keeps alive: its program, the arena, the device."""

    def __init__(self, program, arena, device, names):
        self.program = program
        self.arena = arena
        self.device = device
        self.names = names
        self.precision = "float32"  # of float tensors: "float16" under precision="low" with device support
        self.shaders: list[str] = []  # every dispatch's shader, in order
        self.widened: list[str] = []  # ops run in float32 on widened copies of float16 tensors
        self.barriers = 0  # pipeline barriers recorded between its dispatches


class VulkanBackend(SegmentBackend):
    name = "vulkan"
    options = (
        _device.DEVICE_OPTION,
        "vulkan.big_gemm",
        "vulkan.big_gemm_bk",
        "vulkan.big_gemm_shader",
        "vulkan.big_gemm_splitk",
        "vulkan.big_gemm_vec",
        "vulkan.conv_warp",
        "vulkan.conv_warp_fill",
        "vulkan.dw_strip",
        "vulkan.coopmat",
        "vulkan.copy_tiles",
        "vulkan.fold_batch",
        "vulkan.fp16_fma",
        "vulkan.gemm_splitk",
        "vulkan.gemv",
        "vulkan.gpu_enough",
        "vulkan.gpu_tiling",
        "vulkan.gpu_tilings",
        "vulkan.gpu_wave",
        "vulkan.pointwise_fold",
        "vulkan.profile",
        "vulkan.splitk",
        "vulkan.splitk_min",
        "vulkan.splitk_whole_at",
        "vulkan.staging",
        "vulkan.tiles",
        "vulkan.warp_narrow",
        "vulkan.warp_splitk",
    )
    memory_domain = "vulkan"
    priority = 5
    kernel_table = KERNELS

    def unavailable_reason(self) -> str | None:
        return _device.unavailable_reason()

    def device_info(self) -> DeviceInfo:
        """The default device's; asked for when a session is created, so its logical device starts
        opening then, in a thread, while the session plans (`Device.open_early`)."""
        dev = _device.choose(None)
        dev.open_early()
        return dev.info()

    def allocate_arena(self, nbytes: int, ctx=None):
        """The plan's arena, bound at once to the session's device when the core passes
        its PrepareContext (older cores do not: then at the first segment)."""
        if ctx is None:
            return VulkanArena(nbytes)
        options = ctx.options or {}
        dev = _device.choose(options.get(_device.DEVICE_OPTION))
        arena = VulkanArena(nbytes, half=use_fp16(dev, ctx))
        arena.bind(dev, staging=bool(options.get("vulkan.staging", False)))
        return arena

    def tensor_nbytes(self, info, ctx=None) -> int:
        """Whole 32-bit words: shaders write bool tensors four bytes at a time. float32
        tensors take 2 bytes an element where they are stored as float16 (`use_fp16`)."""
        nbytes = info.nbytes
        if ctx is not None and str(info.dtype) == "float32" and _half_context(ctx):
            nbytes = info.size * 2
        return -(-nbytes // 4) * 4

    def fuse(self, offer, ctx):
        """MatMuls with the Transposes, scale, bias and activation around them; residual Adds with
        the LayerNormalization after them (fuse.py). MNN_VULKAN_FUSE=0 proposes none (A/B runs of
        tools that cannot pass Session(fuse=False))."""
        import os

        from .fuse import fusions

        try:  # the session's own device (its option may name another than device_info's)
            _device.choose((getattr(ctx, "options", None) or {}).get(_device.DEVICE_OPTION)).open_early()
        except BackendError:
            pass  # prepare_segment says why
        if not KERNELS or os.environ.get("MNN_VULKAN_FUSE", "") == "0":
            return []
        return fusions(offer, getattr(ctx, "precision", "normal"))

    def prepare_segment(self, ops, arena, ctx):
        options = ctx.options or {}
        dev = _device.choose(options.get(_device.DEVICE_OPTION))
        # device-local memory is allocated in a thread (arena.py): the pipelines are made meanwhile,
        # and the weights go up in one go once it exists
        arena.bind(dev, staging=bool(options.get("vulkan.staging", False)))
        fp16 = arena.half  # decided with the arena's sizing: the tensors' bytes depend on it
        rec = Recorder(dev, arena, timestamps=bool(options.get("vulkan.profile", False)), options=options, half=fp16)
        widened = []
        for op, act in fuse_activations(ops):
            first = len(rec.dispatches)
            rec.record_op(op, act, KERNELS, record_fused)
            if any(d[5].endswith((":widen", ":narrow")) for d in rec.dispatches[first:]):
                widened.append(op.node.name)
        arena.flush()
        program = rec.finish()
        dev.save_pipeline_cache()
        name = segment_name("vulkan", ops)
        segment = Segment(program, arena, dev, [op.node.name for op in ops])
        segment.precision = "float16" if fp16 else "float32"
        segment.shaders = [d[5].split(":")[-1] for d in rec.dispatches]
        segment.widened = widened
        segment.barriers = rec.barriers
        _PROGRAMS[name] = segment
        return CExecution(program.capsule(), owner=segment, name=name)


def use_fp16(device, ctx) -> bool:
    """float16 storage and arithmetic: precision="low" on a device with shaderFloat16 and
    16-bit storage buffers (Vulkan 1.2+). MNN_VULKAN_FP16=0 keeps float32."""
    import os

    if ctx.precision != "low" or os.environ.get("MNN_VULKAN_FP16", "") == "0":
        return False
    return bool(device.props.get("fp16"))


def _half_context(ctx) -> bool:
    """use_fp16 for the device the session's options choose (False when none is usable)."""
    if ctx.precision != "low":
        return False
    try:
        return use_fp16(_device.choose((ctx.options or {}).get(_device.DEVICE_OPTION)), ctx)
    except BackendError:
        return False


def segments() -> dict[str, Segment]:
    """Every live prepared segment by name (its precision, shaders, op names), for tests and tools."""
    return dict(_PROGRAMS.items())


def gpu_times() -> dict[str, list[tuple[str, float]]]:
    """Per-dispatch GPU milliseconds of the last run of every live segment prepared
    with options={"vulkan.profile": True}, by segment name."""
    return {name: seg.program.times() for name, seg in list(_PROGRAMS.items()) if seg.program.times()}


def validation_errors() -> tuple[bool, int, str]:
    """(layer active, errors so far, last message) of the Khronos validation layer."""
    from . import _vulkan

    return _vulkan.validation()


@hookimpl
def mnn_register_backends(register):
    register(VulkanBackend())
