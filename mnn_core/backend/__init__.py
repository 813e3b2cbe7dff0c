"""The contract backends build against, and all a backend plugin takes from the core besides the
graph IR (mnn_core.graph) and the op schemas (mnn_core.ops); tests/test_import_rule.py holds every
plugin to that, and docs/ARCHITECTURE.md draws it.

- `api`: Backend, KernelSpec, CostEstimate, DeviceInfo, the executions and the arena (what a
  backend says as data, and what its prepare returns);
- `hookspecs`: the hooks a plugin implements, marked with `hookimpl`;
- `kernels`: the one kernel table (op -> KernelSpec + the backend's own function);
- `fusion`: what `Backend.fuse` is offered and answers;
- `plugins`, `status`: plugin discovery, and the table behind `mnnx backends`;
- `build`: where a compiled backend finds the C ABI header and its Cython mirror when it builds
  (`get_include`, `get_cython_include`, as numpy.get_include());
- `kit`: what every backend repeats, written once (activation codes, broadcast plans, strides,
  the GPU backends' parameter blocks and recorder bookkeeping).

Importing it loads neither the session nor the compiled memory planner and run loop.
"""

from __future__ import annotations

from .api import (
    HOST,
    Arena,
    Availability,
    Backend,
    CExecution,
    CostEstimate,
    CostFn,
    DeviceInfo,
    KernelSpec,
    LayoutCandidate,
    PrepareContext,
    PyExecution,
    SegmentOp,
    SupportFn,
    TensorRef,
    takes_context,
)
from .build import get_cython_include, get_include
from .fusion import Fusion, FusionOffer
from .hookspecs import hookimpl, hookspec
from .kernels import Kernel, KernelTable
from .plugins import get_plugins

__all__ = [
    "HOST",
    "Arena",
    "Availability",
    "Backend",
    "CExecution",
    "CostEstimate",
    "CostFn",
    "DeviceInfo",
    "Fusion",
    "FusionOffer",
    "Kernel",
    "KernelSpec",
    "KernelTable",
    "LayoutCandidate",
    "PrepareContext",
    "PyExecution",
    "SegmentOp",
    "SupportFn",
    "TensorRef",
    "get_cython_include",
    "get_include",
    "get_plugins",
    "hookimpl",
    "hookspec",
    "takes_context",
]
