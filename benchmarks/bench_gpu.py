"""GPU latency on the architecture zoo: mnn-vulkan, mnn-opencl and mnn-opengl against PyTorch on
CUDA (eager, CUDA-graph replay, torch.compile), fp32 and fp16, like against like.

    python benchmarks/bench_gpu.py --model resnet-50 --batch 1 --batch 16 --markdown benchmarks/RESULTS_GPU.md
    python benchmarks/bench_gpu.py --startup      # OpenCL start-up, cold then warm program cache
                                                  # (every backend and zoo model: bench_startup.py)

PyTorch runs the zoo's torch modules themselves (benchmarks/zoo_arch, seeded weights); mnn runs
their ONNX export (the legacy exporter, cached like bench_zoo.py's) with fallback=False. Every
engine is timed host numpy in to host numpy out: PyTorch copies the input to the GPU and the
output back inside the timed call, the CUDA-graph replay copies the input into the captured
buffer. Errors are relative L2 against PyTorch fp32 eager, with TF32 off for every PyTorch engine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from harness import wall_ms  # noqa: E402

MNN_ENGINES = ("vulkan", "vulkan-low", "vulkan-lowcoop", "opencl", "opencl-low", "opengl")
TORCH_ENGINES = ("eager", "eager-fp16", "graph", "graph-fp16", "compile", "compile-fp16")
DEFAULT_MODELS = ("mobilenet-v3", "resnet-50", "efficientnet-b0", "convnext-t", "vit-s16")


def timed(fn, repeat: int, warmup: int) -> tuple[float, float]:
    times = wall_ms(fn, repeat, warmup)
    return statistics.median(times), min(times)


def mnn_runner(path: Path, feeds: dict, engine: str, first_output: str):
    """engine: a backend name, or NAME-low for precision="low" (float16 tensors and arithmetic
    where the device supports them); vulkan-lowcoop adds tensor cores (vulkan.coopmat)."""
    import mnn_core as mnn

    backend, _, low = engine.partition("-")
    options = {"vulkan.coopmat": True} if low == "lowcoop" else {}
    precision = "low" if low else "normal"
    sess = mnn.Session(mnn.load(str(path)), backend=backend, fallback=False, precision=precision, options=options)
    return (lambda: sess.run(feeds, copy=False)), (lambda: sess.run(feeds)[first_output])


def torch_runner(module, feeds: dict, engine: str):
    """eager / graph (torch.cuda.CUDAGraph replay) / compile (torch.compile, inductor), each
    optionally in float16 (model and floating inputs)."""
    import torch

    mode, _, half = engine.partition("-")
    # fp32 is fp32: cuDNN's convolutions otherwise run in TF32 by default (10-bit mantissas)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    model = module.to("cuda").eval()
    if half:
        model = model.half()

    def to_device(x: np.ndarray):
        t = torch.from_numpy(x).to("cuda")
        return t.half() if half and t.is_floating_point() else t

    def first(out):
        return out[0] if isinstance(out, (tuple, list)) else out

    if mode == "compile":
        model = torch.compile(model)
    if mode in ("eager", "compile"):

        def run():
            with torch.inference_mode():
                out = first(model(*(to_device(x) for x in feeds.values())))
                return out.float().cpu().numpy()

        return run, run

    static = [to_device(x) for x in feeds.values()]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.inference_mode():
        with torch.cuda.stream(stream):
            for _ in range(3):  # warm up allocations and cuDNN's choices outside the capture
                model(*static)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = first(model(*static))

    def replay():
        for buf, x in zip(static, feeds.values()):
            buf.copy_(torch.from_numpy(x))
        graph.replay()
        return out.float().cpu().numpy()

    return replay, replay


def rel_l2(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    if got.shape != want.shape:
        return float("inf")
    return float(np.linalg.norm(got - want) / (np.linalg.norm(want) + 1e-30))


def bench_model(name: str, batch: int, engines: list[str], args) -> list[tuple]:
    from zoo_arch import ARCHES
    from zoo_arch.export import onnx_file

    arch = ARCHES[name]
    feeds = arch.make_feeds(batch, args.small)
    path = onnx_file(arch, "legacy", batch, cache=args.cache, small=args.small)
    want = None
    rows = []
    for engine in ["eager"] + [e for e in engines if e != "eager"]:
        t0 = time.perf_counter()
        try:
            if engine in TORCH_ENGINES:
                run, result = torch_runner(arch.module(args.small), feeds, engine)
            else:
                run, result = mnn_runner(path, feeds, engine, arch.outputs[0])
            got = result()
            setup = time.perf_counter() - t0
            if want is None:
                want = got
            med, mn = timed(run, args.repeat, args.warmup)
            row = (name, batch, engine, f"{med:.3f}", f"{mn:.3f}", f"{rel_l2(got, want):.1e}", f"{setup:.1f}")
        except Exception as exc:  # an engine missing or failing here is reported, not fatal
            row = (name, batch, engine, "-", "-", f"{type(exc).__name__}: {str(exc)[:90]}", "-")
        if engine in engines:
            rows.append(row)
            print(" | ".join(str(c) for c in row), flush=True)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help=f"a zoo architecture (default: {', '.join(DEFAULT_MODELS)})")
    p.add_argument("--batch", type=int, action="append", help="default: 1 and 16")
    p.add_argument(
        "--engine",
        action="append",
        help=f"mnn: {', '.join(MNN_ENGINES)} (-low: precision='low', -lowcoop: and tensor cores); PyTorch on CUDA: "
        f"{', '.join(TORCH_ENGINES)} (default: all but compile, which takes minutes a model)",
    )
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--cache", help="ONNX export cache (default: zoo_arch's, ~/.cache/mnn/zoo-arch)")
    p.add_argument("--small", action="store_true", help="the zoo's small sizes (a quick check)")
    p.add_argument("--markdown", metavar="FILE", help="append the table, dated, with the command")
    p.add_argument(
        "--startup",
        action="store_true",
        help="instead: OpenCL first-session start-up (session + first run) in fresh processes, "
        "cold then warm program cache (plugins/mnn-opencl/tools/bench.py's measurement); any backend and the "
        "whole zoo: benchmarks/bench_startup.py",
    )
    args = p.parse_args(argv)
    if args.startup:
        return startup_table(args.model or ["mobilenet_v2", "resnet18"], args.markdown)
    engines = args.engine or [*MNN_ENGINES, *(e for e in TORCH_ENGINES if not e.startswith("compile"))]
    unknown = sorted(set(engines) - set(MNN_ENGINES) - set(TORCH_ENGINES))
    if unknown:
        p.error(f"unknown engine(s) {', '.join(unknown)}")
    rows = []
    for model in args.model or DEFAULT_MODELS:
        for batch in args.batch or [1, 16]:
            rows += bench_model(model, batch, engines, args)
    if args.markdown:
        import torch

        cmd = "python benchmarks/bench_gpu.py " + " ".join(sys.argv[1:])
        lines = [
            f"\n### GPU on the zoo, {time.strftime('%Y-%m-%d')}, {torch.cuda.get_device_name()}\n",
            f"`{cmd}`\n",
            "| model | batch | engine | median ms | min ms | rel L2 vs torch fp32 eager | setup s |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        with open(args.markdown, "a") as f:
            f.write("\n".join(lines) + "\n")


def startup_table(models, markdown=None):
    sys.path.insert(0, str(ROOT / "plugins" / "mnn-opencl" / "tools"))
    from bench import STARTUP_ENVS, startup

    lines = ["| model | caches | cold s | warm s | cold/warm |", "|---|---|---|---|---|"]
    for model in models:
        for variant in STARTUP_ENVS:
            s = startup(model, 1, variant)
            lines.append(
                f"| {model} | {variant} | {s['cold']['seconds']:.2f} | {s['warm']['seconds']:.2f} | "
                f"{s['speedup']:.1f}x |"
            )
            print(lines[-1], flush=True)
    if markdown:
        cmd = "python benchmarks/bench_gpu.py " + " ".join(sys.argv[1:])
        with open(markdown, "a") as f:
            f.write("\n".join([f"\n### OpenCL start-up, {time.strftime('%Y-%m-%d')}\n", f"`{cmd}`\n"] + lines) + "\n")


if __name__ == "__main__":
    main()
