"""The op -> kernel mapping, checked on Linux.

Sessions on the planning-only backend (mnn_metal.planning: the Metal backend
minus the device) run the core's scheduler and memory planner and record
every segment. Each dispatch is checked against its kernel's signature parsed
from the generated MSL (buffer indices and access, parameter bytes, function
constants, grid coverage), for every sample of every op the backend claims
and for the example CNNs. Running the plans with the very SPIR-V the MSL was
generated from (on mnn-vulkan's device) is the repository's cross-check,
tests/test_metal_plans_on_vulkan.py: this plugin's tests need no other plugin.
"""

from __future__ import annotations

import collections
import sys

import pytest
from metal_testing import EXAMPLES, check_plan, have_examples
from mnn_metal.planning import NAME, plan_graph, planning_backend, segment_refs

import mnn_core as mnn
from mnn_core.plugins import get_plugins
from mnn_core.testing.conformance import conformance_cases


def _cases():
    return conformance_cases(set(get_plugins().backends["metal"].kernels()))


CASES = _cases()


def test_most_claimed_ops_have_conformance_samples():
    claimed = set(get_plugins().backends["metal"].kernels())
    sampled = {c.op for c in CASES}
    assert sampled <= claimed
    assert len(sampled) >= 0.9 * len(claimed), f"claimed without samples: {sorted(claimed - sampled)}"


@pytest.mark.parametrize("precision", ["normal", "low"])
def test_every_sample_of_every_claimed_op_plans_consistently(precision):
    planned, declined, dispatches = collections.Counter(), [], 0
    for case in CASES:
        backend, why = plan_graph(case.graph, precision)
        if backend is None:
            declined.append(f"{case.op}: {why}")
            continue
        planned[case.op] += 1  # (a reshape the core turns into a view records nothing)
        refs = list(segment_refs(backend).values())
        for _, plan in backend.segments:
            assert plan.half == (precision == "low") == backend.arenas[-1].half
            check_plan(plan, backend.arenas[-1].nbytes, refs)
            dispatches += len(plan.dispatches)
    assert {c.op for c in CASES} - set(planned) == set(), f"never planned: {declined}"
    assert dispatches >= len(CASES) // 2


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
    check_plan(plan, backend.arenas[-1].nbytes, list(segment_refs(backend).values()))
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
