"""Real architectures, written by hand in PyTorch, exported with both torch.onnx exporters
(TorchScript: dynamo=False; torch.export: dynamo=True), run by mnn's reference backend and
compared with ONNX Runtime; then exported back to ONNX by mnn and compared again.

MobileNetV2 (width 0.5), ResNet-18, SqueezeNet 1.1, a small transformer encoder (LayerNorm,
multi-head attention, GELU), an LSTM+GRU sequence model and a detection-style head
(ConvTranspose, Resize, Concat, Sigmoid). Inputs are small (64x64 images, batch 2).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import to_onnx  # noqa: E402

RTOL = 1e-4

# -- the architectures ------------------------------------------------------------------------------


def conv_bn(i, o, k=3, s=1, g=1, act=True):
    layers = [nn.Conv2d(i, o, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(o)]
    if act:
        layers.append(nn.ReLU6(inplace=True))
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, i, o, s, t):
        super().__init__()
        h = i * t
        self.use_res = s == 1 and i == o
        layers = [] if t == 1 else [conv_bn(i, h, 1)]
        layers += [conv_bn(h, h, 3, s, g=h), conv_bn(h, o, 1, act=False)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    """MobileNetV2 (width 0.5): inverted residuals, depthwise convs, ReLU6, linear bottlenecks."""

    CONFIG = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]  # expansion, channels, repeats, stride

    def __init__(self, width=0.5, classes=10):
        super().__init__()
        c = int(32 * width)
        layers = [conv_bn(3, c, 3, 2)]
        for t, ch, n, s in self.CONFIG:
            o = max(8, int(ch * width))
            for k in range(n):
                layers.append(InvertedResidual(c, o, s if k == 0 else 1, t))
                c = o
        layers.append(conv_bn(c, 1280, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return self.classifier(x)


class BasicBlock(nn.Module):
    def __init__(self, i, o, s):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o)
        self.c2, self.b2 = nn.Conv2d(o, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o)
        self.down = None
        if s != 1 or i != o:
            self.down = nn.Sequential(nn.Conv2d(i, o, 1, s, bias=False), nn.BatchNorm2d(o))

    def forward(self, x):
        y = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        layers, c = [], 64
        for o, s in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            layers += [BasicBlock(c, o, s), BasicBlock(o, o, 1)]
            c = o
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


class Fire(nn.Module):
    def __init__(self, i, s, e1, e3):
        super().__init__()
        self.squeeze = nn.Conv2d(i, s, 1)
        self.e1 = nn.Conv2d(s, e1, 1)
        self.e3 = nn.Conv2d(s, e3, 3, padding=1)

    def forward(self, x):
        x = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.e1(x)), F.relu(self.e3(x))], 1)


class SqueezeNet11(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, 2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(64, 16, 64, 64),
            Fire(128, 16, 64, 64),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(128, 32, 128, 128),
            Fire(256, 32, 128, 128),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(256, 48, 192, 192),
            Fire(384, 48, 192, 192),
            Fire(384, 64, 256, 256),
            Fire(512, 64, 256, 256),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(0.5), nn.Conv2d(512, classes, 1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1)
        )

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


class EncoderLayer(nn.Module):
    """Pre-norm transformer layer: LayerNorm, hand-written multi-head attention, GELU MLP."""

    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)

        def split(z):
            return z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class TinyTransformer(nn.Module):
    """Token embedding, two encoder layers, torch's own nn.MultiheadAttention, mean-pooled head."""

    def __init__(self, vocab=50, d=32, layers=2, t=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, t, d) * 0.1)
        self.layers = nn.ModuleList([EncoderLayer(d) for _ in range(layers)])
        self.mha = nn.MultiheadAttention(d, 4, batch_first=True)
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, 5)

    def forward(self, tokens):
        x = self.emb(tokens) + self.pos[:, : tokens.shape[1]]
        for layer in self.layers:
            x = layer(x)
        x = x + self.mha(x, x, x, need_weights=False)[0]
        return self.head(self.norm(x).mean(dim=1))


