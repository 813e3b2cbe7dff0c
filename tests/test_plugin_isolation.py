"""Plugins that misbehave, registered in this process: sys.exit() or Ctrl-C at import, a backend object
that lacks attributes, an unavailable plugin's loaders and passes, passes that return nothing usable.
Each is that plugin's failure, reported by name; the core and the other plugins go on."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend import plugins as plugins_module
from mnn_core.backend.plugins import DEFAULT_PLUGINS, PluginRecord, Plugins
from mnn_core.backend.status import backend_table

_unique = itertools.count()

HEADER = "from mnn_core import hookimpl\nfrom mnn_core.backend import Availability, Backend, KernelSpec\n"

AVAILABLE = (
    HEADER
    + """
class Fine(Backend):
    name = "fine"
    def kernels(self):
        return {}

@hookimpl
def mnn_register_backends(register):
    register(Fine())
"""
)


@pytest.fixture
def install(tmp_path, monkeypatch):
    """install({plugin name: module source}): the core's plugins plus these, as the process-wide set."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def add(sources: dict[str, str]) -> Plugins:
        plugins = Plugins()
        for modname in DEFAULT_PLUGINS:
            plugins._add(PluginRecord(modname.rsplit(".", 1)[-1], "mnn-core", mnn.__version__, modname))
        for name, source in sources.items():
            module = f"mnn_test_plugin_{name}_{next(_unique)}"
            (tmp_path / f"{module}.py").write_text(source)
            monkeypatch.delitem(__import__("sys").modules, module, raising=False)
            plugins._add(PluginRecord(name, f"mnn-{name}", "0.1", module))
        monkeypatch.setattr(plugins_module, "_PLUGINS", plugins)
        return plugins

    return add


def _relu_graph() -> mnn.Graph:
    b = mnn.GraphBuilder()
    x = b.input("x", (2,))
    b.output(b.Relu(x), "y")
    return b.build()


def _session_works() -> None:
    y = mnn.Session(_relu_graph(), backend="auto").run({"x": np.array([-1, 2], "float32")})["y"]
    np.testing.assert_array_equal(y, [0, 2])


@pytest.mark.parametrize(
    "raise_it, shown",
    [
        ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
        ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
        ("raise SystemExit('bye')\n", "SystemExit: bye"),
    ],
)
def test_exit_or_interrupt_at_import_is_that_plugins_failure(install, raise_it, shown):
    plugins = install({"quitter": raise_it, "fine": AVAILABLE})
    rows = {r.name: r for r in backend_table()}
    assert not rows["quitter"].available and shown in rows["quitter"].reason
    assert rows["fine"].available and "fine" in plugins.backends
    _session_works()


def test_exit_inside_a_hook_is_that_plugins_failure(install):
    install({"hookexit": HEADER + "import sys\n@hookimpl\ndef mnn_register_backends(register):\n    sys.exit(2)\n"})
    rows = {r.name: r for r in backend_table()}
    assert "mnn_register_backends failed: SystemExit: 2" in rows["hookexit"].reason
    _session_works()


BARE = (
    HEADER
    + """
class Bare:  # not derived from Backend: no memory_domain, priority, devices
    name = "bare"
    def availability(self):
        return Availability(True)
    def kernels(self):
        return {"Relu": KernelSpec("Relu")}

@hookimpl
def mnn_register_backends(register):
    register(Bare())
"""
)


def test_backend_lacking_attributes_is_listed_not_fatal(install, capsys):
    install({"bare": BARE})
    rows = {r.name: r for r in backend_table()}
    assert not rows["bare"].available and "memory_domain" in rows["bare"].reason
    from mnn_core.cli import main

    assert main(["backends"]) == 0
    assert "bare" in capsys.readouterr().out
    _session_works()  # "auto" leaves it out
    with pytest.raises(mnn.BackendError, match="'bare' cannot describe itself"):
        mnn.Session(_relu_graph(), backend="bare")


UNAVAILABLE_WITH_EXTRAS = (
    HEADER
    + """
from mnn_core.graph.ir import Graph

class Gone(Backend):
    name = "gone"
    def availability(self):
        return Availability(False, "no device")

def read_foo(path, **options):
    raise AssertionError("an unavailable plugin's loader ran")

def rewrite(graph):
    raise AssertionError("an unavailable plugin's pass ran")

@hookimpl
def mnn_register_backends(register):
    register(Gone())

@hookimpl
def mnn_register_loaders(register):
    register(".foo", read_foo)
    register(".mnn", read_foo)

@hookimpl
def mnn_register_passes(register):
    register("gone_rewrite", rewrite)
"""
)

TAKES_MNN = (
    HEADER
    + """
def read_mnn(path, **options):
    raise AssertionError("a plugin replaced the core's .mnn loader")

@hookimpl
def mnn_register_loaders(register):
    register(".bar", read_mnn)
    register(".mnn", read_mnn)
"""
)


