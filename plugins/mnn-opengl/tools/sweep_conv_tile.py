"""Convolution register tiles of mnn-opengl compared on one device, in one process.

    python plugins/mnn-opengl/tools/sweep_conv_tile.py --batch 1 --batch 16 --tile 8x4 --tile 1x1

For each model, batch and tile (OUT_C x OUT_X, the session option "opengl.conv_tile"; "auto"
is the default choice): the wall-clock median of session.run and the largest difference to
the first tile's output, relative to its largest magnitude.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples"))


def main(argv=None):
    from build_models import MODELS

    import mnn_core as mnn

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append")
    p.add_argument("--batch", type=int, action="append")
    p.add_argument("--tile", action="append", help="CxX or auto (default: auto 8x4 4x4 4x1 1x4 1x1)")
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args(argv)
    tiles = args.tile or ["auto", "8x4", "4x4", "4x1", "1x4", "1x1"]
    rows = []
    for model in args.model or ["resnet18", "mobilenet_v2"]:
        for batch in args.batch or [1]:
            graph = MODELS[model](batch)
            x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype("float32")
            base = None
            for tile in tiles:
                options = {} if tile == "auto" else {"opengl.conv_tile": tuple(int(v) for v in tile.split("x"))}
                sess = mnn.Session(graph, backend="opengl", fallback=False, options=options)
                out = sess.run({"input": x})["logits"]
                walls = []
                for _ in range(args.repeat + 2):
                    t0 = time.perf_counter()
                    sess.run({"input": x}, copy=False)
                    walls.append((time.perf_counter() - t0) * 1e3)
                base = out if base is None else base
                err = float(np.abs(out - base).max() / np.abs(base).max())
                wall = statistics.median(walls[2:])
                rows.append((model, batch, tile, wall, err))
                print(f"{model} b{batch} {tile}: {wall:.3f} ms, diff {err:.1e}", flush=True)
    print("\n| model | batch | conv tile | wall ms | diff |\n|---|---|---|---|---|")
    for model, batch, tile, wall, err in rows:
        print(f"| {model} | {batch} | {tile} | {wall:.3f} | {err:.1e} |")


if __name__ == "__main__":
    main()
