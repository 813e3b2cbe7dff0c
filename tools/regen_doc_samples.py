"""Rewrite the sample output in mnn's docs by running the commands that make it.

    python tools/regen_doc_samples.py              # every block marked <!-- doctest: regen -->
    python tools/regen_doc_samples.py docs/USER_GUIDE.md --check   # exit 1 if a sample would change

A console block gets each "$ " command's real output (stdout and stderr, trailing
spaces dropped) under it; a python block's stdout replaces the ```text block right
after it. Commands run in a scratch folder filled as tests/test_docs.py fills it
(tools/docblocks.py), on this machine with its backends: run it on one that has
the backends the samples show (.ci/run installs them), and read the diff.
Blocks whose backends (`needs`) are unavailable here are left as they are.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import docblocks as db


def _console(block: db.Block, folder: Path) -> str:
    parts = []
    for cmd in db.run_shell(block, folder):
        out = "\n".join(line.rstrip() for line in cmd.output.rstrip("\n").split("\n"))
        parts.append(f"$ {cmd.command}\n{out}\n" if out else f"$ {cmd.command}\n")
    return "\n".join(parts)


def _available(block: db.Block) -> bool:
    import mnn_core as mnn

    status = {s.name: s.available for s in mnn.backends()}
    return all(status.get(name, False) for name in block.needs)


def regenerate(path: Path, folder: Path) -> str:
    """The file's text with every regen block's sample rewritten."""
    lines = path.read_text().split("\n")
    blocks = db.parse(path)
    replace: list[tuple[int, int, str]] = []  # (first line, last line) inside a fence, 0-based, and the new text
    namespace: dict = {"__name__": "__doc__"}
    for i, block in enumerate(blocks):
        if block.lang == "python" and block.skip is None and _available(block):
            out = db.run_python(block, namespace, folder)
            nxt = blocks[i + 1] if i + 1 < len(blocks) else None
            if block.regen and nxt is not None and nxt.lang == "text":
                replace.append((nxt.line, nxt.end - 2, out))
        elif block.regen and block.lang == "console" and _available(block):
            replace.append((block.line, block.end - 2, _console(block, folder)))
    for first, last, text in reversed(replace):
        lines[first : last + 1] = text.rstrip("\n").split("\n")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="*", type=Path, help="docs to rewrite (default: every doc the tests run)")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a sample differs")
    args = p.parse_args(argv)
    files = [f.resolve() for f in args.files] or db.doc_files()
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        models = db.build_models(Path(tmp) / "models-built")
        for n, path in enumerate(files):
            if not any(b.regen for b in db.parse(path)):
                continue
            text = regenerate(path, db.prepare_workspace(Path(tmp) / f"doc{n}", models))
            if text != path.read_text():
                stale.append(path)
                if not args.check:
                    path.write_text(text)
            print(
                f"{path.relative_to(db.ROOT)}: {'stale' if path in stale else 'up to date'}"
                f"{' (rewritten)' if path in stale and not args.check else ''}"
            )
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
