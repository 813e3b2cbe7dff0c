"""Per-op time of a model on mnn-x86, from the core's step profiler (Session.run(profile=True)).

    python benchmarks/profile_ops.py --model mobilenet_v2 --threads 2
    python benchmarks/profile_ops.py --model resnet18 --threads 1 --convs   # every Conv, its shape, GFLOP/s
    python benchmarks/profile_ops.py --precision normal --precision low --rounds 5   # fp32 vs bf16, interleaved
    python benchmarks/profile_ops.py --model squeezenet1_1 --fuse on --fuse off --rounds 5   # backend fusions A/B
    python benchmarks/profile_ops.py --zoo lstm-tagger --exporter legacy   # a zoo model (bench_zoo.py's names)

Each step's minimum over --repeat runs is printed (on a shared machine a step
is rarely preempted in every run, so the minima add up to the CPU time the
model needs; the wall-clock median also counts the time it waited for a core).
With several --precision or --fuse values, one session per combination runs in turn, --rounds
times, each step keeping its minimum over all rounds (so a busy spell hits all alike), then a
per-kind comparison against the first. `--fuse off` plans without backend fusions
(Session(fuse=False)), so a fused op's kind (e.g. x86.ConvMaxPool) can be set against the ops it
replaces.
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


def step_minima(sess, feeds: dict, repeat: int) -> tuple[list[str], list[float], list[float]]:
    """Each profiled step's name and its minimum ms over `repeat` runs (after 3 warm-up runs),
    and every run's wall-clock ms."""
    for _ in range(3):
        sess.run(feeds, copy=False)
    runs, walls = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(feeds, copy=False, profile=True)
        walls.append((time.perf_counter() - t0) * 1e3)
        runs.append(sess.profile())
    names = [n for n, _ in runs[0]]
    return names, [min(r[i][1] for r in runs) for i in range(len(names))], walls


def time_by_kind(sess, names: list[str], mins: list[float], convs: bool, rate: str) -> dict[str, list]:
    """Steps' minimum ms summed per op kind ("Conv 3x3", "QLinearConv dw", "Add", ...) as kind ->
    [ms, steps]; with `convs`, one line per (QLinear)Conv with its shapes and its rate (`rate` names
    the unit: GF/s for float, GOP/s for int8)."""
    nodes = {n.name: n for n in sess.graph.nodes}
    prepared = sess._need_plan()
    infos = prepared.infos
    ops = {p.node: p.op for p in prepared.plan.placements}  # a fused node is in the plan, not the graph
    by_kind: dict[str, list] = collections.defaultdict(lambda: [0.0, 0])
    for name, ms in zip(names, mins):
        node = nodes.get(name)
        kind = node.op if node is not None else ops.get(name, name)
        if node is not None and node.op in ("Conv", "QLinearConv"):
            w = infos[node.inputs[1 if node.op == "Conv" else 3]].shape
            y = infos[node.outputs[0]].shape
            kind = f"{node.op} " + ("dw" if node.attrs.get("group", 1) > 1 else f"{w[2]}x{w[3]}")
            if convs:
                giga = 2 * np.prod(y) * w[1] * w[2] * w[3] / 1e9
                x_shape = infos[node.inputs[0]].shape
                print(
                    f"  {name:12s} {kind:16s} x {tuple(x_shape)} w {tuple(w)} s{node.attrs.get('strides')} "
                    f"{ms:7.3f} ms {giga / ms * 1e3:6.1f} {rate}"
                )
        by_kind[kind][0] += ms
        by_kind[kind][1] += 1
    return by_kind


def print_summary(title: str, walls: list[float], mins: list[float], by_kind: dict[str, list]) -> None:
    print(
        f"{title}: wall median {statistics.median(walls):.2f} ms, min {min(walls):.2f}; "
        f"steps' minima add up to {sum(mins):.2f} ms"
    )
    for kind, (ms, count) in sorted(by_kind.items(), key=lambda t: -t[1][0]):
        print(f"  {kind:22s} {count:3d} steps {ms:8.2f} ms")


