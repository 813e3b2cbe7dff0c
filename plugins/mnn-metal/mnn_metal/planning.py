"""Plan without a Mac: the Metal backend's resize, minus the device.

`PlanningBackend` is the Metal backend with a host-memory arena and no native
part: a Session on it runs the core's scheduler and memory planner and the
backend's op -> kernel recording, and keeps every segment's SegmentPlan (which
kernels, which arena byte ranges at which buffer indices, which parameter bytes,
which grids). Its executions refuse to run. Tests use it on Linux to check the
plans against the generated kernels' signatures; `python -m mnn_metal.planning
model.mnn` prints one.
"""

from __future__ import annotations

import contextlib

import numpy as np

from mnn_core.backend import Arena, Availability, DeviceInfo, PyExecution
from mnn_core.errors import BackendError

from . import MetalBackend, plan_segment, precision_low, use_fp16

NAME = "metal-plan"


class PlanArena(Arena):
    """Host bytes standing in for the device arena (the core uploads weights into it). With
    `half`, float32 arrays are stored as float16, as MetalArena's host copies do."""

    def __init__(self, nbytes: int, half: bool = False):
        super().__init__(nbytes)
        self.half = half
        self.data = np.zeros(nbytes, dtype=np.uint8)

    def _stored(self, dtype) -> np.dtype:
        return np.dtype(np.float16) if self.half and np.dtype(dtype) == np.float32 else np.dtype(dtype)

    def write(self, offset: int, array: np.ndarray) -> None:
        with np.errstate(over="ignore"):  # beyond float16's range: inf, as the C narrowing gives
            array = np.ascontiguousarray(array, dtype=self._stored(array.dtype))
        raw = array.view(np.uint8).reshape(-1)
        self.data[offset : offset + raw.size] = raw

    def read(self, offset: int, out: np.ndarray) -> None:
        stored = self._stored(out.dtype)
        out[...] = self.data[offset : offset + out.size * stored.itemsize].view(stored).reshape(out.shape)


class PlanningBackend(MetalBackend):
    name = NAME
    memory_domain = NAME
    priority = -1  # never chosen by "auto"

    def __init__(self):
        self.segments: list = []  # (ops, SegmentPlan) per prepared segment
        self.arenas: list = []

    def availability(self) -> Availability:
        return Availability(True)

    def devices(self) -> list[DeviceInfo]:
        return [
            DeviceInfo(
                "metal plan (no device)",
                kind="gpu",
                peak_gflops=2600.0,
                bandwidth_gbs=68.0,
                launch_us=10.0,
                extra=precision_low(),
            )
        ]

    def allocate_arena(self, nbytes: int, ctx=None):
        arena = PlanArena(nbytes, half=use_fp16(ctx))
        self.arenas.append(arena)
        return arena

    def prepare_segment(self, ops, arena, ctx):
        plan = plan_segment(ops, ctx, half=arena.half)
        self.segments.append((ops, plan))

        def refuse():
            raise BackendError("metal-plan only plans; run on macOS with backend='metal'")

        return PyExecution(refuse, name=f"{NAME}:{ops[0].node.name}..{ops[-1].node.name}")


@contextlib.contextmanager
def planning_backend():
    """A PlanningBackend registered under "metal-plan" for the duration of the block."""
    from mnn_core.backend import get_plugins

    plugins = get_plugins()
    backend = PlanningBackend()
    plugins.backends[NAME] = backend
    plugins.backend_plugin[NAME] = (
        next(r for r in plugins.records if "metal" in r.name)
        if any("metal" in r.name for r in plugins.records)
        else plugins.records[0]
    )
    try:
        yield backend
    finally:
        plugins.backends.pop(NAME, None)
        plugins.backend_plugin.pop(NAME, None)


def plan_graph(graph, precision: str = "normal"):
    """(the PlanningBackend holding the plans of `graph` placed on Metal alone, None), or (None, why
    Metal declined one of its ops)."""
    import mnn_core as mnn
    from mnn_core.errors import UnsupportedOpError

    with planning_backend() as backend:
        try:
            mnn.Session(graph, backend=NAME, fallback=False, optimize=False, precision=precision)
        except UnsupportedOpError as exc:
            return None, str(exc)
    return backend, None


def segment_refs(backend) -> dict:
    """Every value's TensorRef in the backend's planned segments, by name."""
    refs = {}
    for ops, _ in backend.segments:
        for op in ops:
            refs.update({r.name: r for r in op.inputs + op.outputs if r is not None})
    return refs


def describe(plan) -> str:
    lines = []
    for d in plan.dispatches:
        binds = " ".join(
            f"{i}:{b.buffer}+{b.offset}/{b.nbytes}{'w' if b.written else ''}" for i, b in enumerate(d.bindings)
        )
        lines.append(f"{d.op:24s} {d.function:12s} grid={d.grid} tg={d.threadgroup} spec={d.spec} {binds}")
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    import mnn_core as mnn

    parser = argparse.ArgumentParser(description="print the Metal dispatches a model would record")
    parser.add_argument("model")
    parser.add_argument("--precision", default="normal")
    parser.add_argument("--batch", type=int, default=1, help="size of every symbolic input dimension (default 1)")
    args = parser.parse_args(argv)
    graph = mnn.load(args.model)
    with planning_backend() as backend:
        sess = mnn.Session(graph, backend=NAME, precision=args.precision)
        if not backend.segments:  # symbolic input dims: plan for --batch
            sess.resize(
                {n: [d if isinstance(d, int) else args.batch for d in i.shape] for n, i in graph.inputs.items()}
            )
        print(sess.plan)
        for ops, plan in backend.segments:
            print(
                f"segment {ops[0].node.name}..{ops[-1].node.name}: {len(plan.dispatches)} dispatches, "
                f"{len(plan.constants)} constant bytes, {plan.scratch_bytes} scratch bytes, "
                f"{plan.precision} tensors"
                + (f", {plan.wide_bytes} bytes of float32 copies for {', '.join(plan.widened)}" if plan.widened else "")
            )
            print(describe(plan))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
