"""The op -> kernel mapping, checked on Linux.

Sessions on the planning-only backend (mnn_metal.planning: the Metal backend
minus the device) run the core's scheduler and memory planner and record
every segment. Each dispatch is checked against its kernel's signature parsed
from the generated MSL (buffer indices and access, parameter bytes, function
constants, grid coverage), for every sample of every op the backend claims
and for the example CNNs. Where mnn-vulkan has a device (lavapipe in CI), the
plans are also *run* with the very SPIR-V the MSL was generated from and
compared with the reference backend: that checks the recording's numbers, not
only its shape.
"""

from __future__ import annotations

import collections
import sys

import numpy as np
import pytest
from metal_testing import EXAMPLES, check_plan, have_examples, run_plan_on_vulkan, vulkan_device
from mnn_metal.planning import NAME, planning_backend

import mnn_core as mnn
from mnn_core.plugins import get_plugins
from mnn_core.testing.conformance import conformance_cases

_VK = vulkan_device()
needs_vulkan = pytest.mark.skipif(_VK is None, reason="mnn-vulkan with a Vulkan device is needed to run the plans")


def _cases():
    return conformance_cases(set(get_plugins().backends["metal"].kernels()))


CASES = _cases()


def _plan_case(case, precision="normal"):
    with planning_backend() as backend:
        try:
            mnn.Session(case.graph, backend=NAME, fallback=False, optimize=False, precision=precision)
        except mnn.errors.UnsupportedOpError as exc:
            return None, str(exc)
    return backend, None


def _refs(backend):
    """Every value's TensorRef in the (one) planned segment, by name."""
    refs = {}
    for ops, _ in backend.segments:
        for op in ops:
            refs.update({r.name: r for r in op.inputs + op.outputs if r is not None})
    return refs


def test_most_claimed_ops_have_conformance_samples():
    claimed = set(get_plugins().backends["metal"].kernels())
    sampled = {c.op for c in CASES}
    assert sampled <= claimed
    assert len(sampled) >= 0.9 * len(claimed), f"claimed without samples: {sorted(claimed - sampled)}"


@pytest.mark.parametrize("precision", ["normal", "low"])
def test_every_sample_of_every_claimed_op_plans_consistently(precision):
    planned, declined, dispatches = collections.Counter(), [], 0
    for case in CASES:
        backend, why = _plan_case(case, precision)
        if backend is None:
            declined.append(f"{case.op}: {why}")
            continue
        planned[case.op] += 1  # (a reshape the core turns into a view records nothing)
        refs = list(_refs(backend).values())
        for _, plan in backend.segments:
            assert plan.half == (precision == "low") == backend.arenas[-1].half
            check_plan(plan, backend.arenas[-1].nbytes, refs)
            dispatches += len(plan.dispatches)
    assert {c.op for c in CASES} - set(planned) == set(), f"never planned: {declined}"
    assert dispatches >= len(CASES) // 2


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
        backend, _ = _plan_case(case, precision)
        if backend is None or len(backend.segments) != 1:
            continue
        (_, plan), arena = backend.segments[0], backend.arenas[-1]
        refs = _refs(backend)
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


def _models():
    sys.path.insert(0, EXAMPLES)
    from build_models import MODELS

    return MODELS


def _expected_conv_kernel(node, x_shape, w_shape) -> str:
    """Independent of kernels.py: depthwise -> conv_dw, 1x1 stride 1 unpadded -> gemm, else conv2d."""
    o, cg, kh, kw = w_shape
    group = node.attrs.get("group", 1)
    if group == x_shape[1] and x_shape[1] > 1:
        return "conv_dw"
    pads = node.attrs.get("pads") or [0, 0, 0, 0]
    strides = node.attrs.get("strides") or [1, 1]
    if (
        (kh, kw) == (1, 1)
        and list(strides) == [1, 1]
        and not any(pads)
        and node.attrs.get("auto_pad", "NOTSET") in ("NOTSET", "VALID")
    ):
        return "gemm"
    return "conv2d"


