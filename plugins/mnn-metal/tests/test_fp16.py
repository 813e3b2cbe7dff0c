"""precision="low": the Metal planner follows mnn-vulkan's float16 arena.

Under precision="low" mnn-vulkan stores every float tensor of its arena as
float16 (2 bytes an element), runs the *_h shaders on it, moves float copies as
16-bit elements (copy_h), widens and narrows around ops without float16 shaders,
and narrows / widens host copies. The Metal kernels are those shaders, so the
Metal plan must do the same: checked here against the generated MSL. The
comparison with mnn-vulkan itself (its tables, what its recorder records for the
same graphs, the plans run on its device) is the repository's cross-check,
tests/test_metal_plans_on_vulkan.py: this plugin's tests need no other plugin.
"""

from __future__ import annotations

import numpy as np
from metal_testing import check_plan
from mnn_metal import msl, use_fp16
from mnn_metal.planning import NAME, planning_backend
from mnn_metal.recorder import FP16_FMA_OPTION, HALF_FMA_KERNELS, HALF_KERNELS

import mnn_core as mnn
from mnn_core.backend import PrepareContext
from mnn_core.graph import TensorInfo
from mnn_core.plugins import get_plugins


def _metal_session(graph, precision, options=None, optimize=False):
    with planning_backend() as backend:
        sess = mnn.Session(graph, backend=NAME, fallback=False, optimize=optimize, precision=precision, options=options)
    return sess, backend


def test_half_kernels_are_the_generated_float16_variants():
    names = set(msl.names())
    assert HALF_KERNELS == {n[:-2] for n in names if n.endswith("_h")} - {"copy"}  # copy_h: chosen by copy()
    assert HALF_FMA_KERNELS == {n[:-3] for n in names if n.endswith("_hf")}
    assert {"widen", "narrow", "copy_h"} <= names


def test_float_tensors_take_two_bytes_an_element_under_low_precision(monkeypatch):
    monkeypatch.delenv("MNN_METAL_FP16", raising=False)
    metal = get_plugins().backends["metal"]
    low, normal = PrepareContext(precision="low"), PrepareContext(precision="normal")
    f, odd, i64 = TensorInfo((2, 3, 5), "float32"), TensorInfo((3,), "float32"), TensorInfo((4,), "int64")
    assert metal.tensor_nbytes(f, low) == 60 and metal.tensor_nbytes(f, normal) == 120
    assert metal.tensor_nbytes(odd, low) == 8  # whole 32-bit words, as the kernels write them
    assert metal.tensor_nbytes(i64, low) == 32 == metal.tensor_nbytes(i64, normal)
    assert metal.tensor_nbytes(f) == 120  # a core that passes no context: float32
    assert use_fp16(low) and not use_fp16(normal) and not use_fp16(PrepareContext(precision="high"))
    with planning_backend() as plan:
        assert plan.devices()[0].extra["precision_low"] == "float16 storage and arithmetic"
    monkeypatch.setenv("MNN_METAL_FP16", "0")
    assert not use_fp16(low) and metal.tensor_nbytes(f, low) == 120
    with planning_backend() as plan:
        assert plan.devices()[0].extra["precision_low"].startswith("float32")


def _conv_relu_pad_graph(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 8, 6, 6))
    w = b.const(rng.uniform(-1, 1, (8, 8, 3, 3)).astype("float32"))
    y = b.Conv(x, w, pads=[1, 1, 1, 1], activation="relu")
    c = b.Concat(y, x, axis=1)  # copy_h: float16 elements moved as they are
    p = b.Pad(c, pads=[0, 0, 1, 0, 0, 0, 0, 2], value=0.5)  # pad has no float16 variant: widened
    b.output(b.Add(p, p), "y")
    return b.build()


def test_low_precision_halves_the_arena_and_widens_only_ops_without_float16_kernels(monkeypatch):
    monkeypatch.delenv("MNN_METAL_FP16", raising=False)
    graph = _conv_relu_pad_graph(np.random.default_rng(0))
    low, lb = _metal_session(graph, "low")
    normal, nb = _metal_session(graph, "normal")
    (ops, plan), arena = lb.segments[0], lb.arenas[-1]
    refs = [r for op in ops for r in op.inputs + op.outputs if r is not None]
    check_plan(plan, arena.nbytes, refs)
    assert plan.half and arena.half and plan.precision == "float16"
    assert [d.kernel for d in plan.dispatches] == ["conv2d_h", "copy_h", "copy_h", "widen", "pad", "narrow", "binary_h"]
    assert plan.widened == (ops[2].node.name,) and plan.wide_bytes >= 4 * ops[2].outputs[0].info.size
    assert low.memory[NAME].arena_bytes * 2 == normal.memory[NAME].arena_bytes
    assert [d.kernel for d in nb.segments[0][1].dispatches] == ["conv2d", "copy", "copy", "pad", "binary"]
    assert not nb.segments[0][1].half and nb.segments[0][1].wide_bytes == 0
    monkeypatch.setenv("MNN_METAL_FP16", "0")
    _, off = _metal_session(graph, "low")
    assert [d.kernel for d in off.segments[0][1].dispatches] == ["conv2d", "copy", "copy", "pad", "binary"]


def test_host_copies_of_a_float16_arena_narrow_and_widen():
    from mnn_metal.planning import PlanArena

    arena = PlanArena(64, half=True)
    x = np.array([1.0, -2.5, 65504.0, 1e-8, 0.1, np.inf], dtype=np.float32)
    arena.write(8, x)
    assert arena.data[8:20].view(np.float16).tolist() == x.astype(np.float16).tolist()
    out = np.empty(6, np.float32)
    arena.read(8, out)
    assert out.tolist() == x.astype(np.float16).astype(np.float32).tolist()
    ints = np.array([1, -2], dtype=np.int64)  # only float32 is narrowed
    arena.write(32, ints)
    got = np.empty(2, np.int64)
    arena.read(32, got)
    assert got.tolist() == [1, -2]


def test_fp16_fma_option_plans_the_hf_kernels():
    graph = _conv_relu_pad_graph(np.random.default_rng(0))
    _, backend = _metal_session(graph, "low", {FP16_FMA_OPTION: True})
    assert backend.segments[0][1].dispatches[0].kernel == "conv2d_hf"
    _, backend = _metal_session(graph, "normal", {FP16_FMA_OPTION: True})  # float32 tensors: no half kernels
    assert backend.segments[0][1].dispatches[0].kernel == "conv2d"
