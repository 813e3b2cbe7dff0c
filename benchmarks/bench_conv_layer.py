"""One convolution layer (a Conv and a ReLU) on mnn-x86 under option variants and on ONNX Runtime,
interleaved in one process, timed by CPU time.

    python benchmarks/bench_conv_layer.py --layer 16,32,3,2,160 --layer 32,64,3,2,80 --batch 8
    python benchmarks/bench_conv_layer.py --layer 64,64,3,2,40 --option x86.direct=on --option x86.conv_t=on

A layer is C,O,K,S,HW[,P]: C input channels, O output channels, a KxK kernel at stride S with "same"
padding (K // 2, or P on every side) on an HW x HW input. Per round each session runs --reps times in turn; printed per
layer: each one's minimum ms over all runs, its GFLOP/s, and mnn-x86 (options as given) / ONNX Runtime.
At one thread the clock is the calling thread's CPU time (both engines compute on it), at more the
process's: a run preempted by another process's work is not charged for the wait, which on a shared
machine makes this the number to compare (wall-clock minima drift with the load).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def layer_model(c: int, o: int, k: int, s: int, hw: int, batch: int, path: Path, pad: int) -> np.ndarray:
    """Writes the layer's ONNX model to `path`; returns an input for it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((o, c, k, k)) / np.sqrt(c * k * k)).astype("float32"), "w")
    b = numpy_helper.from_array(rng.standard_normal(o).astype("float32"), "b")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[pad] * 4, strides=[s, s]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, c, hw, hw])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "layer", [x_info], [y_info], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return rng.standard_normal((batch, c, hw, hw)).astype("float32")


def run(layer: str, args) -> None:
    import onnxruntime as ort

    import mnn_core as mnn

    c, o, k, s, hw, *rest = (int(v) for v in layer.split(","))
    pad = rest[0] if rest else k // 2
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "layer.onnx"
        x = layer_model(c, o, k, s, hw, args.batch, path, pad)
        graph = mnn.load(str(path))
        runs = {}
        for label in ["mnn-x86", *args.option]:
            options = dict([label.split("=", 1)]) if "=" in label else None
            sess = mnn.Session(graph, backend="x86", threads=args.threads, options=options)
            runs[label] = lambda sess=sess: sess.run({"x": x}, copy=False)
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = args.threads, 1
        ort_sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        runs["onnxruntime"] = lambda: ort_sess.run(None, {"x": x})
        clock = time.thread_time if args.threads == 1 else time.process_time
        best = dict.fromkeys(runs, float("inf"))
        for fn in runs.values():
            fn()
        for _ in range(args.rounds):
            for label, fn in runs.items():
                for _ in range(args.reps):
                    t0 = clock()
                    fn()
                    best[label] = min(best[label], clock() - t0)
    oh = (hw + 2 * pad - k) // s + 1
    gflop = 2 * args.batch * o * c * k * k * oh * oh / 1e9
    cells = "  ".join(f"{label} {t * 1e3:.3f} ms ({gflop / t:.0f} GF/s)" for label, t in best.items())
    ratio = best["mnn-x86"] / best["onnxruntime"]
    print(f"{c}->{o} {k}x{k} s{s} {hw}x{hw} b{args.batch} t{args.threads}: {cells}  mnn-x86/onnxruntime {ratio:.2f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layer", action="append", required=True, help="C,O,K,S,HW[,P] (repeatable)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--option", action="append", default=[], help="an mnn-x86 variant, name=value (repeatable)")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args(argv)
    for layer in args.layer:
        run(layer, args)


if __name__ == "__main__":
    main()