@have_examples
@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet18", "squeezenet1_1"])
@pytest.mark.parametrize("batch,precision", [(1, "normal"), (2, "low")])
def test_example_cnn_plans_entirely_on_metal(name, batch, precision):
    graph = _models()[name](batch)
    with planning_backend() as backend:
        sess = mnn.Session(graph, backend=NAME, fallback=False, precision=precision)
    assert set(sess.plan.backends()) == {NAME}, str(sess.plan)
    assert len(backend.segments) == 1, "one run of ops on the GPU: one recorded segment"
    ops, plan = backend.segments[0]
    check_plan(plan, backend.arenas[-1].nbytes, list(_refs(backend).values()))
    by_op = collections.defaultdict(list)
    for d in plan.dispatches:
        by_op[d.op].append(d.kernel)
    suffix = "_h" if precision == "low" else ""
    weights = "arena"  # weights are tensors of the arena, float16 ones under precision="low"
    assert plan.half == (precision == "low") and not plan.widened and plan.wide_bytes == 0
    for op in ops:
        if op.node.op != "Conv":
            continue
        want = _expected_conv_kernel(op.node, op.inputs[0].info.shape, op.inputs[1].info.shape)
        assert by_op[op.node.name] == [want + suffix], op.node.name
        (d,) = [d for d in plan.dispatches if d.op == op.node.name]
        w = d.bindings[0 if want == "gemm" else 1]
        stored = op.inputs[1].info.size * (2 if suffix else 4)
        assert w.buffer == weights and w.nbytes == -(-stored // 4) * 4, op.node.name
    if precision == "low":  # every dispatch a float16 kernel: the CNNs need no float32 copies
        kernels = collections.Counter(d.kernel for d in plan.dispatches)
        assert all(k.endswith("_h") for k in kernels), kernels


@have_examples
def test_mobilenet_v2_plan():
    """What a MobileNetV2 records: 17 depthwise, 34 pointwise (as GEMMs) and 1 strided 3x3
    convolutions, 10 residual Adds, the global pool as a reduction and the classifier as a GEMM."""
    graph = _models()["mobilenet_v2"](1)
    with planning_backend() as backend:
        mnn.Session(graph, backend=NAME, fallback=False)
    ops, plan = backend.segments[0]
    kernels = collections.Counter(d.kernel for d in plan.dispatches)
    convs = [op for op in ops if op.node.op == "Conv"]
    depthwise = sum(op.node.attrs.get("group", 1) == op.inputs[0].info.shape[1] for op in convs)
    pointwise = sum(op.inputs[1].info.shape[2:] == (1, 1) for op in convs)
    assert kernels["conv_dw"] == depthwise == 17
    assert kernels["gemm"] == pointwise + 1 == 35  # + the classifier
    assert kernels["conv2d"] == len(convs) - depthwise - pointwise == 1
    assert kernels["binary"] == sum(op.node.op == "Add" for op in ops) == 10
    assert kernels["reduce"] == 1
    assert sum(kernels.values()) == len(plan.dispatches) == 64
    first = plan.dispatches[0]
    assert (first.kernel, first.threadgroup) == ("conv2d", (16, 16, 1))
    x = ops[0].inputs[0]
    assert first.bindings[0].offset == x.offset and first.bindings[0].nbytes == x.info.nbytes
    last = plan.dispatches[-1]
    assert last.kernel == "gemm" and last.bindings[3].written and last.bindings[3].nbytes == 1000 * 4


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
    refs = _refs(backend)
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


@have_examples
def test_planning_tool_prints_a_saved_models_dispatches(tmp_path, capsys):
    from mnn_metal.planning import main

    path = tmp_path / "squeezenet.mnn"
    mnn.save(_models()["squeezenet1_1"](1), str(path))
    assert main([str(path), "--batch", "1"]) == 0
    out = capsys.readouterr().out
    assert "segment conv..globalaveragepool: 46 dispatches" in out, out[-2000:]
    assert "float32 tensors" in out
    assert out.count(" pool2d ") == 3 and out.count(" conv2d ") == 9  # the stem and 8 fire modules' 3x3 expands
    assert main([str(path), "--batch", "1", "--precision", "low"]) == 0
    out = capsys.readouterr().out
    assert "segment conv..globalaveragepool: 46 dispatches" in out and "float16 tensors" in out, out[-2000:]
    assert out.count(" pool2d_h ") == 3 and out.count(" conv2d_h ") == 9 and " conv2d " not in out
