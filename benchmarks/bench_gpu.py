"""GPU latency: mnn-vulkan, mnn-opencl and mnn-opengl against PyTorch CUDA eager and mnn-x86
on the same machine's CPU (run on the lent H200; see benchmarks/RESULTS.md).

    python benchmarks/bench_gpu.py --repeat 50 --markdown benchmarks/RESULTS.md

Same models as bench_models.py (examples/build_models.py, seeded weights);
PyTorch runs them through benchmarks/torch_interpreter.py on "cuda" with a
synchronize per run. Every mnn backend's output is compared with the
reference backend's (max relative error printed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def timed(fn, repeat, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times)


def mnn_runner(graph, x, engine, threads):
    """engine: a backend name, or NAME-low for precision="low" (vulkan: float16 tensors and
    arithmetic where the device supports them)."""
    import mnn_core as mnn

    backend, _, low = engine.partition("-")
    options = {"vulkan.fp16_fma": True} if low == "lowfma" else {}  # float16 FMAs in GEMM tiles too
    sess = mnn.Session(
        graph,
        backend=backend,
        threads=threads,
        fallback=False,
        options=options,
        precision="low" if low.startswith("low") else "normal",
    )
    feeds = {"input": x}
    return (lambda: sess.run(feeds, copy=False)), (lambda: sess.run(feeds)["logits"])


def torch_runner(graph, x, half: bool = False):
    """PyTorch CUDA eager; half: the model and input in float16 (torch-cuda-fp16)."""
    import torch
    from torch_interpreter import TorchGraph

    model = TorchGraph(graph).to("cuda").eval()
    xt = torch.from_numpy(x).cuda()
    if half:
        model, xt = model.half(), xt.half()

    def run():
        with torch.inference_mode():
            out = model(xt)
        torch.cuda.synchronize()
        return out

    return run, (lambda: run()[0].float().cpu().numpy())


def main(argv=None):
    from build_models import MODELS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append")
    p.add_argument("--batch", type=int, action="append")
    p.add_argument(
        "--engine",
        action="append",
        help="vulkan, vulkan-low, vulkan-lowfma, opencl, opencl-low, opengl, x86, torch-cuda, "
        "torch-cuda-fp16 (default: all but vulkan-lowfma; -low: precision=low)",
    )
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=16, help="CPU threads for x86")
    p.add_argument("--markdown", metavar="FILE")
    p.add_argument(
        "--startup",
        action="store_true",
        help="instead: OpenCL first-session start-up (session + first run) in fresh processes, "
        "cold then warm program cache (plugins/mnn-opencl/tools/bench.py's measurement)",
    )
    args = p.parse_args(argv)
    if args.startup:
        return startup_table(args.model or ["mobilenet_v2", "resnet18"], args.markdown)
    rows = []
    for model in args.model or ["mobilenet_v2", "resnet18"]:
        for batch in args.batch or [1, 16]:
            graph = MODELS[model](batch)
            x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype("float32")
            import mnn_core as mnn

            want = mnn.Session(
                graph, backend="x86" if "x86" in [b.name for b in mnn.backends()] else "reference", threads=args.threads
            ).run({"input": x})["logits"]
            engines = ["vulkan", "vulkan-low", "opencl", "opencl-low", "opengl", "x86", "torch-cuda", "torch-cuda-fp16"]
            for engine in args.engine or engines:
                try:
                    if engine.startswith("torch-cuda"):
                        run, result = torch_runner(graph, x, half=engine.endswith("fp16"))
                    else:
                        run, result = mnn_runner(graph, x, engine, args.threads)
                    err = float(np.max(np.abs(result() - want)) / (np.max(np.abs(want)) + 1e-12))
                    med, mn = timed(run, args.repeat, args.warmup)
                    row = (model, batch, engine, f"{med:.3f}", f"{mn:.3f}", f"{err:.1e}")
                except Exception as exc:  # an engine missing here is reported, not fatal
                    row = (model, batch, engine, "-", "-", f"skipped: {type(exc).__name__}: {str(exc)[:100]}")
                rows.append(row)
                print(" | ".join(str(c) for c in row), flush=True)
    if args.markdown:
        cmd = "python benchmarks/bench_gpu.py " + " ".join(sys.argv[1:])
        lines = [
            f"\n### GPU, {time.strftime('%Y-%m-%d')}\n",
            f"`{cmd}`\n",
            "| model | batch | engine | median ms | min ms | max rel err vs x86 |",
            "|---|---|---|---|---|---|",
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
