"""More of torch.nn: containers (ModuleDict, ParameterList), activations, normalizations (GroupNorm,
InstanceNorm), shape layers and losses, each a thin Module over an op or a functional that has its gradient."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..errors import MnnError
from ..express import Var, apply
from ..express import functional as F
from ..express import torch_ops as T
from .module import Module, Parameter

# -- containers ------------------------------------------------------------------------------------


class ModuleDict(Module):
    def __init__(self, modules: Mapping[str, Module] | None = None):
        super().__init__()
        for name, m in (modules or {}).items():
            self.add_module(name, m)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


class ParameterList(Module):
    def __init__(self, parameters: Iterable | None = None):
        super().__init__()
        for p in parameters or ():
            self.append(p)

    def append(self, p) -> ParameterList:
        self.register_parameter(str(len(self._parameters)), p if isinstance(p, Parameter) else Parameter(p))
        return self

    def __getitem__(self, i: int) -> Parameter:
        return list(self._parameters.values())[i]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())


# -- activations -----------------------------------------------------------------------------------


class ELU(Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return apply("Elu", x, alpha=float(self.alpha))


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        if beta != 1.0:
            raise MnnError("Softplus: only beta=1 is supported")
        self.threshold = threshold

    def forward(self, x):
        return F.where(x > self.threshold, x, F.softplus(x))  # linear above the threshold, as PyTorch


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x):
        return F.hardtanh(x, self.min_val, self.max_val)


class Mish(Module):
    def forward(self, x):
        return apply("Mish", x)


class Softsign(Module):
    def forward(self, x):
        return apply("Softsign", x)


class PReLU(Module):
    def __init__(self, num_parameters: int = 1, init: float = 0.25):
        super().__init__()
        self.weight = Parameter(np.full(num_parameters, init, np.float32))

    def forward(self, x):
        w = self.weight
        if x.ndim > 1 and w.shape[0] > 1:  # one slope per channel (dim 1)
            w = F.reshape(w, [w.shape[0]] + [1] * (x.ndim - 2))
        return apply("PRelu", x, w)


class GLU(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        a, b = F.chunk(x, 2, dim=self.dim)
        return a * F.sigmoid(b)


# -- normalization -----------------------------------------------------------------------------------


class GroupNorm(Module):
    """Channels in `num_groups` groups, each normalized over its channels and spatial cells."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
        super().__init__()
        if num_channels % num_groups:
            raise MnnError(f"GroupNorm: {num_channels} channels do not split into {num_groups} groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(np.ones(num_channels, np.float32))
            self.bias = Parameter(np.zeros(num_channels, np.float32))

    def forward(self, x):
        n = x.shape[0]
        flat = F.reshape(x, [n, self.num_groups, -1])
        y = F.reshape(apply("LayerNormalization", flat, axis=2, epsilon=self.eps), list(x.shape))
        if not self.affine:
            return y
        per = [self.num_channels] + [1] * (x.ndim - 2)
        return y * F.reshape(self.weight, per) + F.reshape(self.bias, per)


class InstanceNorm2d(Module):
    """Per-sample, per-channel normalization (no running statistics: track_running_stats=False)."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
    ):
        super().__init__()
        if track_running_stats:
            raise MnnError("InstanceNorm2d: track_running_stats=True is not supported")
        self.num_features, self.eps, self.affine = num_features, eps, affine
        if affine:
            self.weight = Parameter(np.ones(num_features, np.float32))
            self.bias = Parameter(np.zeros(num_features, np.float32))

    def forward(self, x):
        scale = self.weight if self.affine else Var(np.ones(self.num_features, x.dtype))
        bias = self.bias if self.affine else Var(np.zeros(self.num_features, x.dtype))
        return apply("InstanceNormalization", x, scale, bias, epsilon=self.eps)


# -- shape -----------------------------------------------------------------------------------------------


class Unflatten(Module):
    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x):
        d = self.dim % x.ndim
        return F.reshape(x, list(x.shape[:d]) + list(self.unflattened_size) + list(x.shape[d + 1 :]))


class ZeroPad2d(Module):
    def __init__(self, padding):
        super().__init__()
        self.padding = (padding,) * 4 if isinstance(padding, int) else tuple(padding)

    def forward(self, x):
        return F.pad(x, self.padding)


# -- losses ---------------------------------------------------------------------------------------------


def _loss(name: str, fn, **defaults):
    def __init__(self, reduction: str = "mean", **kwargs):
        Module.__init__(self)
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise MnnError(f"{name}: unknown arguments {sorted(unknown)}")
        self.reduction, self.options = reduction, {**defaults, **kwargs}

    def forward(self, input, target):
        return fn(input, target, reduction=self.reduction, **self.options)

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__doc__": f"{fn.__name__} as a Module"})


BCELoss = _loss("BCELoss", T.binary_cross_entropy)
SmoothL1Loss = _loss("SmoothL1Loss", T.smooth_l1_loss, beta=1.0)
HuberLoss = _loss("HuberLoss", T.huber_loss, delta=1.0)
KLDivLoss = _loss("KLDivLoss", T.kl_div, log_target=False)


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, a, b):
        return T.cosine_similarity(a, b, self.dim, self.eps)
