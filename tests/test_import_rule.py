"""The one rule of the floor plan (docs/ARCHITECTURE.md): a backend plugin imports from the core
only the contract (mnn_core.backend), the graph IR (mnn_core.graph) and the op schemas
(mnn_core.ops), plus the errors they raise. It never reaches into the runtime (session,
scheduler, fusion pass, weights, memory planner), so the core can change inside without breaking
a plugin, and importing a plugin does not load the engine.

Walked: every plugin package's sources (plugins/*/mnn_*/: .py by their syntax tree; .pyx, .pxd
and .pxi by their import and include lines) and the template backend (examples/backend-template). A plugin's
tests and tools are users of the whole engine and are not walked.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: what a plugin may import from the core: a module, and everything under it that is not private
#: (no part of its name starts with "_": mnn_core.ops._util is the op families' own)
ALLOWED = (
    "mnn_core.backend",  # the contract: Backend API, hookspecs + hookimpl, kernel table, fusion types, kit/
    "mnn_core.graph",  # the IR: Node, TensorInfo, DTYPES
    "mnn_core.ops",  # the op schemas, their geometry helpers (conv_geometry, pool_geometry, ...) and ops.helpers
    "mnn_core.errors",  # BackendError, UnsupportedOpError, MnnError
    "mnn_core.abi",  # abi.pxd, the Cython mirror of include/mnn_core/abi.h (cimport only)
)
#: names a plugin may take from the package itself (`from mnn_core import X`, `mnn_core.X`):
#: none of them loads the engine
TOP_LEVEL = frozenset({"hookimpl", "get_include", "__version__", "__path__"})
#: per file, further top-level names, each with why it may use them
EXCEPTIONS = {
    # a developer tool (`python -m mnn_metal.planning model.mnn`) that runs a Session on the
    # recording-only backend exactly as a user would; the backend itself imports none of this
    "plugins/mnn-metal/mnn_metal/planning.py": frozenset({"Session", "load"}),
}

SUFFIXES = (".py", ".pyx", ".pxd", ".pxi")
_CYTHON_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<mod>[\w.]+)[ \t]+c?import[ \t]+(?P<names>\([^)]*\)|[^\n#]+)"
    r"|c?import[ \t]+(?P<mods>[^\n#]+))",
    re.M,
)
#: a Cython textual include of a core file (`include "mnn_core/backend/execution.pxi"`) counts as an import
_CYTHON_INCLUDE = re.compile(r"""^[ \t]*include[ \t]+["'](?P<path>mnn_core/[^"']+)\.px[id]["']""", re.M)


def plugin_sources() -> list[Path]:
    files = []
    for package in sorted(ROOT.glob("plugins/*/mnn_*")) + [ROOT / "examples" / "backend-template" / "mnn_template"]:
        if package.is_dir() and not package.name.endswith(".egg-info"):
            files += [p for p in sorted(package.rglob("*")) if p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    files.append(ROOT / "examples" / "backend-template" / "setup.py")
    return files


def _module_ok(module: str) -> bool:
    if any(part.startswith("_") for part in module.split(".")[1:]):
        return False
    return any(module == allowed or module.startswith(allowed + ".") for allowed in ALLOWED)


def check_import(module: str, names: list[str], extra: frozenset = frozenset()) -> str | None:
    """Why importing `names` from `module` (or `module` itself, names empty) breaks the rule, or None."""
    if module != "mnn_core" and not module.startswith("mnn_core."):
        return None
    if module == "mnn_core":
        bad = [n for n in names if n not in TOP_LEVEL | extra and not _module_ok(f"mnn_core.{n}")]
        return f"mnn_core.{bad[0]} is not part of the contract" if bad else None
    if not _module_ok(module):
        return f"{module} is not part of the contract"
    return None


def _attributes_of(tree: ast.AST, alias: str) -> list[tuple[int, str]]:
    """(line, name) of every `alias.name` in the tree: what a module imported as `alias` is used for."""
    return [
        (n.lineno, n.attr)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == alias
    ]


def python_violations(source: str, extra: frozenset = frozenset()) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            why = check_import(node.module, [a.name for a in node.names], extra)
            if why:
                found.append((node.lineno, why))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                why = check_import(alias.name, [], extra)
                if why:
                    found.append((node.lineno, why))
                elif alias.name == "mnn_core":  # `import mnn_core [as m]`: check what it is used for
                    uses = _attributes_of(tree, alias.asname or "mnn_core")
                    found += [(line, why) for line, name in uses if (why := check_import("mnn_core", [name], extra))]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            why = check_import(node.args[0].value, [], extra)
            if why:
                found.append((node.lineno, why))
    return found


def cython_violations(source: str, extra: frozenset = frozenset()) -> list[tuple[int, str]]:
    found = []
    for m in _CYTHON_IMPORT.finditer(source):
        line = source.count("\n", 0, m.start()) + 1
        if m.group("mod"):
            names = [n.split(" as ")[0].strip() for n in m.group("names").strip("() \n").split(",") if n.strip()]
            why = check_import(m.group("mod"), names, extra)
            if why:
                found.append((line, why))
        else:
            for mod in m.group("mods").split(","):
                why = check_import(mod.split(" as ")[0].strip(), [], extra)
                if why:
                    found.append((line, why))
    for m in _CYTHON_INCLUDE.finditer(source):
        why = check_import(m.group("path").replace("/", "."), [], extra)
        if why:
            found.append((source.count("\n", 0, m.start()) + 1, why))
    return found


def violations(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    source = path.read_text()
    extra = EXCEPTIONS.get(rel, frozenset())
    found = python_violations(source, extra) if path.suffix == ".py" else cython_violations(source, extra)
    return [f"{rel}:{line}: {why}" for line, why in found]


def test_plugins_import_only_the_contract_the_graph_and_the_ops():
    files = plugin_sources()
    assert len(files) > 50, "the walk found too few plugin sources: has the layout changed?"
    bad = [v for path in files for v in violations(path)]
    assert not bad, (
        "plugins may import only mnn_core.backend, mnn_core.graph, mnn_core.ops and mnn_core.errors "
        "(docs/ARCHITECTURE.md); what a backend needs from elsewhere belongs in the contract:\n  " + "\n  ".join(bad)
    )


def test_every_exception_names_a_file_that_exists():
    assert all((ROOT / rel).is_file() for rel in EXCEPTIONS)


@pytest.mark.parametrize(
    "source, ok",
    [
        ("from mnn_core.backend import Backend, hookimpl", True),
        ("from mnn_core.backend.kit.layout import collapse", True),
        ("from mnn_core.ops.conv import conv_geometry", True),
        ("from mnn_core.graph.ir import Node", True),
        ("from mnn_core import hookimpl, get_include", True),
        ("from . import _common", True),
        ("import numpy as np", True),
        ("from mnn_core.scheduler import VIEW_OPS", False),
        ("from mnn_core.runtime.session import Session", False),
        ("from mnn_core.ops._util import normalize_axis", False),
        ("from mnn_core import Session", False),
        ("import mnn_core.weights", False),
        ("import mnn_core as m\nm.load('x')", False),
        ("import mnn_core as m\nm.get_include()", True),
        ("import importlib\nimportlib.import_module('mnn_core.fusion')", False),
    ],
)
def test_the_checker_tells_allowed_from_forbidden(source, ok):
    assert (python_violations(source) == []) is ok


@pytest.mark.parametrize(
    "source, ok",
    [
        ("from mnn_core.abi cimport mnn_tensor, mnn_execution", True),
        ("from mnn_core.backend.kit.weights import checksum", True),
        ("from mnn_core.weights import checksum", False),
        ("from mnn_core import (\n    hookimpl,\n    Session,\n)", False),
        ("cimport mnn_core.abi", True),
        ("import mnn_core.session", False),
        ('include "mnn_core/backend/execution.pxi"', True),
        ('include "_x86_decl.pxi"', True),
        ('include "mnn_core/runtime/steps.pxi"', False),
    ],
)
def test_the_cython_checker_reads_import_lines(source, ok):
    assert (cython_violations(source) == []) is ok


# -- plugins stand alone ------------------------------------------------------------------------


def _plugin_dirs() -> dict[str, Path]:
    """Every plugin's folder by its module name (plugins/mnn-vulkan -> mnn_vulkan)."""
    return {p.name.replace("-", "_"): p for p in sorted(ROOT.glob("plugins/mnn-*")) if (p / "pyproject.toml").is_file()}


