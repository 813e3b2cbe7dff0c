"""Latency of mnn against ONNX Runtime on the real-model corpus (mnn_core.zoo), side by side.

    python benchmarks/bench_zoo.py                                # every model, mnn-x86 and ORT, 1 and 2 threads
    python benchmarks/bench_zoo.py --model magika --model ppocr-v4-det --threads 1 --repeat 20
    python benchmarks/bench_zoo.py --busy 2 --markdown benchmarks/RESULTS_ZOO.md   # the cores shared

Each model runs on the inputs `python -m mnn_core.zoo check` feeds, each engine in its own
subprocess (so one engine's threads or memory never weigh on another's), `--rounds` times
interleaved: a slow spell of a shared machine then falls on both. A row gives each engine's median
over rounds of its median latency and the median of the per-round ratios mnn / ONNX Runtime.
mnn runs with fallback on (ops its backend lacks run on the reference kernels: the "fallback ops"
column counts them, as they are where the time goes). `--busy N` starts N processes spinning on
the CPU for the whole run, to measure with the cores shared.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ENGINES = ("mnn-x86", "onnxruntime")


# -- worker: one engine, one model, one thread count -------------------------------------------

def _runner(engine: str, path: Path, threads: int):
    if engine == "onnxruntime":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = threads
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        return lambda feeds: sess.run(None, feeds), 0
    import mnn_core as mnn

    backend = engine.split("-", 1)[1]
    sess = mnn.Session(mnn.load(path), backend=backend, threads=threads)
    state = {}

    def run(feeds):
        out = sess.run(feeds)
        if "fallback" not in state:  # an eager graph (control flow, sequences) runs every op on them
            state["fallback"] = "all (eager)" if sess.eager else sum(p.backend != backend for p in sess.plan)
        return out

    return run, state


def worker(args) -> None:
    from mnn_core.zoo.corpus import BY_NAME

    model = BY_NAME[args.model]
    feeds = model.make_feeds()
    run, state = _runner(args.engine, Path(args.path), args.threads)
    for _ in range(args.warmup):
        run(feeds)
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run(feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    fallback = state.get("fallback", 0) if isinstance(state, dict) else 0
    print(json.dumps({"median": statistics.median(times), "min": min(times), "fallback": fallback}))


def _measure(engine, model, path, threads, repeat, warmup) -> dict:
    cmd = [sys.executable, __file__, "--worker", "--engine", engine, "--model", model, "--path", str(path),
           "--threads", str(threads), "--repeat", str(repeat), "--warmup", str(warmup)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode:
        lines = proc.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the driver ---------------------------------------------------------------------------------

def _spin() -> None:
    while True:
        pass


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="a corpus model (python -m mnn_core.zoo list); default: all")
    p.add_argument("--engine", action="append", choices=ENGINES, help=f"default: {', '.join(ENGINES)}")
    p.add_argument("--threads", type=int, action="append", help="default: 1 and 2")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds of the engines per configuration")
    p.add_argument("--busy", type=int, default=0, metavar="N", help="N processes spinning on the CPU meanwhile")
    p.add_argument("--cache", help="the zoo's cache folder (default: $MNN_ZOO_CACHE or ~/.cache/mnn/zoo)")
    p.add_argument("--markdown", metavar="FILE", help="append a dated results table to this file")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        args.engine, args.threads, args.model = args.engine[0], args.threads[0], args.model[0]
        return worker(args)

    from mnn_core.zoo.corpus import BY_NAME, MODELS
    from mnn_core.zoo.fetch import cache_dir, fetch

    names = args.model or [m.name for m in MODELS]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        p.error(f"unknown model(s) {', '.join(unknown)}; see python -m mnn_core.zoo list")
    engines, thread_counts = args.engine or list(ENGINES), args.threads or [1, 2]
    cache = cache_dir(args.cache)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for s in spinners:
        s.start()
    rows = []
    try:
        for name in names:
            path = fetch(BY_NAME[name], cache)[0]
            for threads in thread_counts:
                rows.append(_row(name, path, threads, engines, args))
                _print_row(rows[-1], engines)
    finally:
        for s in spinners:
            s.terminate()
    if args.markdown:
        _write_markdown(rows, engines, args, Path(args.markdown))


def _row(name, path, threads, engines, args) -> dict:
    rounds = []
    for r in range(args.rounds):
        order = engines[r % len(engines):] + engines[:r % len(engines)]
        rounds.append({e: _measure(e, name, path, threads, args.repeat, args.warmup) for e in order})
    row = {"model": name, "threads": threads}
    for e in engines:
        ok = [rd[e] for rd in rounds if "error" not in rd[e]]
        row[e] = ({"median": statistics.median(x["median"] for x in ok), "fallback": ok[0].get("fallback", 0)}
                  if ok else {"error": rounds[0][e]["error"]})
    mnn = next((e for e in engines if e.startswith("mnn")), None)
    if mnn and "onnxruntime" in engines:
        ratios = [rd[mnn]["median"] / rd["onnxruntime"]["median"] for rd in rounds
                  if "error" not in rd[mnn] and "error" not in rd["onnxruntime"]]
        row["ratio"] = statistics.median(ratios) if ratios else None
    return row


def _cell(r: dict) -> str:
    return f"{r['median']:.2f}" if "median" in r else f"error: {r['error'][:60]}"


def _print_row(row, engines) -> None:
    cells = "  ".join(f"{e} {_cell(row[e]):>10}" for e in engines)
    ratio = f"  ratio {row['ratio']:.2f}" if row.get("ratio") else ""
    fallback = next((row[e].get("fallback") for e in engines if e.startswith("mnn") and "median" in row[e]), None)
    print(f"{row['model']:<20} t={row['threads']}  {cells}{ratio}  fallback ops {fallback}", flush=True)


def _write_markdown(rows, engines, args, path: Path) -> None:
    mnn = next((e for e in engines if e.startswith("mnn")), engines[0])
    cmd = "python benchmarks/bench_zoo.py " + " ".join(sys.argv[1:])
    lines = [f"\n## {datetime.date.today()}: real-model corpus, {platform.machine()}, {os.cpu_count()} cores"
             f"{f', {args.busy} busy processes' if args.busy else ', quiet'}\n",
             f"`{cmd}` ({args.repeat} runs after {args.warmup} warm-up, {args.rounds} round(s); ms, median)\n",
             f"| model | threads | {' | '.join(engines)} | {mnn} / onnxruntime | ops on the reference kernels |",
             "|---|---:|" + "---:|" * (len(engines) + 2)]
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "-"
        fallback = r[mnn].get("fallback", "-") if "median" in r[mnn] else "-"
        lines.append(f"| {r['model']} | {r['threads']} | {' | '.join(_cell(r[e]) for e in engines)} | {ratio} | "
                     f"{fallback} |")
    with path.open("a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
