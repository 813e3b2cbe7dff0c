"""Mutation check: plant known bugs and see which tests catch them.

    python tools/mutate.py                 # every mutant, a table of caught / missed
    python tools/mutate.py --list
    python tools/mutate.py --only padding-same-swap,planner-alias-lifetime --json out.json

Each mutant is a textual patch (one exact occurrence of `old` replaced by `new`) applied to a fresh copy
of the source tree in a temporary folder; the source tree itself is only read. The copy goes first on
PYTHONPATH (ahead of the editable mnn-core and the installed plugins). A plugin the mutant patches runs
from the copy too: its compiled modules come from the installed package, and the one the patch touches
is rebuilt in the copy (`build`). Each mutant's test groups run one by one, so the report says which
group caught it; a group's tests are first run on the unpatched copy (a failing baseline judges nothing).

Exit status: 0 when every mutant was caught, 1 when one was missed, 2 on a baseline failure or a patch
that no longer applies (the code moved: update the mutant).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Mutant:
    name: str
    what: str  # the bug, in words
    path: str  # relative to the repository root
    old: str
    new: str
    groups: dict[str, list[str]]  # label -> pytest arguments (paths relative to the root, -k ...)
    plugin: str | None = None  # the plugin package the patch is in ("mnn_x86"): run it from the copy
    build: list[str] = field(default_factory=list)  # command (in the plugin's folder) rebuilding what changed


_X86_GEMM_TESTS = ["plugins/mnn-x86/tests/test_conformance.py", "-k", "MatMul or Gemm or Conv"]
_X86_BUILD = ["env", "MNN_X86_EXTENSIONS=_x86", sys.executable, "setup.py", "-q", "build_ext", "--inplace"]  # _x86 only

MUTANTS = [
    Mutant(
        "reference-conv-dilation",
        "the reference convolution takes the dilations of the spatial axes in reverse order "
        "(right for square dilations only)",
        "mnn_core/ops/conv.py",
        "for j, d, s, m in zip(tap, dil, strides, out_sizes))",
        "for j, d, s, m in zip(tap, dil[::-1], strides, out_sizes))",
        {
            "oracle (ONNX Runtime)": [
                "tests/test_reference_vs_onnxruntime.py",
                "tests/test_oracle_extra.py",
                "-k",
                "Conv",
            ],
            "reference conformance": ["tests/test_conformance_reference.py", "-k", "Conv"],
        },
    ),
    Mutant(
        "reference-bn-running-var",
        "BatchNormTraining's running variance accumulates the biased batch variance",
        "mnn_core/ops/norm_train.py",
        "unbiased = var * count / max(count - 1, 1)",
        "unbiased = var",
        {
            "oracle (PyTorch)": ["tests/test_oracle_torch.py", "-k", "BatchNormTraining"],
            "training": ["tests/test_train.py", "tests/test_nn.py"],
        },
    ),
    Mutant(
        "reference-adam-bias-correction",
        "AdamUpdate corrects m's bias with beta2 instead of beta1",
        "mnn_core/ops/optim_ops.py",
        "p64 = p64 - (lr / (1.0 - b1**t)) * m2 / denom",
        "p64 = p64 - (lr / (1.0 - b2**t)) * m2 / denom",
        {"oracle (PyTorch)": ["tests/test_oracle_torch.py", "-k", "AdamUpdate"], "optimizers": ["tests/test_optim.py"]},
    ),
    Mutant(
        "padding-same-swap",
        "the shared SAME-padding helper puts the odd pad at the start for SAME_UPPER (SAME_LOWER's rule)",
        "mnn_core/backend/kit/geometry.py",
        "+ eff[i] - size)\n"
        "            small, big = total // 2, total - total // 2\n"
        '            pads[i], pads[i + k] = (small, big) if attrs["auto_pad"] == "SAME_UPPER" else (big, small)',
        "+ eff[i] - size)\n"
        "            small, big = total // 2, total - total // 2\n"
        '            pads[i], pads[i + k] = (big, small) if attrs["auto_pad"] == "SAME_UPPER" else (small, big)',
        {
            "kit geometry (ONNX Runtime)": ["tests/test_kit_geometry.py"],
            "oracle (ONNX Runtime)": [
                "tests/test_reference_vs_onnxruntime.py",
                "tests/test_oracle_extra.py",
                "-k",
                "Conv or Pool",
            ],
            "reference conformance": ["tests/test_conformance_reference.py", "-k", "Conv or Pool"],
            "x86 conformance": [
                "plugins/mnn-x86/tests/test_conformance.py",
                "-k",
                "AVX512 and not TwoThreads and not BF16 and (Conv or Pool)",
            ],
        },
    ),
    Mutant(
        "x86-gemm-tile-rows",
        "the x86 GEMM's last row panel (M not a multiple of the tile's MR rows) computes one row too few",
        "plugins/mnn-x86/mnn_x86/csrc/gemm_impl.h",
        "const int rows = (int)(M - p * MR < MR ? M - p * MR : MR);",
        "const int rows = (int)(M - p * MR < MR ? M - p * MR - 1 : MR);",
        {"x86 conformance": _X86_GEMM_TESTS, "x86 kernels": ["plugins/mnn-x86/tests/test_tiles.py"]},
        plugin="mnn_x86",
        build=_X86_BUILD,
    ),
    Mutant(
        "x86-gemm-k-slices",
        "the x86 GEMM overwrites C with each KC slice of the reduction instead of accumulating "
        "(wrong only where K exceeds one slice)",
        "plugins/mnn-x86/mnn_x86/csrc/gemm_impl.h",
        "const int first = k0 == 0, last = k0 + kc >= K;",
        "const int first = 1, last = k0 + kc >= K;",
        {"x86 conformance": _X86_GEMM_TESTS, "x86 kernels": ["plugins/mnn-x86/tests/test_tiles.py"]},
        plugin="mnn_x86",
        build=_X86_BUILD,
    ),
    Mutant(
        "opencl-pool-right-edge",
        "the OpenCL pooling kernel reads one column past the right edge of the input (into the next row)",
        "plugins/mnn-opencl/mnn_opencl/kernels/pool.cl",
        "if (iw < 0 || iw >= W) continue;",
        "if (iw < 0 || iw > W) continue;",
        {"opencl conformance": ["plugins/mnn-opencl/tests/test_conformance.py", "-k", "Pool"]},
        plugin="mnn_opencl",
    ),
    Mutant(
        "planner-alias-lifetime",
        "the memory planner ends an aliased buffer's lifetime at its first member's last read, not the latest",
        "mnn_core/memory/planner.py",
        "b[2] = max(b[2], u.last)",
        "b[2] = min(b[2], u.last)",
        {"memory": ["tests/test_memory.py"], "sessions": ["tests/test_session.py", "tests/test_random_graphs.py"]},
    ),
]


# -- the copy ---------------------------------------------------------------------------------------


def _skip(path: str) -> bool:
    parts = path.split(os.sep)
    return (
        ".git" in parts
        or "__pycache__" in parts
        or ".pytest_cache" in parts
        or (len(parts) > 2 and parts[0] == "plugins" and parts[2] == "build")
    )


def copy_tree(dest: str) -> str:
    """The repository's files (no .git, no build folders) under dest/tree, through tar (no rsync needed)."""
    tree = os.path.join(dest, "tree")
    archive = os.path.join(dest, "tree.tar")
    with tarfile.open(archive, "w") as tar:
        tar.add(ROOT, arcname="tree", filter=lambda info: None if _skip(os.path.relpath(info.name, "tree")) else info)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="tar")
    os.remove(archive)
    return tree


