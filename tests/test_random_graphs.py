"""Whole random graphs (mnn_core/testing/random_graphs.py) on every installed backend against the
reference: convolutions with residual branches, activations, pools and Concats, where a backend's
fusions, layouts and in-place writes meet. This is the test that finds an unsound fusion rule: with
mnn-x86's rule of before 5c549e8 (an Add of two convolutions offered to both), 29 of the first 300
graphs failed to plan."""

from __future__ import annotations

import pytest

from mnn_core.backend.plugins import get_plugins
from mnn_core.testing.random_graphs import compare_random_graphs, random_graph


def _unavailable(name: str) -> str:
    backend = get_plugins().backends.get(name)
    if backend is None:
        return f"mnn-{name} is not installed"
    avail = backend.availability()
    return "" if avail else avail.reason


def _x86_isa(level: str) -> str:
    why = _unavailable("x86")
    if why:
        return why
    from mnn_x86 import isa

    return "" if level in isa.supported() else f"this CPU does not run {level}"


def _case(backend: str, graphs: int, why: str, **options):
    label = "-".join(
        [backend]
        + [f"{v}" for v in options.get("options", {}).values()]
        + ([f"{options['threads']}threads"] if "threads" in options else [])
    )
    return pytest.param(backend, graphs, options, id=label, marks=pytest.mark.skipif(bool(why), reason=why or "-"))


CASES = [
    _case("x86", 300, _unavailable("x86")),  # the best ISA this CPU runs (NC16 layouts under AVX-512)
    _case("x86", 300, _x86_isa("avx2"), options={"x86.isa": "avx2"}, threads=2, batch_parallel="off"),
    _case("x86", 100, _x86_isa("scalar"), options={"x86.isa": "scalar"}),
    _case("opencl", 100, _unavailable("opencl")),
    _case("vulkan", 100, _unavailable("vulkan")),
    _case("opengl", 100, _unavailable("opengl")),
]


@pytest.mark.parametrize("backend, graphs, options", CASES)
def test_random_graphs_match_reference(backend, graphs, options):
    failures = compare_random_graphs(backend, range(graphs), **options)
    assert not failures, f"{len(failures)} of {graphs} graphs:\n" + "\n".join(failures[:10])


def test_random_graphs_are_reproducible_and_varied():
    a, b = random_graph(7), random_graph(7)
    assert [n.op for n in a[0].nodes] == [n.op for n in b[0].nodes] and (a[1]["x"] == b[1]["x"]).all()
    ops = {n.op for seed in range(100) for n in random_graph(seed)[0].nodes}
    assert {"Conv", "Add", "Relu", "Clip", "Concat", "MaxPool", "AveragePool", "GlobalAveragePool"} <= ops
    branches = sum(  # an Add of two convolutions of one input: ResNet's bottleneck with its downsample
        1
        for seed in range(100)
        for g in [random_graph(seed)[0]]
        for n in g.nodes
        if n.op == "Add"
        and all(p.op == "Conv" for p in g.nodes if set(p.outputs) & set(n.inputs))
        and len({p.inputs[0] for p in g.nodes if set(p.outputs) & set(n.inputs)}) == 1
    )
    assert branches >= 20
