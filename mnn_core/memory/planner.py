"""From tensor lifetimes to one arena per memory domain.

The session describes every tensor it needs memory for as a `TensorUse`:
its size and the steps that write and last read it. Tensors that share memory
are merged into one buffer first: an in-place op's output shares its input's
bytes (`alias_of`), and an input of a concatenation written in place sits at
a byte offset inside the concatenation's output (`alias_of` plus `at`). The
buffers are then placed by the compiled greedy-by-size placer.
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
    alias_of: str | None = None  # live inside this tensor's buffer (in-place op, concat written in place)
    at: int = 0  # byte offset inside alias_of's bytes


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
    # merge aliases into buffers: a buffer lives from its first writer to its last reader and
    # is as large as its furthest-reaching member
    by_key = {u.key: u for u in uses}
    placed: dict[str, tuple[str, int]] = {}  # key -> (root buffer, byte offset inside it)

    def locate(key: str) -> tuple[str, int]:
        chain, seen = [], set()  # walked iteratively: a long run of in-place ops must not hit the recursion limit
        while key not in placed and by_key[key].alias_of is not None:
            if key in seen:
                raise ValueError(f"memory plan: tensor {key!r} aliases itself through {chain}")
            chain.append(key)
            seen.add(key)
            key = by_key[key].alias_of
        root, at = placed.setdefault(key, (key, 0))
        for k in reversed(chain):
            at += by_key[k].at
            placed[k] = (root, at)
        return placed[chain[0]] if chain else (root, at)

    buffers: dict[str, list[int]] = {}
    for u in uses:
        root, at = locate(u.key)
        b = buffers.setdefault(root, [0, u.first, u.last])
        b[0] = max(b[0], at + u.nbytes)
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
    return ArenaPlan({u.key: by_buffer[placed[u.key][0]] + placed[u.key][1] for u in uses}, report)