def zoo_graph(name: str, exporter: str, batch: int):
    """A bench_zoo.py model's graph (an architecture's file from `exporter`) and its inputs."""
    import bench_zoo

    import mnn_core as mnn
    from mnn_core.zoo.corpus import BY_NAME

    args = argparse.Namespace(cache=None, arch_cache=None, small=False)
    path = bench_zoo._path(name, None if name in BY_NAME else exporter, batch, args)
    return mnn.load(path), bench_zoo.model_feeds(name, batch)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="mobilenet_v2", help="mobilenet_v2, resnet18, squeezenet1_1")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--convs", action="store_true", help="one line per Conv with its shapes and GFLOP/s")
    p.add_argument(
        "--precision",
        action="append",
        choices=["high", "normal", "low"],
        help="session precision, repeatable (default: normal); 'low' on x86: bf16 GEMMs",
    )
    p.add_argument(
        "--fuse", action="append", choices=["on", "off"], help="backend fusions on or off, repeatable (default: on)"
    )
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds of --repeat runs per session")
    p.add_argument("--zoo", metavar="NAME", help="a corpus model or an architecture of bench_zoo.py instead of --model")
    p.add_argument("--exporter", default="legacy", help="an architecture's exporter (with --zoo; default legacy)")
    args = p.parse_args(argv)
    import mnn_core as mnn

    precisions = args.precision or ["normal"]
    fuses = args.fuse or ["on"]
    # One label per session: the precision, plus "/unfused" where fusions are off.
    variants = {f"{pr}{'' if fu == 'on' else '/unfused'}": (pr, fu == "on") for pr in precisions for fu in fuses}
    if args.zoo:
        graph, feeds = zoo_graph(args.zoo, args.exporter, args.batch)
        args.model = args.zoo
    else:
        feeds = {"input": np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype("float32")}
        graph = bm._graph(args.model, args.batch)
    sessions = {
        label: mnn.Session(graph, backend="x86", threads=args.threads, precision=pr, fuse=fuse)
        for label, (pr, fuse) in variants.items()
    }
    mins: dict[str, list[float]] = {}
    walls: dict[str, list[float]] = {label: [] for label in variants}
    names: dict[str, list[str]] = {}
    for _ in range(max(args.rounds, 1)):
        for label, sess in sessions.items():
            names[label], m, w = step_minima(sess, feeds, args.repeat)
            mins[label] = m if label not in mins else [min(a, b) for a, b in zip(mins[label], m)]
            walls[label] += w
    kinds = {}
    for label, sess in sessions.items():
        kinds[label] = time_by_kind(sess, names[label], mins[label], convs=args.convs, rate="GF/s")
        title = f"{args.model} batch {args.batch}, {args.threads} thread(s), {label}"
        print_summary(title, walls[label], mins[label], kinds[label])
    if len(variants) > 1:
        print_comparison(list(variants), mins, walls, kinds)


def print_comparison(labels: list[str], mins: dict, walls: dict, kinds: dict) -> None:
    """Per op kind and in total: each session's summed step minima and its speed-up over the first."""
    base = labels[0]
    print(f"per kind, ms (speed-up over {base}):")

    def kind_ms(label: str, kind: str) -> float:  # 0.0: that session ran no step of the kind
        return kinds[label].get(kind, [0.0])[0]

    # Every kind any session ran (a fused op runs in one session only), the base's heaviest first.
    every = {kind for lb in labels for kind in kinds[lb]}
    for kind in sorted(every, key=lambda kind: -kind_ms(base, kind)):
        ms = kind_ms(base, kind)
        cells = [f"{lb} {kind_ms(lb, kind):7.2f}" for lb in labels]
        other = [kind_ms(lb, kind) for lb in labels[1:]]
        cells += [f"{ms / o:.2f}x" if ms and o else "  -  " for o in other]  # "-": one side lacks the kind
        print(f"  {kind:22s} " + "  ".join(cells))
    totals = {lb: sum(mins[lb]) for lb in labels}
    medians = {lb: statistics.median(walls[lb]) for lb in labels}
    print(
        "  total (step minima)    "
        + "  ".join(f"{lb} {totals[lb]:7.2f}" for lb in labels)
        + "  "
        + "  ".join(f"{totals[base] / totals[lb]:.2f}x" for lb in labels[1:])
    )
    print(
        "  wall median            "
        + "  ".join(f"{lb} {medians[lb]:7.2f}" for lb in labels)
        + "  "
        + "  ".join(f"{medians[base] / medians[lb]:.2f}x" for lb in labels[1:])
    )


if __name__ == "__main__":
    main()
