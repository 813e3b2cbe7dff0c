"""The code blocks of mnn's docs, and how to run them: shared by tests/test_docs.py
(which runs them) and tools/regen_doc_samples.py (which rewrites their sample output).

Docs: README.md, docs/*.md, plugins/*/README.md. A fenced block is run when its
language says what it is: ```python (a ">>>" block runs as a doctest and its
output is compared), ```bash / ```sh (the whole block under `bash -e`), or
```console (each "$ " line is a command; the lines after it are its sample
output, not compared, except that a sample showing "mnnx: error:" or a
traceback expects the command to fail). ```text and other languages are never
run. An HTML comment on the line before a fence says more, words separated by
";":

    <!-- doctest: skip (why) -->        not run: installs packages, needs a Mac, takes minutes...
    <!-- doctest: needs vulkan -->       skipped, with the backend's own reason, where it is unavailable
    <!-- doctest: regen -->              tools/regen_doc_samples.py rewrites its sample output (a
                                         console block's, or a python block's in the ```text after it)

Python blocks of one file run in order in one namespace, in a scratch folder
that `prepare_workspace` fills with the files the docs name (tiny.mnn, model.mnn,
x.npy, calib.npz, det.mnn, models/).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ("python",)
SHELL = ("bash", "sh", "console")
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$")
_FAILS = re.compile(r"^(mnnx?: error:|Traceback |\w+(\.\w+)*Error: )", re.M)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("plugins/*/README.md"))]


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    end: int  # of the closing fence
    lang: str
    code: str
    skip: str | None = None
    needs: list[str] = field(default_factory=list)
    regen: bool = False

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def parse(path: Path) -> list[Block]:
    """Every fenced block of a markdown file, with the doctest marker above it."""
    lines = path.read_text().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        code = "\n".join(ln[len(indent) :] if ln.startswith(indent) else ln for ln in lines[i + 1 : j])
        block = Block(path, i + 1, j + 1, lang, code + "\n")
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = _MARKER.match(lines[k]) if k >= 0 else None
        if marker:
            _read_marker(block, marker.group(1))
        blocks.append(block)
        i = j + 1
    return blocks


def _read_marker(block: Block, text: str) -> None:
    """`skip (reason)`, `needs a, b`, `regen`, separated by ";" (a reason may hold ";" and parentheses)."""
    text = text.strip()
    while text:
        if text.startswith("skip"):
            rest = text[4:].lstrip()
            if not rest.startswith("("):
                raise ValueError(f"{block.name}: a skip marker needs its reason: skip (why)")
            depth, end = 0, -1
            for i, ch in enumerate(rest):
                depth += {"(": 1, ")": -1}.get(ch, 0)
                if depth == 0:
                    end = i
                    break
            if end < 0:
                raise ValueError(f"{block.name}: the skip reason's parenthesis is not closed")
            block.skip = rest[1:end].strip()
            text = rest[end + 1 :]
        else:
            word, _, text = text.partition(";")
            word = word.strip()
            if word.startswith("needs "):
                block.needs += [n.strip() for n in word[6:].split(",")]
            elif word == "regen":
                block.regen = True
            else:
                raise ValueError(f"{block.name}: unknown doctest marker {word!r}")
        text = text.strip().removeprefix(";").strip()


def runnable(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.lang in PYTHON + SHELL]


# -- the scratch folder ---------------------------------------------------------------------------


def tiny_graph(seed: int = 0):
    """The user guide's GraphBuilder example: Conv -> Relu -> global pool -> MatMul -> Softmax."""
    import numpy as np

    import mnn_core as mnn

    rng = np.random.default_rng(seed)
    b = mnn.GraphBuilder("tiny")
    x = b.input("x", ("N", 3, 32, 32))
    y = b.Relu(b.Conv(x, b.const(rng.standard_normal((8, 3, 3, 3)).astype("float32")), None, pads=[1, 1, 1, 1]))
    y = b.Flatten(b.GlobalAveragePool(y), axis=1)
    b.output(b.Softmax(b.MatMul(y, b.const(rng.standard_normal((8, 10)).astype("float32"))), axis=-1), "probs")
    return b.build()


