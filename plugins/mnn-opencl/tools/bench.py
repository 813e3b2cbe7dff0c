"""mnn-opencl on real models: latency per run, agreement with the reference,
PyTorch CUDA eager (and mnn-vulkan, when installed) side by side, and the
first-session start-up with a cold and a warm program cache.

    python plugins/mnn-opencl/tools/bench.py                              # MobileNetV2, ResNet-18; batch 1, 16
    python plugins/mnn-opencl/tools/bench.py --model mobilenet_v2 --batch 1 --tuning fast --json out.json
    MNN_OPENCL_DEVICE=pthread python plugins/mnn-opencl/tools/bench.py --batch 1   # PoCL

Models come from examples/build_models.py (seeded weights). PyTorch runs the
very same graph through benchmarks/torch_interpreter.py (one
torch.nn.functional call per node, batch norm unfused, as eager code is), in
fp32 with TF32 off. Latency: median and min of --repeat runs after --warmup.
Start-up is measured in fresh processes: Session() plus the first run, with an
empty program cache (cold) and again with the cache it left (warm).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "examples"), str(ROOT / "benchmarks")]
from harness import wall_ms  # noqa: E402


def _time(fn, repeat: int, warmup: int) -> dict:
    times = wall_ms(fn, repeat, warmup)
    return {"median_ms": statistics.median(times), "min_ms": min(times)}


def _graph(model: str, batch: int):
    from build_models import MODELS

    return MODELS[model](batch)


def bench_mnn(model, batch, backend, repeat, warmup, options=None, precision="normal"):
    import mnn_core as mnn

    graph = _graph(model, batch)
    x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype("float32")
    t0 = time.perf_counter()
    sess = mnn.Session(graph, backend=backend, fallback=False, options=options or {}, precision=precision)
    out = sess.run({"input": x})["logits"]
    start = time.perf_counter() - t0
    row = {
        "engine": f"mnn-{backend}",
        "model": model,
        "batch": batch,
        "precision": precision,
        "options": options or {},
        "first_session_s": start,
    }
    row.update(_time(lambda: sess.run({"input": x}, copy=False), repeat, warmup))
    return row, x, out


def bench_torch(model, batch, x, repeat, warmup):
    import torch
    from torch_interpreter import TorchGraph

    if not torch.cuda.is_available():
        return None, None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    net = TorchGraph(_graph(model, batch)).eval()
    net.consts = {k: v.cuda() for k, v in net.consts.items()}
    xt = torch.from_numpy(x).cuda()

    def run():
        with torch.no_grad():
            y = net(xt)[0]
        torch.cuda.synchronize()
        return y

    row = {"engine": "torch-cuda-eager", "model": model, "batch": batch, "device": torch.cuda.get_device_name()}
    row.update(_time(run, repeat, warmup))
    return row, run().cpu().numpy()


STARTUP = """
import json, sys, time
sys.path.insert(0, {examples!r})
from build_models import MODELS
import numpy as np, mnn_core as mnn
graph = MODELS[{model!r}]({batch})
x = np.zeros(({batch}, 3, 224, 224), "float32")
t0 = time.perf_counter()
sess = mnn.Session(graph, backend="opencl", fallback=False)
sess.run({{"input": x}})
t1 = time.perf_counter()
from mnn_opencl import runtime
rt = runtime.get_runtime(runtime.select_device())
print(json.dumps({{"seconds": t1 - t0, "builds": rt.builds, "device": rt.entry.label}}))
"""


#: start-up variants: the driver's own caches (PoCL kcache, NVIDIA ComputeCache) fresh in the
#: temporary folder too (a first session on a new machine, then a second), or turned off
STARTUP_ENVS = {
    "all caches fresh": lambda tmp: {"POCL_CACHE_DIR": f"{tmp}/pocl", "CUDA_CACHE_PATH": f"{tmp}/cuda"},
    "driver caches off": lambda tmp: {"POCL_KERNEL_CACHE": "0", "CUDA_CACHE_DISABLE": "1"},
}


def startup(model: str, batch: int, variant: str) -> dict:
    """Session start + first run in fresh processes: cold (empty caches), then warm."""
    script = STARTUP.format(examples=str(ROOT / "examples"), model=model, batch=batch)
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, MNN_OPENCL_CACHE_DIR=f"{cache}/mnn", **STARTUP_ENVS[variant](cache))
        for label in ("cold", "warm"):
            p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
            if p.returncode:
                raise RuntimeError(f"start-up run failed:\n{p.stderr}")
            out[label] = json.loads(p.stdout.strip().splitlines()[-1])
    out["speedup"] = out["cold"]["seconds"] / max(out["warm"]["seconds"], 1e-9)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="mobilenet_v2, resnet18, squeezenet1_1 (repeat)")
    p.add_argument("--batch", default="1,16")
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--tuning", default="none", help="comma-separated opencl.tuning modes to time")
    p.add_argument("--precision", default="normal", help="comma-separated: normal, low")
    p.add_argument("--no-startup", action="store_true", help="skip the cold/warm start-up measurement")
    p.add_argument("--json", help="write every row here")
    args = p.parse_args(argv)
    import mnn_core as mnn

    models = args.model or ["mobilenet_v2", "resnet18"]
    rows = []
    installed = {r.name: r for r in mnn.backends()}
    if not installed.get("opencl") or not installed["opencl"].available:
        sys.exit(f"mnn-opencl is unavailable: {installed.get('opencl') and installed['opencl'].reason}")
    print(f"device: {installed['opencl'].devices[0]}")
    for model in models:
        for batch in [int(b) for b in args.batch.split(",")]:
            ref_out = fp32_out = None
            for precision in args.precision.split(","):
                for mode in args.tuning.split(","):
                    row, x, out = bench_mnn(
                        model, batch, "opencl", args.repeat, args.warmup, {"opencl.tuning": mode}, precision
                    )
                    if ref_out is None:
                        ref_out = (
                            mnn.Session(_graph(model, batch), backend="reference").run({"input": x})["logits"]
                            if batch == 1
                            else None
                        )
                    row["rel_err_vs_reference"] = (
                        float(np.abs(out - ref_out).max() / np.abs(ref_out).max()) if ref_out is not None else None
                    )
                    rows.append(row)
                    print(json.dumps(row))
                    if precision == "normal" and fp32_out is None:
                        fp32_out = out
            if installed.get("vulkan") and installed["vulkan"].available:
                row, _, _ = bench_mnn(model, batch, "vulkan", args.repeat, args.warmup)
                rows.append(row)
                print(json.dumps(row))
            try:
                trow, tout = bench_torch(model, batch, x, args.repeat, args.warmup)
            except ImportError as exc:
                trow, tout = None, None
                print(f"torch: not installed ({exc})")
            if trow is not None and fp32_out is not None:
                trow["rel_err_vs_mnn_opencl"] = float(np.abs(fp32_out - tout).max() / np.abs(tout).max())
            if trow is not None:
                rows.append(trow)
                print(json.dumps(trow))
    if not args.no_startup:
        for model in models:
            for label in STARTUP_ENVS:
                s = startup(model, 1, label)
                row = {
                    "engine": "mnn-opencl start-up",
                    "model": model,
                    "batch": 1,
                    "env": label,
                    "cold_s": s["cold"]["seconds"],
                    "warm_s": s["warm"]["seconds"],
                    "speedup": s["speedup"],
                    "cold_build": s["cold"]["builds"],
                    "warm_build": s["warm"]["builds"],
                }
                rows.append(row)
                print(json.dumps(row))
    print()
    print(f"{'engine':<22} {'model':<14} {'batch':>5} {'median ms':>10} {'min ms':>8}  notes")
    for r in rows:
        if "median_ms" in r:
            keys = ("precision", "options", "rel_err_vs_reference", "rel_err_vs_mnn_opencl")
            notes = ", ".join(f"{k}={v}" for k, v in r.items() if k in keys and v)
            print(
                f"{r['engine']:<22} {r['model']:<14} {r['batch']:>5} {r['median_ms']:>10.3f} "
                f"{r['min_ms']:>8.3f}  {notes}"
            )
        else:
            print(
                f"{r['engine']:<22} {r['model']:<14} {r['batch']:>5}  cold {r['cold_s']:.2f} s, warm "
                f"{r['warm_s']:.2f} s ({r['speedup']:.1f}x) [{r['env']}]"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
