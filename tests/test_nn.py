"""nn: Module bookkeeping, layers against PyTorch, initialization, export to .mnn, from_graph."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import express as E
from mnn_core import nn, optim
from mnn_core.errors import MnnError
from mnn_core.express import functional as F
from mnn_core.testing.models import lenet

torch = pytest.importorskip("torch", reason="PyTorch is the reference these layers are compared with")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
        self.scale = 2.0

    def forward(self, x):
        return self.head(F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)) * self.scale


def _to_torch(x):
    return torch.tensor(np.asarray(x))


# -- Module -------------------------------------------------------------------------------------


def test_module_finds_parameters_buffers_and_children():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight", "head.1.bias"]
    assert [n for n, _ in net.named_buffers()] == ["bn.running_mean", "bn.running_var"]
    assert [n for n, _ in net.named_children()] == ["conv", "bn", "head"]
    assert all(p.requires_grad for p in net.parameters())
    assert net.scale == 2.0 and "scale" not in dict(net.named_parameters())
    assert not net.eval().bn.training and net.train().head[1].training
    assert "Conv2d" in repr(net)


def test_state_dict_round_trip_and_errors():
    a, b = Net(), Net()
    a.bn.running_mean.data[:] = 3.0
    b.load_state_dict(a.state_dict())
    for (n, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(x, y, err_msg=n)
    with pytest.raises(MnnError, match="missing keys"):
        b.load_state_dict({"conv.weight": a.conv.weight.numpy()})
    bad = a.state_dict()
    bad["conv.bias"] = np.zeros(7, np.float32)
    with pytest.raises(MnnError, match="shape"):
        b.load_state_dict(bad)


@pytest.mark.parametrize("layer", [nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose2d])
def test_convolutions_refuse_what_they_cannot_do_by_name(layer):
    name = layer.__name__
    with pytest.raises(MnnError, match=f"{name}: padding_mode 'reflect' is not supported"):
        layer(4, 4, 3, padding_mode="reflect")
    with pytest.raises(MnnError, match=f"{name}: channels 3 -> 4 must divide by groups=2"):
        layer(3, 4, 3, groups=2)
    conv = layer(4, 6, 3, groups=2)
    lead = (6, 2) if layer is not nn.ConvTranspose2d else (4, 3)
    assert conv.weight.shape == lead + conv.kernel_size and conv.bias.shape == (6,)
    assert repr(conv).startswith(f"{name}(4, 6, kernel_size={conv.kernel_size}, stride=")


def test_default_initialization_follows_pytorch():
    E.manual_seed(3)
    lin = nn.Linear(300, 50)
    bound = 1 / math.sqrt(300)
    assert np.abs(lin.weight.numpy()).max() <= bound and np.abs(lin.weight.numpy()).max() > 0.9 * bound
    assert np.abs(lin.bias.numpy()).max() <= bound
    conv = nn.Conv2d(8, 16, 3, groups=2)
    assert conv.weight.shape == (16, 4, 3, 3) and np.abs(conv.weight.numpy()).max() <= 1 / math.sqrt(36)
    bn = nn.BatchNorm1d(7)
    assert (bn.weight.numpy() == 1).all() and (bn.bias.numpy() == 0).all() and (bn.running_var.numpy() == 1).all()
    emb = nn.Embedding(1000, 20, padding_idx=0)
    assert abs(emb.weight.numpy().std() - 1) < 0.05 and not emb.weight.numpy()[0].any()
    # the same bound as torch's own default
    t = torch.nn.Linear(300, 50)
    assert np.isclose(t.weight.detach().abs().max().item(), bound, rtol=0.05)


# -- layers against PyTorch --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: (nn.Conv2d(3, 4, 3, stride=2, padding=1), torch.nn.Conv2d(3, 4, 3, stride=2, padding=1), (2, 3, 9, 8)),
        lambda: (
            nn.Conv2d(4, 4, 3, padding="same", groups=2, bias=False),
            torch.nn.Conv2d(4, 4, 3, padding="same", groups=2, bias=False),
            (1, 4, 6, 6),
        ),
        lambda: (nn.Linear(6, 3), torch.nn.Linear(6, 3), (4, 6)),
        lambda: (nn.Linear(6, 3), torch.nn.Linear(6, 3), (2, 5, 6)),
        lambda: (nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3), (4, 3, 5, 5)),
        lambda: (nn.BatchNorm1d(5), torch.nn.BatchNorm1d(5), (8, 5)),
        lambda: (nn.LayerNorm(6), torch.nn.LayerNorm(6), (2, 3, 6)),
        lambda: (nn.MaxPool2d(3, 2, 1), torch.nn.MaxPool2d(3, 2, 1), (1, 2, 7, 7)),
        lambda: (nn.AvgPool2d(2), torch.nn.AvgPool2d(2), (1, 2, 6, 6)),
        lambda: (nn.AdaptiveAvgPool2d(1), torch.nn.AdaptiveAvgPool2d(1), (2, 3, 5, 5)),
        lambda: (nn.AdaptiveAvgPool2d((2, 3)), torch.nn.AdaptiveAvgPool2d((2, 3)), (1, 2, 4, 6)),
        lambda: (nn.GELU(), torch.nn.GELU(), (3, 7)),
        lambda: (nn.SiLU(), torch.nn.SiLU(), (3, 7)),
        lambda: (nn.ReLU6(), torch.nn.ReLU6(), (3, 7)),
        lambda: (nn.Flatten(), torch.nn.Flatten(), (2, 3, 4)),
    ],
    ids=[
        "conv",
        "conv-same-grouped",
        "linear",
        "linear-3d",
        "bn2d",
        "bn1d",
        "layernorm",
        "maxpool",
        "avgpool",
        "adaptive-1",
        "adaptive-2x3",
        "gelu",
        "silu",
        "relu6",
        "flatten",
    ],
)
def test_layer_forward_backward_and_state_match_pytorch(make):
    ours, theirs, shape = make()
    ours.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 3
    for _ in range(2):  # twice: batch-norm running statistics must follow torch's too
        xv = E.Var(x, requires_grad=True)
        y = ours(xv)
        xt = _to_torch(x).requires_grad_(True)
        yt = theirs(xt)
        np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
        weights = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
        (y * weights).sum().backward()
        (yt * _to_torch(weights)).sum().backward()
        np.testing.assert_allclose(xv.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
        for (name, p), tp in zip(ours.named_parameters(), theirs.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=name)
        ours.zero_grad()
        theirs.zero_grad()
    for (name, b), tb in zip(ours.named_buffers(), [b for n, b in theirs.named_buffers() if "num_batches" not in n]):
        np.testing.assert_allclose(b.numpy(), tb.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_batchnorm_eval_uses_running_statistics():
    bn, tb = nn.BatchNorm2d(2), torch.nn.BatchNorm2d(2)
    x = np.random.default_rng(2).standard_normal((3, 2, 4, 4)).astype(np.float32)
    bn(x), tb(_to_torch(x))
    bn.eval(), tb.eval()
    np.testing.assert_allclose(bn(x).numpy(), tb(_to_torch(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_multihead_attention_matches_pytorch():
    torch.manual_seed(0)
    for batch_first in (False, True):
        tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
        m = nn.MultiheadAttention(8, 2, batch_first=batch_first)
        m.load_state_dict(tm.state_dict())
        rng = np.random.default_rng(0)
        q = rng.standard_normal((5, 3, 8)).astype("f")
        k = rng.standard_normal((4, 3, 8)).astype("f")
        if batch_first:
            q, k = np.ascontiguousarray(q.transpose(1, 0, 2)), np.ascontiguousarray(k.transpose(1, 0, 2))
        mask = np.zeros((3, 4), bool)
        mask[0, 3] = True
        qv = E.Var(q, requires_grad=True)
        out, w = m(qv, k, k, key_padding_mask=mask)
        qt = _to_torch(q).requires_grad_(True)
        to, tw = tm(qt, _to_torch(k), _to_torch(k), key_padding_mask=_to_torch(mask))
        np.testing.assert_allclose(out.numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5)
        out.sum().backward()
        to.sum().backward()
        np.testing.assert_allclose(qv.grad.numpy(), qt.grad.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(m.in_proj_weight.grad.numpy(), tm.in_proj_weight.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "ours, theirs, target",
    [
        (nn.CrossEntropyLoss(label_smoothing=0.1), torch.nn.CrossEntropyLoss(label_smoothing=0.1), "index"),
        (nn.MSELoss(), torch.nn.MSELoss(), "float"),
        (nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss(), "prob"),
        (
            nn.BCEWithLogitsLoss(pos_weight=[2.0, 1, 1, 0.5]),
            torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1, 1, 0.5])),
            "prob",
        ),
    ],
    ids=["cross-entropy", "mse", "bce-logits", "bce-pos-weight"],
)
def test_losses_match_pytorch(ours, theirs, target):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4)).astype(np.float32) * 3
    t = {
        "index": rng.integers(0, 4, 6),
        "float": rng.standard_normal((6, 4)).astype(np.float32),
        "prob": rng.random((6, 4)).astype(np.float32),
    }[target]
    xv, xt = E.Var(x, requires_grad=True), _to_torch(x).requires_grad_(True)
    loss, tloss = ours(xv, t), theirs(xt, _to_torch(t))
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(xv.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_dropout_scales_in_training_and_is_identity_in_eval():
    E.manual_seed(0)
    d = nn.Dropout(0.25)
    x = np.ones((200, 50), np.float32)
    y = d(x).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)} and abs((y == 0).mean() - 0.25) < 0.02
    np.testing.assert_array_equal(d.eval()(x).numpy(), x)


def test_embedding_gradient_scatters_into_rows():
    emb = nn.Embedding(5, 3)
    out = emb(np.array([[1, 1], [4, 0]]))
    out.sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[:, 0], [1, 2, 0, 0, 1])


# -- export and fine-tuning ---------------------------------------------------------------------------


def test_to_graph_runs_in_a_session_and_saves_to_mnn(tmp_path):
    net = Net().eval()
    x = np.random.default_rng(4).standard_normal((3, 3, 8, 8)).astype(np.float32)
    want = net(x).numpy()
    graph = net.to_graph([(1, 3, 8, 8)])
    assert graph.inputs["input"].shape == ("N", 3, 8, 8)  # the batch stays dynamic
    assert "conv.weight" in graph.initializers
    np.testing.assert_allclose(
        mnn.Session(graph, backend="reference").run({"input": x})["output"], want, rtol=1e-4, atol=1e-5
    )
    path = tmp_path / "net.mnn"
    mnn.save(net, path)  # to_graph() with the shapes of the last call
    got = mnn.Session(str(path), backend="reference").run({"input": x})["output"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert net.training is False and Net().train().to_graph([(2, 3, 8, 8)]) is not None


def test_to_graph_falls_back_to_a_static_batch_when_forward_captures_it():
    class Reshaping(nn.Module):
        def forward(self, x):
            return x.reshape(x.shape[0], -1) * 2  # bakes the batch size into the Reshape

    graph = Reshaping().to_graph([(3, 2, 2)])
    assert graph.inputs["input"].shape == (3, 2, 2)
    x = np.ones((3, 2, 2), np.float32)
    np.testing.assert_allclose(mnn.Session(graph, backend="reference").run({"input": x})["output"], 2.0)


def test_from_graph_trains_and_takes_a_new_head(tmp_path):
    E.manual_seed(5)
    base = lenet().eval()
    x = np.random.default_rng(6).random((8, 1, 28, 28)).astype(np.float32)
    path = tmp_path / "lenet.mnn"
    mnn.save(base.to_graph([(1, 1, 28, 28)]), path)
    loaded = mnn.Session(str(path), backend="reference").graph  # optimized: activations fused
    full = nn.from_graph(mnn.load(path))
    assert len(list(full.parameters())) == 10
    np.testing.assert_allclose(full.eval()(x).numpy(), base(x).numpy(), rtol=1e-4, atol=1e-5)
    fused = nn.from_graph(loaded)  # fused Conv+Relu trains too
    np.testing.assert_allclose(fused(x).numpy(), base(x).numpy(), rtol=1e-4, atol=1e-5)

    cut = next(n.outputs[0] for n in mnn.load(path).nodes if n.op == "Flatten")
    backbone = nn.from_graph(path, output=cut)
    model = nn.Sequential(backbone, nn.Linear(400, 3))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    y = np.arange(8) % 3
    before = backbone.state_dict()
    losses = []
    for _ in range(15):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    changed = [k for k, v in backbone.state_dict().items() if not np.array_equal(v, before[k])]
    assert changed, "the imported weights must train too"
    graph = model.to_graph([(1, 1, 28, 28)])
    out = mnn.Session(graph, backend="reference").run({"input": x})["output"]
    np.testing.assert_allclose(out, model(x).numpy(), rtol=1e-4, atol=1e-4)


def test_from_graph_names_unknown_cut_values():
    with pytest.raises(MnnError, match="no value named"):
        nn.from_graph(lenet().to_graph([(1, 1, 28, 28)]), output="nope")
