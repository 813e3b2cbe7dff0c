"""Quantization-aware training: fake-quant modules that train with mnn_core.nn/optim and convert to int8.

prepare_qat(model) replaces, in every Sequential, the runs Conv2d [BatchNorm2d] [ReLU | ReLU6] and
Linear [ReLU | ReLU6] with one QATLayer (the others become Identity); a Conv2d or Linear elsewhere
becomes a QATLayer on its own. A QATLayer, in eager mode:

- folds the batch norm into the convolution's weight and bias (w * gamma / sigma, with the running
  statistics frozen at prepare time: QAT fine-tunes a trained float model),
- fake-quantizes its input and its (activated) output to uint8 with ranges tracked as moving averages
  of the batch min/max while training (frozen in eval mode), and its weight to per-channel int8,
- passes gradients straight through the rounding (straight-through estimator): d fq(w) / dw = 1, and for
  activations 1 inside the representable range, 0 where the value saturated.

The rounding is the int8 model's own (params.py), so a QAT model in eval mode computes what
convert() makes of it, up to the int32 bias rounding. convert(model, shapes) traces the float
computation and quantizes it with the learned ranges: the same int8 .mnn format as PTQ.
"""

from __future__ import annotations

import copy

import numpy as np

from ..errors import MnnError
from ..express import functional as F
from ..express.var import Var
from ..nn.layers import BatchNorm2d, Conv2d, Identity, Linear, ReLU, ReLU6
from ..nn.module import Module, Parameter, Sequential
from .params import fake_quant_activation, fake_quant_weight


class RangeEMA:
    """A moving-average min/max: the first batch sets it, later ones move it by `momentum`."""

    def __init__(self, momentum: float = 0.01):
        self.momentum = momentum
        self.lo = self.hi = None

    def update(self, x: np.ndarray) -> None:
        lo, hi = float(x.min()), float(x.max())
        if self.lo is None:
            self.lo, self.hi = lo, hi
        else:
            m = self.momentum
            self.lo, self.hi = (1 - m) * self.lo + m * lo, (1 - m) * self.hi + m * hi

    @property
    def range(self) -> tuple[float, float]:
        if self.lo is None:
            raise MnnError(
                "a QAT layer has no activation range yet: run some training batches (model.train()) "
                "through the prepared model before evaluating or converting it"
            )
        return self.lo, self.hi


def _ste(x: Var, values: np.ndarray, mask: np.ndarray | None = None) -> Var:
    """`values` forward; gradient 1 (or `mask`) backward: x * mask + (values - x * mask) as a constant."""
    if mask is None:
        return x + Var(values - x.numpy())
    return x * Var(mask) + Var(values - x.numpy() * mask)


class QATLayer(Module):
    """A Conv2d or Linear (with a folded BatchNorm2d and a ReLU/ReLU6) under fake quantization."""

    def __init__(
        self,
        layer: Conv2d | Linear,
        bn: BatchNorm2d | None = None,
        act: Module | None = None,
        per_channel: bool = True,
        momentum: float = 0.01,
    ):
        super().__init__()
        self.kind = "conv" if isinstance(layer, Conv2d) else "linear"
        w = layer.weight.numpy().astype(np.float32)
        b = layer.bias.numpy().astype(np.float32) if layer.bias is not None else np.zeros(w.shape[0], np.float32)
        if bn is not None:
            if bn.running_mean is None:
                raise MnnError("prepare_qat folds a BatchNorm2d with running statistics; this one has none")
            gamma = bn.weight.numpy() if bn.weight is not None else np.ones(w.shape[0], np.float32)
            beta = bn.bias.numpy() if bn.bias is not None else np.zeros(w.shape[0], np.float32)
            k = gamma / np.sqrt(bn.running_var.numpy() + bn.eps)
            w = w * k.reshape((-1,) + (1,) * (w.ndim - 1))
            b = (b - bn.running_mean.numpy()) * k + beta
        self.weight = Parameter(w.astype(np.float32))
        self.bias = Parameter(b.astype(np.float32))
        if self.kind == "conv":
            self.conv_args = (layer.stride, layer.padding, layer.dilation, layer.groups)
        self.act = "relu" if isinstance(act, ReLU) else "relu6" if isinstance(act, ReLU6) else None
        self.per_channel = per_channel
        self.in_range, self.out_range = RangeEMA(momentum), RangeEMA(momentum)
        self.traced: tuple[str, str] | None = None  # (input value, output value) of the last lazy trace

    def _float(self, x, w):
        y = F.conv2d(x, w, self.bias, *self.conv_args) if self.kind == "conv" else F.linear(x, w, self.bias)
        if self.act == "relu":
            y = F.relu(y)
        elif self.act == "relu6":
            y = F.relu6(y)
        return y

    def forward(self, x):
        if isinstance(x, Var) and x.is_lazy:  # tracing for export/convert: the float computation
            y = self._float(x, self.weight)
            self.traced = (x._value, y._value)
            return y
        x = x if isinstance(x, Var) else Var(np.asarray(x, np.float32))
        if self.training:
            self.in_range.update(x.numpy())
        x = _ste(x, *fake_quant_activation(x.numpy(), *self.in_range.range))
        w = _ste(self.weight, fake_quant_weight(self.weight.numpy(), self.per_channel))
        y = self._float(x, w)
        if self.training:
            self.out_range.update(y.numpy())
        lo, hi = self.out_range.range
        if self.act is not None:  # the int8 layer's range starts at 0, and ReLU6 saturates at 6
            lo, hi = 0.0, min(max(hi, 0.0), 6.0) if self.act == "relu6" else max(hi, 0.0)
        return _ste(y, *fake_quant_activation(y.numpy(), lo, hi))

    def extra_repr(self) -> str:
        return f"{self.kind}, weight={tuple(self.weight.shape)}, act={self.act}, per_channel={self.per_channel}"