class SeqModel(nn.Module):
    """A two-layer bidirectional LSTM, then a GRU; the head reads the last step and state."""

    def __init__(self, inp=8, hid=16):
        super().__init__()
        self.lstm = nn.LSTM(inp, hid, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(2 * hid, hid, batch_first=True)
        self.fc = nn.Linear(hid, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, h = self.gru(y)
        return self.fc(y[:, -1]) + self.fc(h[-1])


class DetectionHead(nn.Module):
    """A small FPN-style head: strided convs, ConvTranspose and Resize up, Concat, Sigmoid scores."""

    def __init__(self, classes=3):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.SiLU())
        self.c2 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.SiLU())
        self.c3 = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.LeakyReLU(0.1))
        self.up1 = nn.ConvTranspose2d(64, 32, 4, 2, 1)
        self.lat = nn.Conv2d(64, 32, 1)
        self.out = nn.Conv2d(48, classes + 4, 1)

    def forward(self, x):
        f1 = self.c1(x)
        f2 = self.c2(f1)
        p2 = self.lat(torch.cat([self.up1(self.c3(f2)), f2], 1))
        p1 = torch.cat([F.interpolate(p2, scale_factor=2, mode="nearest"), f1], 1)
        size = (p1.shape[2] * 2, p1.shape[3] * 2)
        y = self.out(F.interpolate(p1, size=size, mode="bilinear", align_corners=False))
        return torch.sigmoid(y[:, :3]), y[:, 3:]


MODELS = {
    "mobilenetv2": (MobileNetV2, lambda: torch.randn(2, 3, 64, 64)),
    "resnet18": (ResNet18, lambda: torch.randn(2, 3, 64, 64)),
    "squeezenet1_1": (SqueezeNet11, lambda: torch.randn(2, 3, 64, 64)),
    "transformer": (TinyTransformer, lambda: torch.randint(0, 50, (2, 16))),
    "lstm_gru": (SeqModel, lambda: torch.randn(2, 7, 8)),
    "detection_head": (DetectionHead, lambda: torch.randn(2, 3, 64, 64)),
}
OUTPUTS = {"detection_head": ["scores", "boxes"]}


def build(name):
    torch.manual_seed(0)
    cls, example = MODELS[name]
    model = cls().eval()
    for m in model.modules():  # non-trivial batch-norm statistics, so folding them is tested
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
    return model, example()


def export(name, path, dynamo: bool, dynamic_batch: bool = False):
    model, x = build(name)
    outputs = OUTPUTS.get(name, ["y"])
    kwargs = {}
    if dynamic_batch:
        kwargs["dynamic_axes"] = {"x": {0: "batch"}}
    with warnings.catch_warnings():  # (not no_grad: it turns on torch's fused attention, which has no ONNX form)
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(path), dynamo=dynamo, input_names=["x"], output_names=outputs, **kwargs)
    return x.numpy(), outputs


def assert_close(got, want, what):
    assert got.shape == want.shape, what
    atol = RTOL * float(np.abs(want).max())  # mild: relative to the output's scale
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=atol, err_msg=what)


def run_both(path, feeds, outputs):
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    graph = mnn.load(path)
    got = mnn.Session(graph, backend="reference").run(feeds)
    for name, ref in zip(outputs, want):
        assert_close(got[name], ref, f"{path.name}: {name}")
    return graph, got


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("name", list(MODELS))
def test_exported_model_matches_onnxruntime(name, dynamo, tmp_path):
    if dynamo:
        pytest.importorskip("onnxscript")
    path = tmp_path / f"{name}.onnx"
    x, outputs = export(name, path, dynamo)
    graph, got = run_both(path, {"x": x}, outputs)
    # and back: mnn's own ONNX export of the imported graph runs the same in ONNX Runtime
    proto = to_onnx(graph)
    onnx.checker.check_model(proto)
    again = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for out, ref in zip(outputs, again):
        assert_close(got[out], ref, f"{name} exported by mnn: {out}")


@pytest.mark.parametrize("name", ["resnet18", "transformer", "lstm_gru", "detection_head"])
def test_dynamic_batch(name, tmp_path):
    """torch's shape sub-graphs (Shape -> Gather -> Concat -> Reshape) fold at resize with a dynamic batch."""
    path = tmp_path / f"{name}.onnx"
    x, outputs = export(name, path, dynamo=False, dynamic_batch=True)
    graph = mnn.load(path)
    assert graph.inputs["x"].shape[0] == "batch"
    session = mnn.Session(graph, backend="reference")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch in (1, 3):
        xb = np.concatenate([x] * 2)[:batch]
        got = session.run({"x": xb})
        for out, want in zip(outputs, ref.run(None, {"x": xb})):
            assert_close(got[out], want, f"{name} batch {batch}: {out}")
    # the shape sub-graphs stay in the model and are computed at resize: no plan runs them
    assert not {"Shape", "ConstantOfShape", "Range"} & {p.op for p in session.plan}


def test_dynamo_external_data(tmp_path):
    """The dynamo exporter's external-data layout (model.onnx + model.onnx.data) loads."""
    pytest.importorskip("onnxscript")
    model, x = build("squeezenet1_1")
    path = tmp_path / "squeezenet.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(model, (x,), dynamo=True, input_names=["x"], output_names=["y"])
        program.save(str(path), external_data=True)
    assert (tmp_path / "squeezenet.onnx.data").exists()
    run_both(path, {"x": x.numpy()}, ["y"])
