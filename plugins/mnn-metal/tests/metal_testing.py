"""Checks a Metal segment plan against the generated kernels' signatures (shared by the tests)."""

from __future__ import annotations

import os
import struct

import pytest
from mnn_metal import msl
from mnn_metal.recorder import ARENA, CONSTANTS, SCRATCH, WIDE, tensor_bytes
from mnn_metal.signature import signature

#: the repository's examples/ (build_models.py makes the CNNs the plan tests run)
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples")
have_examples = pytest.mark.skipif(
    not os.path.exists(os.path.join(EXAMPLES, "build_models.py")),
    reason="examples/build_models.py is not here (not a source checkout)",
)

#: kernels that run one thread per output element on a 2-D grid (common.glsl's flat_index());
#: the first parameter word is that element count
FLAT = {
    k + v
    for k in ("binary", "unary", "conv_dw", "pool2d", "copy", "pad", "widen", "narrow")
    for v in ("", "_h", "_hf")
    if k + v in msl.names()
}
#: tiled GEMM kernels: grid (N / BN, M / BM, batch), BM = TY * TM, BN = TX * TN
GEMM = {"gemm", "gemm_h", "gemm_hf"}
#: the element types a kernel's buffer may have in MSL for a tensor stored as each dtype
#: (copy moves 32-bit words as uint, copy_h 16-bit ones as half)
ELEMENT = {"float32": ("float", "uint"), "int32": ("int", "uint"), "int64": ("uint",), "float16": ("half",)}


def check_dispatch(d, plan, arena_nbytes: int) -> None:
    """Raise AssertionError naming the dispatch when the host would set something the
    kernel does not take, or leave out something it does."""
    sig = signature(d.kernel)
    where = f"{d.op}: {d.kernel}"
    assert list(range(len(d.bindings))) == sig.tensor_indices, (
        f"{where}: host binds buffers 0..{len(d.bindings) - 1}, the kernel takes {sig.tensor_indices}"
    )
    limits = {ARENA: arena_nbytes, CONSTANTS: len(plan.constants), SCRATCH: plan.scratch_bytes, WIDE: plan.wide_bytes}
    for i, b in enumerate(d.bindings):
        assert b.written == sig.buffers[i].writable, (
            f"{where}: buffer({i}) is {'written' if b.written else 'read'} by the plan, {sig.buffers[i].space} in MSL"
        )
        assert b.offset % 4 == 0, f"{where}: buffer({i}) at an offset of {b.offset} bytes (not 4-aligned)"
        limit = limits[b.buffer]
        assert 0 <= b.offset and b.offset + b.nbytes <= limit, (
            f"{where}: buffer({i}) bytes [{b.offset}, {b.offset + b.nbytes}) outside its {b.buffer} of {limit}"
        )
    assert len(d.params) == sig.params_size, (
        f"{where}: {len(d.params)} parameter bytes, the kernel's struct has {sig.params_size}"
    )
    given = len(d.threadgroup) + len(d.spec)
    for cid in list(sig.function_constants) + list(sig.macros):
        assert cid < given, f"{where}: constant {cid} is not set (threadgroup + spec give {given})"
    threads = d.threadgroup[0] * d.threadgroup[1] * d.threadgroup[2]
    assert 1 <= threads <= 1024, f"{where}: {threads} threads per threadgroup"
    assert all(g >= 1 for g in d.grid), f"{where}: empty grid {d.grid}"
    if d.kernel in FLAT:
        total = struct.unpack_from("<I", d.params)[0]
        covered = d.grid[0] * d.grid[1] * d.grid[2] * threads
        assert covered >= total > covered - d.grid[0] * threads, (
            f"{where}: grid {d.grid} x {d.threadgroup} covers {covered} threads for {total} elements"
        )
    if d.kernel in GEMM:
        m, n = struct.unpack_from("<II", d.params)
        bm, bn = d.threadgroup[1] * d.spec[0], d.threadgroup[0] * d.spec[1]
        assert d.grid[0] == -(-n // bn) and d.grid[1] == -(-m // bm), (
            f"{where}: grid {d.grid} for {m}x{n} outputs in {bm}x{bn} blocks"
        )


def _split_k_partial(d, i: int) -> bool:
    """conv2d's buffer(4) holds split-K's float32 partial sums; with one K slice (all the
    Metal planner records) it aliases the output and the kernel never touches it."""
    return d.kernel.startswith("conv2d") and i == 4 and d.bindings[4] == d.bindings[3]


def check_element_types(plan, refs) -> None:
    """Every arena binding is exactly one of the segment's tensors (`refs`: TensorRefs), in
    the bytes the arena gives it, and the kernel's buffer has that tensor's stored element
    type: half for a float tensor of a float16 plan, float otherwise (and words for ints);
    the float32 copies of float16 tensors (WIDE) are bound as float."""
    for d in plan.dispatches:
        sig = signature(d.kernel)
        for i, b in enumerate(d.bindings):
            where = f"{d.op}: {d.kernel} buffer({i})"
            element = sig.buffers[i].element
            if b.buffer == WIDE:
                assert element == "float", f"{where}: a float32 copy bound as {element}"
                continue
            if b.buffer != ARENA or _split_k_partial(d, i):
                continue
            here = [r for r in refs if r.offset == b.offset and tensor_bytes(r.info, plan.half) == b.nbytes]
            assert here, f"{where}: bytes [{b.offset}, {b.offset + b.nbytes}) are no tensor of the segment"
            for r in here:
                stored = "float16" if plan.half and str(r.info.dtype) == "float32" else str(r.info.dtype)
                assert element in ELEMENT[stored], (
                    f"{where}: {r.name} is stored as {stored} ({plan.precision} plan), the kernel reads {element}"
                )


def check_plan(plan, arena_nbytes: int, refs=None) -> None:
    for d in plan.dispatches:
        check_dispatch(d, plan, arena_nbytes)
    if refs is not None:
        check_element_types(plan, refs)
