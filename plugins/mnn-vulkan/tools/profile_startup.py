"""Where a warm Vulkan start spends its time: cProfile of Session() and the first run.

    python plugins/mnn-vulkan/tools/profile_startup.py --model resnet-50 --top 30
    python plugins/mnn-vulkan/tools/profile_startup.py --model vit-s16 --cache /tmp/c --no-cold

As benchmarks/bench_startup.py does, each start is a fresh process and every cache (mnn's pipeline
cache, the drivers' shader caches) lives in one folder: a cold start fills it (unless --no-cold,
for a folder a cold start already filled), then a warm start runs under cProfile. The warm start
prints its phases (Session(), first run, a second run: the model's own compute) and the top
entries by cumulative time, then by own time, of Session() + first run, the span bench_startup's "first s" times.
Models are the zoo's architectures at the tests' small sizes (legacy exports) or corpus models.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

CHILD = """
import cProfile, io, pstats, sys, time
sys.path.insert(0, {bench!r})
import mnn_core as mnn
from bench_zoo import model_feeds
feeds = model_feeds({model!r}, 1, True)
graph = mnn.load({path!r})
prof = cProfile.Profile() if {profile!r} else None
t0 = time.perf_counter()
if prof:
    prof.enable()
sess = mnn.Session(graph, backend="vulkan", fallback=False)
t1 = time.perf_counter()
sess.run(feeds)
t2 = time.perf_counter()
if prof:
    prof.disable()
sess.run(feeds)
t3 = time.perf_counter()
from mnn_vulkan import device
dev = device.choose()
n, secs = dev.context.pipeline_stats()
print(f"{label}: session {{t1 - t0:.3f}} s, first run {{t2 - t1:.3f}} s (first {{t2 - t0:.3f}}), "
      f"second run {{t3 - t2:.3f}} s, pipelines {{n}} in {{secs:.3f}} s, logical device opened in "
      f"{{dev.open_seconds:.3f}} s (a thread from Session()), {{dev.context.copy_submits()}} staging submits")
if prof:
    # the suspects of a warm first run, by cumulative seconds (own seconds for the run itself,
    # whose callees are the prepare steps)
    PHASES = [("device.py", "_start", "loader + instance (vkCreateInstance; waited for: made in a thread at import)"),
              ("device.py", "context", "waiting for the logical device (opened in a thread)"),
              ("arena.py", "bind", "arena bind (device-local: starts its allocation in a thread)"),
              ("arena.py", "_finish_making", "waiting for the arena's allocation (after the pipelines)"),
              ("arena.py", "flush", "weight uploads (write_many), the wait above included"),
              ("arena.py", "_copy_in", "host copies in (inputs)"),
              ("device.py", "pipeline", "pipelines (shader modules, vkCreateComputePipelines)"),
              ("recorder.py", "finish", "descriptor sets + command buffer recording"),
              ("__init__.py", "prepare_segment", "prepare_segment in all"),
              ("device.py", "save_pipeline_cache", "pipeline-cache read back + file rewrite"),
              ("session.py", "_run", "run itself (own time: submit, wait, copies out)")]
    raw = pstats.Stats(prof).stats
    for fname, func, what in PHASES:
        hits = [(v[2], v[3]) for (f, _, fn), v in raw.items() if f.endswith(fname) and fn == func]
        own, cum = sum(h[0] for h in hits), sum(h[1] for h in hits)
        print(f"  {{own if func == '_run' else cum:8.3f}} s  {{what}}")
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats({top})
    stats.sort_stats("tottime").print_stats({top})
    print(out.getvalue())
"""


def start(label: str, model: str, path: str, cache: str, top: int, profile: bool) -> None:
    from bench_startup import driver_env

    bench = str(ROOT / "benchmarks")
    script = CHILD.format(bench=bench, model=model, path=path, profile=profile, top=top, label=label)
    env = dict(os.environ, **driver_env(cache))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=1800)
    print(p.stdout, end="")
    if p.returncode:
        print(p.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{label} start failed ({p.returncode})")
    print(f"{label}: process {time.perf_counter() - t0:.2f} s", flush=True)


def main(argv=None) -> int:
    from bench_startup import model_path

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet-50", help="a zoo architecture (small size) or corpus model")
    p.add_argument("--exporter", default="legacy")
    p.add_argument("--cache", help="the cache folder (default: a fresh temporary one)")
    p.add_argument("--no-cold", action="store_true", help="the folder is warm already: skip the cold start")
    p.add_argument("--top", type=int, default=30, help="entries of the profile to print")
    args = p.parse_args(argv)
    path = model_path(args.model, args.exporter)
    with tempfile.TemporaryDirectory(prefix="mnn-startup-") as tmp:
        cache = args.cache or tmp
        if not args.no_cold:
            start("cold", args.model, path, cache, args.top, False)
        start("warm", args.model, path, cache, args.top, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