def _fuse_sequential(seq: Sequential, per_channel: bool, momentum: float) -> None:
    mods = list(seq)
    i = 0
    while i < len(mods):
        m = mods[i]
        if isinstance(m, (Conv2d, Linear)):
            j, bn, act = i + 1, None, None
            if isinstance(m, Conv2d) and j < len(mods) and isinstance(mods[j], BatchNorm2d):
                bn, j = mods[j], j + 1
            if j < len(mods) and isinstance(mods[j], (ReLU, ReLU6)):
                act, j = mods[j], j + 1
            seq[i] = QATLayer(m, bn, act, per_channel, momentum)
            for k in range(i + 1, j):
                seq[k] = Identity()
            i = j
        else:
            i += 1


def prepare_qat(model: Module, per_channel: bool = True, momentum: float = 0.01, inplace: bool = False) -> Module:
    """The model with fake quantization inserted (a copy unless inplace); train it as usual."""
    if not isinstance(model, Module):
        raise MnnError(f"prepare_qat takes an mnn_core.nn.Module, got {type(model).__name__}")
    model = model if inplace else copy.deepcopy(model)
    _prepare(model, per_channel, momentum)
    if not any(isinstance(m, QATLayer) for m in model.modules()):
        raise MnnError("prepare_qat found no Conv2d or Linear layer to quantize")
    return model.train()


def _prepare(module: Module, per_channel: bool, momentum: float) -> None:
    if isinstance(module, Sequential):
        _fuse_sequential(module, per_channel, momentum)
    for name, child in list(module.named_children()):
        if isinstance(child, (Conv2d, Linear)):
            setattr(module, name, QATLayer(child, None, None, per_channel, momentum))
        elif not isinstance(child, QATLayer):
            _prepare(child, per_channel, momentum)


def convert(model: Module, example_input_shapes, calibration=None, report_batches: int = 4):
    """The int8 model (a QuantResult, as quantize() returns) of a QAT-trained model.

    The float graph is traced from the model and quantized with the ranges the QAT layers learned;
    `calibration` (optional, samples keyed by input name) only feeds the per-layer error report."""
    from .ptq import quantize

    layers = [m for m in model.modules() if isinstance(m, QATLayer)]
    if not layers:
        raise MnnError("convert takes a model from prepare_qat (it has no QAT layers)")
    graph = model.to_graph(example_input_shapes)
    values = set(graph.inputs) | {o for n in graph.nodes for o in n.outputs}
    ranges = {}
    for layer in layers:
        if layer.traced is None:
            raise MnnError("a QAT layer was not reached when tracing the model; convert needs every layer used")
        x, y = layer.traced
        if y not in values:  # the model's output: to_graph renamed it
            y = graph.outputs[0]
        ranges.setdefault(x, layer.in_range.range)
        lo, hi = layer.out_range.range
        if layer.act is not None:
            lo, hi = 0.0, min(max(hi, 0.0), 6.0) if layer.act == "relu6" else max(hi, 0.0)
        ranges[y] = (lo, hi)
    return quantize(graph, calibration, ranges=ranges, report_batches=report_batches)
