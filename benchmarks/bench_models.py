"""Side-by-side CPU latency of mnn backends and peer engines on the same models.

    python benchmarks/bench_models.py                       # all models, batch 1 and 8, 1 and 2 threads
    python benchmarks/bench_models.py --model mobilenet_v2 --batch 1 --threads 1 --repeat 20
    python benchmarks/bench_models.py --markdown benchmarks/RESULTS.md
    python benchmarks/bench_models.py --engine mnn-x86 --precision normal --precision low   # fp32 vs bf16

Models come from examples/build_models.py (MobileNetV2, ResNet-18, SqueezeNet
1.1 with seeded weights). Peers get the same graph: ONNX Runtime and the MNN
wheel through an ONNX export (mnn_core.convert.to_onnx, batch norms folded as
torch.onnx.export does for eval-mode models), ncnn through that ONNX converted by pnnx (fp32
weights; ncnn's fp16 and bf16 storage off; a batch runs image by image, as ncnn's Mat holds one),
PyTorch eager through a small interpreter calling torch.nn.functional per node. The ratio of a
row divides its median by the fastest peer's (ONNX Runtime, the MNN wheel or ncnn) in the same
round. Each configuration runs
in its own subprocess, so peak memory (ru_maxrss, minus the interpreter's own
baseline) belongs to that engine alone. Latency: median and min of --repeat
runs after --warmup runs. Engines that are not installed are skipped and said so.
--precision (repeatable) runs mnn-x86 at each session precision ("low": bf16 GEMMs where the
CPU has AVX-512 BF16), one row each; the peers always run fp32.

--rounds N runs every engine of a configuration N times, interleaved (each round starts with a
different engine), so that a slow spell of a shared machine falls on all of them rather than on
one: a row then shows the median over rounds of the medians, the least min, the largest peak, and
the median of the per-round ratios (each taken within one round), with those ratios listed.

Peers: pip install onnxruntime ncnn pnnx torch==2.13.0; pip install --no-deps MNN (its
dependencies pin protobuf<6, which breaks onnx). The MNN wheel also installs a command named
`mnn` over ours, which pip-installs telemetry packages (and protobuf 5) when run: use
`python -m mnn_core` in that environment, or reinstall mnn-core after the wheel.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from harness import wall_ms, worker_command  # noqa: E402  (benchmarks/, this script's folder)

ENGINES = ("mnn-x86", "onnxruntime", "MNN-wheel", "ncnn", "torch")
#: the peers a ratio divides by: the fastest of them in the same round
PEERS = ("onnxruntime", "MNN-wheel", "ncnn")
MODEL_NAMES = ("mobilenet_v2", "resnet18", "squeezenet1_1")  # examples/build_models.py's MODELS
#: not in the default set: mnn-x86 with every tensor dense (option x86.layouts=off), to compare
EXTRA_ENGINES = ("mnn-x86-dense",)


# -- worker side: one engine, one configuration -----------------------------------------


def _graph(model: str, batch: int):
    from build_models import MODELS

    return MODELS[model](batch)


def _max_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _onnx_file(graph, tmp: Path) -> str:
    """The ONNX the peers get: batch norms folded, as torch.onnx.export writes eval-mode models."""
    from mnn_core.convert import save_onnx
    from mnn_core.graph.passes import optimize

    path = tmp / "model.onnx"
    save_onnx(optimize(graph), path)
    return str(path)


def ort_profiled_session(graph, threads: int, tmp: Path):
    """An ONNX Runtime CPU session of `graph` (as _onnx_file writes it) with its node profiler on:
    per-layer benchmarks compare each mnn step with ONNX Runtime's own kernel time."""
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads, o.inter_op_num_threads = threads, 1
    o.enable_profiling, o.profile_file_prefix = True, str(tmp / "ort")
    return ort.InferenceSession(_onnx_file(graph, tmp), o, providers=["CPUExecutionProvider"])


def ort_node_times(sess, skip: int = 0) -> dict[str, tuple[str, list[float]]]:
    """Ends `sess`'s profiling: {node name: (op type, kernel ms of each run)} in the graph's order
    (after ONNX Runtime's own rewrites, e.g. NCHWc Convs), the first `skip` runs of each left out."""
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    nodes: dict[str, tuple[str, list[float]]] = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            nodes.setdefault(e["name"], (e["args"]["op_name"], []))[1].append(e["dur"] / 1e3)
    return {name: (op, ms[skip:]) for name, (op, ms) in nodes.items()}


