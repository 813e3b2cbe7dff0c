"""Latency of mnn-vulkan against PyTorch CUDA eager and mnn-x86 on the same models.

    python plugins/mnn-vulkan/tools/bench_vulkan.py                      # MobileNetV2, ResNet-18; batch 1, 16
    python plugins/mnn-vulkan/tools/bench_vulkan.py --model resnet18 --batch 1 --repeat 50 --out results/

Models come from examples/build_models.py (seeded weights), so every engine
runs the very same graph; PyTorch gets it through benchmarks/torch_interpreter.py
(one torch.nn.functional call per node, CUDA tensors). Each configuration runs
in its own subprocess. Latency is the median (and min) of --repeat runs after
--warmup runs, measured on the host:

- vulkan: Session.run with host input and host output (upload through
  staging, one submit + wait, download), plus the GPU time of the recorded
  command buffer from timestamps (a separate profiled session);
- torch-cuda: the model on CUDA tensors (input already on the GPU, output
  left there, torch.cuda.synchronize() after each run) and, as torch-cuda+io,
  with the host->device input copy and the device->host output copy;
- x86: mnn-x86 on the CPU, all cores.

vulkan's outputs are checked against mnn-x86 (else the reference backend):
`rel_err` = max |vulkan - ref| / max |ref|.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from harness import wall_ms, worker_command  # noqa: E402

ENGINES = ("vulkan", "torch-cuda", "torch-cuda+io", "x86")


def _graph(model: str, batch: int):
    sys.path.insert(0, str(ROOT / "examples"))
    from build_models import MODELS

    return MODELS[model](batch)


def _vulkan(graph, x, args) -> dict:
    import mnn_vulkan
    from mnn_vulkan import device

    import mnn_core as mnn

    options = json.loads(args.vulkan_options or "{}")
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options=options)
    feeds = {"input": x}
    times = wall_ms(lambda: sess.run(feeds, copy=False), args.repeat, args.warmup)
    out = {"median_ms": statistics.median(times), "min_ms": min(times), "device": device.choose(None).name}
    got = sess.run(feeds)
    try:
        from mnn_core.backend import get_plugins

        ref_backend = "x86" if "x86" in get_plugins().backends else "reference"
        want = mnn.Session(graph, backend=ref_backend).run(feeds)
    except Exception as exc:  # noqa: BLE001 - report, do not fail the timing
        out["rel_err"] = f"no reference: {exc}"
    else:
        errs = [float(np.abs(got[k] - want[k]).max() / max(np.abs(want[k]).max(), 1e-30)) for k in want]
        out.update(rel_err=max(errs), ref=ref_backend)
    prof = mnn.Session(graph, backend="vulkan", fallback=False, options={**options, "vulkan.profile": True})
    for _ in range(3):
        prof.run(feeds, copy=False)
    dispatches = [t for seg in mnn_vulkan.gpu_times().values() for t in seg]
    out.update(
        gpu_ms=sum(ms for _, ms in dispatches),
        dispatches=len(dispatches),
        slowest=sorted(dispatches, key=lambda t: -t[1])[:5],
    )
    return out


def _torch(graph, x, args, io: bool) -> dict:
    import torch
    from torch_interpreter import TorchGraph

    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    model = TorchGraph(graph)
    model.consts = {k: v.cuda() for k, v in model.consts.items()}
    xh = torch.from_numpy(x)
    xd = xh.cuda()

    def run():
        with torch.inference_mode():
            ys = model(xh.cuda() if io else xd)
            if io:
                [y.cpu() for y in ys]
            torch.cuda.synchronize()

    times = wall_ms(run, args.repeat, args.warmup)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "device": torch.cuda.get_device_name()}


def _x86(graph, x, args) -> dict:
    import mnn_core as mnn

    sess = mnn.Session(graph, backend="x86", threads=os.cpu_count() or 1)
    feeds = {"input": x}
    times = wall_ms(lambda: sess.run(feeds, copy=False), args.repeat, args.warmup)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "threads": os.cpu_count()}


def worker(args) -> None:
    graph = _graph(args.model, args.batch)
    x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype("float32")
    if args.engine == "vulkan":
        result = _vulkan(graph, x, args)
    elif args.engine.startswith("torch-cuda"):
        result = _torch(graph, x, args, io=args.engine.endswith("+io"))
    else:
        result = _x86(graph, x, args)
    print("RESULT " + json.dumps(result))


def run_config(engine, model, batch, args) -> dict:
    cmd = worker_command(__file__, engine=engine, model=model, batch=batch, repeat=args.repeat, warmup=args.warmup)
    if args.vulkan_options:
        cmd += ["--vulkan-options", args.vulkan_options]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout} s"}
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if done.returncode or line is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        return {"error": " | ".join(tail) or f"exit {done.returncode}"}
    return json.loads(line[len("RESULT ") :])


def markdown(rows: list[dict], meta: dict) -> str:
    lines = [
        f"mnn-vulkan benchmark, {meta['date']}, {meta['host']}: `{meta['command']}`",
        "",
        "| model | batch | engine | median ms | min ms | GPU ms | rel err | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        res = r["result"]
        if "error" in res:
            lines.append(f"| {r['model']} | {r['batch']} | {r['engine']} | - | - | - | - | {res['error'][:120]} |")
            continue
        gpu = f"{res['gpu_ms']:.3f}" if "gpu_ms" in res else ""
        err = res.get("rel_err", "")
        err = f"{err:.1e}" if isinstance(err, float) else str(err)
        note = res.get("device", "") + (f", {res['dispatches']} dispatches" if "dispatches" in res else "")
        lines.append(
            f"| {r['model']} | {r['batch']} | {r['engine']} | {res['median_ms']:.3f} | "
            f"{res['min_ms']:.3f} | {gpu} | {err} | {note} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="mobilenet_v2, resnet18, squeezenet1_1 (repeat)")
    p.add_argument("--batch", action="append", type=int, help="batch sizes (repeat; default 1 and 16)")
    p.add_argument("--engine", action="append", choices=ENGINES, help="engines (repeat; default all)")
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per configuration")
    p.add_argument("--out", help="folder for bench_vulkan.json and bench_vulkan.md")
    p.add_argument("--vulkan-options", help='session options for vulkan, as JSON: \'{"vulkan.tiles": "big"}\'')
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        args.model, args.batch, args.engine = args.model[0], args.batch[0], args.engine[0]
        worker(args)
        return 0
    rows = []
    for model in args.model or ["mobilenet_v2", "resnet18"]:
        for batch in args.batch or [1, 16]:
            for engine in args.engine or ENGINES:
                result = run_config(engine, model, batch, args)
                rows.append({"model": model, "batch": batch, "engine": engine, "result": result})
                shown = result.get("error") or f"{result['median_ms']:.3f} ms"
                print(f"{model:14s} batch {batch:3d} {engine:14s} {shown}", flush=True)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "host": f"{platform.node()} ({platform.processor() or platform.machine()})",
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
    }
    text = markdown(rows, meta)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        Path(args.out, "bench_vulkan.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        Path(args.out, "bench_vulkan.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
