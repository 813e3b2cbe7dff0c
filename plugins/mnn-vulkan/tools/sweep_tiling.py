"""GEMM/convolution tiling choices of mnn-vulkan compared in one process, on one device.

    python plugins/mnn-vulkan/tools/sweep_tiling.py --batch 1 --batch 16 \
        --config default= --config big-first=vulkan.gpu_tilings=big,wide,mid,one \
        --config big=vulkan.tiles=big
    python plugins/mnn-vulkan/tools/sweep_tiling.py --onnx vit-s16 --onnx bert-base --batch 16 \
        --config default= --config big-auto=vulkan.big_gemm=auto --config big-128=vulkan.big_gemm=128x128

Each --config is NAME=[KEY=VALUE[;KEY=VALUE...]] of session options (vulkan.tiles forces one
tiling on every layer; vulkan.gpu_tilings, vulkan.gpu_wave and vulkan.gpu_enough change the
rule that picks one per layer; vulkan.big_gemm takes gemm_big.comp's 8x8 register blocks; see
kernels/matmul.py). --model takes examples/build_models.py's CNNs, --onnx zoo exports by name
(tools/zoo_inputs.py) or ONNX paths. For every model, batch and config it
prints the wall-clock median of session.run, the summed GPU time (timestamps around every
dispatch) and, with --per-op, each convolution's GPU microseconds: enough to derive a
per-layer rule from forced tilings and to check the rule against them in the same call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples"))


def parse_config(text: str) -> tuple[str, dict]:
    name, _, rest = text.partition("=")
    options = {}
    for kv in filter(None, rest.split(";")):
        k, v = kv.split("=", 1)
        options[k] = int(v) if v.isdigit() else v
    return name, options


def measure(graph, feeds, options, repeat):
    import mnn_vulkan

    import mnn_core as mnn

    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.profile": True, **options})
    walls = []
    for _ in range(repeat + 3):
        t0 = time.perf_counter()
        sess.run(feeds, copy=False)
        walls.append((time.perf_counter() - t0) * 1e3)
    times = [t for seg in mnn_vulkan.gpu_times().values() for t in seg]
    plain = mnn.Session(graph, backend="vulkan", fallback=False, options=options)  # no timestamps
    plain_walls = []
    for _ in range(repeat + 3):
        t0 = time.perf_counter()
        plain.run(feeds, copy=False)
        plain_walls.append((time.perf_counter() - t0) * 1e3)
    out = next(iter(plain.run(feeds).values()))
    return statistics.median(plain_walls[3:]), sum(ms for _, ms in times), times, out


def main(argv=None):
    from build_models import MODELS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append")
    p.add_argument("--onnx", action="append", default=[], help="a zoo model's name or an ONNX path")
    p.add_argument("--batch", type=int, action="append")
    p.add_argument("--config", action="append", default=[])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--per-op", action="store_true")
    args = p.parse_args(argv)
    configs = [parse_config(c) for c in args.config] or [("default", {})]
    rows = []
    for model in (args.model or ([] if args.onnx else ["resnet18", "mobilenet_v2"])) + args.onnx:
        for batch in args.batch or [16]:
            if model in args.onnx:
                from zoo_inputs import zoo_model

                import mnn_core as mnn

                path, feeds = zoo_model(model, batch)
                graph = mnn.load(str(path))
            else:
                graph = MODELS[model](batch)
                feeds = {"input": np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype("float32")}
            base = None
            for name, options in configs:
                try:
                    wall, gpu, times, out = measure(graph, feeds, options, args.repeat)
                except Exception as exc:  # one config's failure is reported, not fatal
                    print(f"{model} b{batch} {name}: FAILED {type(exc).__name__}: {exc}", flush=True)
                    continue
                base = out if base is None else base
                err = float(np.abs(out - base).max() / np.abs(base).max())
                rows.append((model, batch, name, wall, gpu, err))
                print(
                    f"{model} b{batch} {name}: wall {wall:.3f} ms, GPU {gpu:.3f} ms, diff to first {err:.1e}",
                    flush=True,
                )
                shaders = defaultdict(float)
                for n, ms in times:
                    shaders[n.split(":")[-1]] += ms
                ranked = sorted(shaders.items(), key=lambda kv: -kv[1])
                print("  GPU ms by shader: " + ", ".join(f"{k} {v:.3f}" for k, v in ranked), flush=True)
                if args.per_op:
                    convs = [
                        (n.split(":")[0], ms)
                        for n, ms in times
                        if "conv" in n.split(":")[-1] or n.split(":")[-1].startswith(("gemm", "splitk"))
                    ]
                    print("  per op us: " + " ".join(f"{n}={ms * 1e3:.0f}" for n, ms in convs), flush=True)
    print("\n| model | batch | config | wall ms | GPU ms | diff |\n|---|---|---|---|---|---|")
    for model, batch, name, wall, gpu, err in rows:
        print(f"| {model} | {batch} | {name} | {wall:.3f} | {gpu:.3f} | {err:.1e} |")


if __name__ == "__main__":
    main()
