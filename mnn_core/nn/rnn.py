"""Recurrent layers as torch.nn: RNN, LSTM and GRU, with PyTorch's parameters, gate order and shapes.

Where gradients are needed, each layer and direction projects the whole input
sequence with one matrix product, then steps through time with one small
product per step; the steps are ordinary express ops, so the layers train
(backpropagation through time by the tape). Where none are (inference, a
compiled or exported forward), each layer and direction is one ONNX LSTM / GRU /
RNN op, which a backend runs as one recurrent kernel: PyTorch's gate order is
rearranged into ONNX's on the way.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import MnnError
from ..express import Var
from ..express import functional as F
from ..express.var import apply, is_grad_enabled
from . import init
from .module import Module, Parameter

#: gates per cell: PyTorch's order is LSTM (i, f, g, o) and GRU (r, z, n)
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class _RNNBase(Module):
    mode = "LSTM"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
    ):
        super().__init__()
        name = type(self).__name__
        if num_layers < 1 or hidden_size < 1:
            raise MnnError(f"{name}: num_layers and hidden_size must be at least 1")
        if not 0.0 <= dropout < 1.0:
            raise MnnError(f"{name}: dropout must be in [0, 1), got {dropout}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, dropout, bidirectional
        gates = _GATES[self.mode] * hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            for suffix in ("", "_reverse")[: 2 if bidirectional else 1]:
                width = input_size if layer == 0 else hidden_size * (2 if bidirectional else 1)
                shapes = {"weight_ih": (gates, width), "weight_hh": (gates, hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gates,), bias_hh=(gates,))
                for kind, shape in shapes.items():
                    p = Parameter(np.empty(shape, np.float32))
                    init.uniform_(p, -bound, bound)
                    setattr(self, f"{kind}_l{layer}{suffix}", p)

    @property
    def _directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _weights(self, layer: int, reverse: bool):
        s = f"l{layer}{'_reverse' if reverse else ''}"
        get = self._parameters.get
        return get(f"weight_ih_{s}"), get(f"weight_hh_{s}"), get(f"bias_ih_{s}"), get(f"bias_hh_{s}")

    def forward(self, input, hx=None):
        x = input if isinstance(input, Var) else Var(np.asarray(input))
        batched = x.ndim == 3
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            raise MnnError(
                f"{type(self).__name__}: input must be (L, N, {self.input_size}) (or (N, L, ...) with "
                f"batch_first, or unbatched (L, {self.input_size})), got shape {x.shape}"
            )
        if not batched:
            x = F.unsqueeze(x, 1)
        elif self.batch_first:
            x = F.transpose(x, [1, 0, 2])
        n = x.shape[1]
        h0, c0 = self._initial_state(hx, n, batched, x)
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(self._directions):
                i = layer * self._directions + d
                c = c0[i] if c0 is not None else None
                seq, h, c = self._run(x, h0[i], c, layer, d == 1)
                outs.append(seq)
                hs.append(h)
                cs.append(c)
            x = outs[0] if len(outs) == 1 else F.cat(outs, dim=2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        out = x if not self.batch_first else F.transpose(x, [1, 0, 2])
        h_n = F.stack(hs, 0)
        c_n = F.stack(cs, 0) if self.mode == "LSTM" else None
        if not batched:
            out, h_n = F.squeeze(out, 1), F.squeeze(h_n, 1)
            c_n = None if c_n is None else F.squeeze(c_n, 1)
        return out, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def _initial_state(self, hx, n: int, batched: bool, like: Var):
        layers = self.num_layers * self._directions
        shape = (layers, n, self.hidden_size)
        zeros = Var(np.zeros(shape, like.dtype))
        if hx is None:
            return zeros, (zeros if self.mode == "LSTM" else None)
        h, c = hx if self.mode == "LSTM" else (hx, None)
        states = []
        for s in (h, c) if self.mode == "LSTM" else (h,):
            s = s if isinstance(s, Var) else Var(np.asarray(s))
            s = s if batched else F.unsqueeze(s, 1)
            if s.shape != shape:
                raise MnnError(f"{type(self).__name__}: initial state must have shape {shape}, got {s.shape}")
            states.append(s)
        return states[0], (states[1] if self.mode == "LSTM" else None)

    def _run(self, x: Var, h: Var, c: Var | None, layer: int, reverse: bool):
        """One layer in one direction over the sequence x (L, N, I): (outputs (L, N, H), h_n, c_n)."""
        weights = self._weights(layer, reverse)
        if not (is_grad_enabled() and any(v is not None and v.requires_grad for v in (x, h, c, *weights))):
            return self._run_fused(x, h, c, weights, reverse)
        w_ih, w_hh, b_ih, b_hh = weights
        length, n = x.shape[:2]
        proj = F.linear(F.reshape(x, [length * n, x.shape[2]]), w_ih, b_ih)  # every step's input part at once
        proj = F.reshape(proj, [length, n, proj.shape[-1]])
        outs = [None] * length
        for t in range(length - 1, -1, -1) if reverse else range(length):
            h, c = self._cell(proj[t], h, c, w_hh, b_hh)
            outs[t] = h
        return F.stack(outs, 0), h, c

    def _cell(self, xt: Var, h: Var, c: Var | None, w_hh: Var, b_hh: Var | None):
        raise NotImplementedError

    #: PyTorch's gate blocks in ONNX's order (LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h)
    _ONNX_GATES = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2)}

    def _run_fused(self, x: Var, h: Var, c: Var | None, weights: tuple, reverse: bool):
        """The same layer as one ONNX recurrent op (no gradient flows through it)."""
        op = "RNN" if self.mode.startswith("RNN") else self.mode
        order = self._ONNX_GATES.get(op, (0,))

        def onnx_gates(v: Var) -> Var:
            if len(order) == 1:
                return v
            blocks = F.chunk(v, len(order), dim=0)
            return F.cat([blocks[i] for i in order], dim=0)

        w_ih, w_hh, b_ih, b_hh = weights
        w, r = F.unsqueeze(onnx_gates(w_ih), 0), F.unsqueeze(onnx_gates(w_hh), 0)
        b = None if b_ih is None else F.unsqueeze(F.cat([onnx_gates(b_ih), onnx_gates(b_hh)], dim=0), 0)
        attrs = {"hidden_size": self.hidden_size, "direction": "reverse" if reverse else "forward"}
        if op == "GRU":
            attrs["linear_before_reset"] = 1  # PyTorch applies r to the hidden product, bias included
        if op == "RNN":
            attrs["activation_names"] = "Tanh" if self.mode == "RNN_TANH" else "Relu"
        states = [F.unsqueeze(h, 0)] + ([F.unsqueeze(c, 0)] if op == "LSTM" else [])
        outs = apply(op, x, w, r, b, None, *states, n_outputs=3 if op == "LSTM" else 2, **attrs)
        seq, h_n = F.squeeze(outs[0], 1), F.squeeze(outs[1], 0)
        return seq, h_n, (F.squeeze(outs[2], 0) if op == "LSTM" else None)

    def extra_repr(self) -> str:
        extra = ", batch_first=True" if self.batch_first else ""
        extra += ", bidirectional=True" if self.bidirectional else ""
        return f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}{extra}"


class LSTM(_RNNBase):
    """Returns (output, (h_n, c_n)); gates i, f, g, o."""

    mode = "LSTM"

    def _cell(self, xt, h, c, w_hh, b_hh):
        i, f, g, o = F.chunk(xt + F.linear(h, w_hh, b_hh), 4, dim=1)
        c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
        return F.sigmoid(o) * F.tanh(c), c


class GRU(_RNNBase):
    """Returns (output, h_n); gates r, z, n, with r applied after the hidden product (as PyTorch)."""

    mode = "GRU"

    def _cell(self, xt, h, c, w_hh, b_hh):
        xr, xz, xn = F.chunk(xt, 3, dim=1)
        hr, hz, hn = F.chunk(F.linear(h, w_hh, b_hh), 3, dim=1)
        r, z = F.sigmoid(xr + hr), F.sigmoid(xz + hz)
        new = F.tanh(xn + r * hn)
        return new + z * (h - new), None


class RNN(_RNNBase):
    """The Elman RNN: h' = tanh (or relu) of x W_ih^T + b_ih + h W_hh^T + b_hh; returns (output, h_n)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise MnnError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        object.__setattr__(self, "mode", "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional)
        self.nonlinearity = nonlinearity

    def _cell(self, xt, h, c, w_hh, b_hh):
        pre = xt + F.linear(h, w_hh, b_hh)
        return (F.tanh(pre) if self.nonlinearity == "tanh" else F.relu(pre)), None
