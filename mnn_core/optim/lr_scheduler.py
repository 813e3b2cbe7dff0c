"""Learning-rate schedules: they set each param group's "lr", which optimizers
(and compiled steps, whose lr is a per-run input) read at every step."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Callable

from ..errors import MnnError
from .optimizer import Optimizer


class LRScheduler:
    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        self.optimizer = optimizer
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, base_lr: float, epoch: int) -> float:
        raise NotImplementedError

    def step(self) -> None:
        self.last_epoch += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self.lr_at(base, self.last_epoch)

    def get_last_lr(self) -> list[float]:
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, sd: dict) -> None:
        """Resume: the rates become those of the saved epoch (constructing the scheduler reset them to base)."""
        self.last_epoch, self.base_lrs = sd["last_epoch"], list(sd["base_lrs"])
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self.lr_at(base, self.last_epoch)


class StepLR(LRScheduler):
    """base * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** (epoch // self.step_size)


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones: Sequence[int], gamma: float = 0.1, last_epoch: int = -1):
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** sum(1 for m in self.milestones if epoch >= m)


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma**epoch


class CosineAnnealingLR(LRScheduler):
    """eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2


class InvLR(LRScheduler):
    """Caffe's and MNN's "inv" policy: base * (1 + gamma * iteration) ** -power, stepped per iteration."""

    def __init__(self, optimizer, gamma: float = 1e-4, power: float = 0.75, last_epoch: int = -1):
        self.gamma, self.power = gamma, power
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * (1 + self.gamma * epoch) ** (-self.power)


class LambdaLR(LRScheduler):
    def __init__(self, optimizer, lr_lambda: Callable[[int], float], last_epoch: int = -1):
        self.lr_lambda = lr_lambda
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        return base_lr * self.lr_lambda(epoch)


class LinearLR(LRScheduler):
    """base * a factor going linearly from start_factor to end_factor over total_iters steps, then held."""

    def __init__(
        self,
        optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise MnnError(
                f"LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], "
                f"got {start_factor} and {end_factor}"
            )
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr, epoch):
        done = min(epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped per batch: up from max_lr / div_factor to max_lr over pct_start of the
    steps, then down to that / final_div_factor; momentum (or Adam's beta1) cycles the other way."""

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float = 0.85,
        max_momentum: float = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise MnnError("OneCycleLR needs total_steps, or epochs and steps_per_epoch")
            total_steps = epochs * steps_per_epoch
        if anneal_strategy not in ("cos", "linear"):
            raise MnnError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps, self.anneal = total_steps, anneal_strategy
        groups = optimizer.param_groups
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * len(groups)
        up = float(pct_start * total_steps) - 1
        # (last step of the phase, lr from, lr to, momentum from, momentum to): keys of each param group
        lr0, top, low, m_top, m_low = "initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"
        self.phases = [(up, lr0, top, m_top, m_low), (total_steps - 1, top, low, m_low, m_top)]
        if three_phase:
            self.phases = [
                (up, lr0, top, m_top, m_low),
                (2 * up, top, lr0, m_low, m_top),
                (total_steps - 1, lr0, low, m_top, m_top),
            ]
        self.cycle_momentum = cycle_momentum
        if cycle_momentum and not all("momentum" in g or "betas" in g for g in groups):
            raise MnnError("OneCycleLR: cycle_momentum needs an optimizer with momentum or betas")
        for g, peak in zip(groups, max_lrs):
            g.update(
                {
                    lr0: peak / div_factor,
                    top: peak,
                    low: peak / div_factor / final_div_factor,
                    m_top: max_momentum,
                    m_low: base_momentum,
                }
            )
        super().__init__(optimizer, last_epoch)

    def _interpolate(self, start: float, end: float, pct: float) -> float:
        if self.anneal == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _at(self, values: dict, epoch: int, lr: bool) -> float:
        if epoch > self.total_steps:
            raise MnnError(f"OneCycleLR stepped {epoch} times, past total_steps={self.total_steps}")
        start = 0.0
        for end, a, b, ma, mb in self.phases:
            if epoch <= end or end == self.phases[-1][0]:
                pct = (epoch - start) / (end - start)
                return (
                    self._interpolate(values[a], values[b], pct)
                    if lr
                    else self._interpolate(values[ma], values[mb], pct)
                )
            start = end

    def step(self) -> None:
        self.last_epoch += 1
        for group in self.optimizer.param_groups:
            group["lr"] = self._at(group, self.last_epoch, True)
            if self.cycle_momentum:
                m = self._at(group, self.last_epoch, False)
                if "betas" in group:
                    group["betas"] = (m, group["betas"][1])
                else:
                    group["momentum"] = m

    def lr_at(self, base_lr, epoch):  # only used on load_state_dict: step() sets every group itself
        raise NotImplementedError

    def load_state_dict(self, sd: dict) -> None:
        self.last_epoch = sd["last_epoch"] - 1
        self.step()


class ReduceLROnPlateau:
    """Multiply every group's lr by `factor` when the metric passed to step(metric) stopped improving for
    more than `patience` steps (PyTorch's rules: relative or absolute threshold, cooldown, min_lr)."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr=0.0,
        eps: float = 1e-8,
    ):
        if factor >= 1.0:
            raise MnnError(f"ReduceLROnPlateau: factor must be below 1, got {factor}")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise MnnError(
                f"ReduceLROnPlateau: mode must be 'min' or 'max' and threshold_mode 'rel' or 'abs', "
                f"got {mode!r} and {threshold_mode!r}"
            )
        self.optimizer, self.mode, self.factor, self.patience = optimizer, mode, factor, patience
        self.threshold, self.threshold_mode, self.cooldown, self.eps = threshold, threshold_mode, cooldown, eps
        n = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * n
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs, self.cooldown_counter, self.last_epoch = 0, 0, 0

    def _better(self, a: float) -> bool:
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < (self.best * (1 - self.threshold) if rel else self.best - self.threshold)
        return a > (self.best * (1 + self.threshold) if rel else self.best + self.threshold)

    def step(self, metrics) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, floor)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0

    def get_last_lr(self) -> list[float]:
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("best", "num_bad_epochs", "cooldown_counter", "last_epoch")}

    def load_state_dict(self, sd: dict) -> None:
        for k, v in sd.items():
            setattr(self, k, v)
