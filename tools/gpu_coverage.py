"""Which models a GPU backend runs entirely on its own kernels (fallback=False), and how close it comes to
ONNX Runtime: every architecture of benchmarks/zoo_arch (both exporters) and every file of the real-model
corpus (mnn_core.zoo), one subprocess per file (a crash or a hang costs that file only).

    python tools/gpu_coverage.py --backend vulkan                  # architectures at the tests' small sizes
    python tools/gpu_coverage.py --backend opencl --set corpus --model magika
    python tools/gpu_coverage.py --backend vulkan --full           # architectures at full size

A line per file: `run` with the relative L2 error of the worst output against ONNX Runtime (`ok` within
--tol, else `MISMATCH`), or `declined` with the backend's reason (the first op it lacks), or `error`.
The last line counts them per set.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def _files(args) -> list[tuple[str, str, str | None]]:
    """(set, model, exporter or None) in the order run."""
    from zoo_arch import ARCHES
    from zoo_arch.export import EXPORTERS

    from mnn_core.zoo.corpus import MODELS

    out = []
    if args.set in ("all", "arch"):
        out += [("arch", n, e) for n in ARCHES for e in EXPORTERS]
    if args.set in ("all", "corpus"):
        out += [("corpus", m.name, None) for m in MODELS]
    if args.model:
        out = [f for f in out if f[1] in args.model]
    return out


def _rel_l2(got: np.ndarray, ref: np.ndarray) -> float:
    got, ref = np.asarray(got, np.float64).ravel(), np.asarray(ref, np.float64).ravel()
    if got.shape != ref.shape:
        return float("inf")
    denom = np.linalg.norm(ref)
    diff = np.linalg.norm(got - ref)
    return float(diff / denom) if denom > 0 else float(diff)


def _missing(path, feeds, backend: str) -> str:
    """Every op type the backend leaves to another one (a run with fallback on), with its reason."""
    import mnn_core as mnn

    try:
        sess = mnn.Session(mnn.load(path), backend=backend)
        sess.run(feeds)
    except Exception as e:  # the model fails even with fallback: say so
        return f"(with fallback: {type(e).__name__}: {str(e)[:120]})"
    if getattr(sess, "eager", False):
        return "(runs eagerly: control flow or sequences)"
    why: dict = {}
    for p in sess.plan:
        if p.backend != backend:
            why.setdefault(p.op, " ".join(str(p.reason).split())[:90])
    return "; ".join(f"{op} ({reason})" for op, reason in sorted(why.items()))


def one(backend: str, name: str, exporter: str | None, small: bool, missing: bool = False) -> dict:
    """Run one file on `backend` with fallback=False and on ONNX Runtime; a dict for the report line."""
    import onnxruntime as ort
    from bench_zoo import model_feeds

    import mnn_core as mnn

    if exporter is None:
        from mnn_core.zoo.corpus import BY_NAME
        from mnn_core.zoo.fetch import cache_dir, fetch

        path = fetch(BY_NAME[name], cache_dir(None))[0]
        feeds = model_feeds(name, 1)
    else:
        from zoo_arch import ARCHES
        from zoo_arch.export import onnx_file

        path = onnx_file(ARCHES[name], exporter, 1, None, small)
        feeds = model_feeds(name, 1, small)
    t0 = time.perf_counter()
    try:
        sess = mnn.Session(mnn.load(path), backend=backend, fallback=False)
        got = sess.run(feeds)
    except Exception as e:  # the reason a backend declines, or a failure to report
        msg = " ".join(str(e).split())[:240]
        kind = (
            "declined"
            if "fallback" in msg.lower() or "declin" in msg.lower() or "no kernel" in msg.lower()
            else "error"
        )
        out = {"status": kind, "why": f"{type(e).__name__}: {msg}"}
        if kind == "declined" and missing:
            out["missing"] = _missing(path, feeds, backend)
        return out
    secs = time.perf_counter() - t0
    ref_sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in ref_sess.get_outputs()]
    ref = dict(zip(names, ref_sess.run(None, feeds)))
    errs = {k: _rel_l2(got[k], v) for k, v in ref.items() if k in got and np.asarray(v).dtype.kind in "fiub"}
    worst = max(errs.values()) if errs else 0.0
    return {"status": "run", "err": worst, "secs": secs, "eager": bool(getattr(sess, "eager", False))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", required=True, help="vulkan, opencl, opengl, ...")
    p.add_argument("--set", choices=("all", "arch", "corpus"), default="all")
    p.add_argument("--model", action="append", help="only these models (repeatable)")
    p.add_argument("--full", action="store_true", help="architectures at full size (default: the tests' small sizes)")
    p.add_argument("--tol", type=float, default=1e-4, help="relative L2 bound against ONNX Runtime")
    p.add_argument("--timeout", type=float, default=900, help="seconds a file may take")
    p.add_argument(
        "--missing",
        action="store_true",
        help="for a declined file, list every op left to the reference kernels (a second run with fallback on)",
    )
    p.add_argument("--json", help="write the results here")
    p.add_argument("--one", nargs=2, metavar=("MODEL", "EXPORTER"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        name, exporter = args.one
        print(json.dumps(one(args.backend, name, None if exporter == "-" else exporter, not args.full, args.missing)))
        return 0
    results, counts = [], {}
    for set_, name, exporter in _files(args):
        label = name + (f" ({exporter})" if exporter else "")
        cmd = [sys.executable, __file__, "--backend", args.backend, "--one", name, exporter or "-"]
        cmd += ["--full"] * args.full + ["--missing"] * args.missing
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            r = (
                json.loads(lines[-1])
                if lines
                else {"status": "error", "why": f"exit {proc.returncode}: " + " ".join(proc.stderr.split()[-40:])}
            )
        except subprocess.TimeoutExpired:
            r = {"status": "error", "why": f"timed out after {args.timeout:.0f} s"}
        r.update(set=set_, model=name, exporter=exporter)
        ok = r["status"] == "run" and r["err"] <= args.tol
        c = counts.setdefault(set_, [0, 0, 0])
        c[0] += ok
        c[1] += r["status"] == "run"
        c[2] += 1
        if r["status"] == "run":
            line = f"run       {label:40s} rel L2 {r['err']:.2e} {'ok' if ok else 'MISMATCH'} ({r['secs']:.1f} s)"
        else:
            line = f"{r['status']:9s} {label:40s} {r['why']}"
            if r.get("missing"):
                line += f"\n          {'':40s} all ops left to others: {r['missing']}"
        print(line, flush=True)
        results.append(r)
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    per = ", ".join(f"{s} {c[0]}/{c[2]}" for s, c in counts.items())
    print(
        f"{args.backend}: {total[0]}/{total[2]} files run with fallback=False within {args.tol:g} ({per}); "
        f"{total[1] - total[0]} run outside the bound"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
