"""Convolution register tiles of mnn-opengl compared on one device, in one process.

    python plugins/mnn-opengl/tools/sweep_conv_tile.py --batch 1 --batch 16 --tile tiled:big --tile 8x4

For each model, batch and tile: the wall-clock median of session.run and the largest difference
to the first tile's output, relative to its largest magnitude. A tile is "auto" (the default
choice), "direct" (conv2d.comp with its default register tiles), CxX (conv2d.comp with OUT_C x
OUT_X, the option "opengl.conv_tile"), "tiled" (conv2d_tiled.comp with its default tilings) or
"tiled:T" (conv2d_tiled.comp forced to T: big, wide, mid, one, small or TXxTYxTMxTNxBK, the
option "opengl.conv_tiles") or "blk" (conv2d_blk.comp: 64x64 blocks of 4x4 vec4 register tiles,
split-K as the tiled one's; the option "opengl.conv_path"). Depthwise layers run conv2d.comp whatever
the tile. --option KEY=VALUE adds a session option to every run (e.g. opengl.splitk=1: the tiled
shaders without split-K). --against BACKEND adds that backend's time on the same graphs (e.g.
vulkan, for issue 33's ratio).
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


TILES = ["auto", "direct", "blk", "tiled:big", "tiled:wide", "tiled:mid", "tiled:one", "8x4", "4x4", "2x2", "1x1"]


def tile_options(tile: str) -> dict:
    """The session options that force `tile` (see the module's docstring)."""
    if tile == "auto":
        return {}
    if tile in ("direct", "tiled", "blk"):
        return {"opengl.conv_path": tile}
    if tile.startswith("tiled:"):
        return {"opengl.conv_path": "tiled", "opengl.conv_tiles": tile[len("tiled:") :]}
    return {"opengl.conv_path": "direct", "opengl.conv_tile": tuple(int(v) for v in tile.split("x"))}


def main(argv=None):
    from build_models import MODELS

    import mnn_core as mnn

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append")
    p.add_argument("--batch", type=int, action="append")
    p.add_argument(
        "--tile", action="append", help=f"auto, direct, blk, CxX, tiled or tiled:T (default: {' '.join(TILES)})"
    )
    p.add_argument("--option", action="append", default=[], help="KEY=VALUE, added to every tile's options")
    p.add_argument("--against", action="append", default=[], help="another backend timed on the same graphs")
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args(argv)
    tiles = args.tile or TILES
    extra = dict(o.split("=", 1) for o in args.option)
    rows = []
    for model in args.model or ["resnet18", "mobilenet_v2"]:
        for batch in args.batch or [1]:
            graph = MODELS[model](batch)
            x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype("float32")
            base = None
            runs = [(tile, "opengl", {**tile_options(tile), **extra}) for tile in tiles]
            runs += [(backend, backend, {}) for backend in args.against]
            for tile, backend, options in runs:
                try:
                    sess = mnn.Session(graph, backend=backend, fallback=False, options=options)
                    out = sess.run({"input": x})["logits"]
                except Exception as e:  # another backend missing here: the other rows still count
                    print(f"{model} b{batch} {tile}: failed: {type(e).__name__}: {e}", flush=True)
                    continue
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
