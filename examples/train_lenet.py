"""Train LeNet-5 on Fashion-MNIST with mnn, save it as .mnn, and run it through a Session.

    apt-get install -y dataset-fashion-mnist
    python examples/train_lenet.py                    # 5 epochs, compiled step, backend auto
    python examples/train_lenet.py --eager --epochs 1 --limit 6400   # the PyTorch-style loop

Every epoch prints the training loss and accuracy and the test accuracy; a
progress bar shows the running loss on a terminal.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mnn_core as mnn
from mnn_core import data, express, nn, optim, train
from mnn_core.express import functional as F
from mnn_core.testing.models import lenet  # LeNet-5: conv-relu-pool twice, then three linear layers


def evaluate(session: mnn.Session, x: np.ndarray, y: np.ndarray, batch: int = 500) -> float:
    correct = 0
    for i in range(0, len(x), batch):
        logits = session.run({"input": x[i : i + batch]}, copy=False)["output"]
        correct += int((logits.argmax(1) == y[i : i + batch]).sum())
    return correct / len(x)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument(
        "--schedule",
        choices=["none", "inv", "cosine"],
        default="none",
        help="inv: MNN's LeNet policy lr * (1 + 1e-4 * iter) ** -0.75",
    )
    p.add_argument("--backend", default="auto")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--limit", type=int, default=None, help="train on the first N images only")
    p.add_argument("--eager", action="store_true", help="the PyTorch-style eager loop instead of a compiled step")
    p.add_argument("--data", default=data.FASHION_MNIST_DIR)
    p.add_argument("--out", default="lenet_fashion.mnn")
    args = p.parse_args(argv)

    express.manual_seed(0)
    train_set = data.FashionMNIST(args.data, train=True, limit=args.limit)
    test_x, test_y = data.load_mnist(args.data, train=False)
    loader = data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True, seed=0, progress=True)
    model = lenet()
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sched = {
        "inv": lambda: optim.InvLR(opt, gamma=1e-4, power=0.75),
        "cosine": lambda: optim.CosineAnnealingLR(opt, T_max=args.epochs * len(loader)),
        "none": lambda: None,
    }[args.schedule]()
    step = (
        None
        if args.eager
        else train.compile(
            model, nn.CrossEntropyLoss(), opt, backend=args.backend, threads=args.threads, return_output=True
        )
    )
    print(
        f"LeNet-5, {sum(p.size for p in model.parameters())} parameters; {len(train_set)} training images, "
        f"{len(test_x)} test images; {'eager loop' if args.eager else 'compiled step'}, backend {args.backend}"
    )
    for epoch in range(1, args.epochs + 1):
        model.train()
        t0, total, correct, seen = time.perf_counter(), 0.0, 0, 0
        for x, y in loader:
            if step is not None:
                loss, logits = step(x, y)
            else:
                out = model(x)
                loss_var = F.cross_entropy(out, y)
                opt.zero_grad()
                loss_var.backward()
                opt.step()
                loss, logits = loss_var.item(), out.numpy()
            if sched is not None:  # both schedules step per iteration
                sched.step()
            total += loss * len(y)
            correct += int((logits.argmax(1) == y).sum())
            seen += len(y)
            loader.set_postfix(f"loss {total / seen:.4f}")
        seconds = time.perf_counter() - t0
        model.eval()
        session = mnn.Session(model.to_graph([(1, 1, 28, 28)]), backend=args.backend, threads=args.threads)
        test_acc = evaluate(session, test_x, test_y)
        print(
            f"epoch {epoch}: loss {total / seen:.4f}  train accuracy {correct / seen:.4f}  "
            f"test accuracy {test_acc:.4f}  ({seconds:.1f} s, lr {opt.param_groups[0]['lr']:.5f})",
            flush=True,
        )

    mnn.save(model, args.out)
    session = mnn.Session(args.out, backend=args.backend, threads=args.threads)
    acc = evaluate(session, test_x, test_y)
    print(f"saved {args.out}; reloaded through a Session (ops on {session.plan.backends()}): test accuracy {acc:.4f}")
    logits = session.run({"input": test_x[:5]})["output"]
    for label, guess in zip(test_y[:5], logits.argmax(1)):
        print(f"  {data.FASHION_CLASSES[label]:>12} -> {data.FASHION_CLASSES[guess]}")


if __name__ == "__main__":
    main()
