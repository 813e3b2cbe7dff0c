"""Per-op time of a PTQ int8 model on mnn-x86 (Session.run(profile=True)), grouped by op kind.

    PYTHONPATH=plugins/mnn-x86 python benchmarks/profile_quant.py --model mobilenet_v2 --convs

The graph is bench_quant.py's (examples/build_models.py, minmax per-channel PTQ on random calibration);
each step's minimum over --repeat runs is printed (see profile_ops.py for why minima).
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_ops import step_minima  # noqa: E402


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
    nodes = {n.name: n for n in sess.graph.nodes}
    infos = sess._need_plan().infos
    by_kind: dict[str, list] = collections.defaultdict(lambda: [0.0, 0])
    for name, ms in zip(names, mins):
        node = nodes.get(name)
        kind = node.op if node is not None else name
        if node is not None and node.op in ("Conv", "QLinearConv"):
            wi = 1 if node.op == "Conv" else 3
            w, y = infos[node.inputs[wi]].shape, infos[node.outputs[0]].shape
            dw = node.attrs.get("group", 1) > 1
            kind = f"{node.op} " + ("dw" if dw else f"{w[2]}x{w[3]}")
            if args.convs:
                gop = 2 * np.prod(y) * w[1] * w[2] * w[3] / 1e9
                x_shape = infos[node.inputs[0]].shape
                print(
                    f"  {name:12s} {kind:16s} x {tuple(x_shape)} w {tuple(w)} s{node.attrs.get('strides')} "
                    f"{ms:7.3f} ms {gop / ms * 1e3:6.1f} GOP/s"
                )
        by_kind[kind][0] += ms
        by_kind[kind][1] += 1
    print(
        f"{args.model} {'fp32' if args.fp32 else 'int8'}, {args.threads} thread(s): wall median "
        f"{statistics.median(walls):.2f} ms, min {min(walls):.2f}; steps' minima add up to {sum(mins):.2f} ms"
    )
    for kind, (ms, count) in sorted(by_kind.items(), key=lambda t: -t[1][0]):
        print(f"  {kind:22s} {count:3d} steps {ms:8.2f} ms")


if __name__ == "__main__":
    main()
