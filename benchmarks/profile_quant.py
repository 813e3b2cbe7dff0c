"""Per-op time of a PTQ int8 model on mnn-x86 (Session.run(profile=True)), grouped by op kind.

    PYTHONPATH=plugins/mnn-x86 python benchmarks/profile_quant.py --model mobilenet_v2 --convs

The graph is bench_quant.py's (examples/build_models.py, minmax per-channel PTQ on random calibration);
each step's minimum over --repeat runs is printed (see profile_ops.py for why minima).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_ops import print_summary, step_minima, time_by_kind  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="mobilenet_v2", help="mobilenet_v2, resnet18")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--calib", type=int, default=4)
    p.add_argument("--fp32", action="store_true", help="profile the float graph instead")
    p.add_argument("--convs", action="store_true", help="one line per (QLinear)Conv with its shapes")
    args = p.parse_args(argv)
    import bench_quant as bq

    import mnn_core as mnn
    from mnn_core import express, quant

    express.manual_seed(0)
    model, shape = bq.MODELS[args.model][1]()
    graph = model if isinstance(model, mnn.Graph) else model.to_graph([(1,) + shape])
    rng = np.random.default_rng(0)
    if not args.fp32:
        calib = {"input": rng.random((args.calib,) + shape).astype(np.float32)}
        graph = quant.quantize(graph, calib, progress=False).graph
    x = rng.random((1,) + shape).astype(np.float32)
    sess = mnn.Session(graph, backend="x86", threads=args.threads)
    names, mins, walls = step_minima(sess, {"input": x}, args.repeat)
    by_kind = time_by_kind(sess, names, mins, convs=args.convs, rate="GOP/s")
    print_summary(f"{args.model} {'fp32' if args.fp32 else 'int8'}, {args.threads} thread(s)", walls, mins, by_kind)


if __name__ == "__main__":
    main()
