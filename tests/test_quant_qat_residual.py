"""Quantization-aware training on a MobileNetV2-style net: residual adds inside a custom Module, depthwise
convolutions, ReLU6, batch norms and a global pool, through prepare_qat, training and convert."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import express, nn, optim, quant
from mnn_core.express import functional as F
from mnn_core.quant.calibrate import run_values
from mnn_core.quant.qat import QATLayer


def cbr(cin, cout, k, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return layers + [nn.ReLU6()] if act else layers


class Block(nn.Module):
    """Inverted residual: 1x1 expand, 3x3 depthwise, 1x1 project; x + body(x) when the shapes agree."""

    def __init__(self, cin, cout, stride=1, expand=2):
        super().__init__()
        mid = cin * expand
        self.body = nn.Sequential(
            *cbr(cin, mid, 1), *cbr(mid, mid, 3, stride, groups=mid), *cbr(mid, cout, 1, act=False)
        )
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


def residual_net(rng) -> nn.Module:
    """Two residual blocks back to back (an add's output feeds the next add), a strided one, a global pool."""
    express.manual_seed(0)
    model = nn.Sequential(
        *cbr(1, 8, 3),
        Block(8, 8),
        Block(8, 8),
        Block(8, 12, 2),
        *cbr(12, 16, 1),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 5),
    )
    for m in model.modules():  # trained-looking batch norms, so that folding them matters
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.data[:] = rng.normal(0, 0.2, c)
            m.running_var.data[:] = rng.uniform(0.5, 2.0, c)
            m.weight.data[:] = rng.uniform(0.5, 1.5, c)
            m.bias.data[:] = rng.normal(0, 0.2, c)
    return model.eval()


SHAPE = (1, 1, 12, 12)


def test_prepare_qat_reaches_blocks_and_depthwise_and_folds_their_batch_norms(rng):
    model = residual_net(rng)
    q = quant.prepare_qat(model)
    layers = [m for m in q.modules() if isinstance(m, QATLayer)]
    assert len(layers) == 1 + 3 * 3 + 1 + 1  # stem, 3 blocks of 3, head conv, linear
    assert [m.conv_args[3] for m in layers if m.kind == "conv"].count(16) == 3  # the depthwise 3x3s
    assert [m.act for m in layers[1:4]] == ["relu6", "relu6", None]  # expand, depthwise, project
    assert not any(isinstance(m, (nn.BatchNorm2d, nn.ReLU6)) for m in q.modules())
    x = rng.random((4,) + SHAPE[1:]).astype(np.float32)
    want = run_values(model.to_graph([SHAPE]), {"input": x})["output"]
    got = run_values(q.to_graph([SHAPE]), {"input": x})["output"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_qat_residual_net_trains_and_converts_to_int8_with_qlinear_add(rng):
    model = residual_net(rng)
    x = rng.random((32,) + SHAPE[1:]).astype(np.float32)
    y = rng.integers(0, 5, 32)
    q = quant.prepare_qat(model)
    opt = optim.SGD(q.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(6):
        loss = F.cross_entropy(q(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    q.eval()
    fake = q(x).numpy()
    res = quant.convert(q, [SHAPE], calibration={"input": x})
    ops = [n.op for n in res.graph.nodes]
    assert ops.count("QLinearConv") == 12 and ops.count("QLinearAdd") == 2
    assert "Conv" not in ops and "Add" not in ops and "Clip" not in ops and "BatchNormalization" not in ops
    groups = [n.attrs.get("group", 1) for n in res.graph.nodes if n.op == "QLinearConv"]
    assert groups.count(16) == 3 and groups.count(1) == 9
    int8 = mnn.Session(res.graph).run({"input": x})["output"]
    last_scale = [n for n in res.graph.nodes if n.op == "QLinearConv"][-1].inputs[6]
    lsb = float(res.graph.initializers[last_scale])
    # the QAT model in eval mode computes the int8 model, up to the int32 bias rounding (and its carries)
    assert np.abs(int8 - fake).max() <= 3 * lsb, np.abs(int8 - fake).max() / lsb
    assert (int8.argmax(1) == fake.argmax(1)).mean() >= 0.9


@pytest.mark.parametrize("stride", [1, 2])
def test_qat_layer_of_a_depthwise_conv_matches_its_int8_layer(rng, stride):
    conv = nn.Conv2d(6, 6, 3, stride, 1, groups=6)
    layer = QATLayer(conv, act=nn.ReLU6())
    x = rng.normal(0, 1, (2, 6, 9, 9)).astype(np.float32)
    layer.train()
    layer(x)
    layer.eval()
    fake = layer(x).numpy()
    res = quant.convert(nn.Sequential(layer), [(1, 6, 9, 9)])
    (node,) = [n for n in res.graph.nodes if n.op == "QLinearConv"]
    assert node.attrs["group"] == 6 and node.attrs["strides"] == [stride, stride]
    int8 = mnn.Session(res.graph).run({"input": x})["output"]
    lsb = float(res.graph.initializers[node.inputs[6]])
    assert np.abs(int8 - fake).max() <= 1.01 * lsb
    assert fake.min() >= 0 and fake.max() <= 6
