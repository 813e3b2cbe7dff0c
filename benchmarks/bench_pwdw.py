"""x86.ConvDepthwise on and off, in one process: a 1x1 and the depthwise after it as one op (strip by
strip, the expanded rows kept in L2: mnn_x86/fuse.py, csrc/pwdw_impl.h) against the two ops apart.

    python benchmarks/bench_pwdw.py --threads 2 --rounds 3
    python benchmarks/bench_pwdw.py --model mobilenet_v2 --threads 1 --batch 8
    python benchmarks/bench_pwdw.py --min-bytes 300000      # fuse the 28x28 and 14x14 pairs too

Two sessions of the same graph: one with the fusion's size rule at --min-bytes (default: the
plugin's own, fuse.PWDW_MIN_BYTES), one with the rule out of reach (no pair fused; every other
backend fusion in both). Each round runs each session --repeat times plainly (wall time) and
--repeat times profiled; a step keeps its minimum over all rounds. Printed: both sessions' wall
medians and sums of steps, then each fused step against the two steps it replaces.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="mobilenet_v2", choices=bm.MODEL_NAMES)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=30, help="runs per session and round, each way")
    p.add_argument("--min-bytes", type=int, help="the size rule of the fused session (default: the plugin's)")
    args = p.parse_args(argv)

    from mnn_x86 import fuse

    import mnn_core as mnn

    graph = bm._graph(args.model, args.batch)
    x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype(np.float32)
    default = fuse.PWDW_MIN_BYTES
    try:
        fuse.PWDW_MIN_BYTES = default if args.min_bytes is None else args.min_bytes
        on = mnn.Session(graph, backend="x86", threads=args.threads)
        fuse.PWDW_MIN_BYTES = 1 << 62
        off = mnn.Session(graph, backend="x86", threads=args.threads)
    finally:
        fuse.PWDW_MIN_BYTES = default
    sessions = {"fused": on, "apart": off}
    walls = {k: [] for k in sessions}
    mins: dict[str, dict[str, float]] = {k: {} for k in sessions}
    feeds = {"input": x}
    for _ in range(args.rounds):
        for label, sess in sessions.items():
            for _ in range(3):
                sess.run(feeds, copy=False)
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                sess.run(feeds, copy=False)
                walls[label].append((time.perf_counter() - t0) * 1e3)
            for _ in range(args.repeat):
                sess.run(feeds, copy=False, profile=True)
                for name, ms in sess.profile():
                    mins[label][name] = min(mins[label].get(name, float("inf")), ms)
    print(f"{args.model} batch {args.batch}, {args.threads} thread(s), {args.rounds} rounds")
    for label in sessions:
        print(
            f"  {label:6s} wall median {np.median(walls[label]):7.3f} ms   steps' minima add up to "
            f"{sum(mins[label].values()):7.3f} ms"
        )
    pairs = on.plan.fused
    for name, parts in pairs.items():
        if len(parts) == 2 and all(part in mins["apart"] for part in parts):
            a, b = (mins["apart"][part] for part in parts)
            print(f"  {name:20s} {mins['fused'][name]:.3f} ms   apart {a:.3f} + {b:.3f} = {a + b:.3f}")


if __name__ == "__main__":
    main()
