"""ResNet-18's 7x7 3x3 convolutions: Winograd against the GEMM (x86.winograd "on" / "off"), per batch size.

    python benchmarks/bench_wino_batch.py --batch 8 --threads 1

Two sessions of ResNet-18 in one process, x86.winograd "off" and "on", run in turn with the step
profiler; each step keeps its minimum over --repeat runs. Prints the 7x7 layers (conv_16, conv_18,
conv_19: 512 channels, 4 tiles an image; conv_15 is stride 2, the GEMM in both). The rule in ops_conv.py
(WINO_MIN_OUT_BATCHED, WINO_MIN_TILES) was set from this: Winograd once the batch brings 8 tiles.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402

LAYERS = ("conv_15", "conv_16", "conv_18", "conv_19")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=6)
    args = p.parse_args(argv)
    import mnn_core as mnn

    graph = bm._graph("resnet18", args.batch)
    x = np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224), dtype=np.float32)
    sessions = {
        c: mnn.Session(graph, backend="x86", threads=args.threads, options={"x86.winograd": c}) for c in ("off", "on")
    }
    want, got = (s.run({"input": x}) for s in sessions.values())
    print(f"max difference {max(float(np.abs(want[k] - got[k]).max()) for k in want):.3g}")
    mins: dict[str, dict[str, float]] = {c: {} for c in sessions}
    for _ in range(args.repeat):
        for c, sess in sessions.items():
            sess.run({"input": x}, copy=False, profile=True)
            for name, ms in sess.profile():
                mins[c][name] = min(ms, mins[c].get(name, float("inf")))
    for name in LAYERS:
        print(f"{name}: GEMM {mins['off'][name]:.3f} ms, Winograd {mins['on'][name]:.3f} ms")


if __name__ == "__main__":
    main()