def test_unavailable_plugin_contributes_nothing_and_core_loaders_stay(install, tmp_path):
    plugins = install({"gone": UNAVAILABLE_WITH_EXTRAS, "taker": TAKES_MNN})
    assert ".foo" not in plugins.loaders and not [p for p in plugins.passes if p[0] == "gone_rewrite"]
    assert ".bar" in plugins.loaders  # an available plugin adds its own model types
    taker = next(r for r in plugins.records if r.name == "taker")
    assert ".mnn files are read by mnn-core's own loader" in taker.error
    path = tmp_path / "relu.mnn"
    mnn.save(_relu_graph(), path)
    y = mnn.Session(mnn.load(path), backend="auto").run({"x": np.array([-3, 4], "float32")})["y"]
    np.testing.assert_array_equal(y, [0, 4])


PASSES = (
    HEADER
    + """
from mnn_core.graph.ir import Graph, Node

def returns_none(graph):
    graph.nodes = []  # a pass that changes its argument and forgets to return it
    return None

def returns_dict(graph):
    return {"nodes": []}

def raises(graph):
    raise KeyError("no such node")

def breaks_the_graph(graph):
    graph.nodes.append(Node("Relu", ["nowhere"], ["y2"], name="dangling"))
    return graph

@hookimpl
def mnn_register_passes(register):
    register("returns_none", returns_none)
    register("returns_dict", returns_dict)
    register("raises", raises)
    register("breaks_the_graph", breaks_the_graph)
"""
)


def test_passes_returning_nothing_usable_are_named_and_skipped(install):
    install({"passes": PASSES})
    with pytest.warns(RuntimeWarning) as caught:
        _session_works()
    said = " ".join(str(w.message) for w in caught)
    for name in ("returns_none", "returns_dict", "raises", "breaks_the_graph"):
        assert f"graph pass {name!r}" in said
    assert "returned NoneType, not a Graph" in said and "returned dict" in said


SCOPED_PASS = (
    HEADER
    + """
class Scoped(Backend):
    name = "scoped"
    def kernels(self):
        return {"Relu": KernelSpec("Relu")}
    def prepare(self, node, inputs, outputs, constants, ctx=None):
        from mnn_core.backend import PyExecution
        import numpy as np
        return PyExecution(lambda ins, outs: np.maximum(ins[0], 0, out=outs[0]))

RAN = []

def mark(graph):
    RAN.append(graph.name)
    return graph

@hookimpl
def mnn_register_backends(register):
    register(Scoped())

@hookimpl
def mnn_register_passes(register):
    register("scoped_mark", mark)
"""
)


def test_a_backends_passes_run_only_in_sessions_on_that_backend(install):
    """A plugin's graph rewrites suit its own kernels: a session on another backend never sees them."""
    import sys

    plugins = install({"scoped": SCOPED_PASS})
    ran = next(m for name, m in sys.modules.items() if name.startswith("mnn_test_plugin_scoped_")).RAN
    mnn.Session(_relu_graph(), backend="reference").run({"x": np.array([-1, 2], "float32")})
    assert ran == [] and [p[0] for p in plugins.passes_for(["reference"])].count("scoped_mark") == 0
    y = mnn.Session(_relu_graph(), backend="scoped").run({"x": np.array([-1, 2], "float32")})["y"]
    np.testing.assert_array_equal(y, [0, 2])
    assert len(ran) == 1


DECLINES_AT_PREPARE = (
    HEADER
    + """
from mnn_core.errors import UnsupportedOpError

class Picky(Backend):
    name = "picky"
    def kernels(self):
        return {"Relu": KernelSpec("Relu")}
    def prepare(self, node, inputs, outputs, constants, ctx=None):
        raise UnsupportedOpError("picky: this Relu wants a constant input")

@hookimpl
def mnn_register_backends(register):
    register(Picky())
"""
)


def test_a_node_declined_at_prepare_falls_back_to_the_reference(install):
    """A kernel may find at prepare what placement could not see: with fallback on the node runs on the
    reference (and the plan says why); with fallback off the backend's refusal is the error."""
    install({"picky": DECLINES_AT_PREPARE})
    sess = mnn.Session(_relu_graph(), backend="picky")
    y = sess.run({"x": np.array([-1, 2], "float32")})["y"]
    np.testing.assert_array_equal(y, [0, 2])
    (placed,) = sess.plan
    assert placed.backend == "reference" and "declined at prepare: picky: this Relu wants" in placed.reason
    with pytest.raises(mnn.UnsupportedOpError, match="picky: this Relu wants a constant input"):
        mnn.Session(_relu_graph(), backend="picky", fallback=False).run({"x": np.array([-1, 2], "float32")})
