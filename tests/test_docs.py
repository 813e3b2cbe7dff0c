"""The docs run: every ```python, ```bash/```sh and ```console block of README.md,
docs/*.md and plugins/*/README.md is executed here (tools/docblocks.py says how,
and how a doc marks a block that cannot run here, with the reason)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import docblocks as db  # noqa: E402

sys.path.pop(0)

# Other people's areas for now: a block there that fails is skipped with this reason, not fixed here.
NOT_YET: dict[str, str] = {}
FILES = db.doc_files()
BLOCKS = [b for path in FILES for b in db.runnable(db.parse(path))]
_namespaces: dict[Path, tuple[dict, list[int]]] = {}  # per doc: the python namespace and the blocks run into it


def _rel(path: Path) -> str:
    return str(path.relative_to(db.ROOT))


@pytest.fixture(scope="session")
def doc_models(tmp_path_factory):
    return db.build_models(tmp_path_factory.mktemp("doc-models"))


@pytest.fixture(scope="session")
def workspaces(tmp_path_factory, doc_models):
    made: dict[Path, Path] = {}

    def folder(path: Path) -> Path:
        if path not in made:
            made[path] = db.prepare_workspace(tmp_path_factory.mktemp("doc-" + path.parent.name), doc_models)
        return made[path]

    return folder


def _why_not(block: db.Block) -> str | None:
    if block.skip:
        return block.skip
    import mnn_core as mnn

    status = {s.name: s for s in mnn.backends()}
    plugin = block.path.parent.name if block.path.parent.parent.name == "plugins" else None
    if plugin and importlib.util.find_spec(plugin.replace("-", "_")) is None:
        return f"{plugin} is not installed"
    if plugin and plugin.removeprefix("mnn-") not in status:
        return f"{plugin} is not loaded (MNN_LOAD_PLUGINS, MNN_DISABLE_PLUGIN_AUTOLOAD)"
    if block.needs:
        for name in block.needs:
            if name not in status:
                return f"needs the {name} backend, which is not installed"
            if not status[name].available:
                return f"needs the {name} backend: {status[name].reason}"
    return None


def _python_upto(block: db.Block, folder: Path) -> str:
    """Run the doc's earlier python blocks not yet run (in order, once), then this one."""
    ns, done = _namespaces.setdefault(block.path, ({"__name__": "__doc__"}, []))
    for earlier in db.runnable(db.parse(block.path)):
        if earlier.line >= block.line:
            break
        if earlier.lang == "python" and earlier.line not in done and _why_not(earlier) is None:
            done.append(earlier.line)
            try:
                db.run_python(earlier, ns, folder)
            except Exception as exc:
                pytest.fail(f"{earlier.name}, run before {block.name}, failed: {type(exc).__name__}: {exc}")
    done.append(block.line)
    return db.run_python(block, ns, folder)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_block_runs(block, workspaces):
    reason = _why_not(block)
    if reason:
        pytest.skip(reason)
    folder = workspaces(block.path)
    try:
        if block.lang == "python":
            _python_upto(block, folder)
            return
        for cmd in db.run_shell(block, folder):
            if cmd.expects_failure:
                assert cmd.returncode != 0, f"{block.name}: `{cmd.command}` should fail, as the doc shows"
            else:
                assert cmd.returncode == 0, f"{block.name}: `{cmd.command}` exit {cmd.returncode}:\n{cmd.output}"
    except Exception as exc:
        if _rel(block.path) in NOT_YET:
            pytest.skip(f"{NOT_YET[_rel(block.path)]} ({type(exc).__name__}: {str(exc)[:200]})")
        raise


def test_every_fence_says_its_language():
    """An unlabelled fence would escape the runner: shell goes in ```bash or ```console, output in ```text."""
    bare = [b.name for path in FILES if _rel(path) not in NOT_YET for b in db.parse(path) if not b.lang]
    assert not bare, f"fences without a language (```bash, ```console, ```text, ...): {bare}"


def test_blocks_were_found():
    langs = {b.lang for b in BLOCKS}
    assert {"python", "bash", "console"} <= langs and len(BLOCKS) > 20
