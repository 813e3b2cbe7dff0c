"""1x1 convolutions (+ ReLU) of SqueezeNet 1.1 and MobileNetV2 on mnn-x86 against ONNX Runtime's own kernel.

    python benchmarks/bench_1x1.py --threads 1 --repeat 300
    python benchmarks/bench_1x1.py --threads 2 --no-ort     # mnn-x86 only, e.g. to compare two builds

Each convolution is a one-node graph on a dense NCHW input (mnn-x86's GEMM straight on the input:
the `x86.layouts=off` plan). Printed per shape: mnn-x86's step minimum over --repeat runs (the core's
step profiler), ONNX Runtime's Conv node minimum from its own profiler (its NCHWc kernel; the
reorders around it are left out, as they are in a model where neighbouring nodes share the layout),
GFLOP/s and the ratio. Both minima: on a shared machine a run is rarely preempted every time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402

#: (input channels, output channels, plane side): SqueezeNet's squeeze/expand 1x1s, its classifier,
#: and MobileNetV2's widest-plane 1x1s
SHAPES = [
    (64, 16, 55),
    (16, 64, 55),
    (128, 16, 55),
    (128, 32, 27),
    (32, 128, 27),
    (256, 32, 27),
    (384, 48, 13),
    (48, 192, 13),
    (512, 64, 13),
    (64, 256, 13),
    (512, 1000, 13),
    (24, 144, 56),
    (144, 24, 56),
    (16, 96, 112),
    (32, 16, 112),
]


def _graph(c, o, hw, rng):
    from mnn_core.graph.builder import GraphBuilder

    b = GraphBuilder()
    x = b.input("x", (1, c, hw, hw))
    w = b.const((rng.standard_normal((o, c, 1, 1)) * 0.1).astype(np.float32))
    y = b.op("Relu", b.op("Conv", x, w, b.const(rng.standard_normal(o).astype(np.float32))))
    b.output(y)
    return b.build()


def _mnn_ms(graph, feed, threads, repeat):
    from profile_ops import step_minima

    import mnn_core as mnn

    sess = mnn.Session(graph, backend="x86", threads=threads, options={"x86.layouts": "off"})
    return sum(step_minima(sess, feed, repeat)[1])


def _ort_ms(graph, feed, threads, repeat):
    with tempfile.TemporaryDirectory() as tmp:
        sess = bm.ort_profiled_session(graph, threads, Path(tmp))
        for _ in range(repeat):
            sess.run(None, feed)
        nodes = bm.ort_node_times(sess)
    return min(min(ms) for op, ms in nodes.values() if op == "Conv")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=300)
    p.add_argument("--no-ort", action="store_true", help="time mnn-x86 only")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"1x1 Conv + ReLU, batch 1, {args.threads} thread(s): minima over {args.repeat} runs, ms (GFLOP/s)")
    for c, o, hw in SHAPES:
        graph = _graph(c, o, hw, rng)
        feed = {"x": rng.standard_normal((1, c, hw, hw)).astype(np.float32)}
        flop = 2.0 * c * o * hw * hw
        mine = _mnn_ms(graph, feed, args.threads, args.repeat)
        line = f"{c:4d} -> {o:4d} at {hw:3d}x{hw:<3d}  mnn-x86 {mine:7.4f} ({flop / mine / 1e6:5.1f})"
        if not args.no_ort:
            theirs = _ort_ms(graph, feed, args.threads, args.repeat)
            line += f"  ONNX Runtime {theirs:7.4f} ({flop / theirs / 1e6:5.1f})  ratio {mine / theirs:.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
