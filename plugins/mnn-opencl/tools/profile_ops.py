"""Device time of each kernel launch of a model on mnn-opencl, summed per op type and per kernel.

    python plugins/mnn-opencl/tools/profile_ops.py MODEL.onnx --batch 1
    python plugins/mnn-opencl/tools/profile_ops.py ~/.cache/mnn/zoo-arch/vit-s16/legacy.onnx --top 15
    python plugins/mnn-opencl/tools/profile_ops.py MODEL.onnx --option opencl.gemm=direct --no-fuse  # untiled

Each launch the segments recorded is timed alone on a profiling queue (Context.time_kernel,
the tuner's measurement: the median of --reps after one warm-up) once the session has run once,
so the arena holds real values. The sum leaves out what a whole run adds (host copies, the
queue's gaps between launches, cold caches): compare it with the GPU span of every launch back to
back on the profiling queue and with the wall time, both printed below it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import numpy as np


def _tag_launches(kernels) -> list:
    """Wrap every kernel's build function so each launch it records remembers its op; returns the
    list the (op type, node name, launch) triples are appended to."""
    from mnn_core.backend.kernels import Kernel

    tagged = []

    def wrap(op_type, impl):
        def build(op, b):
            start = len(b.launches)
            impl(op, b)
            tagged.extend((op_type, op.node.name, launch) for launch in b.launches[start:])

        return build

    for name, k in list(kernels.items()):
        kernels[name] = Kernel(k.spec, wrap(name, k.impl))
    return tagged


def random_feeds(graph, batch: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, info in graph.inputs.items():
        shape = [batch if not isinstance(d, int) else d for d in info.shape]
        if np.dtype(info.dtype).kind in "iu":
            feeds[name] = rng.integers(0, 2, shape).astype(info.dtype)
        else:
            feeds[name] = rng.standard_normal(shape).astype(info.dtype)
    return feeds


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="an ONNX or .mnn file")
    p.add_argument("--batch", type=int, default=1, help="the size of every symbolic input dim")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--top", type=int, default=12, help="the slowest launches to list one by one")
    p.add_argument("--option", action="append", default=[], help="a session option, KEY=VALUE")
    p.add_argument("--no-fuse", action="store_true", help="Session(fuse=False): no opencl.MatMulBias")
    args = p.parse_args(argv)

    import mnn_opencl

    import mnn_core as mnn

    tagged = _tag_launches(mnn_opencl.KERNELS)
    graph = mnn.load(args.model)
    feeds = random_feeds(graph, args.batch)
    options = dict(o.split("=", 1) for o in args.option)
    sess = mnn.Session(graph, backend="opencl", fallback=False, options=options, fuse=not args.no_fuse)
    sess.run(feeds)
    walls = []
    for _ in range(5):
        t0 = time.perf_counter()
        sess.run(feeds, copy=False)
        walls.append((time.perf_counter() - t0) * 1e3)
    runtime = mnn_opencl.get_runtime(mnn_opencl.select_device(options.get("opencl.device")))
    rows = []
    for op_type, node, launch in tagged:
        ms = runtime.context.time_kernel(launch.kernel, launch.rounded_gws, launch.lws, args.reps)
        rows.append((ms or 0.0, op_type, node, launch.key.split("|")[0], launch.rounded_gws, launch.lws))
    total = sum(r[0] for r in rows)
    by_op, by_kernel = defaultdict(lambda: [0.0, 0]), defaultdict(lambda: [0.0, 0])
    for ms, op_type, _, kern, *_ in rows:
        by_op[op_type][0] += ms
        by_op[op_type][1] += 1
        by_kernel[kern][0] += ms
        by_kernel[kern][1] += 1
    print(f"{runtime.entry.label}: {len(rows)} launches, {total:.3f} ms of kernels")
    for title, table in (("op", by_op), ("kernel", by_kernel)):
        print(f"\n{title:<28} {'ms':>9} {'share':>6} {'launches':>8}")
        for key, (ms, count) in sorted(table.items(), key=lambda kv: -kv[1][0]):
            print(f"{key:<28} {ms:9.3f} {100 * ms / max(total, 1e-9):5.1f}% {count:8d}")
    print(f"\nslowest launches\n{'ms':>9}  {'kernel':<18} {'gws':<20} {'lws':<14} node")
    for ms, _, node, kern, gws, lws in sorted(rows, key=lambda r: -r[0])[: args.top]:
        print(f"{ms:9.3f}  {kern:<18} {str(gws):<20} {str(lws):<14} {node}")
    span = runtime.context.time_span([(launch.kernel, launch.rounded_gws, launch.lws) for *_, launch in tagged])
    print(f"\nGPU span of the launches back to back (no host copies): median {span:.3f} ms")
    print(f"whole run (wall, host copies included): median {statistics.median(walls):.3f} ms, min {min(walls):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
