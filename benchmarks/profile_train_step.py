"""Where one compiled LeNet-5 training step goes: per op, Python overhead, batching.

    python benchmarks/profile_train_step.py [--threads 1] [--steps 200]

Times (medians over --steps batches, after warm-up): the whole step(x, y) call,
the Session program alone (per-op profile summed), the batch gather x[idx],
y[idx], and the rest (feeding state, copying new state back) as the difference.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=200)
    args = p.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import numpy as np
    from bench_train import initial_state, load, orders

    from mnn_core import nn, optim, train
    from mnn_core.testing.models import lenet

    x, y, _, _ = load(None)
    model = lenet(nn)
    model.load_state_dict(initial_state())
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = train.compile(model, nn.CrossEntropyLoss(), opt, threads=args.threads)
    batches = orders(len(x), 1, 64)[0][: args.steps + 20]
    for idx in batches[:20]:
        step(x[idx], y[idx])
    gather, whole, per_op = [], [], []
    for idx in batches[20:]:  # each step profiled: the op times and the whole call under the same load
        t0 = time.perf_counter()
        xb, yb = x[idx], y[idx]
        t1 = time.perf_counter()
        step(xb, yb, profile=True)
        t2 = time.perf_counter()
        prof = step.profile()
        gather.append(t1 - t0)
        whole.append(t2 - t1)
        per_op.append([ms for _, ms in prof])
    names = [n for n, _ in prof]
    ops = np.array(per_op)
    med = np.median(ops, axis=0)
    prog = float(np.median(ops.sum(axis=1)))
    w, g = 1e3 * float(np.median(whole)), 1e3 * float(np.median(gather))
    print(
        f"threads {args.threads}: step() {w:.2f} ms, program (median of per-step op sums) {prog:.2f} ms, "
        f"python/feeds/copy-back ~{w - prog:.2f} ms, batch gather x[idx],y[idx] {g:.3f} ms; "
        f"epoch estimate {(w + g) * 938 / 1e3:.2f} s"
    )
    for n, ms in sorted(zip(names, med), key=lambda kv: -kv[1]):
        print(f"  {n:28s} {ms:7.3f}")


if __name__ == "__main__":
    main()
