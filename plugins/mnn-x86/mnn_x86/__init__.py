"""mnn-x86: the fast CPU backend of mnn.

Hand-written C kernels (packed GEMM with an AVX-512 6x32 or 14x32 (two 512-bit FMA units; 8x48 for layers of few
rows) / AVX2 6x16 register tile, im2col and depthwise convolution, broadcasting element-wise ops,
vectorized activations) compiled once per ISA level and chosen at run time by
cpuid; OpenMP threads per call. Under precision="low", on a CPU with AVX-512 BF16, the GEMMs
multiply bf16 operands (precision.py); fp32 everywhere else. This module registers the "x86" backend: its
capabilities as KernelSpecs (data, read once) and `prepare`, which turns each
placed op into a C execution with weights packed for the chosen ISA.

    sess = mnn_core.Session(model, backend="x86", threads=2, options={"x86.isa": "avx2"})

Tensors that stay between its depthwise and 1x1 convolutions are kept channel-blocked (NC16,
layouts.py) under AVX-512; ``options={"x86.layouts": "off"}`` keeps every tensor dense.
"""

from __future__ import annotations

import platform

from mnn_core.backend import Availability, Backend, CExecution, DeviceInfo, hookimpl
from mnn_core.errors import MnnError

from . import isa as _isa
from . import layouts as _layouts

__version__ = "0.1.0"

try:  # the compiled kernels; a failure is reported by availability(), not raised here
    from . import (  # noqa: F401  (each registers; ops_*_train, ops_grad: training)
        _x86,
        ops_attention,
        ops_conv,
        ops_conv_train,
        ops_eltwise,
        ops_gemm_train,
        ops_grad,
        ops_integer,
        ops_layout,
        ops_llm,
        ops_math,
        ops_matmul,
        ops_ml,
        ops_movement,
        ops_norm,
        ops_pool,
        ops_pool_train,
        ops_recurrent,
        ops_reduce,
        ops_spatial,
    )
    from . import fuse as _fuse
    from ._common import KERNELS

    _IMPORT_ERROR = ""
    from . import ops_int8  # noqa: F401  (int8 kernels, quantization; registers after the float ones)
except ImportError as exc:  # pragma: no cover - a broken install
    _x86 = None
    KERNELS = {}
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

_TILE_ERROR = ""  # a bad MNN_X86_AVX512_TILE: availability() says so
if _x86 is not None:
    try:
        _isa.apply_tile_env()
    except MnnError as exc:
        _TILE_ERROR = str(exc)

#: conservative single-thread fp32 GFLOP/s of the packed GEMM, per ISA level
PEAK_GFLOPS = {"scalar": 15.0, "avx2": 60.0, "avx512": 120.0}
_NO_BF16 = "fp32 (bf16 GEMMs need the avx512 level and AVX-512 BF16)"


#: the session options of this backend; each is checked wherever it applies, and the values
#: of the switches here once for every op (the core refuses an undeclared key)
OPTIONS = (
    "x86.isa",
    "x86.layouts",
    "x86.bf16",
    "x86.winograd",
    "x86.direct",
    "x86.direct_oc",
    "x86.conv_t",
    "x86.stream",
)


class X86Backend(Backend):
    name = "x86"
    options = OPTIONS
    priority = 10

    def availability(self) -> Availability:
        if not _isa.is_x86_machine():
            return Availability(False, f"needs an x86-64 CPU; this machine is {platform.machine() or 'unknown'}")
        if _x86 is None:
            return Availability(False, f"the compiled kernels failed to load ({_IMPORT_ERROR}); reinstall mnn-x86")
        try:
            _isa.env_choice()
        except MnnError as exc:
            return Availability(False, str(exc))
        if _TILE_ERROR:
            return Availability(False, _TILE_ERROR)
        return Availability(True)

    def devices(self) -> list[DeviceInfo]:
        try:
            isa = _isa.env_choice()
        except MnnError:
            isa = "scalar"
        info = _x86.table_info(isa) if _x86 is not None and _x86.cpu_supports(isa) else {}
        bf16 = bool(info) and _x86.bf16_runs(isa)
        threads = _isa.max_threads()
        return [
            DeviceInfo(
                name=f"x86 {isa} ({threads} threads max)",
                kind="cpu",
                peak_gflops=PEAK_GFLOPS[isa],
                bandwidth_gbs=20.0,
                launch_us=1.0,
                extra={
                    "isa": isa,
                    "supported_isas": list(_isa.supported()) if _x86 else [],
                    "max_threads": threads,
                    "gemm_tile": f"{info.get('mr')}x{info.get('nr')}" if info else "",
                    # what precision="low" does here (precision.py): bf16 GEMMs, or nothing (fp32)
                    "low_precision": "bf16 GEMMs (VDPBF16PS)" if bf16 else _NO_BF16,
                    # False in a child forked after OpenMP ran here: its OpenMP loops take one thread
                    "openmp_usable": _x86.openmp_usable() if _x86 is not None else False,
                },
            )
        ]

    def kernels(self):
        from mnn_core.ops import all_schemas

        known = all_schemas()
        return {op: k.spec for op, k in KERNELS.items() if op in known}

    def tensor_layouts(self, candidates, ctx):
        """NC16 for the tensors between the kernels that take it (layouts.py; option x86.layouts)."""
        isa = _isa.choose(ctx.options)
        return _layouts.choose(candidates, ctx.options, isa) if _layouts.offered(ctx, isa) else {}

    def concat_in_place(self, out, parts, axis):
        """An NC16 Concat along the channels of inputs that fill whole blocks (but the last) is its
        inputs end to end at batch 1: they are written in place (layouts.py)."""
        return _layouts.concat_in_place(out, parts, axis)

    def fuse(self, offer, ctx):
        """A few ops placed here run as one (fuse.py)."""
        return _fuse.fusions(offer, ctx, _isa.choose(ctx.options))

    def tensor_nbytes(self, info, ctx=None):
        return _layouts.nbytes(info) if info.layout == _layouts.NC16 else info.nbytes

    def prepare(self, node, ins, outs, constants, ctx):
        isa = _isa.choose(ctx.options)
        _check_options(ctx.options)
        _layouts.enabled(ctx.options, isa)  # a bad x86.layouts fails here even with nothing to offer
        execution = KERNELS[node.op].impl(node, ins, outs, constants, ctx, isa)
        return CExecution(execution.capsule(), owner=execution, name=execution.name, packed=execution.packed)


def _check_options(options: dict) -> None:
    """A bad switch value is an error even where no op reads it."""
    from .ops_conv import _choice
    from .precision import setting

    for key in ("x86.winograd", "x86.direct", "x86.direct_oc", "x86.conv_t", "x86.stream"):
        _choice(options, key)
    setting(options)


@hookimpl
def mnn_register_backends(register):
    register(X86Backend())


@hookimpl
def mnn_register_passes(register):
    from .conv_bias import fold_conv_bias
    from .dense_ncw import transpose_dense
    from .hoist import hoist_step_projections
    from .stack_reduce import fold_stack_reduce

    register("x86.hoist_step_projections", hoist_step_projections)  # an unrolled loop's input projections
    # before fuse_activations: the activation after a folded bias then fuses into the Conv
    register("x86.fold_conv_bias", fold_conv_bias, after="fold_batchnorm")
    # a per-step dense layer on a channels-first sequence; before fuse_activations takes its MatMul's activation
    register("x86.transpose_dense", transpose_dense, after="fold_batchnorm")
    register("x86.fold_stack_reduce", fold_stack_reduce)  # torch.stack(...).max(dim): binary ops, no stack
