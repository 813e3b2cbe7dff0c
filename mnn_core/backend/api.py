"""What a backend is: capabilities and costs as data, plus prepare-time code.

A backend plugin registers one `Backend` object through the
`mnn_register_backends` hook. The core reads its `kernels` table once (no hook
call per op), asks `availability()` once, and at resize calls `prepare` for
each op placed on it. What `prepare` returns is an *execution*:

- `CExecution`: a PyCapsule holding an `mnn_execution*` (see
  `include/mnn_core/abi.h`) plus the Python object owning its state; the run
  loop calls it through a C function pointer without the GIL;
- `PyExecution`: a Python callable `fn(inputs, outputs)` writing into the
  output arrays; the run loop takes the GIL for it. Prototypes and the
  reference backend use these.

Memory: every backend names the memory *domain* its tensors live in. CPU
backends share "host", so a tensor passes between them without a copy; a GPU
backend has its own domain, gives the core an arena allocator for it, and the
scheduler inserts copies where a tensor crosses domains.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..graph.ir import Node, TensorInfo

if TYPE_CHECKING:
    from .fusion import FusionOffer

HOST = "host"


@dataclass(frozen=True)
class DeviceInfo:
    """One device a backend can run on, with the numbers of its roofline."""

    name: str
    kind: str = "cpu"  # cpu | gpu | npu | ...
    peak_gflops: float = 10.0  # per thread for CPUs
    bandwidth_gbs: float = 10.0
    launch_us: float = 1.0  # fixed cost of one kernel call
    memory_bytes: int = 0
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CostEstimate:
    run_ms: float
    prepare_ms: float = 0.0


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.available


#: supports(node, input_infos) -> True, or a short reason why not
SupportFn = Callable[[Node, Sequence[TensorInfo]], "bool | str"]
CostFn = Callable[[Node, Sequence[TensorInfo], Sequence[TensorInfo], DeviceInfo, float], CostEstimate]


@dataclass(frozen=True)
class KernelSpec:
    """What a backend can do for one op, as data."""

    op: str
    dtypes: tuple[str, ...] = ("float32",)
    layouts: tuple[str, ...] = ("plain",)
    inplace: bool = False
    supports: SupportFn | None = None
    cost: CostFn | None = None  # None: the core's roofline estimate
    efficiency: float = 1.0  # fraction of peak this kernel reaches, for the roofline

    def accepts(self, node: Node, ins: Sequence[TensorInfo]) -> bool | str:
        for info in ins:
            if info is not None and info.dtype not in self.dtypes:
                return f"dtype {info.dtype} not in {'/'.join(self.dtypes)}"
        if self.supports is not None:
            verdict = self.supports(node, ins)
            if verdict is not True:
                return verdict or "declined by the backend"
        return True


@dataclass(frozen=True)
class PrepareContext:
    """What a backend knows about the session when it prepares an op."""

    threads: int = 1
    precision: str = "normal"  # high | normal | low
    options: dict = field(default_factory=dict)


class PyExecution:
    """A prepared op run in Python: fn(inputs, outputs) fills the output arrays."""

    __slots__ = ("fn", "name")

    def __init__(self, fn: Callable[[list, list], None], name: str = "") -> None:
        self.fn = fn
        self.name = name


class CExecution:
    """A prepared op run in C: `capsule` holds an mnn_execution*, `owner` its state.

    `packed`: positions in node.inputs of constants the execution copied at prepare (packed
    weights, a bias) and never reads again, from its descriptor or otherwise. Their descriptors
    carry a NULL data pointer, and a session frees a constant held only in such copies
    (weights.py), so the process holds each weight once."""

    __slots__ = ("capsule", "owner", "name", "packed")

    def __init__(self, capsule: Any, owner: Any = None, name: str = "", packed: Sequence[int] = ()) -> None:
        self.capsule = capsule
        self.owner = owner
        self.name = name
        self.packed = frozenset(int(i) for i in packed)


@dataclass(frozen=True)
class TensorRef:
    """A tensor of a segment: its place in the backend's arena, or a host constant."""

    name: str
    info: TensorInfo
    offset: int  # byte offset in the backend's arena; -1 for a constant kept in host memory
    constant: np.ndarray | None = None


@dataclass(frozen=True)
class LayoutCandidate:
    """A tensor that never leaves one backend in a plan, offered to `Backend.tensor_layouts`:
    its producer and every consumer (node, input index) run there, and it is not a graph
    output, a graph input, a constant or the input of a view op the core elides."""

    value: str
    info: TensorInfo
    producer: Node
    consumers: tuple  # (Node, input index) pairs
    # what a backend needs to judge the producer's and consumers' other operands (a convolution's
    # weight: its kernel size, whether it is known at prepare): every value's TensorInfo in the
    # plan, and the names of the graph's constants. Shared by all candidates of one plan.
    infos: Mapping[str, TensorInfo] = field(default_factory=dict, hash=False, compare=False)
    constants: frozenset = field(default=frozenset(), hash=False, compare=False)


@dataclass
class SegmentOp:
    """One op of a segment handed to `Backend.prepare_segment`."""

    node: Node
    inputs: list  # TensorRef, or None for an absent optional input
    outputs: list
    constants: dict


