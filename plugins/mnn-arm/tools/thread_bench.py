"""Wall-clock of mnn-arm at 1 and more threads (Session(threads=...)), on the models of
examples/build_models.py and two single ops, with the outputs at every thread count compared bit for bit
with one thread's. Under qemu-user each guest thread is a host thread, so this shows that the work is
split and how much of it runs in parallel on the host's cores; it says nothing about a phone's cores.

    MNN_ARM_RUN=python plugins/mnn-arm/tools/arm_rootfs_test.sh \\
        $PWD/plugins/mnn-arm/tools/thread_bench.py --threads 1,2 --repeat 3
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np

from mnn_core import GraphBuilder, Session
from mnn_core.graph.ir import TensorInfo

BUILD_MODELS = Path(__file__).resolve().parents[3] / "examples" / "build_models.py"


def _zoo(name: str, size: int):
    spec = importlib.util.spec_from_file_location("build_models", BUILD_MODELS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    graph = mod.MODELS[name](batch=1)
    graph.inputs["input"] = TensorInfo((1, 3, size, size), "float32")
    return graph, {"input": np.random.default_rng(1).standard_normal((1, 3, size, size)).astype(np.float32)}


def _matmul(n: int):
    rng = np.random.default_rng(2)
    g = GraphBuilder("matmul")
    g.output(g.MatMul(g.input("a", (n, n), "float32"), g.const(rng.standard_normal((n, n)).astype(np.float32))), "y")
    return g.build(), {"a": rng.standard_normal((n, n)).astype(np.float32)}


def _conv(c: int, hw: int):
    rng = np.random.default_rng(3)
    g = GraphBuilder("conv")
    w = g.const((rng.standard_normal((c, c, 3, 3)) * 0.1).astype(np.float32))
    g.output(g.Conv(g.input("x", (1, c, hw, hw), "float32"), w, pads=[1] * 4, strides=[2, 2]), "y")
    return g.build(), {"x": rng.standard_normal((1, c, hw, hw)).astype(np.float32)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size", type=int, default=224)
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    subjects = {
        "MobileNetV2": _zoo("mobilenet_v2", args.size),
        "ResNet-18": _zoo("resnet18", args.size),
        "MatMul 384^3": _matmul(384),
        "Conv 3x3 s2 64ch 112": _conv(64, 112),
    }
    heads = " | ".join(f"{t} thread(s) ms (min of {args.repeat})" for t in threads)
    print(f"| subject | {heads} | speed-up | same bits |")
    print(f"|---|{'---|' * len(threads)}---|---|")
    for name, (graph, feeds) in subjects.items():
        times, outs = [], []
        for t in threads:
            sess = Session(graph, backend="arm", fallback=False, threads=t)
            out = sess.run(dict(feeds))  # warm-up (and the pool's threads)
            best = float("inf")
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                sess.run(dict(feeds))
                best = min(best, time.perf_counter() - t0)
            times.append(best * 1e3)
            outs.append(out)
        same = all(np.array_equal(o[k], outs[0][k]) for o in outs[1:] for k in o)
        cells = " | ".join(f"{ms:.0f}" for ms in times)
        print(f"| {name} | {cells} | {times[0] / times[-1]:.2f}x | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
