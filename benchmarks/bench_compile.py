"""Inference latency of the same PyTorch-style models in mnn eager, mnn compiled
(`mnn_core.compile(model)`, live and frozen weights) and PyTorch eager (and torch.compile
with --torch-compile), one process, engines interleaved round by round.

    python benchmarks/bench_compile.py --threads 1,2 --batch 1,16 --markdown benchmarks/RESULTS_TRAIN.md

Each model is written once against a torch-shaped namespace and built twice, with `torch` and
with `mnn_core.torch`; mnn's copy loads PyTorch's weights, so every engine computes the same
function (the outputs are compared: max relative error against PyTorch eager).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def _models(t):
    nn = t.nn

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

        def forward(self, x):
            return self.net(x)

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))

        def forward(self, x):
            x = self.pool(t.relu(self.c1(x)))
            x = self.pool(t.relu(self.c2(x)))
            return self.fc(x.reshape(x.shape[0], -1))

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            return t.relu(x + self.b2(self.c2(t.relu(self.b1(self.c1(x))))))

    class ResNetSmall(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
            self.blocks = nn.Sequential(Block(32), Block(32), Block(32))
            self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(32, 10)

        def forward(self, x):
            return self.fc(self.pool(self.blocks(self.stem(x))).reshape(x.shape[0], -1))

    class GruClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.gru, self.fc = nn.Embedding(1000, 64), nn.GRU(64, 128, batch_first=True), nn.Linear(128, 4)

        def forward(self, ids):
            out, _ = self.gru(self.emb(ids))
            return self.fc(out[:, -1])

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 128)
            self.layer = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True)
            self.fc = nn.Linear(128, 4)

        def forward(self, ids):
            return self.fc(self.layer(self.emb(ids)).mean(dim=1))

    return {
        "mlp": (Mlp, lambda rng, b: rng.standard_normal((b, 784)).astype(np.float32)),
        "lenet": (LeNet, lambda rng, b: rng.standard_normal((b, 1, 28, 28)).astype(np.float32)),
        "resnet-small": (ResNetSmall, lambda rng, b: rng.standard_normal((b, 3, 32, 32)).astype(np.float32)),
        "gru": (GruClassifier, lambda rng, b: rng.integers(0, 1000, (b, 32)).astype(np.int64)),
        "encoder": (Encoder, lambda rng, b: rng.integers(0, 1000, (b, 64)).astype(np.int64)),
    }


def _engines(name: str, batch: int, threads: int, torch_compile: bool) -> dict:
    import torch

    import mnn_core
    import mnn_core.torch as mt

    torch.set_num_threads(threads)
    mt.set_num_threads(threads)
    torch.manual_seed(0)
    cls, make = _models(torch)[name]
    ref = cls().eval()
    mine = _models(mt)[name][0]().eval()
    mine.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    x = make(np.random.default_rng(0), batch)
    xt, xm = torch.from_numpy(x), mt.from_numpy(x)
    live = mnn_core.compile(mine, threads=threads)
    frozen = mnn_core.compile(mine, threads=threads, freeze=True)
    engines = {
        "torch eager": lambda: ref(xt).numpy(),
        "mnn eager": lambda: mine(xm).numpy(),
        "mnn compile": lambda: live(xm).numpy(),
        "mnn compile freeze": lambda: frozen(xm).numpy(),
    }
    if torch_compile:
        compiled = torch.compile(ref)
        engines["torch compile"] = lambda: compiled(xt).numpy()
    return engines


def run(name: str, batch: int, threads: int, rounds: int, repeat: int, torch_compile: bool) -> list[tuple]:
    import torch

    import mnn_core.torch as mt

    with torch.inference_mode(), mt.no_grad():
        engines = _engines(name, batch, threads, torch_compile)
        want = engines["torch eager"]()
        errors = {}
        for label, fn in engines.items():
            got = fn()  # also the warm-up (traces, plans, compiles)
            errors[label] = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-12))
        times = {label: [] for label in engines}
        for _ in range(rounds):
            for label, fn in engines.items():
                t0 = time.perf_counter()
                for _ in range(repeat):
                    fn()
                times[label].append((time.perf_counter() - t0) * 1e3 / repeat)
    base = statistics.median(times["torch eager"])
    return [
        (
            name,
            batch,
            threads,
            label,
            f"{statistics.median(ts):.3f}",
            f"{statistics.median(ts) / base:.2f}",
            f"{errors[label]:.1e}",
        )
        for label, ts in times.items()
    ]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="mlp, lenet, resnet-small, gru, encoder (default: all)")
    p.add_argument("--threads", default="1", help="comma list (default 1)")
    p.add_argument("--batch", default="1,16", help="comma list (default 1,16)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20, help="calls per round")
    p.add_argument("--torch-compile", action="store_true", help="add torch.compile (inductor: minutes per model)")
    p.add_argument("--markdown", metavar="FILE", help="append the table, dated, with the command and load")
    args = p.parse_args(argv)
    rows = []
    for name in args.model or ["mlp", "lenet", "resnet-small", "gru", "encoder"]:
        for batch in [int(b) for b in args.batch.split(",")]:
            for threads in [int(t) for t in args.threads.split(",")]:
                for row in run(name, batch, threads, args.rounds, args.repeat, args.torch_compile):
                    rows.append(row)
                    print(" | ".join(str(c) for c in row), flush=True)
    if args.markdown:
        load = os.getloadavg()
        lines = [
            f"\n### Compiled forward, {time.strftime('%Y-%m-%d')}\n",
            f"`python benchmarks/bench_compile.py {' '.join(sys.argv[1:])}` (load average after: "
            f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f})\n",
            "| model | batch | threads | engine | median ms | / torch eager | max rel err |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        with open(args.markdown, "a") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
