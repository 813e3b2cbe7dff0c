"""PyTorch's top-level namespace on mnn: change `torch` to `mnn_core.torch` in the import lines.

    import mnn_core.torch as torch                  # was: import torch
    import mnn_core.torch.nn as nn                  # was: import torch.nn as nn
    import mnn_core.torch.nn.functional as F
    from mnn_core.torch.utils.data import DataLoader, TensorDataset

    x = torch.from_numpy(batch).float()
    torch.save(model.state_dict(), "model.pt")     # npz inside, never pickle

This module is that namespace and nothing else: tensors are express Vars,
`torch.nn` is mnn_core.nn, `torch.optim` is mnn_core.optim, the ops are those
of express.functional / torch_ops. What it adds is the constructors
(`tensor`, `zeros`, `arange`, ...), dtypes, and `save`/`load`.
"""

from __future__ import annotations

import builtins
import sys
import types

import numpy as np

from .. import nn, optim
from ..errors import MnnError
from ..express import Var, enable_grad, is_grad_enabled, manual_seed, no_grad
from ..express import functional as _F
from ..express import torch_more as _M
from ..express import torch_ops as _T
from ..express.device import Device, device, set_default_device
from ..express.rng import generator
from ..nn import Parameter
from . import utils
from .serialization import load, save

Tensor = Var

# -- dtypes: numpy's, so `x.dtype == torch.float32` and `x.to(torch.long)` just work ----------------------------
float32 = float = np.float32  # noqa: A001
float64 = double = np.float64
float16 = half = np.float16
int64 = long = np.int64
int32 = int = np.int32  # noqa: A001
int16 = short = np.int16
int8 = np.int8
uint8 = np.uint8
bool = np.bool_  # noqa: A001
_DEFAULT_DTYPE = [np.float32]


def get_default_dtype():
    return _DEFAULT_DTYPE[0]


def set_default_dtype(dtype) -> None:
    if np.dtype(dtype).kind != "f":
        raise MnnError(f"set_default_dtype: the default dtype must be floating point, got {np.dtype(dtype)}")
    _DEFAULT_DTYPE[0] = np.dtype(dtype).type


# -- making tensors ---------------------------------------------------------------------------------------


def _shape(size) -> tuple:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def _new(arr: np.ndarray, dtype=None, requires_grad: builtins.bool = False, device=None) -> Var:
    v = Var(arr if dtype is None else arr.astype(dtype, copy=False), requires_grad=requires_grad)
    if device is not None:
        v._device = globals()["device"](device)
    return v


