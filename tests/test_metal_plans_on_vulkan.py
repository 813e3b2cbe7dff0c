"""mnn-metal's plans run on mnn-vulkan: the cross-check of two plugins, kept outside both.

The Metal kernels are the core kit's shaders translated to MSL, so a Metal segment plan's
bindings, parameter bytes and grids drive the very SPIR-V mnn-vulkan runs. Where mnn-vulkan
has a device (lavapipe in CI) these tests run Metal plans on it and compare with the reference
backend, and compare the kernels, float16 choices and arena bytes the two recorders choose.
mnn-metal's own tests (plugins/mnn-metal/tests) neither import nor read mnn-vulkan; these skip
unless both plugins are installed (tox -e metal installs both).
"""

from __future__ import annotations

import collections
import os
import sys

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend.plugins import get_plugins
from mnn_core.testing.conformance import conformance_cases

pytest.importorskip("mnn_metal", reason="mnn-metal is not installed")
pytest.importorskip("mnn_vulkan", reason="mnn-vulkan is not installed")

from mnn_metal.kernels import KERNELS  # noqa: E402
from mnn_metal.planning import NAME, plan_graph, planning_backend, segment_refs  # noqa: E402
from mnn_metal.recorder import (  # noqa: E402
    ARENA,
    CONSTANTS,
    FP16_FMA_OPTION,
    HALF_FMA_KERNELS,
    HALF_KERNELS,
    HALF_OPS,
    SCRATCH,
    WIDE,
)

#: the repository's examples/ (build_models.py makes the CNNs)
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
have_examples = pytest.mark.skipif(
    not os.path.exists(os.path.join(EXAMPLES, "build_models.py")),
    reason="examples/build_models.py is not here (not a source checkout)",
)


def vulkan_device():
    """mnn-vulkan's default device when it is installed and available (lavapipe in CI), else None."""
    try:
        import mnn_vulkan
        from mnn_vulkan import device as vk_device
    except ImportError:
        return None
    if not mnn_vulkan.VulkanBackend().availability():
        return None
    return vk_device.choose(None)


def run_plan_on_vulkan(dev, plan, arena, feeds: dict, inputs: dict, outputs: dict) -> dict:
    """Execute a Metal SegmentPlan with mnn-vulkan's runtime: the Metal kernels are these
    shaders translated, so the plan's bindings, parameter bytes and grids drive them
    unchanged; a float16 plan's float inputs and outputs are narrowed and widened on the way,
    as MetalArena's host copies do. `inputs` / `outputs`: value name -> TensorRef in the arena."""
    import numpy as np
    from mnn_vulkan import _vulkan

    def halved(array) -> bool:  # float32 tensors are float16 in the arena of a float16 plan
        return plan.half and array.dtype == np.float32

    buf = _vulkan.Buffer(dev.context, arena.nbytes + 256, dev.host_shared)
    buf.write(0, arena.data)  # the weights the core uploaded (PlanArena narrowed them for a float16 plan)
    for name, value in feeds.items():
        value = np.ascontiguousarray(value)
        buf.write(inputs[name].offset, value, halved(value))
    extra = {ARENA: buf, CONSTANTS: None, SCRATCH: None, WIDE: None}
    if plan.constants:
        extra[CONSTANTS] = _vulkan.Buffer(dev.context, len(plan.constants), dev.host_shared)
        extra[CONSTANTS].write(0, np.frombuffer(plan.constants, dtype=np.uint8))
    if plan.scratch_bytes:
        extra[SCRATCH] = _vulkan.Buffer(dev.context, plan.scratch_bytes, False)
    if plan.wide_bytes:
        extra[WIDE] = _vulkan.Buffer(dev.context, plan.wide_bytes, False)
    program = _vulkan.Program(dev.context)
    for d in plan.dispatches:
        pipe = dev.pipeline(d.kernel, len(d.bindings), tuple(d.threadgroup) + tuple(d.spec))
        bindings = [(extra[b.buffer], b.offset, max(b.nbytes, 4)) for b in d.bindings]
        program.dispatch(
            pipe, bindings, d.params, tuple(d.grid), True, d.op
        )  # a barrier each, as Metal's serial encoder
    program.finish(False)
    program.run()
    result = {}
    for name, ref in outputs.items():
        out = np.empty(ref.info.shape, dtype=ref.info.dtype)
        buf.read(ref.offset, out, halved(out))
        result[name] = out
    return result


_VK = vulkan_device()
needs_vulkan = pytest.mark.skipif(_VK is None, reason="mnn-vulkan with a Vulkan device is needed to run the plans")
#: on a GPU mnn-vulkan records gemv and split-K, which the Metal planner leaves out
needs_vulkan_cpu = pytest.mark.skipif(
    _VK is None or _VK.type != "cpu", reason="compares with what mnn-vulkan records on a CPU device (lavapipe)"
)
CASES = conformance_cases(set(get_plugins().backends["metal"].kernels())) if _VK is not None else []


def _models():
    sys.path.insert(0, EXAMPLES)
    from build_models import MODELS

    return MODELS


