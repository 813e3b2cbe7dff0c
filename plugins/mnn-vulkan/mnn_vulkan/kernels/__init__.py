"""The Vulkan kernels: one op family per module, each registering its ops here.

A kernel is a KernelSpec (what it takes, as data, with a `supports` check
that names what it declines) and a `record(op, rec)` function that turns one
SegmentOp into dispatches on a Recorder. The API-free arithmetic (strides,
codes, parameter blocks, tiling) is mnn_core.backend.kit's, shared with mnn-metal and
mnn-opengl.
"""

from __future__ import annotations

from mnn_core.backend.kit.gpu_kernels import GpuKernelTable
from mnn_core.backend.kit.recorder import MAX_ELEMENTS


def _storage_limit() -> int:
    """The default device's largest storage-buffer binding (tensors above it cannot be bound)."""
    from ..device import choose

    try:
        return int(choose(None).props["max_storage_range"])
    except Exception:  # no device: availability() reports why; nothing is placed here then
        return 1 << 32


def _bindable(info) -> str | None:
    limit = _storage_limit()
    if info.nbytes > limit:
        return f"a tensor of {info.nbytes} bytes exceeds the device's {limit}-byte storage buffer range"
    return None


KERNELS = GpuKernelTable(MAX_ELEMENTS, _bindable)
register = KERNELS.register


from . import (  # noqa: E402,F401  (registration)
    add_norm,
    binary_t,
    conv,
    deconv,
    eltwise,
    fused,
    index,
    logic,
    matmul,
    ml,
    norm,
    pool,
    quant,
    reduce,
    resize,
    rnn,
    shape,
    split_t,
)
