"""Module and Parameter, with PyTorch's names and behaviour.

A Module owns Parameters (trainable Vars), buffers (state that is not
trained, such as batch-norm running statistics) and child Modules, found by
attribute assignment. `to_graph()` traces `forward` in lazy mode into an
inference Graph whose initializers are the parameters, named by their paths
("features.0.weight"), which is what `mnn_core.save(module, path)` writes.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import GraphError, MnnError
from ..express import Var, lazy, no_grad

#: what load_state_dict returns, as torch.nn.modules.module._IncompatibleKeys
IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Parameter(Var):
    """A trainable Var: owns a writable copy of its data; requires_grad by default."""

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True):
        arr = data.numpy() if isinstance(data, Var) else data
        arr = np.array(arr, dtype=None if isinstance(arr, np.ndarray) else np.float32, copy=True)
        super().__init__(arr, requires_grad=requires_grad)
        self._mutable = True

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


def _buffer(value: Any) -> Var:
    arr = value.numpy() if isinstance(value, Var) else np.asarray(value)
    v = Var(np.array(arr, copy=True))
    v._mutable = True
    return v


class Module:
    """Base class of layers and models: subclass it and define `forward`."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_example_inputs", None)

    # -- attributes ---------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise MnnError(f"{type(self).__name__}.__init__ must call super().__init__() before setting {name!r}")
        params, buffers, modules = self._parameters, self._buffers, self._modules
        if isinstance(value, (Parameter, Module)):
            for table in (params, buffers, modules, self.__dict__):
                table.pop(name, None)
            (params if isinstance(value, Parameter) else modules)[name] = value
        elif name in buffers:
            buffers[name] = None if value is None else _buffer(value)
        elif name in params and value is None:
            params[name] = None
        else:
            params.pop(name, None)
            modules.pop(name, None)
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        for table in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(table)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name: str, value: Any) -> None:
        self._buffers[name] = None if value is None else _buffer(value)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        self._modules[name] = module

    # -- calling ---------------------------------------------------------------------------

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        args = tuple(Var(a) if isinstance(a, np.ndarray) else a for a in args)
        shapes = [(a.shape, a.dtype.name) for a in args if isinstance(a, Var)]
        if shapes:
            object.__setattr__(self, "_example_inputs", shapes)
        return self.forward(*args, **kwargs)

    # -- traversal ---------------------------------------------------------------------------

    def named_modules(self, prefix: str = "", memo: set | None = None) -> Iterator[tuple[str, Module]]:
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(f"{prefix}.{name}" if prefix else name, memo)

    def modules(self) -> Iterator[Module]:
        return (m for _, m in self.named_modules())

    def named_children(self) -> Iterator[tuple[str, Module]]:
        return ((n, m) for n, m in self._modules.items() if m is not None)

    def children(self) -> Iterator[Module]:
        return (m for _, m in self.named_children())

    def _named(self, table: str, prefix: str, recurse: bool):
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for path, mod in mods:
            for name, v in getattr(mod, table).items():
                if v is None or id(v) in seen:
                    continue
                seen.add(id(v))
                yield (f"{path}.{name}" if path else name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Var]]:
        return self._named("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[Var]:
        return (b for _, b in self.named_buffers(recurse=recurse))

    def apply(self, fn) -> Module:
        for m in list(self.modules()):
            fn(m)
        return self

    # -- modes and gradients -------------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            p.grad = None

    def requires_grad_(self, flag: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad = flag
        return self

    # -- devices and dtypes ---------------------------------------------------------------------

    def to(self, *args, dtype=None, device=None, non_blocking: bool = False) -> Module:
        """to(device), to(dtype), to(device, dtype): parameters and buffers move (or convert) in place.

        Data stay in host memory; the device decides the backend that compiled modules and steps of this
        model run on (mnn_core.compile, train.compile_step)."""
        from ..express.device import Device
        from ..express.device import device as as_device

        for a in args:
            if isinstance(a, (str, Device)) and ":" not in str(a) and _is_dtype(a):
                dtype = a
            elif isinstance(a, (str, Device)):
                device = a
            else:
                dtype = a
        dev = None if device is None else as_device(device)
        for v in list(self.parameters()) + list(self.buffers()):
            if dtype is not None and v.dtype.kind == "f" and np.dtype(dtype) != v.dtype:
                if np.dtype(dtype).kind != "f":
                    raise MnnError(f"Module.to({dtype}): parameters convert to floating-point dtypes only")
                v._data = v._data.astype(dtype)
                v.grad = None
            if dev is not None:
                v._device = dev
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, device=None) -> Module:
        return self.to("cuda")  # raises, saying which devices mnn has

    def float(self) -> Module:
        return self.to(np.float32)

    def double(self) -> Module:
        return self.to(np.float64)

    def half(self) -> Module:
        return self.to(np.float16)

    # -- state ------------------------------------------------------------------------------------

    def state_dict(self) -> OrderedDict[str, np.ndarray]:
        """Copies of every parameter and buffer, by path."""
        out = OrderedDict((n, p.numpy().copy()) for n, p in self.named_parameters())
        out.update((n, b.numpy().copy()) for n, b in self.named_buffers())
        return out

    def load_state_dict(self, state: dict, strict: bool = True) -> IncompatibleKeys:
        """Copy arrays (numpy, Vars, or anything with .numpy(), e.g. torch tensors) into place.

        Returns (missing_keys, unexpected_keys), as PyTorch does; strict raises on either instead."""
        own = dict(self.named_parameters())
        own.update(self.named_buffers())
        state = {k: v for k, v in state.items() if not k.endswith("num_batches_tracked")}
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            raise MnnError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for name, value in state.items():
            if name not in own:
                continue
            arr = np.asarray(
                value.detach().cpu().numpy()
                if hasattr(value, "detach")
                else value.numpy()
                if isinstance(value, Var)
                else value
            )
            target = own[name]
            if arr.shape != target.shape:
                raise MnnError(f"load_state_dict: {name!r} has shape {arr.shape}, the module expects {target.shape}")
            np.copyto(target.data, arr, casting="same_kind")
        return IncompatibleKeys(missing, unexpected)

    # -- export ---------------------------------------------------------------------------------------

    def to_graph(
        self,
        example_input_shapes: Sequence | None = None,
        dtypes: Sequence[str] | None = None,
        dynamic_batch: bool = True,
        name: str | None = None,
    ):
        """Trace forward (eval mode) into an inference Graph; parameters become initializers.

        `example_input_shapes`: one shape per forward argument (default: those of the last call).
        With dynamic_batch, dim 0 of every input is the symbol "N" when the model allows it."""
        specs = self._input_specs(example_input_shapes, dtypes)
        if dynamic_batch:
            try:
                return self._trace_graph([(("N",) + tuple(s[1:]), d) for s, d in specs], name)
            except GraphError:
                pass  # something captured the batch size: fall back to the concrete shapes
        return self._trace_graph(specs, name)

    def _input_specs(self, shapes, dtypes):
        if shapes is None:
            if self._example_inputs is None:
                raise MnnError(
                    f"{type(self).__name__}.to_graph() needs example_input_shapes "
                    "(or call the module once, so it knows its inputs)"
                )
            return list(self._example_inputs)
        if shapes and isinstance(shapes[0], (int, np.integer, str)):
            shapes = [shapes]
        dtypes = list(dtypes) if dtypes is not None else ["float32"] * len(shapes)
        return [(tuple(s), d) for s, d in zip(shapes, dtypes)]

    def _trace_graph(self, specs, name):
        was_training = self.training
        self.eval()
        try:
            with no_grad(), lazy(name or type(self).__name__) as t:
                for path, p in self.named_parameters():
                    t.bind(p, name=path)
                for path, b in self.named_buffers():
                    t.bind(b, name=path)
                ins = [t.input("input" if len(specs) == 1 else f"input{i}", s, d) for i, (s, d) in enumerate(specs)]
                out = self.forward(*ins)
                outs = list(out) if isinstance(out, (tuple, list)) else [out]
                for i, o in enumerate(outs):
                    t.output(o, "output" if len(outs) == 1 else f"output{i}")
            return t.build()
        finally:
            self.train(was_training)

    # -- display ------------------------------------------------------------------------------------------

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"({n}): " + repr(m).replace("\n", "\n  ") for n, m in self.named_children()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + (")" if not lines else "\n  " + "\n  ".join(lines) + "\n)")


def module_backend(module: Module, default: str = "auto") -> str:
    """The backend of the device a module was moved to (`module.to(device)`), else `default`."""
    first = next(module.parameters(), None)
    dev = None if first is None else first._device
    return default if dev is None else dev.backend


def _is_dtype(value) -> bool:
    try:
        np.dtype(value)
    except TypeError:
        return False
    return True


class Sequential(Module):
    def __init__(self, *modules: Module):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i):
        mods = list(self._modules.values())
        return Sequential(*mods[i]) if isinstance(i, slice) else mods[i]

    def __setitem__(self, i: int, module: Module) -> None:
        key = list(self._modules)[i]
        self._modules[key] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self._modules)), module)
        return self


class ModuleList(Module):
    def __init__(self, modules: Sequence[Module] = ()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self._modules)), module)
        return self

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())