class Arena:
    """Memory of one domain, allocated once per plan.

    The host arena is a numpy byte buffer. A device backend subclasses this:
    `handle` goes into `mnn_tensor.data` and tensors are `byte_offset`s in it.
    """

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes

    handle: int = 0

    def write(self, offset: int, array: np.ndarray) -> None:
        raise NotImplementedError

    def read(self, offset: int, out: np.ndarray) -> None:
        raise NotImplementedError

    def view(self, offset: int, info: TensorInfo) -> np.ndarray:
        """A numpy view of a tensor, for host-visible device memory (unified or
        mapped); lets Python executions run on such a domain."""
        raise NotImplementedError(f"{type(self).__name__} memory is not host-visible")

    def copy_execution(self, to_device: bool, offset: int, host: np.ndarray) -> CExecution | None:
        """Optional: a run's copy of `host` (a view in the host arena, or the caller's array where the
        input moves) to the tensor at `offset` (to_device), or back, as a C execution whose input
        and output descriptors are the host and device tensors; its capsule is taken once every
        step is prepared. An upload should set MNN_EXEC_INPUTS_MAY_MOVE. None: the core copies
        with write/read."""
        return None


class Backend:
    """Base class for backends. Subclass and fill in what you support.

    Required: `name`, `kernels()`, `prepare()`. A backend whose tensors are not
    in host memory also sets `memory_domain` and implements `allocate_arena`.
    """

    name: str = "unnamed"
    memory_domain: str = HOST
    #: tried first by "auto" when costs tie; the reference backend is lowest
    priority: int = 0
    #: the Session options this backend reads, each "<name>.<key>"; declared, a Session given
    #: another "<name>.*" key refuses it, naming these (None: not declared, nothing checked)
    options: tuple[str, ...] | None = None

    def availability(self) -> Availability:
        return Availability(True)

    def devices(self) -> list[DeviceInfo]:
        return [DeviceInfo(name=self.name)]

    def kernels(self) -> dict[str, KernelSpec]:
        raise NotImplementedError

    def prepare(
        self,
        node: Node,
        ins: Sequence[TensorInfo],
        outs: Sequence[TensorInfo],
        constants: dict[str, np.ndarray],
        ctx: PrepareContext,
    ) -> CExecution | PyExecution:
        """Prepare one op for fixed shapes. `constants` holds the node's constant
        inputs (weights) by input name, for pre-packing; they may also be read
        from the arena at run time."""
        raise NotImplementedError

    #: Optional: prepare_segment(ops: list[SegmentOp], arena, ctx) -> execution for a whole
    #: run of consecutive ops placed here (a GPU backend records one command buffer and
    #: submits it once per run). A segment's PyExecution fn takes no arguments.
    prepare_segment = None

    def allocate_arena(self, nbytes: int, ctx: PrepareContext | None = None) -> Arena:
        """The memory of one plan. `ctx` is the session's PrepareContext (its device option,
        its precision); a backend whose method takes only `nbytes` is called without it."""
        raise NotImplementedError(f"backend {self.name} keeps tensors outside host memory but has no allocator")

    def memory_domain_for(self, ctx: PrepareContext) -> str:
        """The memory domain of this backend's tensors in a session with this context: `memory_domain`,
        unless the backend keeps them elsewhere in some sessions (mnn-arm keeps float activations in
        half precision, in its own domain, under precision="low"; in host memory otherwise)."""
        return self.memory_domain

    def tensor_layouts(self, candidates: Sequence[LayoutCandidate], ctx: PrepareContext) -> dict[str, int]:
        """Layouts for tensors that stay inside this backend: {value: code}, code > 0 and private to
        this backend (a channel-blocked NC16HW16, say). The core then sizes each such tensor with
        `tensor_nbytes(info)`, hands its producer and consumers TensorInfos carrying the code (and the
        C ABI descriptors `mnn_tensor.layout`), and never aliases it with a tensor of another layout.
        Everything that enters or leaves the backend stays dense (code 0), so conversions happen inside
        the kernels at the backend's edges, where they are cheapest. Default: none."""
        return {}

    def concat_in_place(self, out: TensorInfo, parts: Sequence[TensorInfo], axis: int) -> bool:
        """Whether a Concat along `axis` of tensors all in this backend's private layout `out.layout`
        (tensor_layouts chose it for its inputs and output) may be elided: its inputs laid end to end,
        each `tensor_nbytes` long, are then its output in that layout, so their producers write them
        where they belong. The core asks only where every dim before `axis` is 1 and the sizes add
        up. Default: False (the Concat runs as an op)."""
        return False

    def fuse(self, offer: FusionOffer, ctx: PrepareContext) -> Sequence:
        """Ops of this backend run as one: given a `FusionOffer` (backend/fusion.py: the ops placed here in one
        plan, who reads each value, every value's TensorInfo), return `Fusion`s, each a Node of an op
        this backend's `prepare` knows that replaces some of them. The core checks each fusion is
        sound and builds the plan on the fused ops. Default: none."""
        return ()

    def tensor_nbytes(self, info: TensorInfo, ctx: PrepareContext | None = None) -> int:
        """Bytes one tensor takes in this backend's memory (padded layouts may take more;
        half-precision storage under `ctx.precision == "low"` less). As with allocate_arena,
        `ctx` is passed only to a method that takes it."""
        return info.nbytes


def takes_context(method: Callable) -> bool:
    """Whether a backend's allocate_arena / tensor_nbytes accepts the PrepareContext
    (a second positional parameter, or `ctx`): plugins written before it existed take one."""
    import inspect

    try:
        params = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in params) or any(p.name == "ctx" for p in params):
        return True
    return len([p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 2
