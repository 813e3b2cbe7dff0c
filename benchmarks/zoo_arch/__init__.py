"""The architecture zoo: common model families written here as torch modules with seeded random
weights, exported to ONNX by torch's two exporters (export.py) and checked against ONNX Runtime
(check.py). `python benchmarks/zoo_models.py` is the command line; benchmarks/bench_zoo.py times them.

Each Arch builds its module from keyword arguments (`size`, the benchmark's; `small`, a size that
exports and runs in seconds, for tests) and makes its inputs for a batch from the same arguments.
Weights come from torch.manual_seed(crc32(name)); norm layers then get statistics and scales away
from their identity initialization (and ConvNeXt's layer scale away from 1e-6), so that every
layer changes what an engine computes, as a trained model's do.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mnn_core.zoo.corpus import Feed


@dataclass(frozen=True)
class Arch:
    name: str
    family: str
    make: Callable[..., object]  # (**size) -> torch.nn.Module
    inputs: Callable[..., dict[str, Feed]]  # (batch, **size) -> {input name: Feed}
    outputs: tuple[str, ...]
    size: dict = field(default_factory=dict)
    small: dict = field(default_factory=dict)
    ops: str = ""  # what it exercises in an engine, for the docs

    def kwargs(self, small: bool = False) -> dict:
        return dict(self.small if small else self.size)

    def module(self, small: bool = False):
        """The module in eval mode, its weights fixed by the name's seed."""
        import torch

        torch.manual_seed(zlib.crc32(self.name.encode()))
        m = self.make(**self.kwargs(small))
        _trained_like(m)
        return m.eval()

    def feeds(self, batch: int, small: bool = False) -> dict[str, Feed]:
        return self.inputs(batch, **self.kwargs(small))

    def make_feeds(self, batch: int = 1, small: bool = False) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return {name: feed.make(rng) for name, feed in self.feeds(batch, small).items()}


def _trained_like(module) -> None:
    import torch
    from torch import nn

    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.1)
        for name, p in module.named_parameters():
            if name.endswith("gamma"):  # ConvNeXt's layer scale
                p.uniform_(0.1, 0.5)


def _image(batch: int, image: int, **_) -> dict[str, Feed]:
    return {"image": Feed((batch, 3, image, image))}


def _tokens(vocab: int, seq: int, mask: bool = False):
    def inputs(batch: int, **_) -> dict[str, Feed]:
        ids = {"input_ids": Feed((batch, seq), "int64", low=1000 if vocab > 2000 else 1, high=vocab, integers=True)}
        return {**ids, "attention_mask": Feed((batch, seq), "int64", fill=1)} if mask else ids

    return inputs


class _Lazy:
    """A module of architectures imported when a model is built: making inputs (the benchmark's
    workers) must not import torch."""

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attr: str):
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{self.name}"), attr)


def _registry() -> dict[str, Arch]:
    v, s = _Lazy("vision"), _Lazy("sequence")
    arches = [
        Arch(
            "mobilenet-v3",
            "classification (MobileNetV3-Large)",
            lambda image: v.MobileNetV3(),
            _image,
            ("logits",),
            {"image": 224},
            {"image": 64},
            "depthwise Conv, HardSwish, HardSigmoid, squeeze-excite",
        ),
        Arch(
            "resnet-50",
            "classification (ResNet-50)",
            lambda image: v.ResNet50(),
            _image,
            ("logits",),
            {"image": 224},
            {"image": 64},
            "Conv 1x1/3x3/7x7, MaxPool, residual Add, Gemm",
        ),
        Arch(
            "efficientnet-b0",
            "classification (EfficientNet-B0)",
            lambda image: v.EfficientNetB0(),
            _image,
            ("logits",),
            {"image": 224},
            {"image": 64},
            "MBConv, SiLU (Sigmoid*Mul), squeeze-excite",
        ),
        Arch(
            "convnext-t",
            "classification (ConvNeXt-T)",
            lambda image: v.ConvNeXtT(),
            _image,
            ("logits",),
            {"image": 224},
            {"image": 64},
            "7x7 depthwise Conv, Transpose, LayerNorm, GELU, layer scale",
        ),
        Arch(
            "vit-s16",
            "classification (ViT-S/16)",
            lambda image: v.ViT(image),
            _image,
            ("logits",),
            {"image": 224},
            {"image": 64},
            "patch Conv, Concat of the class token, attention (MatMul, Softmax), LayerNorm, GELU",
        ),
        Arch(
            "bert-base",
            "text encoder (BERT-base, sequence 128)",
            lambda vocab, seq, layers: s.Bert(vocab, layers=layers),
            lambda b, vocab, seq, layers: _tokens(vocab, seq, mask=True)(b),
            ("last_hidden_state", "pooler_output"),
            {"vocab": 30522, "seq": 128, "layers": 12},
            {"vocab": 1000, "seq": 16, "layers": 2},
            "Gather embeddings, 12 heads of attention with an additive mask, erf GELU, LayerNorm, Tanh",
        ),
        Arch(
            "whisper-encoder",
            "speech (Whisper-tiny audio encoder)",
            lambda frames: s.WhisperEncoder(frames=frames),
            lambda b, frames: {"mel": Feed((b, 80, frames), low=-1)},
            ("features",),
            {"frames": 3000},
            {"frames": 200},
            "Conv1d, GELU, attention over 1500 frames",
        ),
        Arch(
            "gru-tagger",
            "sequence tagger (bidirectional 2-layer GRU)",
            lambda vocab, seq, hidden: s.Tagger("gru", vocab, hidden // 2, hidden),
            lambda b, vocab, seq, hidden: _tokens(vocab, seq)(b),
            ("tags",),
            {"vocab": 20000, "seq": 64, "hidden": 256},
            {"vocab": 500, "seq": 12, "hidden": 16},
            "Gather, GRU (bidirectional, stacked), MatMul",
        ),
        Arch(
            "lstm-tagger",
            "sequence tagger (bidirectional 2-layer LSTM)",
            lambda vocab, seq, hidden: s.Tagger("lstm", vocab, hidden // 2, hidden),
            lambda b, vocab, seq, hidden: _tokens(vocab, seq)(b),
            ("tags",),
            {"vocab": 20000, "seq": 64, "hidden": 256},
            {"vocab": 500, "seq": 12, "hidden": 16},
            "Gather, LSTM (bidirectional, stacked), MatMul",
        ),
        Arch(
            "yolov8n",
            "detection (YOLOv8n, 320x320)",
            lambda image: v.YOLOv8n(image),
            _image,
            ("detections",),
            {"image": 320},
            {"image": 64},
            "C2f (Split, Concat), SiLU, MaxPool, nearest Resize, DFL Softmax",
        ),
        Arch(
            "unet",
            "segmentation (U-Net, ConvTranspose up)",
            lambda image, base: v.UNet(base),
            _image,
            ("mask",),
            {"image": 256, "base": 16},
            {"image": 32, "base": 4},
            "Conv, MaxPool, ConvTranspose, Concat",
        ),
    ]
    return {a.name: a for a in arches}


ARCHES: dict[str, Arch] = _registry()
