"""A transformer encoder from PyTorch (nn.TransformerEncoder: two nn.TransformerEncoderLayer,
multi-head self-attention, GELU MLP, LayerNorm; a token embedding in front), exported to ONNX by
torch's TorchScript exporter, imported by mnn and run entirely on Vulkan with fallback=False:
every node planned on Vulkan, outputs within 1e-3 relative error of PyTorch's (float32) and
3e-2 under precision="low". Skipped where torch or onnx is missing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

import mnn_core as mnn

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

pytestmark = needs_vulkan

VOCAB, DIM, HEADS, SEQ = 100, 64, 4, 24


class Encoder(torch.nn.Module):
    def __init__(self, norm_first: bool):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, DIM)
        self.pos = torch.nn.Parameter(torch.randn(1, SEQ, DIM) * 0.1)
        layer = torch.nn.TransformerEncoderLayer(
            DIM, HEADS, dim_feedforward=2 * DIM, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
        )
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(DIM, 10)

    def forward(self, tokens):
        return self.head(self.encoder(self.emb(tokens) + self.pos))


@pytest.fixture(scope="module", params=[False, True], ids=["post-norm", "pre-norm"])
def exported(request, tmp_path_factory):
    torch.manual_seed(0)
    model = Encoder(norm_first=request.param).eval()
    tokens = torch.randint(0, VOCAB, (3, SEQ))
    path = tmp_path_factory.mktemp("encoder") / "encoder.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # (not under no_grad: that turns on torch's fused encoder kernel, which has no ONNX form)
        torch.onnx.export(
            model,
            (tokens,),
            str(path),
            dynamo=False,
            input_names=["tokens"],
            output_names=["logits"],
            dynamic_axes={"tokens": {0: "batch"}},
        )
        with torch.no_grad():
            want = model(tokens).numpy()
    return mnn.load(path), tokens.numpy(), want


@pytest.mark.parametrize("precision, tol", [("normal", 1e-3), ("low", 3e-2)], ids=["fp32", "fp16"])
def test_torch_encoder_entirely_on_vulkan(exported, precision, tol):
    graph, tokens, want = exported
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision=precision)
    for batch in (3, 1):  # the exported batch, then another (a re-plan)
        got = sess.run({"tokens": tokens[:batch]})["logits"]
        assert set(sess.plan.backends()) == {"vulkan"}, str(sess.plan)
        err = np.abs(got - want[:batch]).max() / np.abs(want[:batch]).max()
        assert err < tol, f"{precision}, batch {batch}: relative error {err:.2e} against PyTorch"
