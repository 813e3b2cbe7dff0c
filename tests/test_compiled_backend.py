"""The C ABI, proven end to end: the template backend (examples/backend-template)
is built and installed through pip into a temporary folder, found through its
real `mnn` entry point, and its C kernels run through the nogil run loop."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def template_site(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-build-isolation",
        "--no-deps",
        "--target",
        str(target),
        str(ROOT / "examples" / "backend-template"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        pytest.fail(f"building the template backend failed:\n{done.stdout}\n{done.stderr}")
    return target


def run_with_template(site, *blocks: str, **env) -> str:
    """Run code blocks in a fresh interpreter that sees the installed template backend."""
    code = "\n".join(textwrap.dedent(b) for b in blocks)
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), **env}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, cwd=str(site))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


GRAPH = """
import numpy as np, mnn_core as mnn
b = mnn.GraphBuilder()
x = b.input("x", (256, 256))
w = b.const(np.random.default_rng(0).standard_normal((256, 256)).astype("float32") * 0.05)
y = b.Relu(b.Add(b.MatMul(x, w), x))
b.output(b.Mul(y, y), "out")
graph = b.build()
xv = np.random.default_rng(1).standard_normal((256, 256)).astype("float32")
want = np.maximum(xv @ graph.initializers[w] + xv, 0) ** 2
"""


def test_entry_point_registers_the_backend(template_site):
    out = run_with_template(
        template_site,
        """
        import mnn_core as mnn
        rows = {r.name: r for r in mnn.backends()}
        t = rows["template"]
        print(t.package, t.available, t.ops)
    """,
    )
    assert out.split() == ["mnn-template", "True", "4"]


def test_c_kernels_run_and_match(template_site):
    out = run_with_template(
        template_site,
        GRAPH,
        """
        sess = mnn.Session(graph, backend="template", fallback=False, optimize=False)
        got = sess.run({"x": xv})["out"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
        print(sorted(set(p.backend for p in sess.plan)))
    """,
    )
    assert out.strip() == "['template']"


def test_steady_state_run_allocates_nothing(template_site):
    out = run_with_template(
        template_site,
        GRAPH,
        """
        import tracemalloc
        sess = mnn.Session(graph, backend="template", fallback=False, optimize=False)
        feeds = {"x": xv}
        for _ in range(3):
            sess.run(feeds, copy=False)
        arena = sess._current.arenas["host"]
        tracemalloc.start()
        for _ in range(50):  # warm tracemalloc's and Python's own free lists
            sess.run(feeds, copy=False)
        growth, peaks = [], []
        for _ in range(2):  # two windows: a one-off allocation (an interpreter cache) lands in one
            start, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            for _ in range(500):
                sess.run(feeds, copy=False)
            end, peak = tracemalloc.get_traced_memory()
            growth.append(end - start)
            peaks.append(peak - start)
        assert sess._current.arenas["host"] is arena
        # A tensor here is 256 KiB, so any tensor allocated per run shows in the peak;
        # what remains is the transient dict run() returns. Nothing accumulates: 500 runs
        # retaining even 16 bytes each would exceed the bound on growth in both windows
        # (one CI run saw 5784 bytes in a single window, not since reproduced).
        print(growth, peaks)
        assert min(growth) < 4096 and max(peaks) < 16384, (growth, peaks)
    """,
    )
    assert out


def test_disable_autoload_hides_the_plugin(template_site):
    out = run_with_template(
        template_site,
        """
        import mnn_core as mnn
        print(sorted(r.name for r in mnn.backends()))
    """,
        MNN_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    assert out.strip() == "['reference']"


def test_load_plugins_selects_by_name(template_site):
    code = "import mnn_core as mnn; print(sorted(r.name for r in mnn.backends()))"
    assert run_with_template(template_site, code, MNN_LOAD_PLUGINS="template").strip() == "['reference', 'template']"
    assert run_with_template(template_site, code, MNN_LOAD_PLUGINS="other").strip() == "['reference']"


def test_auto_uses_compiled_kernels_where_cheaper(template_site):
    out = run_with_template(
        template_site,
        GRAPH,
        """
        sess = mnn.Session(graph, backend="auto", optimize=False)
        np.testing.assert_allclose(sess.run({"x": xv})["out"], want, rtol=1e-4, atol=1e-3)
        print(sorted(set(p.backend for p in sess.plan)))
    """,
        MNN_LOAD_PLUGINS="template",
    )  # other installed backends (x86) would outbid it
    assert "template" in out


def test_inputs_read_in_place(template_site):
    """The template's kernels set MNN_EXEC_INPUTS_MAY_MOVE, so run() hands them the caller's array:
    with the arena's copy of x poisoned, the results still match; arrays the steps must not read in
    place (another dtype, Fortran order, a view of the last run's outputs) are copied as before."""
    out = run_with_template(
        template_site,
        GRAPH,
        """
        sess = mnn.Session(graph, backend="template", fallback=False, optimize=False)
        cur = sess._current
        assert cur.program.movable == (True,), cur.program.movable

        def check(x, note):
            cur.input_views["x"][...] = np.nan  # read from here, every output would be NaN
            got = sess.run({"x": x})["out"]
            x = np.asarray(x, np.float32)
            want = np.maximum(x @ graph.initializers[w] + x, 0) ** 2
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3, err_msg=note)

        check(xv, "aligned")
        odd = np.empty(xv.size + 1, np.float32)[1:].reshape(xv.shape)  # 4-byte aligned, not 64
        odd[...] = xv[::-1]
        check(odd, "aligned to its element only")
        for _ in range(3):  # a new array each run: each run reads its own
            check(np.random.default_rng(_).standard_normal(xv.shape).astype("float32"), "fresh")
        back = sess.run({"x": xv}, copy=False)["out"]  # in the arena: the steps would overwrite it
        want = np.maximum(back @ graph.initializers[w] + back, 0) ** 2
        got = sess.run({"x": back}, copy=True)["out"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
        for x, note in ((xv.astype(np.float64), "float64"), (np.asfortranarray(xv), "Fortran order")):
            cur.input_views["x"][...] = np.nan
            np.testing.assert_allclose(sess.run({"x": x})["out"], np.maximum(xv @ graph.initializers[w] + xv, 0) ** 2,
                                       rtol=1e-4, atol=1e-3, err_msg=note)
        ref = mnn.Session(graph, backend="reference", optimize=False)
        print(ref._current.program.movable)
    """,
    )
    assert out.strip() == "(False,)"  # Python executions read the arena's copy