def prepare_workspace(folder: Path, models: Path | None = None) -> Path:
    """Fill `folder` with what the docs' blocks read; `models`: a folder of examples/build_models.py's output."""
    import numpy as np

    import mnn_core as mnn

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    graph = tiny_graph()
    mnn.save(graph, folder / "tiny.mnn")
    mnn.save(graph, folder / "model.mnn")
    np.save(folder / "x.npy", rng.random((2, 3, 32, 32), dtype="float32"))
    np.savez(folder / "calib.npz", x=rng.random((8, 3, 32, 32), dtype="float32"))
    b = mnn.GraphBuilder("det")  # an op that only the reference backend runs: the user guide's fallback example
    b.output(b.Det(b.Relu(b.input("x", (2, 3, 3)))), "y")
    mnn.save(b.build(), folder / "det.mnn")
    (folder / "examples").symlink_to(ROOT / "examples")
    if models is not None:
        (folder / "models").symlink_to(models)
    return folder


def build_models(folder: Path) -> Path:
    """MobileNetV2, ResNet-18, SqueezeNet 1.1 as .mnn (examples/build_models.py), once."""
    if not (folder / "squeezenet1_1.mnn").exists():
        sys.path.insert(0, str(ROOT / "examples"))
        try:
            import build_models as bm
        finally:
            sys.path.remove(str(ROOT / "examples"))
        with contextlib.redirect_stdout(io.StringIO()):
            bm.main(["-o", str(folder)])
    return folder


# -- running --------------------------------------------------------------------------------------


@contextlib.contextmanager
def _inside(folder: Path):
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def run_python(block: Block, namespace: dict, folder: Path) -> str:
    """Execute a python block in `namespace` inside `folder`; its stdout. A ">>>" block is a doctest."""
    out = io.StringIO()
    with _inside(folder), contextlib.redirect_stdout(out):
        if block.code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(block.code, namespace, block.name, str(block.path), block.line)
            runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
            report = io.StringIO()
            runner.run(test, out=report.write, clear_globs=False)
            if runner.failures:
                raise AssertionError(f"{block.name}: doctest failed\n{report.getvalue()}")
        else:
            exec(compile(block.code, block.name, "exec"), namespace)  # noqa: S102 - the docs are ours
    return out.getvalue()


@dataclass
class Command:
    command: str
    sample: str  # the output the doc shows
    returncode: int = 0
    output: str = ""  # stdout and stderr, as run

    @property
    def expects_failure(self) -> bool:
        return bool(_FAILS.search(self.sample))


def console_commands(block: Block) -> list[Command]:
    cmds: list[Command] = []
    for line in block.code.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            cmds.append(Command(line[2:].strip(), ""))
        elif cmds:
            cmds[-1].sample += line + "\n"
    return cmds


def _run_mnn_here(argv: list[str]) -> tuple[int, str]:
    from mnn_core.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(argv)
    return int(code or 0), out.getvalue()


def run_command(command: str, folder: Path, timeout: float = 120) -> tuple[int, str]:
    """Run one shell command in `folder`: a plain `mnnx ...` in this process (the CLI's own `main`,
    as tests/test_cli.py calls it, without starting Python again), anything else under bash."""
    words = shlex.split(command, comments=True)
    if words and words[0] == "mnnx" and not set("|&;<>$`") & set(command.split("#")[0]):
        with _inside(folder):
            return _run_mnn_here(words[1:])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=timeout
    )
    return done.returncode, done.stdout + done.stderr


def run_shell(block: Block, folder: Path) -> list[Command]:
    """Run a shell block: a console block command by command, a bash/sh block whole."""
    cmds = console_commands(block) if block.lang == "console" else [Command(block.code, "")]
    for cmd in cmds:
        cmd.returncode, cmd.output = run_command(cmd.command, folder)
    return cmds
