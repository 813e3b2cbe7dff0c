"""Runs per second of one Session shared by threads against a Session per thread (docs/RELIABILITY.md).

    python benchmarks/bench_shared_session.py --model squeezenet1_1 --threads 8 --runs 40

A session serialises its runs (runtime/session.py), so threads sharing one get one run at a time;
threads with a session each run in parallel. Each session has threads=1 (the cores are shared by
the Python threads). The first round warms every session; the second is printed.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np

import mnn_core as mnn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def _per_second(sessions, threads: int, runs: int, x) -> float:
    start = threading.Barrier(threads)

    def work(sess) -> None:
        start.wait()
        for _ in range(runs):
            sess.run({"input": x})

    workers = [threading.Thread(target=work, args=(sessions[i % len(sessions)],)) for i in range(threads)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return threads * runs / (time.perf_counter() - t0)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="squeezenet1_1", help="mobilenet_v2, resnet18, squeezenet1_1")
    p.add_argument("--backend", default="x86")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--runs", type=int, default=40, help="runs per thread")
    args = p.parse_args(argv)
    from build_models import MODELS

    graph = MODELS[args.model](1)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    shared = [mnn.Session(graph, backend=args.backend)]
    own = [mnn.Session(graph, backend=args.backend) for _ in range(args.threads)]
    for _ in range(2):
        one = _per_second(shared, 1, args.runs * 2, x)
        both = _per_second(shared, args.threads, args.runs, x)
        each = _per_second(own, args.threads, args.runs, x)
    print(f"{args.model} on {args.backend}, runs per second:")
    print(f"  1 thread, 1 session:                  {one:7.1f}")
    print(f"  {args.threads} threads sharing 1 session:        {both:7.1f}")
    print(f"  {args.threads} threads, a session each:          {each:7.1f}")


if __name__ == "__main__":
    main()
