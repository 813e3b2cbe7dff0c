"""A batch as one session against the same batch run as single images (Session(batch_parallel=...)).

    python benchmarks/bench_batch_split.py --model resnet18 --threads 2 --rounds 3

In one process: a batch-8 session with batch_parallel="off" and one with "on" (T images at a time on T
threads, each on a one-image plan, mnn_core/runtime/batch_split.py), run in turn, 3 runs each per round; prints
both medians and minima and their ratio. The outputs are checked to agree first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="mobilenet_v2", help="mobilenet_v2, resnet18, squeezenet1_1")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--backend", default="x86")
    args = p.parse_args(argv)
    import mnn_core as mnn

    graph = bm._graph(args.model, args.batch)
    x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224), dtype=np.float32)
    feeds = {"input": x}
    sessions = {
        m: mnn.Session(graph, backend=args.backend, threads=args.threads, batch_parallel=m) for m in ("off", "on")
    }
    want, got = sessions["off"].run(feeds), sessions["on"].run(feeds)
    print(f"max difference {max(float(np.abs(want[k] - got[k]).max()) for k in want):.3g}")
    times = {m: [] for m in sessions}
    for _ in range(args.rounds):
        for m, sess in sessions.items():
            for _ in range(3):
                t0 = time.perf_counter()
                sess.run(feeds, copy=False)
                times[m].append((time.perf_counter() - t0) * 1e3)
    med = {m: statistics.median(t) for m, t in times.items()}
    print(
        f"{args.model} batch {args.batch}, {args.threads} threads: whole batch median {med['off']:.2f} ms "
        f"(min {min(times['off']):.2f}), as images {med['on']:.2f} (min {min(times['on']):.2f}), "
        f"ratio {med['on'] / med['off']:.3f}"
    )


if __name__ == "__main__":
    main()
