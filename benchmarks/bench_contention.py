"""Does threads=N stay as fast as threads=1 when every core is busy with another process?

    python benchmarks/bench_contention.py                  # the default workloads, quiet then busy
    python benchmarks/bench_contention.py --quick          # SqueezeNet and the LeNet step, fewer rounds
    python benchmarks/bench_contention.py --workload resnet18 --workload lenet-train --rounds 40
    python benchmarks/bench_contention.py --busy 4 --threads 4   # 4 competitors, threads=4 against threads=1
    python benchmarks/bench_contention.py --json out.json  # every sample, for a later comparison
    python benchmarks/bench_contention.py --pool a1.json a2.json   # runs of one build, their rounds pooled

A backend's threads help on a quiet machine; on a shared one a thread the OS does not schedule can
hold the others up (a barrier at the end of each parallel loop waits for it), and threads=N can end
up slower than threads=1. This script measures that. It starts --busy processes that spin on the CPU
(one per core by default) and stops them when it is done, on an error or on Ctrl-C. For each
workload it builds one threads=1 and one threads=N instance in this process and times them
interleaved, sample against sample (the order swaps every round), first with the machine as it is
("quiet": no competitors of ours), then with the competitors running ("busy").

The verdict is a paired one. With one competitor per core the scheduler sometimes leaves a core to
this process alone and sometimes not, for a second or so at a time, and threads=1 runs 2-2.5x faster
in the first case: a ratio of two medians taken seconds apart moves by 2x from run to run. So samples
are short (about --sample-ms each: a few runs of a small model, one of a large one), many (--rounds),
and compared within their round: `N/1` is the median over rounds of the round's threads=N sample over
its threads=1 sample, shown with the quartiles of those ratios as its spread. `cores` is the CPU time
the process used over the wall time (all its threads, the pool's spinning included): how much of the
machine each configuration got. `cpu N/1` is the median over rounds of threads=N's CPU time over
threads=1's (all threads, per run): what the threads cost in CPU for the same work. Near 1 with N/1
above 1, threads=N used no more CPU but got less of the machine in its samples, or waited. With
competitors that are not pinned (--pin), the scheduler may put two on one core and leave this
process the other, for seconds: a threads=1 sample then has a core to itself (`cores` near 1) that
threads=N, whose worker shares it, cannot use. The item this measures: busy N/1 <= 1.2 everywhere.

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
raise --rounds until the quartiles are narrow enough to tell what you compare apart.
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
def competitors(n: int, pin: bool = False):
    """n processes spinning on the CPU for the duration of the block; stopped however the block ends.
    pin: competitor i on core i (modulo the cores), so that no core ever holds two of them while another
    holds none (unpinned, the scheduler sometimes pairs them for seconds, and leaves this process a core
    of its own)."""
    cpus = sorted(os.sched_getaffinity(0)) if pin and hasattr(os, "sched_getaffinity") else []

    def start(i: int):
        pin_it = (lambda: os.sched_setaffinity(0, {cpus[i % len(cpus)]})) if cpus else None
        return subprocess.Popen([sys.executable, "-c", SPIN], preexec_fn=pin_it)

    procs = [start(i) for i in range(n)]
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


def run_times(fn, repeat: int) -> tuple[float, float]:
    """(wall ms, process CPU ms) per run, over `repeat` back-to-back runs"""
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - w0) * 1e3 / repeat, (time.process_time() - c0) * 1e3 / repeat


def runs_per_sample(runners: dict, sample_ms: float) -> int:
    """enough runs of the slowest configuration for about sample_ms, after a warm-up (plans, scratch, workers).
    A run's time is its fastest of three: on a loaded machine one run in a few waits out another process's
    time slice (a 4 ms SqueezeNet run took 1 s), and a sample of one run is then all or nothing."""
    slowest = 0.0
    for fn in runners.values():
        fn()
        slowest = max(slowest, min(run_times(fn, 1)[0] for _ in range(3)))
    return max(1, round(sample_ms / max(slowest, 1e-3)))


def phase(runners: dict, rounds: int, repeat: int) -> dict:
    """{threads: {"wall": [ms per round], "cpu": [ms per round]}}, interleaved, the order swapped each round"""
    out = {t: {"wall": [], "cpu": []} for t in runners}
    order = list(runners)
    for r in range(rounds):
        for t in order if r % 2 == 0 else order[::-1]:
            wall, cpu = run_times(runners[t], repeat)
            out[t]["wall"].append(wall)
            out[t]["cpu"].append(cpu)
    return out


def measure(workload: str, threads: int, busy: int, rounds: int, repeat: int, sample_ms: float, pin: bool) -> dict:
    runners = {1: make(workload, 1), threads: make(workload, threads)}
    result = {}
    for name, n in (("quiet", 0), ("busy", busy)):
        with competitors(n, pin):
            runs = repeat or runs_per_sample(runners, sample_ms)
            result[name] = {"runs_per_sample": runs, **phase(runners, rounds, runs)}
    return result


def ratios(samples: dict, threads: int) -> list[float]:
    """per round: threads=N's sample over threads=1's"""
    return [n / one for n, one in zip(samples[threads]["wall"], samples[1]["wall"])]


def ratio(samples: dict, threads: int) -> float:
    """the median over rounds of threads=N's sample over threads=1's"""
    return statistics.median(ratios(samples, threads))


def spread(samples: dict, threads: int) -> tuple[float, float]:
    """the quartiles of the per-round ratios"""
    r = ratios(samples, threads)
    if len(r) < 2:
        return r[0], r[0]
    q = statistics.quantiles(r, n=4, method="inclusive")
    return q[0], q[2]


def cores(s: dict) -> float:
    """CPU time over wall time: the cores this configuration had, its threads together"""
    return statistics.median(c / w for c, w in zip(s["cpu"], s["wall"]))


def cpu_ratio(samples: dict, threads: int) -> float:
    """the median over rounds of threads=N's CPU time per run over threads=1's"""
    return statistics.median(n / one for n, one in zip(samples[threads]["cpu"], samples[1]["cpu"]))


def row(workload: str, r: dict, threads: int) -> str:
    cells = []
    for ph in ("quiet", "busy"):
        s = r[ph]
        lo, hi = spread(s, threads)
        cells += [
            f"{statistics.median(s[1]['wall']):10.2f}",
            f"{statistics.median(s[threads]['wall']):9.2f}",
            f"{ratio(s, threads):5.2f} {lo:4.2f}-{hi:4.2f}",
            f"{cores(s[1]):4.2f} {cores(s[threads]):4.2f}",
            f"{cpu_ratio(s, threads):7.2f}",
        ]
    return f"{workload:<17}" + "  ".join(cells)


HEADER = f"{'workload':<17}" + "  ".join(
    f"{a:>10}  {'N':>9}  {'N/1 [quartiles]':>14}  {'cores 1 N':>9}  {'cpu N/1':>7}" for a in ("quiet ms 1", "busy ms 1")
)


def report(results: dict, n: int) -> None:
    """the table and the verdict"""
    print(HEADER.replace("N", str(n)))
    for w, r in results.items():
        print(row(w, r, n))
    verdict(results, n)


def verdict(results: dict, n: int) -> None:
    if results:
        worst = max((ratio(r["busy"], n), w) for w, r in results.items())
        over = [w for w, r in results.items() if ratio(r["busy"], n) > 1.2]
        print(f"\nworst busy {n}/1: {worst[0]:.2f} ({worst[1]}); the aim: <= 1.2, ", end="")
        print(f"not met by {', '.join(over)}" if over else "met by every workload")


def pooled(files: list[str]) -> tuple[dict, int]:
    """the results of several --json files, each workload's rounds of every phase put together"""
    results, n = {}, None
    for f in files:
        d = json.loads(Path(f).read_text())
        if n not in (None, d["threads"]):
            raise SystemExit(f"{f}: threads={d['threads']}, the others {n}: pool runs of one comparison")
        n = d["threads"]
        for w, r in d["results"].items():
            into = results.setdefault(w, {})
            for ph, s in r.items():
                ph_into = into.setdefault(ph, {})
                for t, series in ((int(k), v) for k, v in s.items() if k != "runs_per_sample"):
                    for key, values in series.items():
                        ph_into.setdefault(t, {}).setdefault(key, []).extend(values)
    return results, n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cores = os.cpu_count() or 1
    p.add_argument("--workload", action="append", help=f"repeatable; default: {', '.join(DEFAULT)}")
    p.add_argument(
        "--threads", type=int, default=max(cores, 2), help="N, compared with 1 (default: the cores, %(default)s)"
    )
    p.add_argument("--busy", type=int, default=cores, help="competing processes (default: one per core, %(default)s)")
    p.add_argument("--pin", action="store_true", help="competitor i on core i: never two on one core (see competitors)")
    p.add_argument("--rounds", type=int, default=30, help="samples per configuration and phase (default %(default)s)")
    p.add_argument("--sample-ms", type=float, default=40.0, help="about how long a sample runs (default %(default)s)")
    p.add_argument("--repeat", type=int, default=0, help="runs per sample (default: as many as --sample-ms takes)")
    p.add_argument("--quick", action="store_true", help=f"{' and '.join(QUICK)} only, 10 rounds")
    p.add_argument("--json", metavar="FILE", help="write every sample here")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--pool", nargs="+", metavar="FILE", help="no run: the table of these --json files, pooled")
    args = p.parse_args(argv)
    if args.pool:
        report(*pooled(args.pool))
        return 0
    if args.list:
        print("\n".join(DEFAULT) + "\nzoo:<name>  (python -m mnn_core.zoo list)")
        return 0
    if args.threads < 2 or args.busy < 0:
        p.error("--threads must be at least 2 (it is compared with 1) and --busy at least 0")
    if args.quick:
        args.rounds = 10
    workloads = args.workload or list(QUICK if args.quick else DEFAULT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))  # a kill stops the competitors too (finally)
    print(
        f"{platform.processor() or platform.machine()}, {cores} cores; threads={args.threads} against "
        f"threads=1; busy: {args.busy} spinning processes{', pinned' if args.pin else ''}; "
        f"{args.rounds} rounds of samples of "
        f"{f'{args.repeat} runs' if args.repeat else f'about {args.sample_ms:g} ms'}\n"
    )
    n = args.threads
    print(HEADER.replace("N", str(n)))
    results = {}
    for w in workloads:
        try:
            results[w] = measure(w, n, args.busy, args.rounds, args.repeat, args.sample_ms, args.pin)
        except (LookupError, OSError) as e:
            print(f"{w:<17}skipped: {e}")
            continue
        print(row(w, results[w], n), flush=True)
    verdict(results, n)
    if args.json:
        out = {"threads": n, "busy": args.busy, "pin": args.pin, "results": results}
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
