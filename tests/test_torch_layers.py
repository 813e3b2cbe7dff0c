"""The torch-shaped layers against PyTorch: outputs and every gradient (input and parameters) on random
inputs of several shapes, odd sizes included, in float64; the same weights loaded into both."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core import express as E
from mnn_core import nn

torch = pytest.importorskip("torch", reason="PyTorch is the reference these layers are compared with")
tnn = torch.nn


def _compare(theirs, ours, inputs, rtol=1e-7, atol=1e-9, forward=None):
    """Same weights in both; forward on `inputs` (arrays; float ones get gradients); compare the first output,
    its input gradients and every parameter gradient."""
    theirs = theirs.double()
    ours.load_state_dict({k: v.detach() for k, v in theirs.state_dict().items()})
    ours.double()
    forward = forward or (lambda m, *xs: m(*xs))
    t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
    m_in = [E.Var(a, requires_grad=a.dtype.kind == "f") for a in inputs]
    t_out, m_out = forward(theirs, *t_in), forward(ours, *m_in)
    t_out = t_out[0] if isinstance(t_out, tuple) else t_out
    m_out = m_out[0] if isinstance(m_out, tuple) else m_out
    np.testing.assert_allclose(m_out.numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol, err_msg="output")
    g = np.random.default_rng(1).standard_normal(t_out.shape)
    t_out.backward(torch.tensor(g))
    m_out.backward(g)
    for i, (t, m) in enumerate(zip(t_in, m_in)):
        if t.requires_grad:
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"input {i}")
    ours_params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        assert name in ours_params, f"{name} is missing from the mnn layer"
        want = np.zeros(p.shape) if p.grad is None else p.grad.numpy()
        got = np.zeros(p.shape) if ours_params[name].grad is None else ours_params[name].grad.numpy()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
    assert len(ours_params) == len(dict(theirs.named_parameters()))


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize(
    "args, shape",
    [
        ((3, 4, 3), (2, 3, 9)),
        ((4, 6, 3, 2, 1, 1, 2), (1, 4, 11)),  # stride 2, padding 1, groups 2
        ((2, 4, 2, 3, 2, 2), (2, 2, 8)),  # stride 3, padding 2, dilation 2
    ],
)
def test_conv1d(args, shape):
    _compare(tnn.Conv1d(*args), nn.Conv1d(*args), [_rand(*shape)])


@pytest.mark.parametrize(
    "args, shape",
    [
        ((2, 3, 3), (2, 2, 5, 6, 4)),
        ((4, 4, 2, 2, 1, 1, 2), (1, 4, 5, 7, 6)),
    ],
)
def test_conv3d(args, shape):
    _compare(tnn.Conv3d(*args), nn.Conv3d(*args), [_rand(*shape)])


@pytest.mark.parametrize(
    "kwargs, shape",
    [
        (dict(in_channels=3, out_channels=4, kernel_size=3), (2, 3, 5, 6)),
        (dict(in_channels=4, out_channels=2, kernel_size=4, stride=2, padding=1), (1, 4, 7, 5)),
        (
            dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1, output_padding=1, groups=2),
            (2, 4, 3, 4),
        ),
    ],
)
def test_conv_transpose2d(kwargs, shape):
    _compare(tnn.ConvTranspose2d(**kwargs), nn.ConvTranspose2d(**kwargs), [_rand(*shape)])


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize(
    "kwargs, shape",
    [
        (dict(input_size=3, hidden_size=5), (7, 2, 3)),
        (dict(input_size=4, hidden_size=3, num_layers=2, batch_first=True, bidirectional=True), (2, 5, 4)),
        (dict(input_size=2, hidden_size=4, bias=False), (3, 2)),  # unbatched
    ],
)
def test_recurrent_layers(cls, kwargs, shape):
    torch.manual_seed(0)
    _compare(getattr(tnn, cls)(**kwargs), getattr(nn, cls)(**kwargs), [_rand(*shape)])


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize(
    "kwargs, shape",
    [
        (dict(input_size=3, hidden_size=5), (7, 2, 3)),
        (dict(input_size=4, hidden_size=3, num_layers=2, batch_first=True, bidirectional=True), (2, 5, 4)),
        (dict(input_size=2, hidden_size=4, bias=False, nonlinearity="relu"), (3, 2)),  # unbatched
    ],
)
def test_recurrent_layers_without_gradients_run_as_one_op(cls, kwargs, shape):
    """No gradient needed: each layer and direction is one ONNX recurrent op (PyTorch's gates
    reordered), in eager mode and in a traced graph, with PyTorch's float32 outputs and states."""
    if cls != "RNN":
        kwargs = {k: v for k, v in kwargs.items() if k != "nonlinearity"}
    torch.manual_seed(0)
    theirs, ours = getattr(tnn, cls)(**kwargs).eval(), getattr(nn, cls)(**kwargs).eval()
    ours.load_state_dict({k: v.detach() for k, v in theirs.state_dict().items()})
    x = _rand(*shape).astype(np.float32)
    with torch.no_grad():
        t_out, t_state = theirs(torch.tensor(x))
    with E.no_grad():
        m_out, m_state = ours(x)
    t_states = t_state if cls == "LSTM" else (t_state,)
    m_states = m_state if cls == "LSTM" else (m_state,)
    for m, t in [(m_out, t_out), *zip(m_states, t_states)]:
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    wrapped = nn.Sequential(ours)  # its first output only: to_graph takes a tensor or a flat tuple
    wrapped.forward = lambda x: ours(x)[0]
    graph = wrapped.to_graph([shape], dynamic_batch=False)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    assert [n.op for n in graph.nodes].count(cls) == layers


