"""The AVX-512 GEMM tiles of mnn-x86 side by side, in one process: 6x32 against 14x32 (isa.py: TILES),
and 14x32 with and without the rules that give some layers another table.

    python benchmarks/bench_tiles.py --model resnet18 --threads 1     # whole models, four sessions
    python benchmarks/bench_tiles.py --grid --hw 28                   # 1x1 convolutions: 14x32 / 6x32
    python benchmarks/bench_tiles.py --model squeezenet1_1 --depths 64,160,300   # bounds of the K rule

Models: four sessions of the same graph, made under 6x32, under 14x32 with both rules (the default
with two 512-bit FMA units: an op whose GEMMs have K < T14_MIN_DEPTH takes the 6x32 table, one of few rows and many
columns the 8x48 table, _x86.pyx: T8_*), under 14x32 with the K rule only, and under 14x32 for every op;
each round runs each session a few times in a row, each run once plainly (wall time) and once
profiled (each step's minimum over the rounds), so a busy spell or a slow stretch of the process
hits all of them alike. With --depths, one 14x32 session per bound of the K rule instead
(T14_MIN_DEPTH: below it, the 6x32 table).

Grid: one-node 1x1 convolutions (bias, ReLU) over output channels x input channels (K), each
step's minimum over --repeat runs under each tile; the ratio is 14x32's time over 6x32's
(below 1: the taller tile is faster). The AVX-512 tables run only where the CPU has AVX-512.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from mnn_core.graph.ir import Graph, Node, TensorInfo  # noqa: E402
from mnn_core.session import Session  # noqa: E402


def _tiles():
    from mnn_x86 import _x86

    return _x86


def _session_under(rows: int, depth: int, *args, t8: bool = True, **kwargs) -> Session:
    """A Session(*args, **kwargs) on x86's AVX-512 kernels, prepared under the `rows`-row tile with
    the K rule's bound at `depth` and the 8x48 rule on or off (the table is chosen at prepare); the
    process's settings are put back."""
    x86 = _tiles()
    before = (x86.avx512_rows(), x86.T14_MIN_DEPTH, x86.T8_MIN_COLS)
    try:
        x86.set_avx512_rows(rows)
        x86.T14_MIN_DEPTH = depth
        x86.T8_MIN_COLS = before[2] if t8 else 1 << 62
        return Session(*args, **kwargs, backend="x86", options={"x86.isa": "avx512"})
    finally:
        x86.set_avx512_rows(before[0])
        x86.T14_MIN_DEPTH, x86.T8_MIN_COLS = before[1], before[2]


#: timed runs of a session in a row, in each round (after two untimed ones)
RUNS_PER_ROUND = 5


def models(model: str, batch: int, threads: int, rounds: int, depths: list[int] | None = None) -> None:
    from build_models import MODELS

    x86 = _tiles()
    graph = MODELS[model](batch)
    feeds = {"input": np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype("float32")}
    k_rule = x86.T14_MIN_DEPTH
    variants = {
        "6x32": (6, k_rule, False),
        "14x32 + both rules": (14, k_rule, True),
        "14x32 + K rule": (14, k_rule, False),
        "14x32": (14, 0, False),
    }
    if depths:
        variants = {f"14x32, K < {d}: 6x32": (14, d, True) for d in depths}
    sessions = {
        name: _session_under(rows, depth, graph, threads=threads, t8=t8) for name, (rows, depth, t8) in variants.items()
    }
    walls = {n: [] for n in sessions}
    steps: dict[str, dict[str, float]] = {n: {} for n in sessions}
    for _ in range(3):
        for s in sessions.values():
            s.run(feeds, copy=False)
    for _ in range(rounds):
        for name, s in sessions.items():
            # a few runs in a row: one run per session and round would time each with the other
            # sessions' weights in the caches (the t8 rule ran 1 % slower so, 2.5 % faster warm)
            for _ in range(2):
                s.run(feeds, copy=False)
            for _ in range(RUNS_PER_ROUND):
                t0 = time.perf_counter()
                s.run(feeds, copy=False)
                walls[name].append((time.perf_counter() - t0) * 1e3)
                s.run(feeds, copy=False, profile=True)
                for step, ms in s.profile():
                    steps[name][step] = min(ms, steps[name].get(step, float("inf")))
    print(f"{model} batch {batch}, {threads} thread(s), {rounds} rounds")
    for name in sessions:
        print(
            f"  {name:22s} wall median {statistics.median(walls[name]):8.3f} ms   "
            f"steps' minima add up to {sum(steps[name].values()):8.3f} ms"
        )


def _conv(c: int, o: int, hw: int) -> tuple[Graph, dict]:
    rng = np.random.default_rng(0)
    graph = Graph(name="conv1x1")
    graph.inputs["x"] = TensorInfo((1, c, hw, hw), "float32")
    graph.initializers["w"] = (rng.standard_normal((o, c, 1, 1)) * 0.1).astype(np.float32)
    graph.initializers["b"] = rng.standard_normal(o).astype(np.float32)
    graph.nodes.append(Node("Conv", ["x", "w", "b"], ["y"], {"activation": "relu"}, "conv"))
    graph.outputs = ["y"]
    return graph, {"x": rng.standard_normal((1, c, hw, hw)).astype(np.float32)}


def _step_min(graph: Graph, feeds: dict, rows: int, repeat: int) -> float:
    sess = _session_under(rows, 0, graph, fallback=False, optimize=False, t8=False)  # the tile asked for
    for _ in range(10):
        sess.run(feeds, copy=False)
    best = float("inf")
    for _ in range(repeat):
        sess.run(feeds, copy=False, profile=True)
        best = min(best, sess.profile()[0][1])
    return best


def grid(hw: int, repeat: int) -> None:
    ks, outs = (16, 64, 256, 512), (16, 24, 32, 48, 64, 96, 128)
    print(f"1x1 convolutions at {hw}x{hw}, 1 thread: 14x32 time / 6x32 time")
    print("O \\ K " + " ".join(f"{k:>6d}" for k in ks))
    for o in outs:
        cells = []
        for k in ks:
            graph, feeds = _conv(k, o, hw)
            cells.append(_step_min(graph, feeds, 14, repeat) / _step_min(graph, feeds, 6, repeat))
        print(f"{o:5d} " + " ".join(f"{v:6.2f}" for v in cells))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", help="mobilenet_v2, resnet18, squeezenet1_1 (default: all)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--grid", action="store_true", help="the 1x1 grid instead of whole models")
    ap.add_argument("--hw", type=int, default=28, help="the grid's plane size")
    ap.add_argument("--repeat", type=int, default=200, help="runs per grid cell and tile")
    ap.add_argument("--depths", help="bounds of the K rule to compare, e.g. 64,160,300")
    args = ap.parse_args(argv)
    try:
        from mnn_x86 import isa
    except ImportError:
        sys.exit("bench_tiles: needs mnn-x86 (pip install ./plugins/mnn-x86)")
    if "avx512" not in isa.supported():
        sys.exit("bench_tiles: this CPU does not run AVX-512, the only level with two GEMM tiles")
    if args.grid:
        grid(args.hw, args.repeat)
        return
    depths = [int(d) for d in args.depths.split(",")] if args.depths else None
    for model in args.model or ["mobilenet_v2", "resnet18", "squeezenet1_1"]:
        models(model, args.batch, args.threads, args.rounds, depths)


if __name__ == "__main__":
    main()
