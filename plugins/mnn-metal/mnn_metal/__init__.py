"""mnn-metal: the Metal compute backend of mnn (macOS only).

Its kernels are mnn-vulkan's compute shaders, translated from their committed
SPIR-V to Metal Shading Language by spirv-cross (mnn_metal/msl/*.metal, see
msl.py), so the two GPU backends share one tested set of kernel logic. The op
-> kernel mapping (kernels.py) and the recording of a segment (recorder.py)
are pure Python and run on every OS; only the native part (csrc/mnn_metal.m:
device, library, pipelines, one shared-memory arena, the run) needs macOS.
Off macOS the package installs, and `mnn backends` lists "metal" as
unavailable with the reason.

    sess = mnn_core.Session(model, backend="metal")

Session options: "metal.tiles" ("wide", "mid", "one": force a GEMM tiling).
precision="low" stores convolution weights as float16 (the *_h kernels).
"""

from __future__ import annotations

from mnn_core import hookimpl
from mnn_core.backend import Availability, Backend, CExecution, DeviceInfo
from mnn_core.errors import BackendError

from . import device as _device
from .kernels import KERNELS, record_segment
from .recorder import Recorder, SegmentPlan

__version__ = "0.1.0"


def plan_segment(ops, ctx) -> SegmentPlan:
    """The dispatches a segment of ops becomes (pure Python: runs on any OS)."""
    # mnn-vulkan's *_h kernels now take fp16 activations as well as fp16 weights; this planner still
    # binds fp32 activations, so precision="low" runs the fp32 kernels until it follows them.
    rec = Recorder(options=ctx.options or {}, fp16=False)
    record_segment(ops, rec)
    return rec.finish()


class MetalBackend(Backend):
    name = "metal"
    memory_domain = "metal"
    priority = 5

    def availability(self) -> Availability:
        reason = _device.unavailable_reason()
        return Availability(not reason, reason)

    def devices(self) -> list[DeviceInfo]:
        if self.availability():
            # Apple M1-class numbers until calibrated; the scheduler only compares them
            return [
                DeviceInfo(_device.device_name(), kind="gpu", peak_gflops=2600.0, bandwidth_gbs=68.0, launch_us=10.0)
            ]
        return [DeviceInfo("metal (unavailable)", kind="gpu")]

    def kernels(self):
        from mnn_core.ops import all_schemas

        known = all_schemas()
        return {op: k.spec for op, k in KERNELS.items() if op in known}

    def tensor_nbytes(self, info, ctx=None) -> int:
        """Whole 32-bit words, as the kernels (Vulkan's shaders) read and write them."""
        return -(-info.nbytes // 4) * 4

    def allocate_arena(self, nbytes: int, ctx=None):
        from .runtime import MetalArena

        return MetalArena(nbytes)

    def prepare(self, node, ins, outs, constants, ctx):
        raise BackendError("the metal backend prepares whole segments (prepare_segment), not single ops")

    def prepare_segment(self, ops, arena, ctx):
        from .runtime import build_program

        plan = plan_segment(ops, ctx)
        name = f"metal:{ops[0].node.name}..{ops[-1].node.name}" if ops else "metal:empty"
        program = build_program(plan, arena)
        return CExecution(program.capsule(), owner=program, name=name)


@hookimpl
def mnn_register_backends(register):
    register(MetalBackend())