def test_lstm_initial_state_and_final_states():
    torch.manual_seed(0)
    theirs, ours = tnn.LSTM(3, 4, num_layers=2).double(), nn.LSTM(3, 4, num_layers=2)
    ours.load_state_dict(theirs.state_dict())
    ours.double()
    x, h0, c0 = _rand(5, 2, 3), _rand(2, 2, 4, seed=1), _rand(2, 2, 4, seed=2)
    t_out, (t_h, t_c) = theirs(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
    m_out, (m_h, m_c) = ours(x, (h0, c0))
    for m, t in [(m_out, t_out), (m_h, t_h), (m_c, t_c)]:
        np.testing.assert_allclose(m.numpy(), t.detach().numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("shape", [(7,), (3, 5)])
def test_embedding_with_padding_index(shape):
    idx = np.random.default_rng(0).integers(0, 6, shape)
    idx.flat[0] = 2
    _compare(tnn.Embedding(6, 4, padding_idx=2), nn.Embedding(6, 4, padding_idx=2), [idx])


@pytest.mark.parametrize("normalized, shape", [(5, (3, 5)), ((4, 3), (2, 7, 4, 3))])
def test_layer_norm(normalized, shape):
    _compare(tnn.LayerNorm(normalized), nn.LayerNorm(normalized), [_rand(*shape)])


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_with_masks(batch_first):
    torch.manual_seed(0)
    n, length, e = 2, 5, 8
    x = _rand(n, length, e) if batch_first else _rand(length, n, e)
    pad = np.zeros((n, length), bool)
    pad[1, -2:] = True
    causal = np.triu(np.ones((length, length), bool), 1)

    def forward(m, q):
        mask = torch.tensor(causal) if isinstance(q, torch.Tensor) else causal
        kpm = torch.tensor(pad) if isinstance(q, torch.Tensor) else pad
        return m(q, q, q, attn_mask=mask, key_padding_mask=kpm)

    theirs = tnn.MultiheadAttention(e, 2, batch_first=batch_first)
    _compare(theirs, nn.MultiheadAttention(e, 2, batch_first=batch_first), [x], forward=forward)


@pytest.mark.parametrize("norm_first, activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder(norm_first, activation):
    torch.manual_seed(0)
    kwargs = dict(
        d_model=8,
        nhead=2,
        dim_feedforward=12,
        dropout=0.0,
        batch_first=True,
        norm_first=norm_first,
        activation=activation,
    )
    theirs = tnn.TransformerEncoder(tnn.TransformerEncoderLayer(**kwargs), 2, enable_nested_tensor=False)
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(**kwargs), 2)
    _compare(theirs, ours, [_rand(3, 5, 8)], rtol=1e-6, atol=1e-8)


def test_dropout_scales_kept_values_and_is_identity_in_eval():
    E.manual_seed(0)
    layer = nn.Dropout(0.25)
    x = np.ones((200, 50))
    y = layer(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    assert np.array_equal(layer.eval()(x).numpy(), x)


@pytest.mark.parametrize("norm_type, max_norm", [(2.0, 0.5), (1.0, 100.0), (float("inf"), 0.1)])
def test_clip_grad_norm(norm_type, max_norm):
    grads = [_rand(3, 4, seed=3), _rand(5, seed=4)]
    tp = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    mp = [nn.Parameter(np.zeros(g.shape)) for g in grads]
    for t, m, g in zip(tp, mp, grads):
        t.grad, m.grad = torch.tensor(g), E.Var(g)
    want = tnn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    got = nn.utils.clip_grad_norm_(mp, max_norm, norm_type)
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-7)
    for t, m in zip(tp, mp):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-6)