def _metal_session(graph, precision, options=None, optimize=False):
    with planning_backend() as backend:
        sess = mnn.Session(graph, backend=NAME, fallback=False, optimize=optimize, precision=precision, options=options)
    return sess, backend


def _vulkan_tables():
    try:
        from mnn_vulkan import recorder
    except ImportError:  # not installed, or its compiled runtime is missing
        return None
    import mnn_vulkan.kernels  # noqa: F401  (registration completes HALF_OPS)

    return recorder


def _vulkan_shaders(graph, ops, precision, optimize=False):
    """The shaders mnn-vulkan records for the segment of the same ops, with its arena bytes."""
    import mnn_vulkan

    sess = mnn.Session(graph, backend="vulkan", fallback=False, optimize=optimize, precision=precision)
    seg = mnn_vulkan.segments()[f"vulkan:{ops[0].node.name}..{ops[-1].node.name}"]
    return seg.shaders, seg.precision, sess.memory["vulkan"].arena_bytes


def test_half_tables_are_mnn_vulkans():
    vk = _vulkan_tables()
    if vk is None:
        pytest.skip("mnn-vulkan (with its compiled runtime) is not installed")
    assert HALF_KERNELS == vk.HALF_SHADERS
    assert HALF_FMA_KERNELS == vk.HALF_FMA_SHADERS
    claimed = set(KERNELS)
    assert HALF_OPS & claimed == vk.HALF_OPS & claimed, "ops run on float16 directly differ from mnn-vulkan's"


#: step functions: an input rounded to float16 may cross the step (2.9999 -> 3.0), so under
#: precision="low" they run on inputs float16 represents exactly (as mnn-vulkan's fp16 tests do)
STEP_OPS = ("Floor", "Ceil", "Round", "Sign")


@needs_vulkan
@pytest.mark.parametrize("precision", ["normal", "low"])
def test_every_sample_runs_with_the_kernels_spirv_and_matches_the_reference(precision):
    """precision="low": float16 tensors in the arena, the *_h kernels, host copies that narrow
    and widen; the Vulkan device needs 16-bit storage and shaderFloat16 (lavapipe has both).
    Tolerance as mnn-vulkan's fp16 conformance: inputs and outputs each round by up to 2^-11."""
    failures, ran, kernels = [], 0, collections.Counter()
    rtol, atol = (1e-4, 1e-5) if precision == "normal" else (1e-2, 1e-2)
    for case in CASES:
        backend, _ = plan_graph(case.graph, precision)
        if backend is None or len(backend.segments) != 1:
            continue
        (_, plan), arena = backend.segments[0], backend.arenas[-1]
        refs = segment_refs(backend)
        if not all(n in refs for n in case.graph.outputs) or not all(n in refs for n in case.feeds):
            continue  # an output the core aliased to a host value: nothing on the device to read
        feeds, expected = case.feeds, case.expected
        if precision == "low" and case.op in STEP_OPS:
            feeds = {k: v.astype(np.float16).astype(v.dtype) for k, v in feeds.items()}
            expected = list(mnn.Session(case.graph, backend="reference").run(feeds).values())
        got = run_plan_on_vulkan(_VK, plan, arena, feeds, refs, {n: refs[n] for n in case.graph.outputs})
        ran += 1
        kernels.update(d.kernel for d in plan.dispatches)
        for name, want in zip(case.graph.outputs, expected):
            floating = np.issubdtype(want.dtype, np.floating)
            r, a = (rtol, atol) if floating else (0, 0)
            if not np.allclose(got[name], want, rtol=r, atol=a, equal_nan=True):
                err = np.nanmax(np.abs(got[name].astype("float64") - want)) if want.size else 0
                failures.append(f"{case.op} [{case.label}]: max err {err}")
    assert ran >= 100, f"only {ran} samples ran"
    assert not failures, "\n".join(failures)
    half = {k for k in kernels if k.endswith("_h")}
    if precision == "low":  # every float kernel with a float16 variant ran as that; Pad on float32 copies
        assert {"binary_h", "unary_h", "conv2d_h", "conv_dw_h", "gemm_h", "pool2d_h", "reduce_h", "copy_h"} <= half
        assert not {"binary", "unary", "conv2d", "conv_dw", "gemm", "pool2d", "reduce"} & set(kernels), kernels
        assert kernels["widen"] >= kernels["narrow"] == kernels["pad"] > 0, kernels  # (a crop to nothing: no pad)
    else:
        assert not half, half


#: relative error of the logits under precision="low" (float16 tensors), against the reference:
#: storing activations in float16 costs MobileNetV2 1.4e-2 on these seeded weights (mnn-vulkan's
#: own precision="low" session gives the very same numbers; PyTorch CUDA fp16 1.7e-2, see its
#: README), SqueezeNet 6e-4
LOW_TOLERANCE = {"mobilenet_v2": 2e-2, "squeezenet1_1": 1e-2}


