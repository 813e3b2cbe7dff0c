"""Quick GFLOP/s of the x86 GEMM and convolutions, next to numpy's matmul.

    python plugins/mnn-x86/bench_kernels.py [--isa avx2] [--threads 1] [--quick]

GEMM is timed on pre-packed operands (the steady state of a layer with
constant weights); convolutions run as one-node sessions (packing of the
input, im2col and epilogue included). numpy's BLAS gets the same thread count
(OPENBLAS_NUM_THREADS / OMP_NUM_THREADS are set before numpy is imported).
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isa", default=None, help="scalar | avx2 | avx512 (default: the best this CPU runs)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    return ap.parse_args()


ARGS = _args()
# import the installed mnn_x86, not the source folder next to this script
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(ARGS.threads))

import numpy as np  # noqa: E402
from mnn_x86 import _x86, isa  # noqa: E402

from mnn_core import GraphBuilder, Session  # noqa: E402

GEMMS = [
    (64, 64, 64),
    (128, 128, 128),
    (256, 256, 256),
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (196, 2304, 256),
    (3136, 64, 576),
    (1, 1024, 1000),
    (64, 4096, 1024),
]
CONVS = [  # name, (N, C, H, W), (O, k), attrs
    ("stem 3x3/2 3->32 @224", (1, 3, 224, 224), (32, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("3x3 64->64 @56", (1, 64, 56, 56), (64, 3), {"pads": [1, 1, 1, 1]}),
    ("1x1 256->64 @56", (1, 256, 56, 56), (64, 1), {}),
    ("1x1 64->256 @56", (1, 64, 56, 56), (256, 1), {}),
    ("3x3 256->256 @14", (1, 256, 14, 14), (256, 3), {"pads": [1, 1, 1, 1]}),
    ("dw 3x3 32 @112", (1, 32, 112, 112), (32, 3), {"group": 32, "pads": [1, 1, 1, 1]}),
    ("dw 3x3/2 96 @112", (1, 96, 112, 112), (96, 3), {"group": 96, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
]


def _best_of(fn, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_gemm(level: str, threads: int, quick: bool) -> None:
    print(f"GEMM (M x K x N), fp32, {threads} thread(s)          x86 {level:>6}   numpy")
    for m, k, n in GEMMS[:6] if quick else GEMMS:
        flops = 2.0 * m * k * n
        reps = max(3, min(200, int(2e9 / flops)))
        if quick:
            reps = max(2, reps // 4)
        ours = min(_x86.bench_gemm(level, threads, m, n, k, reps) for _ in range(3))
        a = np.random.default_rng(0).standard_normal((m, k), dtype=np.float32)
        b = np.random.default_rng(1).standard_normal((k, n), dtype=np.float32)
        theirs = _best_of(lambda: a @ b, reps)
        print(f"  {m:5d} x {k:5d} x {n:5d}                      {flops / ours / 1e9:8.1f}  {flops / theirs / 1e9:8.1f}")


def bench_conv(level: str, threads: int, quick: bool) -> None:
    print(f"Conv, fp32, {threads} thread(s), GFLOP/s (ms)              x86 {level}")
    rng = np.random.default_rng(0)
    for name, (n, c, h, w), (o, k), attrs in CONVS[:4] if quick else CONVS:
        g = GraphBuilder()
        x = g.input("x", (n, c, h, w))
        grp = attrs.get("group", 1)
        wt = g.const(rng.standard_normal((o, c // grp, k, k), dtype=np.float32))
        g.output(g.Conv(x, wt, g.const(np.zeros(o, np.float32)), activation="relu", **attrs), "y")
        sess = Session(g.build(), backend="x86", fallback=False, threads=threads, options={"x86.isa": level})
        feed = {"x": rng.standard_normal((n, c, h, w), dtype=np.float32)}
        _, _, oh, ow = sess.output_info()["y"].shape
        flops = 2.0 * n * o * oh * ow * (c // grp) * k * k
        sess.run(feed, copy=False)
        sess.run(feed, copy=False, profile=True)
        t = min(sum(ms for _, ms in _profile(sess, feed)) for _ in range(3 if quick else 10)) / 1e3
        print(f"  {name:36s} {flops / t / 1e9:8.1f}  ({t * 1e3:.3f} ms)")


def _profile(sess, feed):
    sess.run(feed, copy=False, profile=True)
    return sess.profile()


def main() -> int:
    if _x86 is None:
        import mnn_x86

        print(f"mnn_x86's compiled kernels did not load: {mnn_x86._IMPORT_ERROR}", file=sys.stderr)
        return 2
    level = ARGS.isa or isa.best()
    if level not in isa.supported():
        print(f"this CPU does not run {level}; it runs {', '.join(isa.supported())}", file=sys.stderr)
        return 2
    print(
        f"mnn-x86 kernels: ISA {level} (tile {_x86.table_info(level)['mr']}x{_x86.table_info(level)['nr']}), "
        f"this CPU runs {', '.join(isa.supported())}; numpy {np.__version__}"
    )
    bench_gemm(level, ARGS.threads, ARGS.quick)
    bench_conv(level, ARGS.threads, ARGS.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
