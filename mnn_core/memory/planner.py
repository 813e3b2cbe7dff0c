"""From tensor lifetimes to one arena per memory domain.

The session describes every tensor it needs memory for as a `TensorUse`:
its size and the steps that write and last read it. Tensors that an in-place
op may overwrite are merged into one buffer first (`alias_of`); the buffers
are then placed by the compiled greedy-by-size placer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._planner import lower_bound, place

ALIGNMENT = 64  # bytes: a cache line, and enough for AVX-512 loads


@dataclass
class TensorUse:
    key: str
    nbytes: int
    first: int  # step that writes it (-1: written before the run starts)
    last: int  # last step that reads it (n_steps: read after the run ends)
    alias_of: str | None = None  # share this tensor's buffer (in-place op)


@dataclass(frozen=True)
class MemoryReport:
    """Bytes of one domain's arena, against the naive sum and the lower bound."""

    domain: str
    arena_bytes: int
    naive_bytes: int
    lower_bound_bytes: int
    tensors: int

    def __str__(self) -> str:
        mib = 1 << 20
        return (
            f"{self.domain}: arena {self.arena_bytes / mib:.2f} MiB for {self.tensors} tensors "
            f"(naive {self.naive_bytes / mib:.2f} MiB, lower bound {self.lower_bound_bytes / mib:.2f} MiB)"
        )


@dataclass
class ArenaPlan:
    offsets: dict[str, int]
    report: MemoryReport


def plan_arena(domain: str, uses: list[TensorUse]) -> ArenaPlan:
    # merge aliases into buffers: a buffer lives from its first writer to its last reader
    root: dict[str, str] = {}
    for u in uses:
        r = u.alias_of
        while r is not None and root.get(r, r) != r:
            r = root[r]
        root[u.key] = r if r is not None else u.key
    buffers: dict[str, list[int]] = {}
    for u in uses:
        b = buffers.setdefault(root[u.key], [0, u.first, u.last])
        b[0] = max(b[0], u.nbytes)
        b[1] = min(b[1], u.first)
        b[2] = max(b[2], u.last)
    names = list(buffers)
    sizes = [buffers[k][0] for k in names]
    first = [buffers[k][1] for k in names]
    last = [buffers[k][2] for k in names]
    offsets, total = place(sizes, first, last, ALIGNMENT)
    by_buffer = dict(zip(names, (int(o) for o in offsets)))
    report = MemoryReport(
        domain=domain,
        arena_bytes=int(total),
        naive_bytes=sum(u.nbytes for u in uses),
        lower_bound_bytes=lower_bound(sizes, first, last, ALIGNMENT),
        tensors=len(uses),
    )
    return ArenaPlan({u.key: by_buffer[root[u.key]] for u in uses}, report)
