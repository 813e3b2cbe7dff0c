"""Does threads=N stay as fast as threads=1 when every core is busy with another process?

    python benchmarks/bench_contention.py                  # the default workloads, quiet then busy
    python benchmarks/bench_contention.py --quick          # SqueezeNet and the LeNet step, fewer rounds
    python benchmarks/bench_contention.py --workload resnet18 --workload lenet-train --rounds 9
    python benchmarks/bench_contention.py --busy 4 --threads 4   # 4 competitors, threads=4 against threads=1
    python benchmarks/bench_contention.py --json out.json  # every sample, for a later comparison

A backend's threads help on a quiet machine; on a shared one a thread the OS does not schedule can
hold the others up (a barrier at the end of each parallel loop waits for it), and threads=N can end
up slower than threads=1. This script measures that. It starts --busy processes that spin on the CPU
(one per core by default) and stops them when it is done, on an error or on Ctrl-C. For each
workload it builds one threads=1 and one threads=N instance in this process and times them
interleaved, run against run (the order swaps every round), first with the machine as it is
("quiet": no competitors of ours), then with the competitors running ("busy"). A sample is the
median of --repeat runs; a time is the median over --rounds samples; `N/1` is the median over rounds of
the threads=N sample divided by the threads=1 sample of the same round. Per round, because with one
competitor per core the scheduler sometimes leaves a core to this process alone and sometimes not, for
a second or so at a time, and threads=1 runs 2-2.5x faster in the first case: samples taken next to
each other see the same case. The item this measures: busy N/1 <= 1.2 everywhere.

Workloads (--workload, repeatable; --list shows them):
  squeezenet1_1, mobilenet_v2, resnet18   examples/build_models.py, batch 1, 224x224
  minilm-l3                               a transformer (MiniLM, 3 layers) from the model zoo
                                          (mnn_core.zoo; skipped, with a note, when not cached)
  zoo:<name>                              any other corpus model (python -m mnn_core.zoo list), or an
                                          architecture of bench_zoo.py (its legacy export, e.g.
                                          zoo:lstm-tagger; benchmarks/zoo_arch)
  lenet-train                             the LeNet-5 training step of benchmarks/bench_train.py
                                          (batch 64, SGD with momentum), 10 steps a run

On a machine with other users the quiet phase is not really quiet: compare ratios, not times, and
repeat (--rounds) until the medians settle.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))
sys.path.insert(0, str(HERE))

IMAGE_MODELS = ("squeezenet1_1", "mobilenet_v2", "resnet18")
DEFAULT = (*IMAGE_MODELS, "minilm-l3", "lenet-train")
QUICK = ("squeezenet1_1", "lenet-train")
#: a competitor: a spinning interpreter that dies with its parent (prctl PR_SET_PDEATHSIG, SIGKILL)
SPIN = "import ctypes\ntry: ctypes.CDLL(None).prctl(1, 9)\nexcept Exception: pass\nwhile True: pass"


# -- competitors ----------------------------------------------------------------------------------


@contextlib.contextmanager
def competitors(n: int):
    """n processes spinning on the CPU for the duration of the block; stopped however the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]
    try:
        time.sleep(0.2)  # let them start spinning
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


# -- workloads: a callable that runs once ---------------------------------------------------------


def image_model(name: str, threads: int):
    import numpy as np
    from build_models import MODELS

    import mnn_core as mnn

    sess = mnn.Session(MODELS[name](1), backend="x86", threads=threads)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    return lambda: sess.run({"input": x}, copy=False)


def zoo_model(name: str, threads: int):
    from zoo_arch import ARCHES

    import mnn_core as mnn
    from mnn_core.zoo.corpus import BY_NAME
    from mnn_core.zoo.fetch import cache_dir

    if name in ARCHES:
        return arch_model(name, threads)
    if name not in BY_NAME:
        raise LookupError(f"{name!r} is not a zoo model (python -m mnn_core.zoo list, benchmarks/zoo_arch)")
    model = BY_NAME[name]
    files = sorted((Path(cache_dir(None)) / "models" / name).glob("*.onnx"))
    if not files:
        raise LookupError(f"{name} is not in the zoo cache: python -m mnn_core.zoo fetch {name}")
    sess = mnn.Session(mnn.load(files[0]), backend="x86", threads=threads)
    feeds = model.make_feeds()
    return lambda: sess.run(feeds)


def arch_model(name: str, threads: int):
    """an architecture of bench_zoo.py at batch 1, from its legacy export (exported on first use)"""
    from types import SimpleNamespace

    import bench_zoo

    import mnn_core as mnn

    where = SimpleNamespace(cache=None, arch_cache=None, small=False)
    sess = mnn.Session(mnn.load(bench_zoo._path(name, "legacy", 1, where)), backend="x86", threads=threads)
    feeds = bench_zoo.model_feeds(name, 1)
    return lambda: sess.run(feeds, copy=False)