def _ncnn_files(graph, tmp: Path) -> tuple[str, str]:
    """ncnn's .param and .bin of `graph` (batch 1): pnnx (pip install pnnx) converts the ONNX the other
    peers get. ncnn's Mat holds one image (c, h, w), so a batch runs image by image."""
    import importlib.util

    # pnnx's own executable, found without importing the package (which imports torch: 200 MB that
    # would count in ncnn's peak memory)
    spec = importlib.util.find_spec("pnnx")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("ncnn needs pnnx to convert the model: pip install pnnx")
    exe = os.path.join(list(spec.submodule_search_locations)[0], "pnnx")
    # fp16=0: fp32 weights (pnnx writes them as fp16 by default)
    cmd = [exe, _onnx_file(graph, tmp), "inputshape=[1,3,224,224]", "fp16=0"]
    done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=600)
    param, weights = tmp / "model.ncnn.param", tmp / "model.ncnn.bin"
    if done.returncode or not param.exists():
        raise RuntimeError(f"pnnx could not convert the model: {(done.stderr or done.stdout).strip()[-300:]}")
    return str(param), str(weights)


def _runner(engine: str, graph, x: np.ndarray, threads: int, tmp: Path, precision: str = "normal"):
    """Return a no-argument callable that runs one inference."""
    if engine in ("mnn-x86", "mnn-x86-dense"):
        import mnn_core as mnn

        options = {"x86.layouts": "off"} if engine == "mnn-x86-dense" else {}
        sess = mnn.Session(graph, backend="x86", threads=threads, precision=precision, options=options)
        feeds = {"input": x}
        return lambda: sess.run(feeds, copy=False)
    if engine == "onnxruntime":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(_onnx_file(graph, tmp), opts, providers=["CPUExecutionProvider"])
        return lambda: sess.run(None, {"input": x})
    if engine == "MNN-wheel":
        import _tools  # MNN's converter function itself: its mnnconvert CLI pip-installs telemetry
        import MNN

        mnn_path = str(tmp / "model_wheel.mnn")
        _tools.mnnconvert(["mnnconvert", "-f", "ONNX", "--modelFile", _onnx_file(graph, tmp), "--MNNModel", mnn_path])
        interp = MNN.Interpreter(mnn_path)
        session = interp.createSession({"numThread": threads, "backend": "CPU"})
        inp = interp.getSessionInput(session)
        interp.resizeTensor(inp, x.shape)
        interp.resizeSession(session)
        host = MNN.Tensor(x.shape, MNN.Halide_Type_Float, x, MNN.Tensor_DimensionType_Caffe)

        def run():
            inp.copyFrom(host)
            interp.runSession(session)
            out = interp.getSessionOutput(session)
            out.getHost()  # make sure the result is on the host

        return run
    if engine == "ncnn":
        import ncnn

        param, weights = _ncnn_files(_graph(graph.name, 1), tmp)  # a model's graph is named by its MODELS key
        net = ncnn.Net()
        net.opt.num_threads = threads
        # fp32, as every engine here: by default ncnn stores (and computes) in fp16 or bf16 where it can
        net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = False
        net.opt.use_bf16_storage = False
        net.load_param(param)
        net.load_model(weights)

        def run():
            for image in x:
                ex = net.create_extractor()
                ex.input("in0", ncnn.Mat(image))
                ex.extract("out0")

        return run
    if engine == "torch":
        import torch

        torch.set_num_threads(threads)
        from torch_interpreter import TorchGraph

        model = TorchGraph(graph)
        xt = torch.from_numpy(x)

        def run():
            with torch.inference_mode():
                model(xt)

        return run
    raise ValueError(engine)


def worker(args) -> None:
    baseline = _max_rss_mb()
    graph = _graph(args.model, args.batch)
    x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype("float32")
    with tempfile.TemporaryDirectory() as tmp:
        fn = _runner(args.engine, graph, x, args.threads, Path(tmp), args.precision[0])
        times = wall_ms(fn, args.repeat, args.warmup)
    print(
        json.dumps({"median_ms": statistics.median(times), "min_ms": min(times), "peak_mb": _max_rss_mb() - baseline})
    )


# -- driver side ------------------------------------------------------------------------------


