"""MaxPool on mnn-x86 and ONNX Runtime: the pools of SqueezeNet 1.1 and ResNet-18, alone or in the models.

    python benchmarks/bench_pool.py --threads 1 --repeat 300
    python benchmarks/bench_pool.py --threads 2 --hot      # input rewritten before each run, as a conv would
    python benchmarks/bench_pool.py --models --threads 1 --repeat 60   # the MaxPool steps inside the models

--models: one mnn-x86 session and one ORT session (its node profiler on) per model, one run of each
per round; printed is each MaxPool step's minimum over the rounds (mnn-x86: the core's step profiler;
ORT: its per-node kernel time, NCHWc MaxPool after its layout transformer), so both see the same load.

Each pool is a one-node graph. Per round every (pool, engine) pair runs once; printed is each pair's
minimum over the rounds in ms (mnn-x86: the step profiler's time; ORT: the run's wall clock,
a few microseconds of call overhead more than its node; a run is rarely preempted in every round on a
shared machine). With
--hot the input array is rewritten right before each run, so it sits in the cache the way a producing
convolution leaves it; without it the input stays cached from the previous run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

POOLS = {
    # name: (N, C, H, W), attrs
    "squeezenet pool1": ((1, 64, 111, 111), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "squeezenet pool2": ((1, 128, 55, 55), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "squeezenet pool3": ((1, 256, 27, 27), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "resnet18 pool": ((1, 64, 112, 112), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
}


def _mnn_runner(shape, attrs, threads):
    from mnn_core.graph.ir import Graph, Node, TensorInfo
    from mnn_core.session import Session

    graph = Graph(name="pool")
    graph.inputs["x"] = TensorInfo(shape, "float32")
    graph.nodes.append(Node("MaxPool", ["x"], ["y"], dict(attrs), "pool"))
    graph.outputs = ["y"]
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads)

    def run(feeds):  # the step's own time, from the core's step profiler
        sess.run(feeds, copy=False, profile=True)
        return sess.profile()[0][1]

    return run


def _ort_runner(shape, attrs, threads, tmp: Path):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    node = helper.make_node("MaxPool", ["x"], ["y"], **attrs)
    g = helper.make_graph(
        [node],
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp / f"pool{len(list(tmp.iterdir()))}.onnx"
    onnx.save(model, str(path))
    o = ort.SessionOptions()
    o.intra_op_num_threads, o.inter_op_num_threads = threads, 1
    s = ort.InferenceSession(str(path), o, providers=["CPUExecutionProvider"])

    def run(feeds):  # wall clock: a few microseconds of call overhead more than the node
        t0 = time.perf_counter()
        s.run(None, feeds)
        return (time.perf_counter() - t0) * 1e3

    return run


def _models(threads: int, repeat: int) -> None:
    import collections

    import bench_models as bm

    import mnn_core as mnn

    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    for model in ("squeezenet1_1", "resnet18"):
        graph = bm._graph(model, 1)
        sess = mnn.Session(graph, backend="x86", threads=threads)
        osess = bm.ort_profiled_session(graph, threads, Path(tempfile.mkdtemp()))
        pools = [n.name for n in sess.graph.nodes if n.op == "MaxPool"]
        best = collections.defaultdict(lambda: float("inf"))
        for r in range(repeat + 3):
            sess.run({"input": x}, copy=False, profile=True)
            osess.run(None, {"input": x})
            if r >= 3:
                for name, ms in sess.profile():
                    if name in pools:
                        best[name] = min(best[name], ms)
        ort_best = {name: min(ms) for name, (op, ms) in bm.ort_node_times(osess).items() if op == "MaxPool"}
        steps = " ".join(f"{best[n]:.3f}" for n in pools)
        ort_steps = " ".join(f"{v:.3f}" for v in ort_best.values())
        print(
            f"  {model:14s} {threads} thread(s): mnn-x86 MaxPool {sum(best[n] for n in pools):.3f} ms ({steps}); "
            f"ORT {sum(ort_best.values()):.3f} ms ({ort_steps})"
        )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=300)
    p.add_argument("--hot", action="store_true", help="rewrite the input before each run")
    p.add_argument("--no-ort", action="store_true")
    p.add_argument("--models", action="store_true", help="the MaxPool steps inside SqueezeNet 1.1 and ResNet-18")
    args = p.parse_args(argv)
    if args.models:
        print(f"MaxPool steps in the models, min over {args.repeat} interleaved rounds")
        _models(args.threads, args.repeat)
        return
    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp())
    runs = {}
    for name, (shape, attrs) in POOLS.items():
        x = rng.standard_normal(shape).astype(np.float32)
        runs[(name, "mnn-x86")] = (_mnn_runner(shape, attrs, args.threads), x)
        if not args.no_ort:
            runs[(name, "ort")] = (_ort_runner(shape, attrs, args.threads, tmp), x)
    best = {k: float("inf") for k in runs}
    for _ in range(3):
        for fn, x in runs.values():
            fn({"x": x})
    for _ in range(args.repeat):
        for key, (fn, x) in runs.items():
            if args.hot:
                x += 0.0  # touched: in the cache, dirty, as a producer leaves it
            best[key] = min(best[key], fn({"x": x}))
    print(f"MaxPool alone, {args.threads} thread(s), min over {args.repeat} rounds{', hot input' if args.hot else ''}")
    for name in POOLS:
        line = f"  {name:18s} mnn-x86 {best[(name, 'mnn-x86')]:7.3f} ms"
        if not args.no_ort:
            line += f"  ort {best[(name, 'ort')]:7.3f} ms"
        print(line)


if __name__ == "__main__":
    main()
