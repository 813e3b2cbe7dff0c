"""Optimizers: PyTorch's SGD, Adam and AdamW, each update one fused op per parameter.

`step()` applies the update eagerly from every parameter's `.grad`. A compiled
training step (mnn_core.train) calls `update(grads)` inside its trace instead:
the very same code then records the fused ops into the training graph, with
the learning rate and step count as per-run inputs, so schedulers keep working.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..errors import MnnError
from ..express import Var, apply, assign, no_grad


def _state_var(like: Var, name: str) -> Var:
    v = Var(np.zeros(like.shape, like.dtype), name=name)
    v._mutable = True
    return v


class Optimizer:
    def __init__(self, params: Iterable, defaults: dict):
        self.defaults = dict(defaults)
        params = list(params)
        if not params:
            raise MnnError(f"{type(self).__name__} got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups: list[dict] = []
        for g in groups:
            self.add_param_group(g)
        self.state: dict[int, dict] = {}

    def add_param_group(self, group: dict) -> None:
        group = {**self.defaults, **group, "params": list(group["params"])}
        for p in group["params"]:
            if not isinstance(p, Var) or p.dtype.kind != "f":
                raise MnnError(
                    f"{type(self).__name__}: parameters must be floating-point Vars (nn.Parameter), "
                    f"got {type(p).__name__}"
                )
        group.setdefault("initial_lr", group["lr"])
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def state_for(self, p: Var) -> dict:
        return self.state.setdefault(id(p), {"step": 0})

    def step(self) -> None:
        """Update every parameter that has a gradient (eager)."""
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state_for(p)
                    st["step"] += 1
                    self._update(p, p.grad, group, st, float(group["lr"]), lambda st=st: float(st["step"]))

    def update(self, grads: dict, trace) -> None:
        """Record the update of every parameter in `grads` ({id(param): grad Var}) into a trace."""
        for gi, group in enumerate(self.param_groups):
            lr = trace.feed(f"lr{gi}", lambda g=group: np.asarray(g["lr"], np.float32))
            for p in group["params"]:
                g = grads.get(id(p))
                if g is None:
                    continue
                st = self.state_for(p)
                trace.before_run.append(lambda st=st: st.__setitem__("step", st["step"] + 1))
                step = lambda st=st: trace.feed("step", lambda: np.asarray(st["step"], np.float32))  # noqa: E731
                self._update(p, g, group, st, lr, step)

    def signature(self) -> tuple:
        """Hyperparameters baked into a compiled step (all but the learning rate)."""
        return tuple(
            tuple(sorted((k, repr(v)) for k, v in g.items() if k not in ("params", "lr", "initial_lr")))
            for g in self.param_groups
        )

    def _update(self, p: Var, g: Var, group: dict, state: dict, lr, step) -> None:
        """Emit p's update; `lr` is a number or a Var, `step()` gives the step count (only if needed)."""
        raise NotImplementedError

    def state_dict(self) -> dict:
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        state = {
            index[k]: {n: (v.numpy().copy() if isinstance(v, Var) else v) for n, v in s.items()}
            for k, s in self.state.items()
            if k in index
        }
        groups = [{k: v for k, v in g.items() if k != "params"} for g in self.param_groups]
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, sd: dict) -> None:
        params = [p for g in self.param_groups for p in g["params"]]
        for g, saved in zip(self.param_groups, sd["param_groups"]):
            g.update(saved)
        for i, s in sd["state"].items():
            p = params[int(i)]
            st = self.state_for(p)
            for n, v in s.items():
                if isinstance(v, np.ndarray):
                    if n not in st:
                        st[n] = _state_var(p, n)
                    np.copyto(st[n].data, v)
                else:
                    st[n] = v


def _scalar(x, like: Var) -> Var:
    return x if isinstance(x, Var) else Var(np.asarray(x, like.dtype))


class SGD(Optimizer):
    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise MnnError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0")
        super().__init__(
            params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        )

    def _update(self, p, g, group, state, lr, step):
        lr = _scalar(lr, p)
        if group["momentum"] == 0:
            assign(p, apply("SGDUpdate", p, g, lr, weight_decay=group["weight_decay"]))
            return
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = _state_var(p, "momentum_buffer")
        extra = [_scalar(step(), p)] if group["dampening"] else []
        new_p, new_buf = apply(
            "SGDMomentumUpdate",
            p,
            g,
            buf,
            lr,
            *extra,
            n_outputs=2,
            momentum=group["momentum"],
            dampening=group["dampening"],
            nesterov=int(group["nesterov"]),
            weight_decay=group["weight_decay"],
        )
        assign(p, new_p)
        assign(buf, new_buf)


class Adam(Optimizer):
    _decoupled = 0

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
    ):
        if amsgrad:
            raise MnnError(f"{type(self).__name__}: amsgrad is not supported")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    def _update(self, p, g, group, state, lr, step):
        for name in ("exp_avg", "exp_avg_sq"):
            if name not in state:
                state[name] = _state_var(p, name)
        b1, b2 = group["betas"]
        new_p, m, v = apply(
            "AdamUpdate",
            p,
            g,
            state["exp_avg"],
            state["exp_avg_sq"],
            _scalar(lr, p),
            _scalar(step(), p),
            n_outputs=3,
            beta1=b1,
            beta2=b2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled=self._decoupled,
        )
        assign(p, new_p)
        assign(state["exp_avg"], m)
        assign(state["exp_avg_sq"], v)


class AdamW(Adam):
    _decoupled = 1

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad)
