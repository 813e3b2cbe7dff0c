"""mnn-opencl: the OpenCL GPU backend of mnn.

OpenCL C kernels (kernels/*.cl, one program built once per device and
precision, its binary cached on disk), one device arena per plan (a cl_mem
placed by the core's memory planner, weights uploaded at resize), and every
run of consecutive ops prepared as one segment whose kernels are enqueued on
one in-order queue with no host round trip; the host waits once, when it reads
the outputs back. The ICD loader is opened at run time, so the package
installs anywhere and reports itself unavailable, with the reason, where no
platform or device exists.

    sess = mnn_core.Session(model, backend="opencl", precision="low",
                            options={"opencl.device": "NVIDIA", "opencl.tuning": "fast"})
"""

from __future__ import annotations

import os

from mnn_core.backend import Availability, CExecution, DeviceInfo, PrepareContext, hookimpl
from mnn_core.backend.kit.segments import SegmentBackend
from mnn_core.errors import MnnError

__version__ = "0.1.0"

try:  # the compiled glue; a failure is reported by availability(), not raised here
    from . import (  # noqa: F401  (registration; ops_index imports the modules whose kernels it replaces first)
        _cl,
        ops_conv,
        ops_deconv,
        ops_eltwise,
        ops_index,
        ops_layout,
        ops_matmul,
        ops_ml,
        ops_norm,
        ops_pool,
        ops_quant,
        ops_reduce,
        ops_rnn,
    )
    from ._common import KERNELS, Builder
    from .arena import OpenCLArena
    from .fuse import fusions
    from .runtime import DEVICE_OPTION, discover, get_runtime, select_device
    from .tuning import tune, tuning_mode

    _IMPORT_ERROR = ""
except ImportError as exc:  # pragma: no cover - a broken install
    _cl = None
    KERNELS = {}
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

FP16_ENV = "MNN_OPENCL_FP16"  # "0": fp32 even with precision="low"; "force": fp16 weights without cl_khr_fp16
OPTIONS = (
    "opencl.device",
    "opencl.tuning",
    "opencl.gemm",
    "opencl.gemm8",
    "opencl.gemm8_slices",
    "opencl.gemm8_b128_min",
    "opencl.gemm8_splitk",
    "opencl.gemm8_n96",
    "opencl.copy_tiles",
    "opencl.conv4",
    "opencl.conv4_pw",
    "opencl.conv4_split",
    "opencl.dwconv",
    "opencl.run_copies",
)


def device_info(entry) -> DeviceInfo:
    """The roofline numbers of one device: rough, from what OpenCL reports."""
    d = entry.device
    gpu = entry.kind == "gpu"
    lanes = (128 if "nvidia" in d["vendor"].lower() else 64) if gpu else 16
    peak = max(1.0, d["compute_units"] * d["clock_mhz"] * lanes * 2 / 1e3)
    return DeviceInfo(
        name=entry.label,
        kind=entry.kind,
        peak_gflops=peak * (0.3 if gpu else 0.1),
        bandwidth_gbs=500.0 if gpu else 10.0,
        launch_us=8.0 if gpu else 40.0,
        memory_bytes=d["global_mem"],
        extra={
            "index": entry.index,
            "driver": d["driver_version"],
            "opencl_c": d["opencl_c_version"],
            "fp16": entry.has_fp16,
            "compute_units": d["compute_units"],
            "clock_mhz": d["clock_mhz"],
        },
    )


class OpenCLBackend(SegmentBackend):
    name = "opencl"
    options = OPTIONS
    memory_domain = "opencl"
    priority = 20
    kernel_table = KERNELS

    def __init__(self):
        #: what the last prepared segments were, for tests and `explain`: device, precision, launches (and
        #: their kernels), tuning
        self.segments: list[dict] = []

    def availability(self) -> Availability:
        if _cl is None:
            return Availability(False, f"the compiled glue failed to load ({_IMPORT_ERROR}); reinstall mnn-opencl")
        found = discover()
        if not found.devices:
            return Availability(False, found.reason)
        try:
            select_device()
        except MnnError as exc:
            return Availability(False, str(exc))
        return Availability(True)

    def devices(self) -> list[DeviceInfo]:
        if _cl is None or not discover().devices:
            return []
        chosen = select_device()
        rest = [e for e in discover().devices if e is not chosen]
        return [device_info(e) for e in [chosen] + rest]

    # -- per session ----------------------------------------------------------------------

    def fuse(self, offer, ctx):
        return fusions(offer)

    def runtime_for(self, ctx: PrepareContext):
        return get_runtime(select_device(ctx.options.get(DEVICE_OPTION)))

    def compute_dtype(self, ctx: PrepareContext, runtime=None) -> str:
        """float16 (half weights, float sums) when the session asks for precision="low" and
        the device has cl_khr_fp16; float32 otherwise. $MNN_OPENCL_FP16: 0 never, force always
        (the half weights need only vload_half, so tests can run them on PoCL)."""
        runtime = runtime or self.runtime_for(ctx)
        setting = os.environ.get(FP16_ENV, "").strip().lower()
        if ctx.precision != "low" or setting == "0":
            return "float32"
        return "float16" if runtime.entry.has_fp16 or setting == "force" else "float32"

    def allocate_arena(self, nbytes: int, ctx: PrepareContext | None = None) -> OpenCLArena:
        # on the session's device when the core passes its context (an older core does not:
        # then on the default one, and prepare_segment moves it if needed). The arena stays
        # float32 under every precision: float16 is the packed convolution weights only.
        runtime = self.runtime_for(ctx) if ctx is not None else get_runtime(select_device())
        return OpenCLArena(runtime, nbytes, dict(ctx.options) if ctx is not None else None)

    def prepare_segment(self, ops, arena, ctx):
        runtime = self.runtime_for(ctx)
        arena.rebind(runtime)
        precision = self.compute_dtype(ctx, runtime)
        mode = tuning_mode(ctx.options)
        builder = Builder(runtime, runtime.program(precision), arena, precision, options=dict(ctx.options))
        for op in ops:
            KERNELS[op.node.op].impl(op, builder)
        setup = _cl.Segment(runtime.context, [(s.kernel, s.rounded_gws, s.lws) for s in builder.setup])
        setup.enqueue()  # constant weights are packed once, here
        measured = tune(runtime, builder.launches, mode)
        name = f"opencl[{precision}]:{ops[0].node.name}..{ops[-1].node.name}"
        segment = _cl.Segment(runtime.context, [(x.kernel, x.rounded_gws, x.lws) for x in builder.launches], name)
        self.segments.append(
            {
                "device": runtime.entry.label,
                "precision": precision,
                "ops": len(ops),
                "launches": len(builder.launches),
                "kernels": [x.key.split("|")[0] for x in builder.launches],
                "tuning": mode,
                "tuned": measured,
            }
        )
        del self.segments[:-64]
        return CExecution(segment.capsule(), owner=(segment, setup, builder), name=name)


@hookimpl
def mnn_register_backends(register):
    register(OpenCLBackend())