def lenet_train(threads: int, steps: int = 10):
    import numpy as np
    from bench_train import initial_state, orders

    from mnn_core import data, nn, optim, train
    from mnn_core.testing.models import lenet

    try:
        x, y = data.load_mnist(data.FASHION_MNIST_DIR, train=True, limit=steps * 64)
    except Exception:  # no data set here: random images time the same
        rng = np.random.default_rng(0)
        x = rng.random((steps * 64, 1, 28, 28), dtype=np.float32)
        y = rng.integers(0, 10, steps * 64).astype(np.int64)
    model = lenet(nn)
    model.load_state_dict(initial_state())
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = train.compile(model, nn.CrossEntropyLoss(), opt, backend="x86", threads=threads)
    batches = orders(len(x), 1, 64)[0]

    def run():
        for idx in batches:
            step(x[idx], y[idx])

    return run


def make(workload: str, threads: int):
    if workload == "lenet-train":
        return lenet_train(threads)
    if workload in IMAGE_MODELS:
        return image_model(workload, threads)
    return zoo_model(workload.removeprefix("zoo:"), threads)


# -- measuring ------------------------------------------------------------------------------------


def sample(fn, repeat: int) -> float:
    """the median of `repeat` runs, ms"""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def phase(runners: dict, rounds: int, repeat: int) -> dict:
    """{threads: [sample ms per round]}, the thread counts interleaved, their order swapped each round"""
    for fn in runners.values():  # warm-up: plans, scratch, the pool's workers
        fn()
        fn()
    out = {t: [] for t in runners}
    order = list(runners)
    for r in range(rounds):
        for t in order if r % 2 == 0 else order[::-1]:
            out[t].append(sample(runners[t], repeat))
    return out


def measure(workload: str, threads: int, busy: int, rounds: int, repeat: int) -> dict:
    runners = {1: make(workload, 1), threads: make(workload, threads)}
    result = {"quiet": phase(runners, rounds, repeat)}
    with competitors(busy):
        result["busy"] = phase(runners, rounds, repeat)
    return result


def ratio(samples: dict, threads: int) -> float:
    """the median over rounds of threads=N's sample over threads=1's"""
    return statistics.median(n / one for n, one in zip(samples[threads], samples[1]))


def row(workload: str, r: dict, threads: int) -> str:
    cells = []
    for ph in ("quiet", "busy"):
        s = r[ph]
        cells += [
            f"{statistics.median(s[1]):9.2f}",
            f"{statistics.median(s[threads]):9.2f}",
            f"{ratio(s, threads):5.2f}",
        ]
    return f"{workload:<16}" + "  ".join(cells)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cores = os.cpu_count() or 1
    p.add_argument("--workload", action="append", help=f"repeatable; default: {', '.join(DEFAULT)}")
    p.add_argument(
        "--threads", type=int, default=max(cores, 2), help="N, compared with 1 (default: the cores, %(default)s)"
    )
    p.add_argument("--busy", type=int, default=cores, help="competing processes (default: one per core, %(default)s)")
    p.add_argument("--rounds", type=int, default=9, help="samples per configuration and phase (default %(default)s)")
    p.add_argument("--repeat", type=int, default=5, help="runs per sample, its median taken (default %(default)s)")
    p.add_argument("--quick", action="store_true", help=f"{' and '.join(QUICK)} only, 3 rounds of 3 runs")
    p.add_argument("--json", metavar="FILE", help="write every sample here")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = p.parse_args(argv)
    if args.list:
        print("\n".join(DEFAULT) + "\nzoo:<name>  (python -m mnn_core.zoo list)")
        return 0
    if args.threads < 2 or args.busy < 0:
        p.error("--threads must be at least 2 (it is compared with 1) and --busy at least 0")
    if args.quick:
        args.rounds, args.repeat = 3, 3
    workloads = args.workload or list(QUICK if args.quick else DEFAULT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))  # a kill stops the competitors too (finally)
    print(
        f"{platform.processor() or platform.machine()}, {cores} cores; threads={args.threads} against "
        f"threads=1; busy: {args.busy} spinning processes; {args.rounds} rounds of {args.repeat} runs\n"
    )
    n = args.threads
    print(f"{'workload':<16}{'quiet ms: 1':>11}{f'{n}':>11}{f'{n}/1':>7}{'busy ms: 1':>13}{f'{n}':>11}{f'{n}/1':>7}")
    results, worst = {}, 0.0
    for w in workloads:
        try:
            r = measure(w, n, args.busy, args.rounds, args.repeat)
        except (LookupError, OSError) as e:
            print(f"{w:<16}skipped: {e}")
            continue
        results[w] = r
        worst = max(worst, ratio(r["busy"], n))
        print(row(w, r, n), flush=True)
    if results:
        print(f"\nworst busy {n}/1: {worst:.2f} (the aim: <= 1.2)")
    if args.json:
        Path(args.json).write_text(json.dumps({"threads": n, "busy": args.busy, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
