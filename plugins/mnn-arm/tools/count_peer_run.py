"""One model on one engine inside the arm64 root, for tools/count_peer.py: the session made and one
warm-up run (neither counted), then an empty marked window (what the markers cost) and RUNS marked
runs, count_marks.so's functions around each; the last run's outputs go to OUTPUTS for the host to
check against ONNX Runtime's fp32 outputs.

    python3 count_peer_run.py MARKS_SO ENGINE MODEL INPUTS.npz OUTPUTS.npz RUNS

ENGINE: mnn (precision "normal"), mnn-low (precision "low": fp16 activations), ort (ONNX Runtime's CPU
provider), ncnn (fp32) or ncnn-low (its default on a CPU with fp16: fp16 storage and arithmetic; MODEL is
the .param, its .bin beside it). Every engine runs on the calling thread only.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from typing import Callable

import numpy as np


def mnn_runner(path: str, precision: str) -> Callable[[dict], dict]:
    import mnn_core as mnn

    sess = mnn.Session(mnn.load(path), backend="arm", fallback=False, precision=precision, threads=1)
    return sess.run


def ort_runner(path: str) -> Callable[[dict], dict]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # no pool threads: all work on the calling thread
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return lambda feeds: dict(zip(names, sess.run(names, feeds)))


def ncnn_runner(path: str, fp16: bool) -> Callable[[dict], dict]:
    """Outputs keyed out0, out1...: pnnx's names, in the ONNX model's order."""
    import ncnn

    net = ncnn.Net()
    net.opt.num_threads = 1
    net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = fp16
    net.opt.use_bf16_storage = False
    net.load_param(path)
    net.load_model(path[: -len(".param")] + ".bin")
    ins, outs = net.input_names(), net.output_names()

    def run(feeds: dict) -> dict:
        ex = net.create_extractor()
        for name, value in zip(ins, feeds.values()):
            ex.input(name, ncnn.Mat(np.ascontiguousarray(value[0])))  # ncnn's blobs have no batch axis
        return {name: np.array(ex.extract(name)[1]) for name in outs}

    return run


def main(marks_so: str, engine: str, model: str, inputs: str, outputs: str, runs: str) -> None:
    marks = ctypes.CDLL(marks_so)
    begin, end = marks.mnn_count_begin, marks.mnn_count_end
    feeds = dict(np.load(inputs))
    if engine == "ort":
        run = ort_runner(model)
    elif engine in ("mnn", "mnn-low"):
        run = mnn_runner(model, "low" if engine == "mnn-low" else "normal")
    elif engine in ("ncnn", "ncnn-low"):
        run = ncnn_runner(model, engine == "ncnn-low")
    else:
        sys.exit(f"count_peer_run: unknown engine {engine!r} (mnn, mnn-low, ort, ncnn or ncnn-low)")
    out = run(feeds)  # warm-up: first-run packing and planning stay out of the count
    gc.collect()
    begin()
    end()
    for _ in range(int(runs)):
        gc.collect()  # a collection the previous runs owe falls here, not inside the next window
        begin()
        out = run(feeds)
        end()
    np.savez(outputs, **{k: np.asarray(v) for k, v in out.items()})


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
