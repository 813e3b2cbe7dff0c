"""The first convolution (the stem) of a model: mnn-x86 with x86.direct auto (the direct kernel) and
off (im2col + GEMM), and ONNX Runtime's own per-node time for it, interleaved in one process.

    python benchmarks/bench_stem.py --model resnet18 --threads 1 --repeat 30
    python benchmarks/bench_stem.py --model squeezenet1_1 --model mobilenet_v2 --threads 2

Per round: one profiled inference of each mnn-x86 session (options x86.direct "auto" and "off"; the ISA
is whatever mnn-x86 picks, or MNN_X86_ISA), then one of an ONNX Runtime session with its profiler on,
so all three see the same load on a shared machine. Printed per model: the stem step's minimum over
the rounds for each (ORT's from its profile's kernel times of the stem node), its GFLOP/s, and the
whole model's summed step minima for the two mnn-x86 sessions.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models as bm  # noqa: E402

MODES = ("auto", "off")


def _stem(sess) -> tuple[str, float]:
    """The name of a session's first Conv step and its GFLOP."""
    nodes = {n.name: n for n in sess.graph.nodes}
    infos = sess._need_plan().infos
    for name, _ in sess.profile():
        node = nodes.get(name)
        if node is not None and node.op == "Conv":
            w, y = infos[node.inputs[1]].shape, infos[node.outputs[0]].shape
            return name, float(2 * np.prod(y) * w[1] * w[2] * w[3] / 1e9)
    raise RuntimeError("no Conv step in the profile")


def _ort_first_conv_minimum(sess, skip: int) -> float:
    """The minimum kernel time (ms) of the first Conv node in ORT's profile, the first `skip` runs left out."""
    convs = [ms for op, ms in bm.ort_node_times(sess, skip).values() if op in ("Conv", "FusedConv")]
    return min(convs[0])


def run(model: str, threads: int, repeat: int) -> None:
    import mnn_core as mnn

    graph = bm._graph(model, 1)
    sessions = {m: mnn.Session(graph, backend="x86", threads=threads, options={"x86.direct": m}) for m in MODES}
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    with tempfile.TemporaryDirectory() as tmpdir:
        ort_sess = bm.ort_profiled_session(graph, threads, Path(tmpdir))
        warm = 3
        for _ in range(warm):
            for sess in sessions.values():
                sess.run({"input": x}, copy=False)
            ort_sess.run(None, {"input": x})
        steps = {m: collections.defaultdict(lambda: float("inf")) for m in MODES}
        for _ in range(repeat):
            for m, sess in sessions.items():
                sess.run({"input": x}, copy=False, profile=True)
                for name, ms in sess.profile():
                    steps[m][name] = min(steps[m][name], ms)
            ort_sess.run(None, {"input": x})
        ort_ms = _ort_first_conv_minimum(ort_sess, warm)
    stem, gflop = _stem(sessions["off"])
    print(f"{model}, {threads} thread(s), {repeat} interleaved rounds; stem {stem} ({gflop:.3f} GFLOP)")
    for m in MODES:
        ms = steps[m][stem]
        print(
            f"  mnn-x86 direct {m:4s}: stem {ms:7.3f} ms ({gflop / ms * 1e3:6.1f} GF/s); "
            f"model steps' minima {sum(steps[m].values()):7.2f} ms"
        )
    print(f"  onnxruntime         : stem {ort_ms:7.3f} ms ({gflop / ort_ms * 1e3:6.1f} GF/s)")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="resnet18, squeezenet1_1, mobilenet_v2 (repeatable; default: all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=30)
    args = p.parse_args(argv)
    for model in args.model or ["resnet18", "squeezenet1_1", "mobilenet_v2"]:
        t0 = time.perf_counter()
        run(model, args.threads, args.repeat)
        print(f"  ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
