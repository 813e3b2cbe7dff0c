"""The backend registers everywhere and says why it cannot run off macOS."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from mnn_core.plugins import get_plugins

off_mac = pytest.mark.skipif(sys.platform == "darwin", reason="checks the reason given off macOS")


def test_registered_through_the_mnn_entry_point():
    eps = [ep for ep in importlib.metadata.entry_points(group="mnn") if ep.name == "metal"]
    assert [ep.value for ep in eps] == ["mnn_metal"]
    assert "metal" in get_plugins().backends


@off_mac
def test_unavailable_off_macos_with_the_reason():
    import platform

    verdict = get_plugins().backends["metal"].availability()
    assert not verdict
    assert verdict.reason == f"Metal needs macOS; this is {platform.system()}"


@off_mac
def test_native_part_is_not_built_off_macos():
    with pytest.raises(ImportError):
        import mnn_metal._metal  # noqa: F401


@off_mac
def test_mnn_backends_lists_it_with_the_reason():
    out = subprocess.run([sys.executable, "-m", "mnn_core.cli", "backends"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    import platform

    line = next(line for line in out.stdout.splitlines() if line.startswith("metal "))
    assert f"unavailable: Metal needs macOS; this is {platform.system()}" in line, line


@off_mac
def test_a_session_on_metal_fails_with_the_reason():
    import numpy as np

    import mnn_core as mnn
    from mnn_core.graph import Graph, Node, TensorInfo

    g = Graph(name="relu")
    g.inputs["x"] = TensorInfo((4,), "float32")
    g.nodes.append(Node("Relu", ["x"], ["y"], {}, "relu"))
    g.outputs = ["y"]
    with pytest.raises(Exception, match="Metal needs macOS"):
        mnn.Session(g, backend="metal", fallback=False).run({"x": np.ones(4, "float32")})


def test_claims_only_ops_the_core_knows():
    from mnn_core.ops import all_schemas

    claimed = get_plugins().backends["metal"].kernels()
    assert claimed and set(claimed) <= set(all_schemas())
    assert {"Conv", "Gemm", "Add", "Clip", "GlobalAveragePool", "Concat", "MaxPool"} <= set(claimed)


@off_mac
def test_the_runtime_refuses_with_the_reason():
    from mnn_metal import runtime

    from mnn_core.errors import BackendError

    with pytest.raises(BackendError, match="metal: Metal needs macOS"):
        runtime.context()


@off_mac
def test_allocating_an_arena_refuses_with_the_reason():
    from mnn_core.errors import BackendError

    with pytest.raises(BackendError, match="Metal needs macOS"):
        get_plugins().backends["metal"].allocate_arena(1024)
