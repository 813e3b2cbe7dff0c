"""RNN, GRU and LSTM on x86 (ops_recurrent.py) against the reference backend: every direction and
layout, sequence_lens of unequal lengths, initial states, peepholes, clip, input_forget,
linear_before_reset, activation lists, any prefix of the outputs, weights given at run, odd hidden
sizes, batch 1 and 3, one and two threads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import one_op_graph

from mnn_core.ops import run_reference
from mnn_core.session import Session

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
N_OUT = {"RNN": 2, "GRU": 2, "LSTM": 3}


def _r(rng, *shape):
    return (rng.standard_normal(shape) * 0.6).astype(np.float32)


def _inputs(rng, op, seq, batch, size, hidden, attrs, lens=False, states=False, peep=False):
    """X, W, R, B and the optional inputs the case asks for (None where absent)."""
    dirs, g = (2 if attrs.get("direction") == "bidirectional" else 1), GATES[op]
    layout = attrs.get("layout", 0)
    x = _r(rng, batch, seq, size) if layout else _r(rng, seq, batch, size)
    ins = [x, _r(rng, dirs, g * hidden, size), _r(rng, dirs, g * hidden, hidden), _r(rng, dirs, 2 * g * hidden)]
    state_shape = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    ins.append(rng.integers(0, seq + 1, batch).astype(np.int32) if lens else None)
    ins.append(_r(rng, *state_shape) if states else None)
    if op == "LSTM":
        ins.append(_r(rng, *state_shape) if states else None)
        ins.append(_r(rng, dirs, 3 * hidden) if peep else None)
    while ins[-1] is None:
        ins.pop()
    return ins


def _check(op, ins, attrs, threads, n_out=None, constant=(1, 2, 3, 7)):
    n_out = n_out or N_OUT[op]
    graph, feeds = one_op_graph(op, ins, attrs, constant)
    graph.nodes[0].outputs = [f"out{i}" for i in range(n_out)]
    graph.outputs = list(graph.nodes[0].outputs)
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads)
    want = run_reference(op, list(ins), attrs)
    for _ in range(2):  # the second run starts from the scratch the first one left
        got = sess.run(feeds)
        for i in range(n_out):
            assert got[f"out{i}"].shape == want[i].shape
            np.testing.assert_allclose(
                got[f"out{i}"], want[i], rtol=1e-5, atol=1e-5, err_msg=f"{op} output {i} {attrs}"
            )


MODES = [
    {},
    {"direction": "reverse"},
    {"direction": "bidirectional"},
    {"layout": 1},
    {"layout": 1, "direction": "bidirectional"},
    {"clip": 0.4},
]


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("attrs", MODES, ids=lambda a: "-".join(f"{k}={v}" for k, v in a.items()) or "default")
@pytest.mark.parametrize("seq,batch,hidden", [(1, 1, 7), (5, 3, 33), (5, 1, 16)])
@pytest.mark.parametrize("threads", [1, 2])
def test_modes(rng, op, attrs, seq, batch, hidden, threads):
    _check(op, _inputs(rng, op, seq, batch, 5, hidden, attrs), {"hidden_size": hidden, **attrs}, threads)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("attrs", MODES[:5], ids=lambda a: "-".join(f"{k}={v}" for k, v in a.items()) or "default")
@pytest.mark.parametrize("threads", [1, 2])
def test_lengths_and_states(rng, op, attrs, threads):
    """Unequal sequence_lens (a 0 among them, maybe), initial states and (LSTM) peepholes."""
    ins = _inputs(rng, op, 5, 3, 4, 7, attrs, lens=True, states=True, peep=True)
    ins[4] = np.array([5, 2, 0], np.int32)
    _check(op, ins, {"hidden_size": 7, **attrs}, threads)
    ins[4] = np.array([3, 5, 1], np.int64)
    _check(op, ins, {"hidden_size": 7, **attrs}, threads)


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_linear_before_reset(rng, lbr, direction):
    attrs = {"hidden_size": 9, "linear_before_reset": lbr, "direction": direction}
    ins = _inputs(rng, "GRU", 4, 3, 6, 9, attrs, lens=True, states=True)
    _check("GRU", ins, attrs, 2)


@pytest.mark.parametrize("peep", [False, True])
def test_lstm_input_forget(rng, peep):
    attrs = {"hidden_size": 7, "input_forget": 1, "direction": "bidirectional", "clip": 1.5}
    _check("LSTM", _inputs(rng, "LSTM", 4, 3, 5, 7, attrs, states=True, peep=peep), attrs, 1)


ACTIVATIONS = [
    ("RNN", "Relu", [], []),
    ("RNN", "Affine", [0.5], [0.2]),
    ("RNN", "ScaledTanh", [1.3], [0.7]),
    ("RNN", "LeakyRelu", [0.1], []),
    ("RNN", "ThresholdedRelu", [0.2], []),
    ("RNN", "Elu", [0.8], []),
    ("RNN", "Softsign", [], []),
    ("RNN", "Softplus", [], []),
    ("GRU", "HardSigmoid,Tanh", [0.3], [0.4]),
    ("GRU", "Sigmoid,Relu", [], []),
    ("LSTM", "Sigmoid,Relu,Tanh", [], []),
    ("LSTM", "HardSigmoid,Tanh,Relu", [0.25], [0.45]),
]


@pytest.mark.parametrize("op,names,alpha,beta", ACTIVATIONS)
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_activations(rng, op, names, alpha, beta, direction):
    attrs = {
        "hidden_size": 6,
        "activation_names": names,
        "activation_alpha": alpha,
        "activation_beta": beta,
        "direction": direction,
    }
    _check(op, _inputs(rng, op, 4, 3, 5, 6, attrs, lens=True), attrs, 2)


def test_bidirectional_activations_per_direction(rng):
    attrs = {"hidden_size": 5, "direction": "bidirectional", "activation_names": "Sigmoid,Tanh,Sigmoid,Relu"}
    _check("GRU", _inputs(rng, "GRU", 4, 2, 3, 5, attrs), attrs, 2)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("n_out", [1, 2])
def test_fewer_outputs(rng, op, n_out):
    attrs = {"hidden_size": 7, "direction": "bidirectional"}
    _check(op, _inputs(rng, op, 4, 3, 5, 7, attrs, lens=True), attrs, 1, n_out=n_out)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_weights_at_run(rng, op):
    """W, R, B (and P) fed as graph inputs, not constants: copied at every run."""
    attrs = (
        {"hidden_size": 7, "direction": "bidirectional", "linear_before_reset": 1}
        if op == "GRU"
        else {"hidden_size": 7, "direction": "bidirectional"}
    )
    ins = _inputs(rng, op, 4, 3, 5, 7, attrs, lens=True, states=True, peep=True)
    _check(op, ins, attrs, 2, constant=())


@pytest.mark.parametrize("op,extra", [("LSTM", {}), ("GRU", {}), ("GRU", {"linear_before_reset": 1})])
@pytest.mark.parametrize("hidden", [64, 70, 130])
def test_large_hidden(rng, op, extra, hidden):
    """Hidden sizes of one or more whole 64-column panels of R^T and ones that leave a partial panel per gate."""
    attrs = {"hidden_size": hidden, "direction": "bidirectional", **extra}
    ins = _inputs(rng, op, 6, 2, 20, hidden, attrs, lens=True, states=True, peep=op == "LSTM")
    ins[2] *= np.float32((16 / hidden) ** 0.5)  # R at a trained layer's scale: the gates' sums stay O(1)
    _check(op, ins, attrs, 2)


@pytest.mark.parametrize("op,extra", [("RNN", {}), ("GRU", {}), ("GRU", {"linear_before_reset": 1}), ("LSTM", {})])
@pytest.mark.parametrize("batch,hidden", [(4, 8), (5, 33), (9, 40), (6, 100), (8, 70), (13, 64)])
@pytest.mark.parametrize("threads", [1, 2])
def test_row_groups(rng, op, extra, batch, hidden, threads):
    """Batches that run eight (AVX-512) or four rows a GEMM (x86_rnn_gemm) with rows and columns left over,
    unequal lengths."""
    attrs = {"hidden_size": hidden, "direction": "bidirectional", **extra}
    ins = _inputs(rng, op, 5, batch, 6, hidden, attrs, lens=True, states=True, peep=True)
    _check(op, ins, attrs, threads)
