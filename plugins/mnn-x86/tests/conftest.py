"""Shared helpers: run one op on x86 (a forced ISA) and compare with the reference."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from mnn_x86 import isa as x86_isa

from mnn_core.graph.ir import Graph
from mnn_core.ops import run_reference
from mnn_core.session import Session
from mnn_core.testing import one_node_graph


@pytest.fixture(params=list(x86_isa.TILES)[1:])
def avx512_tile(request):
    """Each AVX-512 GEMM tile in turn (6x32, 14x32, 8x48), whichever the FMA probe picks by default;
    modules that test GEMM-backed kernels use it for every test (their pytestmark)."""
    from mnn_x86 import _x86

    before = _x86.avx512_rows()
    _x86.set_avx512_rows(x86_isa.TILES[request.param])
    yield request.param
    _x86.set_avx512_rows(before)


ISAS = [
    pytest.param(
        level, marks=pytest.mark.skipif(level not in x86_isa.supported(), reason=f"this CPU does not run {level}")
    )
    for level in x86_isa.ISAS
]


def one_op_graph(op: str, inputs: list, attrs: dict, constant: tuple = ()) -> tuple[Graph, dict]:
    """A graph of one node with output "out"; inputs whose index is in `constant` become initializers."""
    return one_node_graph(op, inputs, attrs, constant)


def check_op(
    op: str,
    inputs: list,
    attrs: dict,
    isa: str,
    threads: int = 1,
    constant: tuple = (1, 2),
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> Session:
    graph, feeds = one_op_graph(op, inputs, attrs, constant)
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads, options={"x86.isa": isa})
    want = run_reference(op, list(inputs), attrs)[0]
    for _ in range(2):
        got = sess.run(feeds)["out"]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{op} {attrs} on x86 {isa}")
    return sess


def fused_and_plain(graph: Graph, isa: str, threads: int) -> tuple[Session, Session]:
    """Two x86 sessions of `graph` under `isa`: with the backend's fusions, and with fuse=False (the
    fused kernels' oracle)."""
    kw = {"backend": "x86", "fallback": False, "threads": threads, "options": {"x86.isa": isa}}
    return Session(graph, **kw), Session(graph, **kw, fuse=False)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def compiled_lenet(backend: str, threads: int):
    """(model, compiled training step) of a seeded LeNet-5 under SGD with momentum."""
    from mnn_core import express, nn, optim, train
    from mnn_core.testing.models import lenet

    express.manual_seed(0)
    model = lenet()
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, train.compile(model, nn.CrossEntropyLoss(), opt, backend=backend, threads=threads)


def pool_trace_counts(child: str, counts: str, **env: str) -> dict[str, int]:
    """Run `child` (Python source) in a fresh process with MNN_X86_POOL_TRACE=1 and `env` set; the pool's
    trace line at exit, as {what: count} for the counters that regex `counts` ("(\\d+) (a|b|...)") names."""
    proc = subprocess.run(
        [sys.executable, "-c", child],
        env={**os.environ, "MNN_X86_POOL_TRACE": "1", **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    line = re.search(r"mnn-x86 pool: .*", proc.stderr)
    assert line, proc.stderr
    return {k: int(v) for v, k in re.findall(counts, line.group(0))}


def pytest_configure(config):
    from mnn_core.testing import check_required

    check_required("x86")  # MNN_REQUIRE_BACKENDS (CI): an unavailable backend fails the run, not skips it
