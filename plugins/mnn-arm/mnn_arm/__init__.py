"""mnn-arm: the Arm CPU backend of mnn.

NEON kernels in C for aarch64, in three paths compiled as separate
translation units with their own flags and chosen at run time from
getauxval(AT_HWCAP): fp32 (every aarch64 CPU), fp16 (vfmaq_f16; used for
precision="low" when the CPU reports asimdhp) and int8 with sdot
(vdotq_s32; used for the quantized ops when the CPU reports asimddp).
On other machines the package installs without compiling anything and the
backend reports itself unavailable: "needs an Arm (aarch64) CPU".

    sess = mnn_core.Session(model, backend="arm", precision="low")

With precision="low" on the fp16 path, float activations stay in fp16 between
mnn-arm's ops, in its own memory domain (half.py); converted only where the
graph enters or leaves it.
"""

from __future__ import annotations

import platform

from mnn_core.backend import Availability, Backend, CExecution, DeviceInfo, hookimpl

from . import fuse, half, paths

__version__ = "0.1.0"

KERNELS: dict = {}
HALF_NATIVE: set = set()
_IMPORT_ERROR = ""
# (no `_arm = None` before the import: `from . import _arm` would then return that attribute)
if paths.is_arm_machine():
    try:  # the compiled kernels; a failure is reported by availability(), not raised here
        from . import (  # noqa: F401
            _arm,
            ops_conv,
            ops_deconv,
            ops_eltwise,
            ops_layout,
            ops_math,
            ops_matmul,
            ops_ml,
            ops_move,
            ops_norm,
            ops_pool,
            ops_qlinear,
            ops_qlstm,
            ops_reduce,
            ops_resize,
            ops_rnn,
            ops_scatter,
            ops_select,
        )
        from ._common import HALF_NATIVE, KERNELS
    except ImportError as exc:  # pragma: no cover - a broken install
        _arm = None
        _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"
else:
    _arm = None

#: conservative single-core GFLOP/s of the packed GEMM (a Cortex-A76 class core)
PEAK_GFLOPS = {"fp32": 16.0, "fp16": 32.0}


class ArmBackend(Backend):
    name = "arm"
    options = (paths.OPTION, paths.WINOGRAD_OPTION, half.OPTION)
    priority = 10

    def availability(self) -> Availability:
        if not paths.is_arm_machine():
            return Availability(False, f"needs an Arm (aarch64) CPU; this machine is {platform.machine() or 'unknown'}")
        if _arm is None:
            return Availability(False, f"the compiled kernels failed to load ({_IMPORT_ERROR}); reinstall mnn-arm")
        return Availability(True)

    def devices(self) -> list[DeviceInfo]:
        have = paths.supported() if _arm is not None else ()
        best = "fp16" if "fp16" in have else "fp32"
        return [
            DeviceInfo(
                name=f"arm ({', '.join(have) or 'unavailable'})",
                kind="cpu",
                peak_gflops=PEAK_GFLOPS[best],
                bandwidth_gbs=10.0,
                launch_us=1.0,
                extra={"paths": list(have), "hwcap": hex(_arm.hwcap()) if _arm is not None else ""},
            )
        ]

    def kernels(self):
        from mnn_core.ops import all_schemas

        known = all_schemas()
        return {op: k.spec for op, k in KERNELS.items() if op in known}

    def memory_domain_for(self, ctx) -> str:
        """host memory, or under precision="low" on the fp16 path the fp16 domain (half.py)."""
        return half.DOMAIN if half.half_activations(ctx) else self.memory_domain

    def tensor_nbytes(self, info, ctx=None) -> int:
        """Called for the fp16 domain only (host tensors are the core's): float32 at 2 bytes an element."""
        return half.nbytes(info)

    def allocate_arena(self, nbytes: int, ctx=None):
        return half.HalfArena(nbytes)

    def fuse(self, offer, ctx):
        """A few ops placed here run as one (fuse.py)."""
        return fuse.fusions(offer, ctx)

    def prepare(self, node, ins, outs, constants, ctx):
        execution = KERNELS[node.op].impl(node, ins, outs, constants, ctx)
        if node.op not in HALF_NATIVE and half.half_activations(ctx):
            execution = half.widen(execution, ins, outs)
        execution.set_threads(int(getattr(ctx, "threads", 1) or 1))
        return CExecution(execution.capsule(), owner=execution, name=execution.name)


@hookimpl
def mnn_register_backends(register):
    register(ArmBackend())
