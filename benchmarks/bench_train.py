"""One epoch of LeNet-5 on Fashion-MNIST: mnn's compiled training step against PyTorch CPU.

    python benchmarks/bench_train.py                       # 1 and 2 threads, accuracy after 5 epochs
    python benchmarks/bench_train.py --eager --interleave  # mnn's eager loop (dispatched kernels) instead
    python benchmarks/bench_train.py --threads 1 --accuracy-epochs 0 --limit 6400   # a quick look
    python benchmarks/bench_train.py --repeat 3            # each epoch timing 3 times, alternating: medians
    python benchmarks/bench_train.py --interleave          # mnn and PyTorch batch by batch: a same-load ratio

The model is the classic LeNet-5 (6 and 16 channels, 5x5 convolutions, max
pooling, ReLU, 120-84-10), batch 64, SGD lr 0.01 momentum 0.9, the 60k
training images in memory. Both frameworks start from the same weights and see
the batches in the same order. Each (framework, threads) configuration runs in
a child process with OMP/OpenBLAS/MKL thread counts set before numpy or torch
load, so the thread setting really holds; the parent prints the table and
writes benchmarks/RESULTS_TRAIN.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TORCH_VERSION = "2.13"


def load(limit):
    from mnn_core import data

    x, y = data.load_mnist(data.FASHION_MNIST_DIR, train=True, limit=limit)
    tx, ty = data.load_mnist(data.FASHION_MNIST_DIR, train=False)
    return x, y, tx, ty


def orders(n, epochs, batch):
    import numpy as np

    rng = np.random.default_rng(0)
    return [[p[i : i + batch] for i in range(0, n, batch)] for p in (rng.permutation(n) for _ in range(epochs))]


def initial_state():
    from mnn_core import express, nn
    from mnn_core.testing.models import lenet

    express.manual_seed(0)
    return lenet(nn).state_dict()


# -- one configuration, in a child process ---------------------------------------------------------


def mnn_step(args, model, opt):
    """mnn's training step on one batch: the compiled step, or with --eager the eager loop PyTorch runs."""
    from mnn_core import express, nn, train
    from mnn_core.express import dispatch

    loss_fn = nn.CrossEntropyLoss()
    if not args.eager:
        return train.compile(model, loss_fn, opt, backend=args.backend, threads=args.threads)
    dispatch.set_num_threads(args.threads)
    if args.backend != "auto":
        dispatch.set_backend(args.backend)

    def step(xb, yb):
        loss = loss_fn(model(express.Var(xb)), express.Var(yb))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


def eager_placement() -> dict:
    """{backend: ops prepared there} of the eager loop (view ops, numpy's views, left out)."""
    from mnn_core.express import dispatch

    out: dict = {}
    for op, names in dispatch.placement().items():
        if op not in dispatch.VIEW_OPS:
            for name in names:
                out[name] = out.get(name, 0) + 1
    return out


def run_mnn(args, x, y, tx, ty, epochs):
    import numpy as np

    import mnn_core as mnn
    from mnn_core import nn, optim
    from mnn_core.testing.models import lenet

    model = lenet(nn)
    model.load_state_dict(initial_state())
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    step = mnn_step(args, model, opt)
    times = []
    for batches in orders(len(x), epochs, args.batch_size):
        t0 = time.perf_counter()
        for idx in batches:
            step(x[idx], y[idx])
        times.append(time.perf_counter() - t0)
    if args.eager:
        return times, eager_accuracy(model, tx, ty), {"placement": eager_placement(), "profile": []}
    plan = step.session.plan.backends()
    runs = []  # where a step's time goes, op by op: the median of 20 profiled (extra) steps
    for idx in orders(len(x), 1, args.batch_size)[0][: 20 if args.profile else 0]:
        step(x[idx], y[idx], profile=True)
        runs.append(step.profile())
    profile = []
    if runs:
        backend_of = {p.node: p.backend for p in step.session.plan}
        medians = np.median(np.array([[ms for _, ms in r] for r in runs]), axis=0)
        profile = sorted(
            ((float(ms), name, backend_of.get(name, "-")) for (name, _), ms in zip(runs[0], medians)), reverse=True
        )
    model.eval()
    sess = mnn.Session(model.to_graph([(1, 1, 28, 28)]), backend=args.backend, threads=args.threads)
    correct = sum(
        int((sess.run({"input": tx[i : i + 500]})["output"].argmax(1) == ty[i : i + 500]).sum())
        for i in range(0, len(tx), 500)
    )
    return times, correct / len(tx), {"placement": plan, "profile": profile}