def run_config(engine, model, batch, threads, repeat, warmup, precision="normal") -> dict:
    cmd = worker_command(
        __file__,
        engine=engine,
        model=model,
        batch=batch,
        threads=threads,
        repeat=repeat,
        warmup=warmup,
        precision=precision,
    )
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:160]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", choices=MODEL_NAMES, help="default: all")
    engines_help = f"subset of {', '.join(ENGINES + EXTRA_ENGINES)} (default: all but {EXTRA_ENGINES[0]})"
    p.add_argument("--engine", action="append", help=engines_help)
    p.add_argument("--batch", type=int, action="append")
    p.add_argument("--threads", type=int, action="append")
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds of the engines per configuration")
    p.add_argument("--markdown", metavar="FILE", help="append a results table to this file")
    p.add_argument(
        "--precision",
        action="append",
        choices=["high", "normal", "low"],
        help="session precision of mnn-x86, repeatable (default: normal)",
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        args.model, args.batch, args.threads = args.model[0], args.batch[0], args.threads[0]
        args.engine = args.engine[0]
        return worker(args)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    args.precision = args.precision or ["normal"]
    models = args.model or list(MODEL_NAMES)
    engines = args.engine or list(ENGINES)
    # mnn-x86 once per precision, labelled unless it is the default
    runs = [
        (e, prec, e if prec == "normal" else f"{e} ({prec})")
        for e in engines
        for prec in (args.precision if e == "mnn-x86" else ["normal"])
    ]
    rows = []
    for model in models:
        for batch in args.batch or [1, 8]:
            for threads in args.threads or [1, 2]:
                rounds = []
                for r in range(args.rounds):
                    order = runs[r % len(runs) :] + runs[: r % len(runs)]
                    rounds.append(
                        {
                            label: run_config(e, model, batch, threads, args.repeat, args.warmup, prec)
                            for e, prec, label in order
                        }
                    )
                for label in (label for _, _, label in runs):
                    rows.append(
                        {
                            "model": model,
                            "batch": batch,
                            "threads": threads,
                            "engine": label,
                            **_over_rounds(rounds, label),
                        }
                    )
                    _print_row(rows[-1])
    if args.markdown:
        _write_markdown(rows, args, Path(args.markdown))


def _ratios(results: dict) -> dict:
    """Each engine's median over the faster peer's (ONNX Runtime or the MNN wheel), within one round."""
    peers = [r["median_ms"] for e, r in results.items() if e in PEERS and "error" not in r]
    best = min(peers) if peers else None
    return {e: r["median_ms"] / best if best and "error" not in r else None for e, r in results.items()}


def _over_rounds(rounds: list, label: str) -> dict:
    """One engine's row over the rounds: the median of its medians, its least min, its largest peak,
    and the median of its per-round ratios (listed in `ratios` when there are several rounds)."""
    ok = [r[label] for r in rounds if "error" not in r[label]]
    if not ok:
        return {"error": rounds[0][label]["error"]}
    ratios = [x for x in (_ratios(r)[label] for r in rounds) if x is not None]
    row = {
        "median_ms": statistics.median(r["median_ms"] for r in ok),
        "min_ms": min(r["min_ms"] for r in ok),
        "peak_mb": max(r["peak_mb"] for r in ok),
        "ratio_to_best_peer": statistics.median(ratios) if ratios else None,
    }
    if len(rounds) > 1:
        row["ratios"] = ratios
    return row


def _print_row(r) -> None:
    if "error" in r:
        print(f"{r['model']:14} b{r['batch']:<2} t{r['threads']} {r['engine']:12} skipped: {r['error']}", flush=True)
        return
    ratio = f"{r['ratio_to_best_peer']:.2f}x" if r["ratio_to_best_peer"] else "-"
    rounds = f" (rounds: {' '.join(f'{x:.2f}' for x in r['ratios'])})" if r.get("ratios") else ""
    print(
        f"{r['model']:14} b{r['batch']:<2} t{r['threads']} {r['engine']:12} median {r['median_ms']:8.2f} ms"
        f"  min {r['min_ms']:8.2f} ms  peak {r['peak_mb']:7.1f} MB  vs best peer {ratio}{rounds}",
        flush=True,
    )


def _write_markdown(rows, args, path: Path) -> None:
    cmd = "python benchmarks/bench_models.py " + " ".join(sys.argv[1:])
    lines = [
        f"\n### {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores\n",
        f"`{cmd}`\n",
        "| model | batch | threads | engine | median ms | min ms | peak MB | ratio to best peer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['model']} | {r['batch']} | {r['threads']} | {r['engine']} | skipped: {r['error']} | | | |"
            )
            continue
        ratio = f"{r['ratio_to_best_peer']:.2f}" if r["ratio_to_best_peer"] else "-"
        if r.get("ratios"):
            ratio += f" ({' / '.join(f'{x:.2f}' for x in r['ratios'])})"
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['threads']} | {r['engine']} | {r['median_ms']:.2f} | "
            f"{r['min_ms']:.2f} | {r['peak_mb']:.1f} | {ratio} |"
        )
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")
    print(f"appended {len(rows)} rows to {path}")


if __name__ == "__main__":
    main()
