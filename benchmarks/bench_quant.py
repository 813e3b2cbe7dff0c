"""int8 vs fp32 speed on x86, one thread: mnn (PTQ int8 graph, x86 int8 kernels) next to ONNX Runtime
(quantize_static QDQ int8) on the same float model, same inputs, in one run.

    python benchmarks/bench_quant.py                  # every model
    python benchmarks/bench_quant.py --model mobilenet_v2 --model resnet18 --repeat 30 --rounds 3

Weights are random (speed does not depend on them); calibration is 16 random inputs. Timings are the
median of --repeat runs after warm-up, the engines interleaved round by round so that load from other
processes hits all of them alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import mnn_core as mnn
from mnn_core import express, nn, quant


def lenet():
    from mnn_core.testing.models import lenet as lenet_in  # the LeNet-5 the training benchmark times

    return lenet_in(nn), (1, 28, 28)


def conv_stack():
    """VGG-like: 3x3 convolutions and ReLUs, 64 channels at 56x56 then 128 at 28x28 (no residuals)."""
    layers = [nn.Conv2d(3, 64, 3, padding=1), nn.ReLU()]
    for _ in range(2):
        layers += [nn.Conv2d(64, 64, 3, padding=1), nn.ReLU()]
    layers += [nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU()]
    for _ in range(2):
        layers += [nn.Conv2d(128, 128, 3, padding=1), nn.ReLU()]
    return nn.Sequential(*layers), (3, 56, 56)


def _examples_on_path():
    """examples/ on sys.path: the model zoo (build_models.py) and ONNX Runtime's quantizer (_quant_common.py)."""
    examples = str(Path(__file__).resolve().parents[1] / "examples")
    if examples not in sys.path:
        sys.path.insert(0, examples)


def _zoo(name):
    """MobileNetV2 / ResNet-18 of examples/build_models.py (seeded weights), as (graph, input shape)."""

    def build():
        _examples_on_path()
        from build_models import MODELS

        return MODELS[name](1), (3, 224, 224)

    return build


MODELS = {  # key: (title, builder (None: the function of that name here), batch sizes)
    "lenet": ("LeNet-5", None, (1, 64)),
    "conv_stack": ("conv stack 3x3 (64ch@56, 128ch@28)", None, (1,)),
    "mobilenet_v2": ("MobileNetV2", _zoo("mobilenet_v2"), (1,)),
    "resnet18": ("ResNet-18", _zoo("resnet18"), (1,)),
}


def ort_session(path, threads=1):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def bench(name, model_fn, batch, repeat, tmp, calib_n=16, rounds=1, clock=time.perf_counter):
    from mnn_core.convert import save_onnx
    from mnn_core.graph.passes import optimize

    express.manual_seed(0)
    model, shape = model_fn()
    graph = model if isinstance(model, mnn.Graph) else model.to_graph([(1,) + shape])
    rng = np.random.default_rng(0)
    calib = rng.random((calib_n,) + shape).astype(np.float32)
    res = quant.quantize(graph, {"input": calib}, progress=False)
    # the same int8 model with residual adds in float between DequantizeLinear and QuantizeLinear (before QLinearAdd)
    unfused = quant.quantize(graph, {"input": calib}, progress=False, fuse_add=False)
    fp32, int8 = os.path.join(tmp, f"{name}.onnx"), os.path.join(tmp, f"{name}.int8.onnx")
    # batch norms folded first, as torch.onnx.export writes eval-mode models (and as mnn's quantize does): otherwise
    # ORT's quantize_static leaves them as float ops between DequantizeLinear/QuantizeLinear pairs
    save_onnx(optimize(graph), fp32)
    _examples_on_path()
    from _quant_common import ort_quantize  # the peer the quantization examples use too

    ort_quantize(fp32, int8, calib)
    x = rng.random((batch,) + shape).astype(np.float32)
    runs = {
        "mnn fp32 (x86)": (lambda s: lambda: s.run({"input": x}, copy=False))(
            mnn.Session(graph, backend="x86", threads=1)
        ),
        "mnn int8 (x86)": (lambda s: lambda: s.run({"input": x}, copy=False))(
            mnn.Session(res.graph, backend="x86", threads=1)
        ),
        "mnn int8, no QLinearAdd (x86)": (lambda s: lambda: s.run({"input": x}, copy=False))(
            mnn.Session(unfused.graph, backend="x86", threads=1)
        ),
        "ORT fp32": (lambda s: lambda: s.run(None, {"input": x}))(ort_session(fp32)),
        "ORT int8 (QDQ)": (lambda s: lambda: s.run(None, {"input": x}))(ort_session(int8)),
    }
    placement = mnn.Session(res.graph, backend="x86", threads=1)
    placement.run({"input": x})
    for fn in runs.values():
        for _ in range(3):
            fn()
    meds = {k: [] for k in runs}
    for _ in range(rounds):  # each round: `repeat` interleaved runs, one median per engine
        times = {k: [] for k in runs}
        for _ in range(repeat):
            for k, fn in runs.items():
                t0 = clock()
                fn()
                times[k].append(clock() - t0)
        for k, v in times.items():
            meds[k].append(statistics.median(v) * 1e3)
    med = {k: statistics.median(v) for k, v in meds.items()}
    print(
        f"\n{name}, batch {batch}, 1 thread, median of {repeat} per round, {rounds} round(s) "
        f"(range of the round medians in brackets); int8 graph placement: {placement.plan.backends()}"
    )
    print("| engine | ms | vs mnn fp32 | vs ORT int8 |\n|---|---|---|---|")
    for k, v in med.items():
        rng_txt = f" [{min(meds[k]):.2f}-{max(meds[k]):.2f}]" if rounds > 1 else ""
        print(f"| {k} | {v:.3f}{rng_txt} | {med['mnn fp32 (x86)'] / v:.2f}x | {med['ORT int8 (QDQ)'] / v:.2f}x |")
    return med


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds; the median of their medians is shown")
    p.add_argument("--model", action="append", choices=sorted(MODELS), help="default: all")
    p.add_argument("--calib", type=int, default=16, help="calibration inputs (random)")
    p.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: perf_counter; cpu: this thread's CPU time (both engines run on the calling thread at 1 thread), "
        "which leaves out the time spent waiting for a core on a loaded machine",
    )
    args = p.parse_args(argv)
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    builders = {"lenet": lenet, "conv_stack": conv_stack}
    with tempfile.TemporaryDirectory() as tmp:
        for key in args.model or list(MODELS):
            title, fn, batches = MODELS[key]
            for batch in batches:
                bench(title, fn or builders[key], batch, args.repeat, tmp, args.calib, args.rounds, clock)


if __name__ == "__main__":
    main()
