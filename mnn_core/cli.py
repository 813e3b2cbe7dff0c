"""The `mnnx` command line: backends, info, run, bench, convert, export, quantize.

The console script is `mnnx`, not `mnn`: Alibaba's MNN wheel installs `mnn`, `mnnconvert` and
`mnnquant`, and two wheels owning one script silently replace each other (and uninstalling either
deletes it). `python -m mnn_core` runs the same command line.

Every failure is one line on stderr ("mnnx: error: ...") and exit status 2;
a traceback means a bug in mnn, never in your input.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from .errors import MnnError

PROG = "mnnx"  # the console script (pyproject.toml [project.scripts])

EPILOG = """examples:
  mnnx backends                                 which backends are installed, and why not
  mnnx info model.mnn                           inputs, outputs, ops, parameters
  mnnx run model.mnn --input x=x.npy --explain  run once, show where each op ran
  mnnx bench model.mnn --backend all --threads 1,2
  mnnx convert model.onnx -o model.mnn --weights fp16
  mnnx export model.mnn -o model.onnx
  mnnx quantize model.mnn -o model.int8.mnn --calibration calib.npz --method kl
"""


def _parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    name, _, dims = text.partition("=")
    try:
        return name, tuple(int(d) for d in dims.replace("x", ",").split(",") if d)
    except ValueError:
        raise MnnError(f"--shape takes NAME=D1,D2,... (e.g. input=1,3,224,224), got {text!r}") from None


def _input_shapes(graph, shape_args) -> dict[str, tuple[int, ...]]:
    given = dict(_parse_shape(s) for s in shape_args or [])
    shapes = {}
    for name, info in graph.inputs.items():
        if name in given:
            shapes[name] = given[name]
        elif info.is_static:
            shapes[name] = tuple(info.shape)
        else:
            shapes[name] = tuple(1 if isinstance(d, str) or d is None else d for d in info.shape)
    return shapes


def _random_feeds(graph, shapes, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, shape in shapes.items():
        dtype = graph.inputs[name].dtype
        try:
            if dtype.startswith("float"):
                feeds[name] = rng.standard_normal(shape).astype(dtype)
            elif dtype == "bool":
                feeds[name] = rng.random(shape) > 0.5
            else:
                feeds[name] = rng.integers(0, 10, size=shape).astype(dtype)
        except MemoryError:
            raise MnnError(
                f"input {name!r} of shape {','.join(map(str, shape))} ({dtype}) is more than this "
                "machine's memory holds; give a smaller --shape"
            ) from None
    return feeds


# -- commands --------------------------------------------------------------------------


def cmd_backends(args) -> int:
    from .registry import backend_table

    rows = backend_table()
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
        return 0
    table = [("backend", "package", "version", "status", "ops", "dtypes", "devices")]
    for r in rows:
        status = "available" if r.available else f"unavailable: {r.reason}"
        table.append((r.name, r.package, r.version, status, str(r.ops), ",".join(r.dtypes), "; ".join(r.devices)))
    _print_table(table)
    return 0


def cmd_info(args) -> int:
    from .loader import load

    graph = load(args.model)
    infos = graph.infer()
    size = os.path.getsize(args.model)
    info = {
        "model": str(args.model),
        "name": graph.name,
        "file_bytes": size,
        "inputs": {n: str(i) for n, i in graph.inputs.items()},
        "outputs": {n: str(infos[n]) for n in graph.outputs},
        "nodes": len(graph.nodes),
        "ops": graph.ops_histogram(),
        "parameters": graph.param_count(),
        "metadata": graph.metadata,
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"model      {info['model']} ({size / 1e6:.2f} MB), graph {graph.name!r}")
    for n, i in info["inputs"].items():
        print(f"input      {n}: {i}")
    for n, i in info["outputs"].items():
        print(f"output     {n}: {i}")
    print(f"nodes      {info['nodes']}, parameters {info['parameters']:,}")
    print("ops        " + ", ".join(f"{op} x{k}" for op, k in info["ops"].items()))
    for k, v in graph.metadata.items():
        print(f"metadata   {k} = {v}")
    return 0


def _backend_arg(text: str):
    from .registry import backend_table

    if text == "all":
        return [r.name for r in backend_table() if r.available]
    return [b.strip() for b in text.split(",") if b.strip()]


def cmd_run(args) -> int:
    from .loader import load
    from .session import Session

    graph = load(args.model)
    feeds = {}
    for item in args.input or []:
        name, _, path = item.partition("=")
        if not path:
            raise MnnError(f"--input takes NAME=FILE.npy, got {item!r}")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise MnnError(f"cannot read {path} for input {name!r}: {exc}") from None
    missing = [n for n in graph.inputs if n not in feeds]
    if missing and not args.random:
        need = ", ".join(f"{n} {graph.inputs[n]}" for n in missing)
        raise MnnError(f"no data for input(s) {need}: pass --input NAME=FILE.npy, or --random")
    if missing:
        shapes = _input_shapes(graph, args.shape)
        feeds.update(_random_feeds(graph, {n: shapes[n] for n in missing}))
    backend = args.backend if "," not in args.backend else _backend_arg(args.backend)
    sess = Session(
        graph, backend=backend, threads=args.threads, precision=args.precision, fallback=not args.no_fallback
    )
    outputs = sess.run(feeds)
    if args.explain:
        print(sess.plan)
        for report in sess.memory.values():
            print(report)
    out_dir = Path(args.output_dir) if args.output_dir else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    for name, arr in outputs.items():
        flat = arr.reshape(-1)
        preview = ", ".join(f"{v:.5g}" for v in flat[:6]) + (", ..." if flat.size > 6 else "")
        print(f"{name}: {arr.dtype}{list(arr.shape)} [{preview}]")
        if out_dir:
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
            np.save(out_dir / f"{safe}.npy", arr)
    if out_dir:
        print(f"wrote {len(outputs)} output(s) to {out_dir}/")
    return 0


def bench_one(graph, feeds, backend, threads, repeat, warmup, precision="normal"):
    """Median and min latency (ms) of Session.run for one backend/thread count."""
    from .session import Session

    sess = Session(graph, backend=backend, threads=threads, precision=precision)
    for _ in range(warmup):
        sess.run(feeds, copy=False)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(feeds, copy=False)
        times.append((time.perf_counter() - t0) * 1e3)
    placed = sess.plan.backends()
    return {
        "backend": backend,
        "threads": threads,
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "arena_bytes": sum(r.arena_bytes for r in sess.memory.values()),
        "ops_on_backend": placed.get(backend, 0),
        "ops": sum(placed.values()),
        "outputs": sess.run(feeds),
    }


def cmd_bench(args) -> int:
    from .loader import load
    from .progress import Progress

    graph = load(args.model)
    feeds = _random_feeds(graph, _input_shapes(graph, args.shape))
    backends = _backend_arg(args.backend)
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        raise MnnError(f"--threads takes a list like 1,2, got {args.threads!r}") from None
    results = []
    with Progress(len(backends) * len(threads), "bench") as bar:
        for b in backends:
            for t in threads:
                bar.update(0, f"{b} x{t}")
                results.append(bench_one(graph, feeds, b, t, args.repeat, args.warmup, args.precision))
                bar.update(1, f"{b} x{t}")
    base = results[0]["outputs"]
    for r in results:
        outs = r.pop("outputs")
        r["max_abs_diff"] = max(float(np.max(np.abs(outs[k].astype(np.float64) - base[k]), initial=0)) for k in outs)
    best = min(r["median_ms"] for r in results)
    for r in results:
        r["ratio_to_best"] = r["median_ms"] / best
    if args.json:
        print(json.dumps({"model": str(args.model), "repeat": args.repeat, "results": results}, indent=2))
    else:
        table = [("backend", "threads", "median ms", "min ms", "x best", "arena MiB", "ops here", "max |diff|")]
        for r in results:
            table.append(
                (
                    r["backend"],
                    str(r["threads"]),
                    f"{r['median_ms']:.3f}",
                    f"{r['min_ms']:.3f}",
                    f"{r['ratio_to_best']:.2f}",
                    f"{r['arena_bytes'] / 2**20:.2f}",
                    f"{r['ops_on_backend']}/{r['ops']}",
                    f"{r['max_abs_diff']:.2e}",
                )
            )
        print(f"{args.model}: {args.repeat} runs each after {args.warmup} warm-up; diff against the first row")
        _print_table(table)
    if args.plot:
        _plot(results, args.plot, str(args.model))
    return 0


def _plot(results, path, title):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MnnError("--plot needs matplotlib: pip install 'mnn-core[plot]'") from None
    labels = [f"{r['backend']} x{r['threads']}" for r in results]
    fig, ax = plt.subplots(figsize=(max(4, len(labels) * 1.2), 3.5))
    ax.bar(labels, [r["median_ms"] for r in results])
    ax.set_ylabel("median latency (ms)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path)
    print(f"wrote {path}")


def cmd_convert(args) -> int:
    from .loader import load, save

    graph = load(args.model)
    out = Path(args.output)
    if out.suffix.lower() != ".mnn":
        raise MnnError(f"convert writes .mnn files; got -o {out}")
    weights = "fp16" if args.fp16 else args.weights
    save(graph, out, weights=weights)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, {len(graph.nodes)} nodes, weights {weights})")
    return 0


def cmd_export(args) -> int:
    from .loader import load

    try:
        from .convert import save_onnx
    except ImportError as exc:
        raise MnnError(f"export needs onnx: pip install 'mnn-core[onnx]' ({exc})") from None
    out = Path(args.output)
    if out.suffix.lower() != ".onnx":
        raise MnnError(f"export writes .onnx files; got -o {out}")
    graph = load(args.model)
    save_onnx(graph, out, opset=args.opset)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, opset {args.opset})")
    return 0


def cmd_quantize(args) -> int:
    if args.llm:  # a decoder checkpoint's weights as MatMulNBits (mnn_core.llm)
        from .llm.cli_quantize import run_llm_quantize

        return run_llm_quantize(args)
    from .quant.cli import run_quantize

    return run_quantize(args)


def cmd_batch(args) -> int:
    from .ray.cli_batch import cmd_batch as run_batch  # Ray loads for this command only (an optional extra)

    return run_batch(args)


def _print_table(rows) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


# -- parser ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="mnn: run, benchmark and convert models on any installed backend.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from . import __version__

    p.add_argument("--version", action="version", version=f"mnn-core {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("backends", help="list backends: available or why not, ops, dtypes, devices")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    s.set_defaults(fn=cmd_backends)

    s = sub.add_parser("info", help="inputs, outputs, ops and parameters of a model")
    s.add_argument("model")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_info)

    s = sub.add_parser("run", help="run a model once on given (or random) inputs")
    s.add_argument("model")
    s.add_argument("--input", action="append", metavar="NAME=FILE.npy", help="an input from a .npy file (repeat)")
    s.add_argument("--random", action="store_true", help="fill inputs without --input with random data")
    s.add_argument("--shape", action="append", metavar="NAME=D1,D2,..", help="shape of a dynamic input")
    s.add_argument("--backend", default="auto", help="auto, a backend name, or a fallback list a,b (default auto)")
    s.add_argument("--threads", type=int, default=1)
    s.add_argument("--precision", choices=("high", "normal", "low"), default="normal")
    s.add_argument("--no-fallback", action="store_true", help="fail on an op the backend cannot run")
    s.add_argument("--explain", action="store_true", help="print where each op ran and why, and memory use")
    s.add_argument("--output-dir", metavar="DIR", help="write one NAME.npy per output")
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("bench", help="time a model on several backends side by side")
    s.add_argument("model")
    s.add_argument("--backend", default="all", help="'all' (default) or a list a,b")
    s.add_argument("--threads", default="1", help="thread counts to try, e.g. 1,2 (default 1)")
    s.add_argument("--repeat", type=int, default=20, help="timed runs per configuration (default 20)")
    s.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    s.add_argument("--shape", action="append", metavar="NAME=D1,D2,..", help="shape of a dynamic input")
    s.add_argument("--precision", choices=("high", "normal", "low"), default="normal")
    s.add_argument("--json", action="store_true")
    s.add_argument("--plot", metavar="FILE.png", help="bar chart of medians (needs matplotlib)")
    s.set_defaults(fn=cmd_bench)

    s = sub.add_parser("convert", help="convert a model (e.g. .onnx) to .mnn")
    s.add_argument("model")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--weights", choices=("fp32", "fp16", "int8"), default="fp32", help="weight storage")
    s.add_argument("--fp16", action="store_true", help="same as --weights fp16")
    s.set_defaults(fn=cmd_convert)

    s = sub.add_parser("export", help="export a model to ONNX")
    s.add_argument("model")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--opset", type=int, default=17, help="ONNX opset to write (default 17)")
    s.set_defaults(fn=cmd_export)

    s = sub.add_parser("quantize", help="int8 post-training quantization, with a per-layer error report")
    s.add_argument("model")
    s.add_argument("-o", "--output", required=True, help="the int8 .mnn to write")
    s.add_argument("--calibration", metavar="DATA", help=".npz keyed by input name, or a folder of .npy files")
    s.add_argument("--method", choices=("minmax", "percentile", "kl"), default="minmax")
    s.add_argument("--percentile", type=float, default=99.99, help="for --method percentile (default 99.99)")
    s.add_argument(
        "--per-channel",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one weight scale per output channel (default; --no-per-channel: per tensor)",
    )
    s.add_argument("--exclude", nargs="+", default=[], metavar="NODE", help="nodes that stay float")
    s.add_argument("--weight-only", action="store_true", help="int8 weights, float compute (no calibration)")
    s.add_argument("--batch-size", type=int, default=32, help="calibration batch size (default 32)")
    s.add_argument("--json", metavar="FILE.json", help="write the per-layer error report here too")
    s.add_argument("--llm", action="store_true", help="MODEL is a decoder checkpoint: weight-only int4/int8 groups")
    s.add_argument("--bits", type=int, choices=(4, 8), default=4, help="--llm: weight bits (default 4)")
    s.add_argument("--group", type=int, default=64, help="--llm: group size 32, 64, 128 or 256 (default 64)")
    s.add_argument("--asymmetric", action="store_true", help="--llm: a zero point per group")
    s.add_argument("--context", type=int, help="--llm: the exported decoder's context (default 2048)")
    s.set_defaults(fn=cmd_quantize)

    s = sub.add_parser("batch", help="run a model over a folder or Parquet dataset on a Ray cluster, resumable")
    s.add_argument("model")
    s.add_argument("--input", required=True, metavar="DIR_OR_PARQUET", help=".npy/.npz files (a row each) or Parquet")
    s.add_argument("--output", required=True, metavar="OUT", help="a folder: part-NNNNNN.parquet per block")
    s.add_argument("--ray", metavar="ADDRESS", help="a Ray cluster: host:port or 'auto' (default: start one here)")
    s.add_argument("--backend", default="auto", help="auto, a backend name, or a fallback list a,b (default auto)")
    s.add_argument("--workers", type=int, default=1, help="actors, each with one Session (default 1)")
    s.add_argument("--threads", type=int, default=1, help="threads (and CPUs) per actor (default 1)")
    s.add_argument("--block-rows", type=int, default=1024, help="rows per block, per file, per retry (default 1024)")
    s.add_argument("--sub-batch", type=int, default=64, help="rows per Session run (default 64)")
    s.add_argument("--precision", choices=("high", "normal", "low"), default="normal")
    s.add_argument("--num-gpus", type=float, help="GPUs per actor (default: 1 for a GPU backend, else 0)")
    s.set_defaults(fn=cmd_batch)
    from .cli_generate import add_parser as add_generate  # mnnx generate: mnn_core.llm

    add_generate(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "fn", None):  # no command: the help, then a failure (a script's typo must not pass)
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.fn(args)
    except MnnError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"{PROG}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        print(f"{PROG}: error: out of memory ({exc or 'MemoryError'}); try smaller input shapes", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one line even for what mnn did not foresee (MNN_DEBUG=1: the traceback)
        if os.environ.get("MNN_DEBUG"):
            raise
        print(
            f"{PROG}: error: {type(exc).__name__}: {exc} (unexpected: MNN_DEBUG=1 shows where; please report it)",
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
