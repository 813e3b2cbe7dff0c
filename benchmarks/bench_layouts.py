"""mnn-x86 with its NC16 layout on and off, interleaved in one process, per op kind and per Conv.

    python benchmarks/bench_layouts.py --model mobilenet_v2 --threads 1 --repeat 30
    python benchmarks/bench_layouts.py --model mobilenet_v2 --threads 2 --convs

Two sessions of one model (options x86.layouts "on" and "off"; the ISA is whatever mnn-x86 picks,
or MNN_X86_ISA) run in turn, one profiled inference each per round, so both see the same load on a
shared machine. Printed: each session's wall-clock median and minimum, and each step's minimum over
the rounds summed per op kind (profile_ops.time_by_kind), on against off; with --convs one line per
Conv. Steps' minima are the fairest per-layer number a busy machine gives (a step is rarely
preempted in every round).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402
import profile_ops as po  # noqa: E402

MODES = ("on", "off")


def interleaved(sessions: dict, feeds: dict, repeat: int) -> dict[str, tuple[list[str], list[float], list[float]]]:
    """mode -> (step names, each step's minimum ms, every round's wall ms)."""
    for _ in range(3):
        for sess in sessions.values():
            sess.run(feeds, copy=False)
    profiles, walls = collections.defaultdict(list), collections.defaultdict(list)
    for _ in range(repeat):
        for mode, sess in sessions.items():
            t0 = time.perf_counter()
            sess.run(feeds, copy=False, profile=True)
            walls[mode].append((time.perf_counter() - t0) * 1e3)
            profiles[mode].append(sess.profile())
    out = {}
    for mode, runs in profiles.items():
        names = [n for n, _ in runs[0]]
        out[mode] = (names, [min(r[i][1] for r in runs) for i in range(len(names))], walls[mode])
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="mobilenet_v2", help="mobilenet_v2, resnet18, squeezenet1_1")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--convs", action="store_true", help="one line per Conv, on against off")
    args = p.parse_args(argv)
    import mnn_core as mnn

    graph = bm._graph(args.model, args.batch)
    sessions = {m: mnn.Session(graph, backend="x86", threads=args.threads, options={"x86.layouts": m}) for m in MODES}
    x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype("float32")
    res = interleaved(sessions, {"input": x}, args.repeat)
    print(
        f"{args.model} batch {args.batch}, {args.threads} thread(s), {args.repeat} interleaved rounds; "
        f"NC16 tensors: {len(sessions['on'].plan.layouts)}"
    )
    for m in MODES:
        walls, mins = res[m][2], res[m][1]
        print(
            f"  layouts {m:3s}: wall median {statistics.median(walls):7.2f} ms, min {min(walls):7.2f}; "
            f"steps' minima add up to {sum(mins):7.2f} ms"
        )
    kinds = {m: po.time_by_kind(sessions[m], res[m][0], res[m][1], convs=False, rate="GF/s") for m in MODES}
    print(f"  {'kind':22s} steps {'on ms':>8s} {'off ms':>8s}  on/off")
    for kind, (ms_off, count) in sorted(kinds["off"].items(), key=lambda t: -t[1][0]):
        ms_on = kinds["on"][kind][0]
        print(f"  {kind:22s} {count:5d} {ms_on:8.2f} {ms_off:8.2f}  {ms_on / ms_off if ms_off else 0:6.2f}")
    if args.convs:
        nodes = {n.name: n for n in sessions["off"].graph.nodes}
        infos = sessions["off"]._need_plan().infos
        off = dict(zip(res["off"][0], res["off"][1]))
        for name, ms_on in zip(res["on"][0], res["on"][1]):
            node = nodes.get(name)
            if node is None or node.op != "Conv":
                continue
            w, x_shape = infos[node.inputs[1]].shape, infos[node.inputs[0]].shape
            kind = "dw" if node.attrs.get("group", 1) > 1 else f"{w[2]}x{w[3]}"
            print(
                f"  {name:10s} {kind:4s} x {str(tuple(x_shape)):18s} w {str(tuple(w)):18s} "
                f"s{node.attrs.get('strides')} on {ms_on:7.3f} off {off[name]:7.3f} ms  {ms_on / off[name]:5.2f}"
            )


if __name__ == "__main__":
    main()
