"""Neural-network layers and models with PyTorch's names.

    from mnn_core import nn
    model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(864, 10))
    logits = model(x)
    mnn_core.save(model, "model.mnn")          # through model.to_graph()
"""

from __future__ import annotations

from . import functional, init, utils
from .attention import MultiheadAttention
from .conv import Conv1d, Conv3d, ConvTranspose2d
from .graph_module import GraphModule, from_graph
from .layers import (
                     GELU,
                     AdaptiveAvgPool2d,
                     AvgPool2d,
                     BatchNorm1d,
                     BatchNorm2d,
                     BCEWithLogitsLoss,
                     Conv2d,
                     CrossEntropyLoss,
                     Dropout,
                     Embedding,
                     Flatten,
                     Hardswish,
                     Identity,
                     L1Loss,
                     LayerNorm,
                     LeakyReLU,
                     Linear,
                     LogSoftmax,
                     MaxPool2d,
                     MSELoss,
                     NLLLoss,
                     ReLU,
                     ReLU6,
                     Sigmoid,
                     SiLU,
                     Softmax,
                     Tanh,
)
from .module import Module, ModuleList, Parameter, Sequential
from .more_layers import (
                     ELU,
                     GLU,
                     BCELoss,
                     CosineSimilarity,
                     GroupNorm,
                     Hardtanh,
                     HuberLoss,
                     InstanceNorm2d,
                     KLDivLoss,
                     Mish,
                     ModuleDict,
                     ParameterList,
                     PReLU,
                     SmoothL1Loss,
                     Softplus,
                     Softsign,
                     Unflatten,
                     ZeroPad2d,
)
from .pool1d import AdaptiveAvgPool1d, AvgPool1d, MaxPool1d
from .rnn import GRU, LSTM, RNN
from .transformer import TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
    "BatchNorm2d", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d", "CosineSimilarity", "CrossEntropyLoss", "Dropout",
    "ELU", "Embedding", "Flatten", "GELU", "GLU", "GRU", "GraphModule", "GroupNorm", "Hardswish", "Hardtanh",
    "HuberLoss", "Identity", "InstanceNorm2d", "KLDivLoss", "L1Loss", "LSTM", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MSELoss", "MaxPool1d", "MaxPool2d", "Mish", "Module", "ModuleDict", "ModuleList",
    "MultiheadAttention", "NLLLoss", "PReLU", "Parameter", "ParameterList", "RNN", "ReLU", "ReLU6", "Sequential",
    "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Softsign", "Tanh", "TransformerEncoder",
    "TransformerEncoderLayer", "Unflatten", "ZeroPad2d", "from_graph", "functional", "init", "utils",
]