def _installed_package(pkg: str) -> str:
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"mutate: {pkg} is not installed; install its plugin first (pip install ./plugins/...)")
    return list(spec.submodule_search_locations)[0]


def plugin_dir(tree: str, pkg: str) -> str:
    return os.path.join(tree, "plugins", "mnn-" + pkg.split("_", 1)[1])


def overlay_compiled(tree: str, pkg: str) -> None:
    """The installed plugin's compiled modules into the copy's package, so it imports from the copy."""
    src, dst = _installed_package(pkg), os.path.join(plugin_dir(tree, pkg), pkg)
    for name in os.listdir(src):
        if name.endswith((".so", ".pyd")):
            shutil.copy2(os.path.join(src, name), os.path.join(dst, name))


def apply(tree: str, m: Mutant) -> None:
    path = os.path.join(tree, m.path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.count(m.old) != 1:
        raise ValueError(f"{m.name}: {m.path} holds {text.count(m.old)} copies of the patched text (need 1)")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(m.old, m.new))


def _env(tree: str, m: Mutant) -> dict:
    env = dict(os.environ)
    paths = [tree] + ([plugin_dir(tree, m.plugin)] if m.plugin else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env["XDG_CACHE_HOME"] = os.path.join(tree, ".cache")  # no compiled program of a mutant in the user's cache
    env["MNN_CORE_ROOT"] = tree
    return env


def run_group(tree: str, m: Mutant, args: list[str], timeout: int) -> tuple[str, list[str], float]:
    """('pass' | 'fail' | 'error', the failing tests or why it errored, seconds). 'error' is pytest ending
    otherwise (a collection error, a crash): on a patched copy whose baseline passed, the suite fails all
    the same, so check() counts it as caught."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no", "-rf", "--maxfail=20", *args]
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=_env(tree, m), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "error", [f"timed out after {timeout} s"], time.time() - start
    failed = re.findall(r"^FAILED (\S+)", proc.stdout, re.M)
    if proc.returncode == 0:
        return "pass", [], time.time() - start
    if proc.returncode == 1 and failed:
        return "fail", failed, time.time() - start
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    return "error", [f"pytest exited {proc.returncode}: {' | '.join(tail)}"], time.time() - start


def prepare(work: str, m: Mutant, patched: bool) -> str:
    folder = tempfile.mkdtemp(prefix=("mut-" if patched else "base-") + m.name + "-", dir=work)
    tree = copy_tree(folder)
    if m.plugin:
        overlay_compiled(tree, m.plugin)
    if patched:
        apply(tree, m)
        if m.build:
            proc = subprocess.run(
                m.build, cwd=plugin_dir(tree, m.plugin), env=_env(tree, m), capture_output=True, text=True
            )
            if proc.returncode:
                raise RuntimeError(f"{m.name}: rebuild failed: {proc.stderr.strip().splitlines()[-3:]}")
    return tree


def check(m: Mutant, work: str, timeout: int, baseline: bool) -> dict:
    """Run the mutant's groups on its own folder under `work` (the caller removes `work`)."""
    work = tempfile.mkdtemp(prefix=m.name + "-", dir=work)
    result = {"mutant": m.name, "what": m.what, "file": m.path, "groups": {}}
    base = prepare(work, m, patched=False) if baseline else None
    tree = prepare(work, m, patched=True)
    for label, args in m.groups.items():
        entry = {}
        if base:
            status, failed, secs = run_group(base, m, args, timeout)
            entry["baseline"] = status
            if status != "pass":
                entry.update(verdict="baseline fails", tests=failed)
                result["groups"][label] = entry
                continue
        status, failed, secs = run_group(tree, m, args, timeout)
        verdict = {"fail": "caught", "pass": "missed"}.get(status, "caught" if base else "error")
        if status == "error" and "timed out" in failed[0]:
            verdict = "error"
        entry.update(verdict=verdict, tests=failed, seconds=round(secs, 1))
        result["groups"][label] = entry
    verdicts = [g["verdict"] for g in result["groups"].values()]
    result["verdict"] = (
        "caught" if "caught" in verdicts else "missed" if all(v == "missed" for v in verdicts) else "error"
    )
    return result


def report(results: list[dict]) -> str:
    lines = []
    for r in results:
        lines.append(f"{r['verdict'].upper():7} {r['mutant']}: {r['what']} ({r['file']})")
        if r.get("error"):
            lines.append(f"        {r['error']}")
        for label, g in r["groups"].items():
            tests = g.get("tests") or []
            shown = ", ".join(t.split("::", 1)[-1] for t in tests[:4]) + (" ..." if len(tests) > 4 else "")
            lines.append(
                f"        {label}: {g['verdict']}"
                + (f" ({len(tests)}{'+' if len(tests) >= 20 else ''} failed: {shown})" if tests else "")
            )
    caught = sum(r["verdict"] == "caught" for r in results)
    lines.append(f"{caught} of {len(results)} mutants caught")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated mutant names")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--no-baseline", action="store_true", help="skip the runs on the unpatched copy")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per test group (default 1800)")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies (their folder is printed)")
    args = ap.parse_args(argv)
    mutants = MUTANTS
    if args.only:
        names = {n.strip() for n in args.only.split(",")}
        unknown = names - {m.name for m in MUTANTS}
        if unknown:
            ap.error(f"unknown mutant(s) {sorted(unknown)}; --list shows them")
        mutants = [m for m in MUTANTS if m.name in names]
    if args.list:
        for m in mutants:
            print(f"{m.name}: {m.what} ({m.path})")
        return 0
    work = tempfile.mkdtemp(prefix="mnn-mutate-")
    results = []
    try:
        for m in mutants:
            try:
                results.append(check(m, work, args.timeout, not args.no_baseline))
            except (ValueError, RuntimeError) as exc:
                results.append(
                    {
                        "mutant": m.name,
                        "what": m.what,
                        "file": m.path,
                        "groups": {},
                        "verdict": "error",
                        "error": str(exc),
                    }
                )
            finally:
                if not args.keep:  # each mutant's copies go as soon as it is judged
                    for name in os.listdir(work):
                        shutil.rmtree(os.path.join(work, name), ignore_errors=True)
            print(report(results[-1:]).rsplit("\n", 1)[0], flush=True)
    finally:
        if args.keep:
            print(f"copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(report(results).rsplit("\n", 1)[1])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if any(
        r["verdict"] == "error" or any(g["verdict"] == "baseline fails" for g in r["groups"].values()) for r in results
    ):
        return 2
    return 0 if all(r["verdict"] == "caught" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
