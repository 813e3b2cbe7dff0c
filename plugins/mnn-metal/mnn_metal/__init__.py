"""mnn-metal: the Metal compute backend of mnn (macOS only).

Its kernels are the core kit's compute shaders (mnn_core.backend.kit.spirv, which mnn-vulkan
runs too), translated from their committed SPIR-V to Metal Shading Language by spirv-cross (mnn_metal/msl/*.metal, see
msl.py), so the two GPU backends share one tested set of kernel logic. The op
-> kernel mapping (kernels.py) and the recording of a segment (recorder.py)
are pure Python and run on every OS; only the native part (csrc/mnn_metal.m:
device, library, pipelines, one shared-memory arena, the run) needs macOS.
Off macOS the package installs, and `mnnx backends` lists "metal" as
unavailable with the reason.

    sess = mnn_core.Session(model, backend="metal")

Session options: "metal.tiles" ("wide", "mid", "one": force a GEMM tiling),
"metal.fp16_fma" (True: float16 FMAs in the GEMM tiles and depthwise windows,
the *_hf kernels). precision="low" stores every float tensor of the arena as
float16 and runs the *_h kernels on it, as mnn-vulkan does (`use_fp16`);
MNN_METAL_FP16=0 keeps float32.
"""

from __future__ import annotations

from mnn_core.backend import CExecution, DeviceInfo, hookimpl
from mnn_core.backend.kit.segments import SegmentBackend, segment_name
from mnn_core.errors import BackendError

from . import device as _device
from .kernels import KERNELS, record_segment
from .recorder import Recorder, SegmentPlan, tensor_bytes

__version__ = "0.1.0"


def use_fp16(ctx) -> bool:
    """float16 storage and arithmetic: precision="low" (every Metal GPU stores and computes
    half; mnn-vulkan asks its device for shaderFloat16 and 16-bit storage). MNN_METAL_FP16=0
    keeps float32."""
    import os

    return ctx is not None and ctx.precision == "low" and os.environ.get("MNN_METAL_FP16", "") != "0"


def precision_low() -> dict:
    """DeviceInfo.extra: what precision="low" means on a Metal device (as mnn-vulkan says it)."""
    import os

    off = os.environ.get("MNN_METAL_FP16", "") == "0"
    return {"fp16": True, "precision_low": "float32 (MNN_METAL_FP16=0)" if off else "float16 storage and arithmetic"}


def plan_segment(ops, ctx, half: bool | None = None) -> SegmentPlan:
    """The dispatches a segment of ops becomes (pure Python: runs on any OS). `half`: the
    arena's float tensors are float16 (pass the arena's own flag: its tensors were sized
    by it); by default what `use_fp16` says for the session."""
    rec = Recorder(options=ctx.options or {}, half=use_fp16(ctx) if half is None else half)
    record_segment(ops, rec)
    return rec.finish()


class MetalBackend(SegmentBackend):
    name = "metal"
    options = ("metal.fp16_fma", "metal.tiles")
    memory_domain = "metal"
    priority = 5
    kernel_table = KERNELS

    def unavailable_reason(self) -> str | None:
        return _device.unavailable_reason()

    def device_info(self) -> DeviceInfo:
        reason = _device.unavailable_reason()
        if reason:
            raise BackendError(reason)
        # Apple M1-class numbers until calibrated; the scheduler only compares them
        return DeviceInfo(
            _device.device_name(),
            kind="gpu",
            peak_gflops=2600.0,
            bandwidth_gbs=68.0,
            launch_us=10.0,
            extra=precision_low(),
        )

    def tensor_nbytes(self, info, ctx=None) -> int:
        """Whole 32-bit words, as the kernels (Vulkan's shaders) read and write them; float32
        tensors take 2 bytes an element where they are stored as float16 (`use_fp16`)."""
        return tensor_bytes(info, use_fp16(ctx))

    def allocate_arena(self, nbytes: int, ctx=None):
        from .runtime import MetalArena

        return MetalArena(nbytes, half=use_fp16(ctx))

    def prepare_segment(self, ops, arena, ctx):
        from .runtime import build_program

        plan = plan_segment(ops, ctx, half=arena.half)  # the arena's tensors were sized by it
        name = segment_name("metal", ops)
        program = build_program(plan, arena)
        return CExecution(program.capsule(), owner=program, name=name)


@hookimpl
def mnn_register_backends(register):
    register(MetalBackend())