def _own_python_files(plugin: Path) -> list[Path]:
    """A plugin's package, tests, tools and build script: everything it ships or runs."""
    skip = {"build", "__pycache__"}
    return [
        p
        for p in sorted(plugin.rglob("*.py"))
        if not skip & set(p.relative_to(plugin).parts) and not any(s.endswith(".egg-info") for s in p.parts)
    ]


def sibling_uses(source: str, siblings: set[str]) -> list[tuple[int, str]]:
    """(line, what) for each import of a sibling plugin's module and each string naming a sibling's
    module or folder (a path into its checkout, an import_module or find_spec argument)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        for module in modules:
            if module.split(".")[0] in siblings:
                found.append((node.lineno, f"imports {module}"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text.split(".")[0] in siblings or any(
                text in (s, s.replace("_", "-")) or f"{s}/" in text or f"{s.replace('_', '-')}/" in text
                for s in siblings
            ):
                found.append((node.lineno, f"names {text!r}"))
    return found


def test_no_plugin_imports_or_reads_another_plugin():
    """A plugin builds, installs and tests alone: what two plugins share belongs to the core kit
    (mnn-metal's kernels are the kit's shaders, mnn_core/backend/kit/shaders, not mnn-vulkan's).
    Cross-checks of two plugins live in the repository's tests/ (test_metal_plans_on_vulkan.py)."""
    plugins = _plugin_dirs()
    assert {"mnn_metal", "mnn_vulkan"} <= set(plugins)
    bad = []
    for own, folder in plugins.items():
        siblings = set(plugins) - {own}
        for path in _own_python_files(folder):
            rel = path.relative_to(ROOT).as_posix()
            bad += [f"{rel}:{line}: {what}" for line, what in sibling_uses(path.read_text(), siblings)]
    assert not bad, "a plugin uses another plugin (share through mnn_core.backend.kit instead):\n  " + "\n  ".join(bad)


@pytest.mark.parametrize(
    "source, ok",
    [
        ("import mnn_vulkan", False),
        ("from mnn_vulkan import _vulkan", False),
        ("os.path.join(here, '..', '..', 'mnn-vulkan', 'mnn_vulkan', 'shaders')", False),
        ("importlib.import_module('mnn_vulkan.recorder')", False),
        ("from mnn_metal import msl", True),
        ("Session(g, backend='vulkan')", True),
        ("from mnn_core.backend.kit.spirv import SHADER_DIR", True),
    ],
)
def test_the_sibling_checker(source, ok):
    assert (sibling_uses(source, {"mnn_vulkan", "mnn_x86"}) == []) is ok
