"""Build MobileNetV2, ResNet-18 and SqueezeNet 1.1 with the graph builder and
save them as .mnn (seeded random weights: for speed and correctness
comparisons across backends, not for accuracy).

    python examples/build_models.py -o models
    mnnx bench models/mobilenet_v2.mnn --backend all --threads 1,2
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import mnn_core as mnn


class Net:
    """GraphBuilder plus seeded, He-scaled weights and batch-norm statistics."""

    def __init__(self, name: str, seed: int = 0):
        self.b = mnn.GraphBuilder(name)
        self.rng = np.random.default_rng(seed)

    def conv_bn(self, x, cin, cout, k, stride=1, group=1, act="relu"):
        fan_in = cin // group * k * k
        w = self.b.const(
            self.rng.standard_normal((cout, cin // group, k, k)).astype("float32") * np.float32(np.sqrt(2.0 / fan_in)),
            "w",
        )
        y = self.b.Conv(x, w, None, strides=[stride, stride], pads=[k // 2] * 4, group=group)
        gamma = self.b.const(self.rng.uniform(0.5, 1.5, cout).astype("float32"), "gamma")
        beta = self.b.const(self.rng.uniform(-0.1, 0.1, cout).astype("float32"), "beta")
        mean = self.b.const(self.rng.uniform(-0.1, 0.1, cout).astype("float32"), "mean")
        var = self.b.const(self.rng.uniform(0.5, 1.5, cout).astype("float32"), "var")
        y = self.b.BatchNormalization(y, gamma, beta, mean, var, epsilon=1e-5)
        if act == "relu":
            y = self.b.Relu(y)
        elif act == "relu6":
            y = self.b.Clip(y, min=0.0, max=6.0)
        return y

    def head(self, x, cin, classes=1000):
        y = self.b.Flatten(self.b.GlobalAveragePool(x), axis=1)
        w = self.b.const(self.rng.standard_normal((classes, cin)).astype("float32") * np.float32(1 / np.sqrt(cin)))
        bias = self.b.const(np.zeros(classes, "float32"))
        self.b.output(self.b.Gemm(y, w, bias, transB=1), "logits")
        return self.b.build()


def mobilenet_v2(batch="N", seed=0) -> mnn.Graph:
    net = Net("mobilenet_v2", seed)
    x = net.b.input("input", (batch, 3, 224, 224))
    y = net.conv_bn(x, 3, 32, 3, stride=2, act="relu6")
    cin = 32
    # (expansion, channels, repeats, first stride), as in the paper
    for t, c, n, s in [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            z = net.conv_bn(y, cin, hidden, 1, act="relu6") if t != 1 else y
            z = net.conv_bn(z, hidden, hidden, 3, stride=stride, group=hidden, act="relu6")
            z = net.conv_bn(z, hidden, c, 1, act="none")
            y = net.b.Add(z, y) if stride == 1 and cin == c else z
            cin = c
    y = net.conv_bn(y, cin, 1280, 1, act="relu6")
    return net.head(y, 1280)


def resnet18(batch="N", seed=0) -> mnn.Graph:
    net = Net("resnet18", seed)
    x = net.b.input("input", (batch, 3, 224, 224))
    y = net.conv_bn(x, 3, 64, 7, stride=2)
    y = net.b.MaxPool(y, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for c, s in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for i in range(2):
            stride = s if i == 0 else 1
            z = net.conv_bn(y, cin, c, 3, stride=stride)
            z = net.conv_bn(z, c, c, 3, act="none")
            short = net.conv_bn(y, cin, c, 1, stride=stride, act="none") if stride != 1 or cin != c else y
            y = net.b.Relu(net.b.Add(z, short))
            cin = c
    return net.head(y, 512)


def squeezenet1_1(batch="N", seed=0) -> mnn.Graph:
    net = Net("squeezenet1_1", seed)
    b = net.b

    def conv_relu(x, cin, cout, k, stride=1, pad=None):
        w = b.const(
            net.rng.standard_normal((cout, cin, k, k)).astype("float32") * np.float32(np.sqrt(2.0 / (cin * k * k))), "w"
        )
        bias = b.const(net.rng.uniform(-0.05, 0.05, cout).astype("float32"), "b")
        p = k // 2 if pad is None else pad
        return b.Relu(b.Conv(x, w, bias, strides=[stride, stride], pads=[p] * 4))

    def fire(x, cin, squeeze, expand):
        s = conv_relu(x, cin, squeeze, 1)
        return b.Concat(conv_relu(s, squeeze, expand, 1), conv_relu(s, squeeze, expand, 3), axis=1)

    x = b.input("input", (batch, 3, 224, 224))
    y = conv_relu(x, 3, 64, 3, stride=2, pad=0)
    y = b.MaxPool(y, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    y = fire(fire(y, 64, 16, 64), 128, 16, 64)
    y = b.MaxPool(y, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    y = fire(fire(y, 128, 32, 128), 256, 32, 128)
    y = b.MaxPool(y, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    y = fire(fire(fire(fire(y, 256, 48, 192), 384, 48, 192), 384, 64, 256), 512, 64, 256)
    y = conv_relu(y, 512, 1000, 1)  # the classifier is a 1x1 conv, then global pooling
    b.output(b.Flatten(b.GlobalAveragePool(y), axis=1), "logits")
    return b.build()


MODELS = {"mobilenet_v2": mobilenet_v2, "resnet18": resnet18, "squeezenet1_1": squeezenet1_1}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--out", default="models", help="output folder (default: models)")
    p.add_argument("--model", action="append", choices=sorted(MODELS), help="build only these (repeat)")
    p.add_argument("--batch", default="N", help="batch dimension: N (dynamic, default) or a number")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    batch = int(args.batch) if args.batch.isdigit() else args.batch
    for name in args.model or sorted(MODELS):
        graph = MODELS[name](batch)
        path = out / f"{name}.mnn"
        mnn.save(graph, path)
        print(f"{path}: {len(graph.nodes)} nodes, {graph.param_count():,} parameters")


if __name__ == "__main__":
    main()
