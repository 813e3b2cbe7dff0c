"""Install Alibaba's MNN wheel beside mnn in one fresh venv and check that both work.

    python tools/coexist_mnn.py [--cache DIR] [--wheels DIR] [--venv DIR]

Checks, in order (each failure is one line naming what broke; exit 1):
  1. the two wheels' RECORDs share no file (no script or module owned twice);
  2. `import mnn_core` and `import MNN, _tools` both work in the venv;
  3. `mnnx` runs, and MNN's `mnn` and `mnnconvert` run (mnnconvert converts a small ONNX file);
  4. uninstalling MNN leaves `mnnx` working; reinstalling it and uninstalling mnn-core leaves
     `mnn` and `mnnconvert` working.

The MNN wheel comes from --cache (a folder holding mnn-*.whl), else `pip download --no-deps MNN`
into it; exit 77 when it can be neither found nor fetched, or numpy and pluggy cannot be installed.
mnn's wheels come from --wheels (dist/ of tools/build_wheels.py or `pip wheel`), else mnn-core is
built from this tree (a few seconds).
MNN's scripts import a module that runs `pip install` of a logging SDK; every command here runs with
PIP_NO_INDEX=1, so that install fails at once and MNN carries on without it (its own try/except).
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = 77  # the exit status of "could not get the MNN wheel"


class Failed(Exception):
    pass


class Offline(Exception):
    """PyPI (and pip's cache) could not give the venv numpy and pluggy: nothing to check."""


def run(cmd: list, env: dict, what: str, timeout: int = 600) -> str:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise Failed(f"{what}: `{' '.join(map(str, cmd))}` exited {proc.returncode}: {' | '.join(tail)}")
    return proc.stdout + proc.stderr


def mnn_wheel(cache: Path) -> Path | None:
    found = sorted(cache.glob("mnn-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--only-binary=:all:",
                "MNN",
                "-d",
                str(cache),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        found = sorted(cache.glob("mnn-*.whl"))
        if proc.returncode or not found:
            print(f"cannot fetch the MNN wheel: {proc.stderr.strip().splitlines()[-1:] or 'no wheel'}")
            return None
    return found[-1]


def mnn_core_wheels(wheels: Path | None, out: Path) -> list[Path]:
    if wheels is not None:
        picked = sorted(wheels.glob("mnn_core-*.whl")) + sorted(wheels.glob("mnn_x86-*.whl"))
        if not picked:
            raise Failed(f"no mnn_core-*.whl in {wheels}")
        return picked
    run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
        dict(os.environ),
        "building the mnn-core wheel",
    )
    return sorted(out.glob("mnn_core-*.whl"))


def record(venv_dir: Path, dist: str) -> set[str]:
    recs = glob.glob(str(venv_dir / "lib" / "python*" / "site-packages" / f"{dist}-*.dist-info" / "RECORD"))
    if not recs:
        raise Failed(f"{dist} is not installed in {venv_dir}")
    return {line.split(",")[0] for line in Path(recs[0]).read_text().splitlines() if line}


def tiny_onnx(path: Path) -> None:
    """A Relu model written with onnx's helpers (onnx is mnn's test dependency), for mnnconvert."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def check(venv_dir: Path, mnn_whl: Path, ours: list[Path], work: Path) -> None:
    bin_dir = venv_dir / "bin"
    py = str(bin_dir / "python")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PIP_NO_INDEX": "1",
        "VIRTUAL_ENV": str(venv_dir),
        "PYTHONNOUSERSITE": "1",
    }
    env.pop("PYTHONPATH", None)
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    online = {**env}
    online.pop("PIP_NO_INDEX")  # numpy and pluggy come from PyPI (or pip's cache)
    try:
        run(pip + ["numpy", "pluggy"], online, "installing numpy and pluggy")
    except Failed as exc:
        raise Offline(str(exc)) from None
    run(pip + ["--no-deps"] + [str(w) for w in ours], env, "installing mnn's wheels")
    run(pip + ["--no-deps", str(mnn_whl)], env, "installing the MNN wheel")

    shared = record(venv_dir, "mnn_core") & record(venv_dir, "mnn")
    if shared:
        raise Failed(f"both wheels own {sorted(shared)[:5]}")
    run([py, "-c", "import mnn_core, MNN, _tools; assert mnn_core.__file__ != MNN.__file__"], env, "importing both")

    onnx_file, converted = work / "tiny.onnx", work / "tiny_official.mnn"
    tiny_onnx(onnx_file)

    def ours_work():
        out = run([str(bin_dir / "mnnx"), "--help"], env, "mnnx --help")
        if "usage" not in out.lower():
            raise Failed(f"mnnx --help printed no usage: {out[:200]}")
        run(
            [
                py,
                "-c",
                "import mnn_core, numpy as np; g = mnn_core.GraphBuilder('t'); x = g.input('x', (2,));"
                "g.output(g.Relu(x), 'y'); s = mnn_core.Session(g.build());"
                "assert (s.run({'x': np.array([-1, 2], 'float32')})['y'] == [0, 2]).all()",
            ],
            env,
            "running a model with mnn",
        )

    def theirs_work():
        out = run([str(bin_dir / "mnn")], env, "MNN's mnn")
        if "mnnconvert" not in out:
            raise Failed(f"MNN's mnn printed no list of its tools: {out[:200]}")
        converted.unlink(missing_ok=True)
        run(
            [
                str(bin_dir / "mnnconvert"),
                "-f",
                "ONNX",
                "--modelFile",
                str(onnx_file),
                "--MNNModel",
                str(converted),
                "--bizCode",
                "coexist",
            ],
            env,
            "MNN's mnnconvert",
        )
        if not converted.is_file():
            raise Failed("MNN's mnnconvert wrote no model")

    ours_work()
    theirs_work()
    run([py, "-m", "pip", "uninstall", "-y", "-q", "mnn"], env, "uninstalling MNN")
    if (bin_dir / "mnn").exists() or not (bin_dir / "mnnx").exists():
        raise Failed("uninstalling MNN left its mnn script or removed mnnx")
    ours_work()
    run(pip + ["--no-deps", str(mnn_whl)], env, "reinstalling the MNN wheel")
    run([py, "-m", "pip", "uninstall", "-y", "-q", "mnn-core"], env, "uninstalling mnn-core")
    if (bin_dir / "mnnx").exists():
        raise Failed("uninstalling mnn-core left the mnnx script")
    theirs_work()
    run([py, "-c", "import MNN, _tools"], env, "importing MNN after mnn-core is gone")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "mnn-official-wheel",
        help="folder holding (or to receive) the MNN wheel",
    )
    p.add_argument("--wheels", type=Path, help="folder with mnn_core-*.whl (and mnn_x86-*.whl); default: build")
    p.add_argument("--venv", type=Path, help="where to make the venv (default: a temporary folder)")
    args = p.parse_args(argv)
    whl = mnn_wheel(args.cache)
    if whl is None:
        return SKIP
    with tempfile.TemporaryDirectory(prefix="mnn-coexist-") as tmp:
        work = Path(tmp)
        venv_dir = args.venv or work / "venv"
        venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
        try:
            check(venv_dir, whl, mnn_core_wheels(args.wheels, work), work)
        except Offline as exc:
            print(f"cannot fill the venv: {exc}")
            return SKIP
        except (Failed, subprocess.TimeoutExpired) as exc:
            print(f"coexistence check failed: {exc}")
            return 1
    print(f"ok: {whl.name} and mnn share a venv; each CLI works, and survives uninstalling the other")
    return 0


if __name__ == "__main__":
    sys.exit(main())