def tensor(data, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    """A new tensor holding a copy of `data`; Python floats become the default dtype, ints int64."""
    if isinstance(data, Var):
        data = data.numpy()
    elif isinstance(data, (list, tuple)) and data and builtins.all(isinstance(d, Var) for d in data):
        data = [d.numpy() for d in data]
    arr = np.array(data, dtype=dtype)
    if dtype is None and arr.dtype == np.float64 and not isinstance(data, np.ndarray):
        arr = arr.astype(get_default_dtype())
    elif dtype is None and arr.dtype.kind in "iu" and not isinstance(data, np.ndarray):
        arr = arr.astype(np.int64)
    return _new(arr, None, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Var:
    if isinstance(data, Var) and (dtype is None or np.dtype(dtype) == data.dtype):
        return data
    return from_numpy(data).to(dtype) if isinstance(data, np.ndarray) and dtype else tensor(data, dtype, device)


def from_numpy(array: np.ndarray) -> Var:
    """A tensor on the same memory as `array` (as in PyTorch: writes to one show in the other)."""
    if not isinstance(array, np.ndarray):
        raise MnnError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    return Var._wrap(array)


def is_tensor(obj) -> builtins.bool:
    return isinstance(obj, Var)


def numel(x: Var) -> builtins.int:
    return x.numel()


def _filled(fill, size, dtype, requires_grad, device) -> Var:
    return _new(np.full(_shape(size), fill, dtype or get_default_dtype()), None, requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    return _filled(0, size, dtype, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    return _filled(1, size, dtype, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    return _filled(0, size, dtype, requires_grad, device)


def full(size, fill_value, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    if dtype is None and isinstance(fill_value, (builtins.bool, builtins.int)) and not isinstance(fill_value, Var):
        dtype = np.bool_ if isinstance(fill_value, builtins.bool) else np.int64
    return _filled(fill_value, (size,), dtype, requires_grad, device)


def eye(n: builtins.int, m: builtins.int | None = None, dtype=None, device=None) -> Var:
    return _new(np.eye(n, m, dtype=dtype or get_default_dtype()), None, False, device)


def _like(x: Var, fill, dtype, requires_grad, device) -> Var:
    return _filled(fill, (x.shape,), dtype or x.dtype, requires_grad, device)


def zeros_like(x, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    return _like(x, 0, dtype, requires_grad, device)


def ones_like(x, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    return _like(x, 1, dtype, requires_grad, device)


def full_like(x, fill_value, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    return _like(x, fill_value, dtype, requires_grad, device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    """Integers give int64 (as in PyTorch), any float argument the default float dtype."""
    if end is None:
        start, end = 0, start
    ints = builtins.all(isinstance(v, (builtins.int, np.integer)) for v in (start, end, step))
    arr = np.arange(start, end, step, dtype=dtype or (np.int64 if ints else get_default_dtype()))
    return _new(arr, None, requires_grad, device)


def linspace(start, end, steps: builtins.int, dtype=None, device=None) -> Var:
    return _new(np.linspace(start, end, steps, dtype=dtype or get_default_dtype()), None, False, device)


# -- random tensors: the generator torch.manual_seed reseeds (mnn's own stream, not PyTorch's numbers) ---------


def rand(*size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    arr = generator().random(_shape(size), dtype=np.float64).astype(dtype or get_default_dtype())
    return _new(arr, None, requires_grad, device)


def randn(*size, dtype=None, device=None, requires_grad: builtins.bool = False) -> Var:
    arr = generator().standard_normal(_shape(size)).astype(dtype or get_default_dtype())
    return _new(arr, None, requires_grad, device)


def randint(low, high=None, size=None, dtype=None, device=None) -> Var:
    if high is None:
        low, high = 0, low
    if size is None:
        raise MnnError("randint needs size=, e.g. torch.randint(0, 10, (4,))")
    return _new(generator().integers(low, high, _shape((size,))).astype(dtype or np.int64), None, False, device)


def randperm(n: builtins.int, dtype=None, device=None) -> Var:
    return _new(generator().permutation(n).astype(dtype or np.int64), None, False, device)


def rand_like(x, dtype=None) -> Var:
    return rand(x.shape, dtype=dtype or x.dtype)


def randn_like(x, dtype=None) -> Var:
    return randn(x.shape, dtype=dtype or x.dtype)


class Generator:
    """torch.Generator: a seeded stream of its own, for DataLoader(generator=) and random_split."""

    def __init__(self, device=None):
        self._seed = builtins.int(np.random.SeedSequence().entropy % (2**63))
        self.rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: builtins.int) -> Generator:
        self._seed = builtins.int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> builtins.int:
        return self._seed


def seed() -> builtins.int:
    s = builtins.int(np.random.SeedSequence().entropy % (2**63))
    manual_seed(s)
    return s


# -- ops: the functional API, called as torch.cat, torch.relu, ... --------------------------------------------

cat = concat = concatenate = _F.cat
stack, split, chunk, flatten, squeeze, unsqueeze = _F.stack, _F.split, _F.chunk, _F.flatten, _F.squeeze, _F.unsqueeze
reshape, where, matmul, mm, bmm = _F.reshape, _F.where, _F.matmul, _F.matmul, _F.matmul
add, sub, mul, div, pow, maximum, minimum = _F.add, _F.sub, _F.mul, _F.div, _F.pow, _F.maximum, _F.minimum  # noqa: A001
exp, log, sqrt, abs, neg, sin, cos, erf = _F.exp, _F.log, _F.sqrt, _F.abs, _F.neg, _F.sin, _F.cos, _F.erf  # noqa: A001
relu, sigmoid, tanh, softmax, log_softmax = _F.relu, _F.sigmoid, _F.tanh, _F.softmax, _F.log_softmax
sum, mean, amax, amin, argmax, argmin = _F.sum, _F.mean, _F.amax, _F.amin, _F.argmax, _F.argmin  # noqa: A001
clamp = clip = _T.clamp
var, std, norm, logsumexp, masked_fill = _T.var, _T.std, _T.norm, _T.logsumexp, _T.masked_fill
gather, index_select, topk, sort, argsort, flip = _M.gather, _M.index_select, _M.topk, _M.sort, _M.argsort, _M.flip
cumsum, all, any, isnan, isinf, isfinite = _M.cumsum, _M.all, _M.any, _M.isnan, _M.isinf, _M.isfinite  # noqa: A001
floor, ceil, round, sign, rsqrt, square, reciprocal = (
    _M.floor,
    _M.ceil,
    _M.round,
    _M.sign,
    _M.rsqrt,
    _M.square,
    _M.reciprocal,
)  # noqa: A001,E501
prod, outer, unbind, remainder, floor_divide = _M.prod, _M.outer, _M.unbind, _M.remainder, _M.floor_divide
nonzero, multinomial = _M.nonzero, _M.multinomial
Size = tuple  # x.size() and x.shape are tuples


def _typed(dtype):
    def make(*data):
        """torch.FloatTensor([1, 2]) (data) or torch.FloatTensor(2, 3) (a shape, zero-filled here)."""
        if data and builtins.all(isinstance(d, (builtins.int, np.integer)) for d in data):
            return zeros(*data, dtype=dtype)
        return tensor(data[0] if data else [], dtype=dtype)

    return make


FloatTensor, DoubleTensor, LongTensor, IntTensor, BoolTensor = (
    _typed(np.float32),
    _typed(np.float64),
    _typed(np.int64),
    _typed(np.int32),
    _typed(np.bool_),
)


def transpose(x, dim0: builtins.int, dim1: builtins.int) -> Var:
    return x.transpose(dim0, dim1)


def permute(x, dims) -> Var:
    return x.permute(*dims)


def t(x) -> Var:
    return x.t()


def max(x, dim=None, keepdim: builtins.bool = False):  # noqa: A001
    """torch.max(x) (the largest element), torch.max(x, dim) -> (values, indices), torch.max(a, b) elementwise."""
    return _F.maximum(x, dim) if isinstance(dim, (Var, np.ndarray)) else x.max(dim, keepdim)


def min(x, dim=None, keepdim: builtins.bool = False):  # noqa: A001
    return _F.minimum(x, dim) if isinstance(dim, (Var, np.ndarray)) else x.min(dim, keepdim)


def triu(x, diagonal: builtins.int = 0) -> Var:
    """The upper triangle (masks such as a causal attention mask; no gradient flows through it)."""
    return Var(np.triu(np.asarray(x), diagonal))


def tril(x, diagonal: builtins.int = 0) -> Var:
    return Var(np.tril(np.asarray(x), diagonal))


def allclose(a, b, rtol: builtins.float = 1e-5, atol: builtins.float = 1e-8) -> builtins.bool:
    return builtins.bool(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol))


def equal(a, b) -> builtins.bool:
    return builtins.bool(np.array_equal(np.asarray(a), np.asarray(b)))


def inference_mode(mode: builtins.bool = True):
    return no_grad() if mode else enable_grad()


def set_grad_enabled(mode: builtins.bool):
    return enable_grad() if mode else no_grad()


def set_num_threads(n: builtins.int) -> None:
    """Threads of the host backends' kernels (MNN_NUM_THREADS), as torch.set_num_threads."""
    from ..express.dispatch import set_num_threads as _set

    _set(n)


def compile(model=None, *, fullgraph: builtins.bool = False, dynamic=None, backend=None, mode=None, options=None):  # noqa: A001
    """torch.compile(model): its forward traced per input shape and run as a planned Session
    (mnn_core.train.forward.CompiledModule). torch's `backend`, `mode` and `options` name its own
    compilers and are accepted and ignored; mnn's backend follows model.to(device). Used as a
    decorator on a function, the function is returned as it is."""
    if model is None:
        return lambda fn: compile(fn)
    if not hasattr(model, "named_parameters"):
        return model  # a plain function: its ops already run on the backend's kernels
    from ..train.forward import CompiledModule

    return CompiledModule(model)


#: torch.backends: the flags scripts set for cuDNN and friends; settable, and nothing reads them
backends = types.SimpleNamespace(
    cudnn=types.SimpleNamespace(deterministic=False, benchmark=False, enabled=True),
    mps=types.SimpleNamespace(is_available=lambda: False),
)


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted for PyTorch's sake: mnn's float32 GEMMs always run in float32."""


#: torch.cuda: mnn has no CUDA backend (GPUs run through device("vulkan") or "opencl")
cuda = types.SimpleNamespace(
    is_available=lambda: False, device_count=lambda: 0, manual_seed=lambda s: None, manual_seed_all=lambda s: None
)

# `import mnn_core.torch.nn.functional as F` and `from mnn_core.torch.optim import lr_scheduler` resolve
# through sys.modules to mnn's own modules: the torch namespace has no copies of them
for _name, _mod in {
    "nn": nn,
    "nn.functional": nn.functional,
    "nn.init": nn.init,
    "nn.utils": nn.utils,
    "optim": optim,
    "optim.lr_scheduler": optim.lr_scheduler,
}.items():
    sys.modules.setdefault(f"{__name__}.{_name}", _mod)
del _name, _mod

__all__ = [
    "Device",
    "Parameter",
    "Tensor",
    "allclose",
    "arange",
    "as_tensor",
    "cat",
    "device",
    "empty",
    "enable_grad",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "is_grad_enabled",
    "is_tensor",
    "linspace",
    "load",
    "manual_seed",
    "nn",
    "no_grad",
    "ones",
    "ones_like",
    "optim",
    "rand",
    "randint",
    "randn",
    "randperm",
    "save",
    "set_default_device",
    "stack",
    "tensor",
    "utils",
    "zeros",
    "zeros_like",
]