def eager_accuracy(model, tx, ty) -> float:
    import numpy as np

    from mnn_core import express

    model.eval()
    with express.no_grad():
        pred = [model(express.Var(tx[i : i + 500])).numpy().argmax(1) for i in range(0, len(tx), 500)]
    return float((np.concatenate(pred) == ty).mean())


def run_torch(args, x, y, tx, ty, epochs):
    import torch

    from mnn_core.testing.models import lenet

    torch.set_num_threads(args.threads)
    model = lenet(torch.nn)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in initial_state().items()})
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    times = []
    for batches in orders(len(x), epochs, args.batch_size):
        t0 = time.perf_counter()
        for idx in batches:
            i = torch.from_numpy(idx)
            loss = loss_fn(model(xt[i]), yt[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
        times.append(time.perf_counter() - t0)
    model.eval()
    with torch.no_grad():
        pred = torch.cat([model(torch.from_numpy(tx[i : i + 500])).argmax(1) for i in range(0, len(tx), 500)])
    return times, float((pred.numpy() == ty).mean()), {"version": torch.__version__}


def run_interleaved(args, x, y, tx, ty, epochs):
    """Both frameworks in one process, batch by batch: mnn's step, then PyTorch's on the same batch, each timed
    alone. On a shared machine the load changes over seconds, so epochs timed one after another see different
    loads; here every mnn batch has a PyTorch batch beside it under the same load, and the ratio of the sums is a
    same-load ratio. (Each framework's caches are cooled by the other's step in between: both pay that.)"""
    import numpy as np
    import torch

    from mnn_core import nn, optim
    from mnn_core.testing.models import lenet

    torch.set_num_threads(args.threads)
    model = lenet(nn)
    model.load_state_dict(initial_state())
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    step = mnn_step(args, model, opt)
    tmodel = lenet(torch.nn)
    tmodel.load_state_dict({k: torch.from_numpy(v) for k, v in initial_state().items()})
    topt = torch.optim.SGD(tmodel.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    m_times, t_times, ratios = [], [], []
    for batches in orders(len(x), epochs, args.batch_size):
        ms = np.zeros(len(batches))
        ts = np.zeros(len(batches))
        for b, idx in enumerate(batches):
            t0 = time.perf_counter()
            step(x[idx], y[idx])
            t1 = time.perf_counter()
            i = torch.from_numpy(idx)
            loss = loss_fn(tmodel(xt[i]), yt[i])
            topt.zero_grad()
            loss.backward()
            topt.step()
            t2 = time.perf_counter()
            ms[b], ts[b] = t1 - t0, t2 - t1
        m_times.append(float(ms.sum()))
        t_times.append(float(ts.sum()))
        # per block of 50 batch pairs: how the ratio moves with the load within the epoch
        ratios += [float(ts[k : k + 50].sum() / ms[k : k + 50].sum()) for k in range(0, len(batches), 50)]
    placement = eager_placement() if args.eager else step.session.plan.backends()
    return m_times, 0.0, {"torch_times": t_times, "block_ratios": ratios, "placement": placement}


def child(args):
    if args.framework == "both":
        x, y, tx, ty = load(args.limit or None)
        times, acc, extra = run_interleaved(args, x, y, tx, ty, args.epochs)
        print(json.dumps({"times": times, "accuracy": acc, **extra}))
        return
    x, y, tx, ty = load(args.limit or None)
    fn = run_mnn if args.framework == "mnn" else run_torch
    times, acc, extra = fn(args, x, y, tx, ty, args.epochs)
    print(json.dumps({"times": times, "accuracy": acc, **extra}))


# -- the parent: run each configuration, print, record ----------------------------------------------


def spawn(args, framework, threads, epochs, profile=False):
    # mnn's threads are its backends' (Session(threads=...)); its numpy reference backend is one core by design,
    # and a second BLAS pool spinning beside the backend's OpenMP threads only steals their cores
    blas = 1 if framework == "mnn" else threads
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(blas), MKL_NUM_THREADS=str(blas))
    cmd = [
        sys.executable,
        __file__,
        "--child",
        framework,
        "--threads",
        str(threads),
        "--epochs",
        str(epochs),
        "--batch-size",
        str(args.batch_size),
        "--lr",
        str(args.lr),
        "--backend",
        args.backend,
    ]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    if profile and not args.eager:
        cmd += ["--profile"]
    if args.eager:
        cmd += ["--eager"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{framework} with {threads} thread(s) failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--backend", default="auto", help="mnn backend(s) for the compiled step (default auto)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--limit", type=int, default=0, help="use the first N training images only")
    p.add_argument("--accuracy-epochs", type=int, default=5, help="epochs for the accuracy run (0: skip)")
    p.add_argument("--accuracy-threads", type=int, default=1, help="threads for the accuracy run")
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="time each (framework, threads) epoch this many times, mnn and PyTorch alternating, and "
        "report the medians (the machine may be shared: the load changes between runs)",
    )
    p.add_argument("--results", default=str(HERE / "RESULTS_TRAIN.md"), help="where to write the table ('' = nowhere)")
    p.add_argument(
        "--interleave",
        action="store_true",
        help="instead: both frameworks in one process per thread count, batch by batch (mnn step, PyTorch step, "
        "each timed): a same-load ratio on a shared machine; prints and writes nothing else",
    )
    p.add_argument(
        "--eager",
        action="store_true",
        help="mnn runs the eager loop (express ops on the dispatched kernels) instead of the compiled step",
    )
    p.add_argument("--child", choices=["mnn", "torch", "both"], help=argparse.SUPPRESS)
    p.add_argument("--epochs", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        args.framework, args.threads = args.child, int(args.threads)
        return child(args)
    if not Path("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz").exists():
        raise SystemExit("Fashion-MNIST is missing: apt-get install -y dataset-fashion-mnist")
    if args.interleave:
        return interleaved(args, argv)
    rows = []
    for t in [int(v) for v in args.threads.split(",")]:
        ms, pts = [], []
        for r in range(max(args.repeat, 1)):  # alternate, so both see the same spells of load
            ms.append(spawn(args, "mnn", t, 1, profile=r == 0))
            pts.append(spawn(args, "torch", t, 1))
        m, pt = _median_run(ms), _median_run(pts)
        rows.append((t, m, pt))
        print(
            f"threads {t}: mnn {m['times'][0]:.2f} s/epoch, PyTorch {pt['version']} {pt['times'][0]:.2f} s/epoch, "
            f"mnn is {pt['times'][0] / m['times'][0]:.2f}x PyTorch's speed   (mnn placement {m['placement']}; "
            f"runs mnn {_times(ms)}, PyTorch {_times(pts)}; back-to-back pairs {_pair_ratios(m, pt)})",
            flush=True,
        )
    acc = None
    if args.accuracy_epochs:
        t = args.accuracy_threads
        acc = (t, spawn(args, "mnn", t, args.accuracy_epochs), spawn(args, "torch", t, args.accuracy_epochs))
        print(
            f"test accuracy after {args.accuracy_epochs} epochs: mnn {acc[1]['accuracy']:.4f}, "
            f"PyTorch {acc[2]['accuracy']:.4f}"
        )
    if args.results:
        (append_eager_results if args.eager else write_results)(Path(args.results), args, rows, acc, argv)


def _median_run(runs: list) -> dict:
    """The first run's details with the median epoch time of all runs; `runs` keeps every time."""
    times = sorted(r["times"][0] for r in runs)
    mid = times[len(times) // 2] if len(times) % 2 else 0.5 * (times[len(times) // 2 - 1] + times[len(times) // 2])
    return {**runs[0], "times": [mid], "runs": [r["times"][0] for r in runs]}


def interleaved(args, argv):
    lines = []
    for t in [int(v) for v in args.threads.split(",")]:
        for r in range(max(args.repeat, 1)):
            res = spawn(args, "both", t, 1)
            m, pt, br = res["times"][0], res["torch_times"][0], res["block_ratios"]
            line = (
                f"| {t} | {r + 1} | {m:.2f} | {pt:.2f} | {pt / m:.2f}x | {min(br):.2f}x - {max(br):.2f}x "
                f"(median {sorted(br)[len(br) // 2]:.2f}x) | {os.getloadavg()[0]:.1f} |"
            )
            print(line, flush=True)
            lines.append(line)
    if args.results:
        cmd = "python benchmarks/bench_train.py " + " ".join(argv if argv is not None else sys.argv[1:])
        head = [
            "",
            f"Interleaved, same load{', mnn eager' if args.eager else ''}: `{cmd.strip()}` "
            f"({time.strftime('%Y-%m-%d %H:%M')}, {cpu_name()}). One process per row, "
            "an mnn step and a PyTorch step on each batch in turn, each timed; the epoch is the sum of its batch "
            "times. Blocks: PyTorch / mnn over each 50 batch pairs.",
            "",
            "| threads | run | mnn s | PyTorch s | PyTorch / mnn | over blocks of 50 batches | load average after |",
            "|---:|---:|---:|---:|---:|---|---:|",
        ]
        with open(args.results, "a") as f:
            f.write("\n".join(head + lines) + "\n")
        print(f"appended to {args.results}")


def _pair_ratios(m: dict, pt: dict) -> str:
    """PyTorch's time over mnn's for each mnn run and the PyTorch run right after it: the load changes
    between pairs far more than within one, so these ratios are steadier than the epoch times"""
    return ", ".join(f"{t / s:.2f}x" for s, t in zip(m["runs"], pt["runs"]))


def _times(runs: list) -> str:
    return "/".join(f"{r['times'][0]:.1f}" for r in runs)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def append_eager_results(path, args, rows, acc, argv):
    """The eager loop's epochs against PyTorch's, appended (the file's dated entries stay)."""
    cmd = "python benchmarks/bench_train.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "",
        f"Eager: `{cmd.strip()}` ({time.strftime('%Y-%m-%d %H:%M')}, {cpu_name()}, {os.cpu_count()} CPUs, load "
        f"average at the end {os.getloadavg()[0]:.1f}). mnn's eager loop on the dispatched kernels against "
        "PyTorch's eager loop, one child process each, alternating.",
        "",
        "| threads | mnn s/epoch | PyTorch s/epoch | mnn time / PyTorch's | mnn placement (ops) "
        "| pairs (PyTorch / mnn) |",
        "|---:|---:|---:|---:|---|---|",
    ]
    for t, m, pt in rows:
        lines.append(
            f"| {t} | {m['times'][0]:.2f} | {pt['times'][0]:.2f} | {m['times'][0] / pt['times'][0]:.2f}x | "
            f"{m['placement']} | {_pair_ratios(m, pt)} |"
        )
    if acc:
        t, m, pt = acc
        lines += [
            "",
            f"Test accuracy after {len(m['times'])} epochs at {t} thread(s): mnn eager {m['accuracy']:.4f}, "
            f"PyTorch {pt['accuracy']:.4f}.",
        ]
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")
    print(f"appended to {path}")


def write_results(path, args, rows, acc, argv):
    cmd = "python benchmarks/bench_train.py " + " ".join(argv if argv is not None else sys.argv[1:])
    n = args.limit or 60000
    lines = [
        "# Training benchmark: LeNet-5 on Fashion-MNIST",
        "",
        f"Command: `{cmd.strip()}`  ",
        f"Date: {time.strftime('%Y-%m-%d')}, {cpu_name()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average at the end {os.getloadavg()[0]:.1f} "
        "(the machine is shared: other work ran beside this)",
        "",
        f"LeNet-5 (6/16 channels, ReLU, max pooling, 120-84-10), {n} training images in memory, batch "
        f"{args.batch_size}, SGD lr {args.lr} momentum 0.9, same initial weights and batch order for both. "
        f"mnn: `mnn_core.train.compile(...)` on backend `{args.backend}`. One child process per configuration.",
        "",
        f"Epoch times are the median of {max(args.repeat, 1)} run(s) per configuration, mnn and PyTorch alternating "
        "(every run in the last two columns).",
        "",
        "| threads | mnn s/epoch | PyTorch s/epoch | mnn speed / PyTorch | mnn placement | mnn runs | PyTorch runs "
        "| pairs (PyTorch / mnn, back to back) |",
        "|---:|---:|---:|---:|---|---|---|---|",
    ]
    for t, m, pt in rows:
        lines.append(
            f"| {t} | {m['times'][0]:.2f} | {pt['times'][0]:.2f} | {pt['times'][0] / m['times'][0]:.2f}x | "
            f"{m['placement']} | {', '.join(f'{v:.1f}' for v in m['runs'])} | "
            f"{', '.join(f'{v:.1f}' for v in pt['runs'])} | {_pair_ratios(m, pt)} |"
        )
    if acc:
        t, m, pt = acc
        lines += [
            "",
            f"Test accuracy (10k test images) after {len(m['times'])} epochs at {t} thread(s): "
            f"mnn {m['accuracy']:.4f}, PyTorch {pt['accuracy']:.4f} "
            f"(difference {100 * (m['accuracy'] - pt['accuracy']):+.2f} points); "
            f"epoch times mnn {', '.join(f'{v:.1f}' for v in m['times'])} s, "
            f"PyTorch {', '.join(f'{v:.1f}' for v in pt['times'])} s.",
        ]
    t, m, _ = rows[0]
    total = sum(ms for ms, _, _ in m["profile"])
    by_backend: dict = {}
    for ms, _, b in m["profile"]:
        by_backend[b] = by_backend.get(b, 0.0) + ms
    lines += [
        "",
        f"Where an mnn step goes ({t} thread(s), median of 20 profiled steps, {total:.1f} ms in the program; "
        + ", ".join(f"{b} {ms:.1f} ms" for b, ms in sorted(by_backend.items(), key=lambda kv: -kv[1]))
        + "):",
        "",
        "| op (node) | backend | ms |",
        "|---|---|---:|",
    ]
    lines += [f"| {name} | {b} | {ms:.2f} |" for ms, name, b in m["profile"][:10]]
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
