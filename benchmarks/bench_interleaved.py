"""Latency of engines run in turn inside one process, one inference each per round.

    python benchmarks/bench_interleaved.py --model resnet18 --threads 1 --repeat 15
    python benchmarks/bench_interleaved.py --batch 8 --repeat 7

On a shared machine the load changes between the per-engine subprocesses of
bench_models.py, so its ratios can swing by 2x. Here every round runs each
engine once, back to back, so all of them see the same load; the ratio of the
minimum latencies is the fairest comparison such a machine allows. Peak memory
is not measured (the engines share one process); use bench_models.py for that.
Runners (and the peers' ONNX export) are bench_models.py's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="mobilenet_v2, resnet18, squeezenet1_1 (default: all)")
    p.add_argument("--engine", action="append", help="default: mnn-x86, onnxruntime, MNN-wheel")
    p.add_argument("--threads", type=int, action="append")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args(argv)
    engines = args.engine or ["mnn-x86", "onnxruntime", "MNN-wheel"]
    print("| model | batch | threads | engine | min ms | median ms | min ratio to best peer |")
    print("|---|---|---|---|---|---|---|")
    for model in args.model or ["mobilenet_v2", "resnet18", "squeezenet1_1"]:
        for threads in args.threads or [1, 2]:
            graph = bm._graph(model, args.batch)
            x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype("float32")
            with tempfile.TemporaryDirectory() as tmp:
                fns = {e: bm._runner(e, graph, x, threads, Path(tmp)) for e in engines}
                for fn in fns.values():
                    for _ in range(args.warmup):
                        fn()
                times = {e: [] for e in fns}
                for _ in range(args.repeat):
                    for e, fn in fns.items():
                        t0 = time.perf_counter()
                        fn()
                        times[e].append((time.perf_counter() - t0) * 1e3)
            peers = [min(v) for e, v in times.items() if e in ("onnxruntime", "MNN-wheel")]
            best = min(peers) if peers else None
            for e, v in times.items():
                ratio = f"{min(v) / best:.2f}" if best else "-"
                cells = [model, args.batch, threads, e, f"{min(v):.2f}", f"{statistics.median(v):.2f}", ratio]
                print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
