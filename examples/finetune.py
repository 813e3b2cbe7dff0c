"""Fine-tune an imported model: load .onnx or .mnn as a Module, replace its head, train, save.

    python examples/finetune.py                        # makes its own base model first
    python examples/finetune.py --model base.onnx      # any ONNX/.mnn classifier over 1x28x28 images

Without --model, a LeNet-5 is trained on Fashion-MNIST classes 0-4 (tops,
trousers, pullovers, dresses, coats) and exported to ONNX (or .mnn when the
onnx package is missing): a model "trained elsewhere". It is then loaded with
`nn.from_graph`, cut after its feature extractor, given a new 5-way head for
classes 5-9 (sandals, shirts, sneakers, bags, boots), and fine-tuned.
"""

from __future__ import annotations

import argparse
import importlib.util

import numpy as np

import mnn_core as mnn
from mnn_core import data, express, nn, optim, train
from mnn_core.testing.models import lenet  # LeNet-5, as examples/train_lenet.py trains it


def subset(x, y, classes, limit=None):
    keep = np.isin(y, classes)
    x, y = x[keep][:limit], y[keep][:limit] - min(classes)
    return x, y


def fit(model, params, x, y, epochs, lr, backend):
    step = train.compile(model, nn.CrossEntropyLoss(), optim.SGD(params, lr=lr, momentum=0.9), backend=backend)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=64, shuffle=True, seed=0, progress=True)
    for epoch in range(epochs):
        model.train()
        losses = [step(xb, yb) for xb, yb in loader]
        print(f"  epoch {epoch + 1}: loss {np.mean(losses):.4f}")


def accuracy(model, x, y, backend) -> float:
    model.eval()
    sess = mnn.Session(model.to_graph([(1, 1, 28, 28)]), backend=backend)
    return float((sess.run({"input": x})["output"].argmax(1) == y).mean())


def make_base(path: str, x, y, backend) -> str:
    express.manual_seed(0)
    base = lenet(classes=5)
    bx, by = subset(x, y, [0, 1, 2, 3, 4])
    print(f"training a base model on classes 0-4 ({len(bx)} images)")
    fit(base, base.parameters(), bx, by, 1, 0.01, backend)
    graph = base.to_graph([(1, 1, 28, 28)])
    if path.endswith(".onnx"):
        from mnn_core.convert import save_onnx

        save_onnx(graph, path)
    else:
        mnn.save(graph, path)
    print(f"saved the base model to {path}")
    return path


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", help="an .onnx or .mnn image classifier (default: train and export one)")
    p.add_argument("--cut", help="the value to cut the graph at (default: the output of the last Flatten)")
    p.add_argument("--freeze", action="store_true", help="train the new head only")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--limit", type=int, default=None, help="fine-tune on the first N images of classes 5-9")
    p.add_argument("--backend", default="auto")
    p.add_argument("--out", default="finetuned.mnn")
    args = p.parse_args(argv)

    x, y = data.load_mnist(train=True)
    tx, ty = data.load_mnist(train=False)
    path = args.model or make_base("base.onnx" if importlib.util.find_spec("onnx") else "base.mnn", x, y, args.backend)
    graph = mnn.load(path)
    cut = args.cut or [n.outputs[0] for n in graph.nodes if n.op == "Flatten"][-1]
    backbone = nn.from_graph(graph, output=cut)
    features = backbone(np.zeros((1, 1, 28, 28), np.float32)).shape[1]
    express.manual_seed(1)
    model = nn.Sequential(backbone, nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, 5))
    print(
        f"loaded {path}: {len(graph.nodes)} nodes; cut at {cut!r} ({features} features), new head "
        f"{features}-64-5; {sum(p.size for p in backbone.parameters())} imported parameters"
    )

    fx, fy = subset(x, y, [5, 6, 7, 8, 9], args.limit)
    test_x, test_y = subset(tx, ty, [5, 6, 7, 8, 9])
    print(f"before fine-tuning: accuracy {accuracy(model, test_x, test_y, args.backend):.4f} on classes 5-9")
    if args.freeze:
        backbone.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    print(f"fine-tuning {sum(p.size for p in params)} parameters on {len(fx)} images of classes 5-9")
    fit(model, params, fx, fy, args.epochs, 0.01, args.backend)
    print(f"after fine-tuning: accuracy {accuracy(model, test_x, test_y, args.backend):.4f} on classes 5-9")
    mnn.save(model, args.out)
    sess = mnn.Session(args.out, backend=args.backend)
    acc = float((sess.run({"input": test_x})["output"].argmax(1) == test_y).mean())
    print(f"saved {args.out}; reloaded through a Session: accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
