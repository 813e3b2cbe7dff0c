"""DynamicQuantizeLSTM on Arm (ops_qlstm.py, csrc/qlstm.c) against the reference (mnn_core/ops/rnn_quant.py):
every direction, int8 and uint8 weights, scales per direction and per column, batches of 1 and past the int8
tile's 8 rows, inputs and 4H that end mid-word and mid-panel, zero points at the types' ends, X all positive,
all negative or all zero, initial states given or not, peepholes and clip; 1 and 3 threads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core.ops import run_reference
from mnn_core.testing.conformance import one_node_graph

RANGES = {"uint8": (0, 256), "int8": (-128, 128)}
CONSTANT = (1, 2, 3, 7, 8, 9, 10, 11)


def _weights(rng, dtype, extreme, *shape):
    """Random bytes; `extreme`: half of them at the type's ends (the GEMM's widest products)."""
    lo, hi = RANGES[dtype]
    q = rng.integers(lo, hi, shape).astype(dtype)
    if extreme:
        ends = rng.integers(0, 2, shape).astype(bool)
        q[ends] = np.where(rng.integers(0, 2, int(ends.sum())), hi - 1, lo).astype(dtype)
    return q


def _inputs(rng, seq, batch, size, hidden, dirs, dtype, per_column, zp, x_range, states, peep, extreme=False):
    cols = 4 * hidden if per_column else 1
    ins = [
        rng.uniform(*x_range, (seq, batch, size)).astype(np.float32),
        _weights(rng, dtype, extreme, dirs, size, 4 * hidden),
        _weights(rng, dtype, extreme, dirs, hidden, 4 * hidden),
        rng.uniform(-0.5, 0.5, (dirs, 8 * hidden)).astype(np.float32),
        None,
    ]
    ins += [rng.uniform(-1, 1, (dirs, batch, hidden)).astype(np.float32) for _ in range(2)] if states else [None, None]
    ins.append(rng.uniform(-0.5, 0.5, (dirs, 3 * hidden)).astype(np.float32) if peep else None)
    for _ in range(2):
        scale = rng.uniform(0.0005, 0.004, (dirs, cols)).astype(np.float32)
        zps = np.full((dirs, cols), zp, dtype)
        ins += [scale, zps] if per_column else [scale[:, 0], zps[:, 0]]
    return ins


def check(ins, attrs, threads):
    from mnn_core.session import Session

    graph, feeds = one_node_graph("DynamicQuantizeLSTM", ins, attrs, CONSTANT, outputs=("y", "y_h", "y_c"))
    sess = Session(graph, backend="arm", fallback=False, optimize=False, threads=threads)
    want = run_reference("DynamicQuantizeLSTM", list(ins), attrs)
    for _ in range(2):  # the second run starts again from the initial states
        got = sess.run(feeds)
        for name, w in zip(("y", "y_h", "y_c"), want):
            # the reference's float32 gate inputs and float64 gate math (libm's exp and tanh against numpy's: an
            # ulp of float64 at most, which float32 outputs do not see)
            np.testing.assert_allclose(got[name], w, rtol=1e-6, atol=1e-7, err_msg=f"{name} {attrs} {ins[0].shape}")


@needs_arm
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize(
    "dtype,per_column,zp", [("int8", False, 0), ("int8", True, 0), ("uint8", False, 131), ("uint8", True, 97)]
)
def test_dq_lstm(direction, dtype, per_column, zp):
    rng = np.random.default_rng(len(direction) * 7 + len(dtype) + zp)
    dirs = 2 if direction == "bidirectional" else 1
    for seq, batch, size, hidden, states, peep, threads in [
        (5, 1, 7, 9, True, False, 1),
        (3, 3, 40, 33, False, True, 3),
        (1, 9, 3, 4, True, True, 1),
    ]:
        ins = _inputs(rng, seq, batch, size, hidden, dirs, dtype, per_column, zp, (-2, 2), states, peep)
        check(ins, {"hidden_size": hidden, "direction": direction}, threads)


@needs_arm
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_dq_lstm_extremes(direction):
    """Weights at the types' ends with zero points at the ends too, X all positive (its zero point 0), all
    negative (255) or all zero (scale 1), 4H that ends mid-panel or spans several."""
    rng = np.random.default_rng(3)
    dirs = 2 if direction == "bidirectional" else 1
    for seq, batch, size, hidden, dtype, zp, x_range in [
        (3, 1, 13, 17, "uint8", 0, (-2, 2)),
        (2, 7, 5, 33, "uint8", 255, (0.1, 2)),
        (4, 1, 70, 70, "int8", -128, (-2, -0.1)),
        (2, 2, 3, 130, "int8", 127, (-2, 2)),
        (3, 1, 9, 5, "uint8", 128, (0, 0)),
    ]:
        ins = _inputs(rng, seq, batch, size, hidden, dirs, dtype, False, zp, x_range, True, False, extreme=True)
        check(ins, {"hidden_size": hidden, "direction": direction}, 2)


@needs_arm
def test_dq_lstm_clip_input_forget():
    rng = np.random.default_rng(11)
    ins = _inputs(rng, 4, 2, 6, 11, 2, "int8", True, 0, (-2, 2), True, True)
    check(ins, {"hidden_size": 11, "direction": "bidirectional", "clip": 0.7, "input_forget": 1}, 1)
