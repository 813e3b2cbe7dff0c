"""Post-training int8 on the graph forms real exports hold: a Reshape to a shape computed in the
graph (Shape -> Gather -> Concat), an LSTM (Slice by computed bounds) and an attention block. The
quantized model runs and stays near the float one; the layers left float say why."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import quant

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")


class ConvFlatten(torch.nn.Module):
    """x.view(x.size(0), -1): the legacy exporter writes the target shape as Shape/Gather/Concat."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 7 * 5, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.view(y.size(0), -1))


class Tagger(torch.nn.Module):
    """Token ids -> embedding -> a stacked bidirectional LSTM -> a linear layer per token."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 12)
        self.lstm = torch.nn.LSTM(12, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.out = torch.nn.Linear(32, 5)

    def forward(self, ids):
        return self.out(self.lstm(self.embed(ids))[0])


class Attention(torch.nn.Module):
    """One self-attention block with heads split and merged by view on computed sizes."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, t, d)) + x


def _export(module, x, path):
    """The legacy (TorchScript) exporter with a dynamic batch: its shapes stay computed in the graph."""
    torch.onnx.export(
        module.eval(),
        (torch.from_numpy(x),),
        str(path),
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
        dynamo=False,
        opset_version=13,
    )
    return mnn.load(path)


def _floats(shape):
    return lambda rng, n: rng.standard_normal((n,) + shape).astype(np.float32)


# (module, inputs of n samples, largest |quantized - float| as a fraction of the float output's range)
CASES = {
    "reshape-computed-shape": (ConvFlatten, _floats((3, 7, 5)), 0.05),
    "lstm": (Tagger, lambda rng, n: rng.integers(0, 50, (n, 9)).astype(np.int64), 0.05),
    "attention": (Attention, _floats((6, 16)), 0.05),
}


@pytest.mark.parametrize("case", list(CASES))
def test_quantized_model_runs_near_the_float_one(case, tmp_path, rng):
    make, inputs, bound = CASES[case]
    torch.manual_seed(0)
    graph = _export(make(), inputs(rng, 2), tmp_path / f"{case}.onnx")
    res = quant.quantize(graph, {"x": inputs(rng, 16)}, method="minmax")
    x = inputs(rng, 3)
    want = mnn.Session(res.float_graph).run({"x": x})["y"]
    got = mnn.Session(res.graph).run({"x": x})["y"]
    assert got.shape == want.shape
    err = float(np.abs(got - want).max() / (want.max() - want.min()))
    assert err < bound, f"{case}: error {err:.4f} of the output's range\n{res.report()}"
    assert res.rewrite.layers, f"{case}: nothing was quantized\n{res.report()}"
    assert all(why and node in {n.name for n in res.float_graph.nodes} for node, why in res.float_reasons.items())


def test_layers_left_float_say_why(tmp_path, rng):
    torch.manual_seed(0)
    x = _floats((6, 16))
    graph = _export(Attention(), x(rng, 2), tmp_path / "attention.onnx")
    res = quant.quantize(graph, {"x": x(rng, 8)}, method="minmax")
    ops = {n.name: n.op for n in res.float_graph.nodes}
    # the scores (q @ k^T) and the mix (a @ v) multiply two activations: no constant weight
    computed = [n for n, why in res.float_reasons.items() if ops[n] == "MatMul" and "not a constant" in why]
    assert len(computed) == 2, res.float_reasons
    assert {layer.op for layer in res.rewrite.layers} == {"MatMul"}  # qkv and proj, on [N, T, K]
    assert all(f"kept float: {n}" in res.report() for n in res.float_reasons)
