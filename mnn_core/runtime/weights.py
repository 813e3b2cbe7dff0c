"""Weights a session holds only in its backends' own copies, freed from host memory.

Once a plan is built, a constant that every kernel reading it copied at prepare is not needed in
the session's graph any more: a C execution names such inputs in CExecution.packed (x86 packs its
conv and GEMM weights into panels and Winograd matrices), and the core's upload of a constant into
a device arena counts too; whole segments (prepare_segment) keep what they were handed. The
session puts a placeholder of the same shape and dtype in its place (a read-only view of one zero:
shape inference and the planner's "is it a constant" still work) and the array is freed.
ResNet-18's folded weights are 45 MB that the process no longer holds twice.

A plan for another input shape needs the values again. They are derived afresh from the model
the session was given (the Graph it holds, or the file read again, then the same passes) and
checked against the CRC-32 of the bytes released, so a model changed since is a clear error, not
a silent change of weights. Session(release_weights=False) keeps every constant instead.

A constant that is a read-only map of a file (an LLM checkpoint's weights: mnn_core/llm/weights.py)
stays: keeping it costs nothing but the pages packing read, and those are handed back instead
(madvise), so the next plan reads them again from the file, not from a re-derived model.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
from collections.abc import Callable

import numpy as np

from ..backend.kit.weights import checksum
from ..errors import MnnError
from ..graph.ir import Graph

#: smaller constants stay: freeing them is not worth a check and a re-derivation
MIN_BYTES = 64 * 1024


def placeholder(arr: np.ndarray) -> np.ndarray:
    """A read-only array of arr's shape and dtype that holds one element."""
    return np.broadcast_to(np.zeros((), arr.dtype), arr.shape)


class ReleasedWeights:
    """The constants a session freed after packing, and how to get them back."""

    def __init__(self, model: Graph | str | os.PathLike, derive: Callable[[Graph], Graph]):
        """model: what the session was given (a Graph is kept; a path is read again when needed);
        derive: the session's passes, turning that model into the session's graph."""
        self._model = model if isinstance(model, Graph) else os.fspath(model)
        self._derive = derive
        self._crcs: dict[str, int] = {}  # released constant -> CRC-32 of its bytes

    def __len__(self) -> int:
        return len(self._crcs)

    def release(self, graph: Graph, name: str) -> bool:
        """Replace this constant of the session's graph by a placeholder; False where it stays (a
        small one, or an array the model itself holds: freeing it would free nothing)."""
        arr = np.asarray(graph.initializers[name])
        if drop_mapped_pages(arr):
            return False
        model_arrays = self._model.initializers if isinstance(self._model, Graph) else {}
        if name in self._crcs or arr.nbytes < MIN_BYTES or arr.dtype.hasobject or model_arrays.get(name) is arr:
            return False
        self._crcs[name] = checksum(arr)
        graph.initializers[name] = placeholder(arr)
        return True

    def restore(self, graph: Graph) -> None:
        """Put the released constants back into the session's graph, derived afresh."""
        if not self._crcs:
            return
        from .loader import load

        given = isinstance(self._model, Graph)
        source = "the model" if given else f"file {self._model}"
        hint = (
            "create a new Session, or pass release_weights=False to keep the weights in the session "
            "(they are freed after packing)"
        )
        try:
            fresh = self._derive(self._model if given else load(self._model))
        except (MnnError, OSError) as exc:
            raise MnnError(
                f"cannot read the weights again from {source} to plan a new input shape: {exc}; {hint}"
            ) from exc
        released = list(self._crcs.items())  # (the session's lock keeps releases out meanwhile)
        for name, crc in released:
            arr, held = fresh.initializers.get(name), graph.initializers[name]
            same = arr is not None and np.shape(arr) == held.shape and np.asarray(arr).dtype == held.dtype
            if not same or checksum(arr) != crc:
                raise MnnError(
                    f"constant {name!r} of {source} changed since this session was created, so it "
                    f"cannot plan a new input shape with the weights it was made with; {hint}"
                )
        for name, _ in released:
            graph.initializers[name] = np.asarray(fresh.initializers[name])
            del self._crcs[name]


def _file_map(arr: np.ndarray) -> mmap.mmap | None:
    """The read-only file mapping under `arr` (np.memmap of mode "r"), or None."""
    while arr is not None:
        mm = getattr(arr, "_mmap", None)
        if isinstance(mm, mmap.mmap):
            return mm if getattr(arr, "mode", None) == "r" else None
        arr = arr.base if isinstance(arr, np.ndarray) else None
    return None


def drop_mapped_pages(arr: np.ndarray) -> bool:
    """Hand back the resident pages of an array that maps a file read-only (they are the file's: a
    later read faults them in again); False where `arr` is not such a map (anonymous memory: dropping
    its pages would zero it)."""
    mm = _file_map(arr)
    if mm is None or not hasattr(mm, "madvise") or arr.nbytes == 0:
        return False
    base = np.frombuffer(mm, np.uint8).ctypes.data
    lo = (arr.ctypes.data - base) // mmap.PAGESIZE * mmap.PAGESIZE
    hi = min(len(mm), arr.ctypes.data - base + arr.nbytes)
    mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
    return True


def _libc_trim():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: its allocator returns memory its own way
        return None


_malloc_trim = _libc_trim()


def give_back_freed() -> None:
    """Return freed heap pages to the system. Weights of a few MB come from glibc's heap, not from
    mmap, and free() leaves those pages resident until the heap's top is free: without this, a
    session's memory would not shrink when its weights are released."""
    if _malloc_trim is not None:
        _malloc_trim(0)