@have_examples
@needs_vulkan
@pytest.mark.parametrize("name", ["mobilenet_v2", "squeezenet1_1"])
@pytest.mark.parametrize("precision", ["normal", "low"])
def test_example_cnn_plan_runs_with_the_kernels_spirv(name, precision):
    """Relative error max |got - want| / max |want| of the logits against the reference; under
    precision="low" also against mnn-vulkan's own precision="low" session on the same input,
    which runs the same float16 kernels over the same float16 arena (measured: identical)."""
    graph = _models()[name](1)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    with planning_backend() as backend:
        mnn.Session(graph, backend=NAME, fallback=False, precision=precision)
    (ops, plan), arena = backend.segments[0], backend.arenas[-1]
    assert plan.half == (precision == "low")
    refs = segment_refs(backend)
    # an output the core made a view (SqueezeNet's Flatten) shares the bytes of the last op's result
    outs = {n: refs.get(n, ops[-1].outputs[0]) for n in graph.outputs}
    got = run_plan_on_vulkan(_VK, plan, arena, {"input": x}, refs, outs)
    want = mnn.Session(graph, backend="reference").run({"input": x})
    if precision == "low":
        vulkan = mnn.Session(graph, backend="vulkan", fallback=False, precision="low").run({"input": x})
    tol = 1e-4 if precision == "normal" else LOW_TOLERANCE[name]
    for key, expected in want.items():
        assert got[key].size == expected.size
        mine, scale = got[key].reshape(expected.shape), np.abs(expected).max()
        err = np.abs(mine - expected).max() / scale
        assert err < tol, f"{name} ({precision}): relative error {err}"
        if precision == "low":
            err = np.abs(mine - vulkan[key].reshape(expected.shape)).max() / scale
            assert err < 1e-3, f"{name}: {err} from mnn-vulkan's precision='low' result"


@needs_vulkan
def test_fp16_fma_plans_run_and_match_the_reference():
    """The *_hf kernels (float16 FMAs summed into float32 every 16 products) on every Conv,
    MatMul and Gemm sample, run on lavapipe; mnn-vulkan's fp16 tolerance."""
    ran, failures = collections.Counter(), []
    for case in conformance_cases({"Conv", "MatMul", "Gemm"}):
        try:
            _, backend = _metal_session(case.graph, "low", {FP16_FMA_OPTION: True})
        except mnn.errors.UnsupportedOpError:  # (MatMul with broadcast batch dims)
            continue
        if len(backend.segments) != 1:
            continue
        (ops, plan), arena = backend.segments[0], backend.arenas[-1]
        refs = {r.name: r for op in ops for r in op.inputs + op.outputs if r is not None}
        if not all(n in refs for n in list(case.graph.outputs) + list(case.feeds)):
            continue
        got = run_plan_on_vulkan(_VK, plan, arena, case.feeds, refs, {n: refs[n] for n in case.graph.outputs})
        ran.update(d.kernel for d in plan.dispatches)
        for name, want in zip(case.graph.outputs, case.expected):
            if not np.allclose(got[name], want, rtol=1e-2, atol=1e-2):
                failures.append(f"{case.op} [{case.label}]: max err {np.abs(got[name] - want).max()}")
    assert not failures, "\n".join(failures)
    assert ran["conv2d_hf"] and ran["gemm_hf"] and ran["conv_dw_hf"], ran


@needs_vulkan_cpu
@pytest.mark.parametrize("precision", ["normal", "low"])
def test_every_sample_records_the_kernels_mnn_vulkan_records(precision):
    """Same kernels, same order, same arena bytes as mnn-vulkan's recorder for every sample of
    every op the Metal backend claims (its tilings differ: the kernels and the float16 choices not)."""
    compared, differ = 0, []
    for case in conformance_cases(set(KERNELS)):
        try:
            sess, backend = _metal_session(case.graph, precision)
        except mnn.errors.UnsupportedOpError:
            continue
        if len(backend.segments) != 1:
            continue
        ops, plan = backend.segments[0]
        shaders, vk_precision, vk_arena = _vulkan_shaders(case.graph, ops, precision)
        mine = [d.kernel for d in plan.dispatches]
        compared += 1
        if mine != shaders or vk_precision != plan.precision or vk_arena != sess.memory[NAME].arena_bytes:
            differ.append(f"{case.op} [{case.label}]: {mine} ({plan.precision}) vs {shaders} ({vk_precision})")
    assert compared >= 280, compared
    assert not differ, "\n".join(differ)


@have_examples
@needs_vulkan_cpu
@pytest.mark.parametrize("name", ["mobilenet_v2", "squeezenet1_1", "resnet18"])
def test_cnn_plans_record_the_kernels_and_arena_mnn_vulkan_records(name):
    sys.path.insert(0, EXAMPLES)
    from build_models import MODELS

    graph = MODELS[name](1)
    for precision in ("normal", "low"):
        sess, backend = _metal_session(graph, precision, optimize=True)
        ops, plan = backend.segments[0]
        shaders, vk_precision, vk_arena = _vulkan_shaders(graph, ops, precision, optimize=True)
        assert [d.kernel for d in plan.dispatches] == shaders, f"{name} ({precision})"
        assert plan.precision == vk_precision == ("float16" if precision == "low" else "float32")
        assert sess.memory[NAME].arena_bytes == vk_arena, f"{name} ({precision})"
