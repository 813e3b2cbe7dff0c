"""Whole runs of one model on mnn-opencl under several session settings, interleaved run by run (so
load on a shared machine hits every variant alike): minimum and median ms, launches per run, and the
largest difference of each variant's outputs from the first variant's.

    python plugins/mnn-opencl/tools/ab.py MODEL.onnx --batch 1 --runs 9 \\
        --variant untiled-unfused:opencl.gemm=direct,fuse=0 --variant default:

A variant is NAME:SETTINGS, SETTINGS comma-separated KEY=VALUE session options, plus fuse=0 for
Session(fuse=False). Host numpy in, device outputs left in place (run(copy=False)) as timed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _variant(text: str) -> tuple[str, dict, bool]:
    name, _, settings = text.partition(":")
    options = dict(kv.split("=", 1) for kv in settings.split(",") if kv)
    fuse = options.pop("fuse", "1") not in ("0", "false", "False")
    return name, options, fuse


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="an ONNX or .mnn file")
    p.add_argument("--batch", type=int, default=1, help="the size of every symbolic input dim")
    p.add_argument("--runs", type=int, default=7, help="timed runs of each variant, after one untimed")
    p.add_argument("--variant", action="append", required=True, help="NAME:KEY=VALUE,... (fuse=0: unfused)")
    args = p.parse_args(argv)

    from profile_ops import random_feeds

    import mnn_core as mnn
    from mnn_core.plugins import get_plugins

    backend = get_plugins().backends["opencl"]
    graph = mnn.load(args.model)
    feeds = random_feeds(graph, args.batch)
    sessions, launches, outputs = {}, {}, {}
    for name, options, fuse in map(_variant, args.variant):
        first = len(backend.segments)
        sess = mnn.Session(mnn.load(args.model), backend="opencl", fallback=False, options=options, fuse=fuse)
        outputs[name] = sess.run(feeds)
        launches[name] = sum(s["launches"] for s in backend.segments[first:])
        sessions[name] = sess
    times = {name: [] for name in sessions}
    for _ in range(args.runs):
        for name, sess in sessions.items():
            t0 = time.perf_counter()
            sess.run(feeds, copy=False)
            times[name].append((time.perf_counter() - t0) * 1e3)
    ref = next(iter(outputs.values()))
    print(f"{'variant':<24} {'min ms':>10} {'median ms':>10} {'launches':>9} {'max |diff|':>11}")
    for name in sessions:
        diff = max(float(np.abs(outputs[name][k].astype(np.float64) - ref[k]).max()) for k in ref)
        ms = times[name]
        print(f"{name:<24} {min(ms):10.1f} {statistics.median(ms):10.1f} {launches[name]:9d} {diff:11.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
