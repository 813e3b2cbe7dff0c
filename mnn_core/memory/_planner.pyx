"""Arena placement: give every buffer an offset so no two live ones overlap.

Greedy by size (as in TFLite's arena planner): place buffers largest first;
each goes into the smallest gap, among buffers whose lifetimes overlap its
own, that fits it, or above them all. On chains and most CNNs this lands on
or near the lower bound (the largest total size alive at one step).
"""

import numpy as np

cimport numpy as cnp

cnp.import_array()


def place(sizes, first, last, long long alignment=64):
    """Offsets (aligned) and the arena size for buffers with [first, last] lifetimes."""
    cdef Py_ssize_t n = len(sizes)
    cdef cnp.int64_t[:] size = np.asarray(sizes, dtype=np.int64)
    cdef cnp.int64_t[:] start = np.asarray(first, dtype=np.int64)
    cdef cnp.int64_t[:] end = np.asarray(last, dtype=np.int64)
    offsets_arr = np.full(n, -1, dtype=np.int64)
    cdef cnp.int64_t[:] offset = offsets_arr
    # largest first; among equal sizes, the earlier-born first (stable and repeatable)
    order = sorted(range(n), key=lambda i: (-sizes[i], first[i], i))
    cdef list placed = []  # indices already placed, kept sorted by offset
    cdef long long total = 0, prev_end, best, best_gap, gap, need, off
    cdef Py_ssize_t i, j
    for i in order:
        need = (size[i] + alignment - 1) // alignment * alignment
        prev_end = 0
        best = -1
        best_gap = -1
        for j in placed:
            if start[j] > end[i] or start[i] > end[j]:
                continue  # never alive together: may share memory
            gap = offset[j] - prev_end
            if gap >= need and (best_gap < 0 or gap < best_gap):
                best, best_gap = prev_end, gap
            off = offset[j] + (size[j] + alignment - 1) // alignment * alignment
            if off > prev_end:
                prev_end = off
        offset[i] = best if best >= 0 else prev_end
        if offset[i] + need > total:
            total = offset[i] + need
        # keep `placed` sorted by offset for the gap scan
        j = 0
        while j < len(placed) and offset[placed[j]] <= offset[i]:
            j += 1
        placed.insert(j, i)
    return offsets_arr, total


def lower_bound(sizes, first, last, long long alignment=64):
    """The largest total (aligned) size of buffers alive at one step."""
    events = []
    for i in range(len(sizes)):
        need = (sizes[i] + alignment - 1) // alignment * alignment
        events.append((first[i], need))
        events.append((last[i] + 1, -need))
    events.sort(key=lambda e: (e[0], e[1]))  # frees before allocations at the same step
    cdef long long live = 0, peak = 0
    for _, delta in events:
        live += delta
        if live > peak:
            peak = live
    return peak
