"""GPU session start-up, cold and warm: each start in a fresh process, on any backend and model list.

    python benchmarks/bench_startup.py --backend vulkan --backend opencl --backend opengl
    python benchmarks/bench_startup.py --backend vulkan --set corpus --model magika
    python benchmarks/bench_startup.py --backend opencl --markdown benchmarks/RESULTS_GPU.md

Per backend and model, one cache folder (a fresh temporary directory) holds mnn's caches (the
backends' $MNN_<BACKEND>_CACHE_DIR) and the drivers' own (PoCL's kernel cache, Mesa's shader cache):
`cold` starts with it empty, `warm` with what cold left. A start is a new Python process that loads
the file, then times Session(..., fallback=False) (`session s`) and Session up to the first run's
outputs (`first s`); the ratio is warm first / cold first. A second run (`run s`) times the model
itself: on a CPU implementation of a GPU API it can be most of a warm first run, which no cache
shortens. Architectures (benchmarks/zoo_arch) are
the tests' small sizes, one exporter's file (--exporter); corpus models are mnn_core.zoo's files.
A model a backend declines is reported as such. Files are exported / fetched before any timing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

CHILD = """
import json, sys, time
sys.path.insert(0, {bench!r})
import mnn_core as mnn
from bench_zoo import model_feeds
feeds = model_feeds({model!r}, 1, True)
graph = mnn.load({path!r})
t0 = time.perf_counter()
sess = mnn.Session(graph, backend={backend!r}, fallback=False)
t1 = time.perf_counter()
sess.run(feeds)
t2 = time.perf_counter()
sess.run(feeds)
out = {{"session_s": t1 - t0, "first_s": t2 - t0, "run_s": time.perf_counter() - t2}}
if {backend!r} == "vulkan":
    from mnn_vulkan import device
    n, secs = device.choose().context.pipeline_stats()
    out.update(pipelines=n, pipeline_s=secs)
print(json.dumps(out))
"""


def driver_env(cache: str) -> dict[str, str]:
    """Every cache a start can use, in one folder (mnn's, PoCL's, Mesa's)."""
    return {
        "MNN_VULKAN_CACHE_DIR": f"{cache}/mnn-vulkan",
        "MNN_OPENCL_CACHE_DIR": f"{cache}/mnn-opencl",
        "MNN_OPENGL_CACHE_DIR": f"{cache}/mnn-opengl",
        "POCL_CACHE_DIR": f"{cache}/pocl",
        "MESA_SHADER_CACHE_DIR": f"{cache}/mesa",
        "MESA_GLSL_CACHE_DIR": f"{cache}/mesa",
        "CUDA_CACHE_PATH": f"{cache}/cuda",
        "__GL_SHADER_DISK_CACHE_PATH": f"{cache}/nv-gl",
    }


def model_path(name: str, exporter: str) -> str:
    """The model's file (exported or fetched now, so no start pays for it)."""
    from zoo_arch import ARCHES

    if name in ARCHES:
        from zoo_arch.export import onnx_file

        return str(onnx_file(ARCHES[name], exporter, 1, None, True))
    from mnn_core.zoo.corpus import BY_NAME
    from mnn_core.zoo.fetch import cache_dir, fetch

    return str(fetch(BY_NAME[name], cache_dir(None))[0])


def startup(backend: str, name: str, path: str) -> dict:
    """Cold then warm start in fresh processes sharing one cache folder."""
    script = CHILD.format(bench=str(ROOT / "benchmarks"), model=name, path=path, backend=backend)
    out = {"backend": backend, "model": name}
    with tempfile.TemporaryDirectory(prefix="mnn-startup-") as cache:
        env = dict(os.environ, **driver_env(cache))
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=1800)
            wall = time.perf_counter() - t0
            if p.returncode:
                tail = " ".join((p.stderr.strip().splitlines() or ["?"])[-1].split())[:200]
                out["status"] = "declined" if "fallback" in tail.lower() else "error"
                out["why"] = tail
                return out
            out[label] = dict(json.loads(p.stdout.strip().splitlines()[-1]), process_s=wall)
    out["status"] = "run"
    out["ratio"] = out["warm"]["first_s"] / max(out["cold"]["first_s"], 1e-9)
    return out


def row(r: dict) -> str:
    if r["status"] != "run":
        return f"| {r['backend']} | {r['model']} | {r['status']}: {r['why'][:90]} | | | | | | |"
    c, w = r["cold"], r["warm"]
    pipes = f"{c['pipelines']} ({c['pipeline_s']:.2f} s / {w['pipeline_s']:.2f} s)" if "pipelines" in c else ""
    return (
        f"| {r['backend']} | {r['model']} | {c['session_s']:.2f} | {c['first_s']:.2f} | {w['session_s']:.2f} | "
        f"{w['first_s']:.2f} | {r['ratio']:.0%} | {w['run_s']:.2f} | {pipes} |"
    )


def main(argv=None) -> int:
    from zoo_arch import ARCHES

    from mnn_core.zoo.corpus import MODELS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", action="append", help="vulkan, opencl, opengl, ... (repeat; default vulkan, opencl)")
    p.add_argument("--set", choices=["arch", "corpus", "all"], default="all")
    p.add_argument("--model", action="append", help="one model (repeat); default: every one of --set")
    p.add_argument("--exporter", default="legacy", help="the architectures' exporter: legacy or dynamo")
    p.add_argument("--json", help="write every result here (one JSON object a line, appended)")
    p.add_argument("--markdown", metavar="FILE", help="append the table, dated, with the command")
    args = p.parse_args(argv)
    names = args.model or (
        ([*ARCHES] if args.set in ("arch", "all") else []) + ([m.name for m in MODELS] if args.set != "arch" else [])
    )
    lines = [
        "| backend | model | cold session s | cold first s | warm session s | warm first s | warm/cold | run s | "
        "pipelines (compile s cold / warm) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for backend in args.backend or ["vulkan", "opencl"]:
        for name in names:
            r = startup(backend, name, model_path(name, args.exporter))
            lines.append(row(r))
            print(lines[-1], flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
    if args.markdown:
        cmd = "python benchmarks/bench_startup.py " + " ".join(sys.argv[1:])
        with open(args.markdown, "a") as f:
            f.write("\n".join([f"\n### GPU start-up, {time.strftime('%Y-%m-%d')}\n", f"`{cmd}`\n", *lines]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
