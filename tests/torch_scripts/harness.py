"""Run a PyTorch script twice: as written, and with `torch` changed to `mnn_core.torch` in its import lines.

A script defines build() -> model and train(model) -> {"losses": [...], "accuracy": ...}. Both runs start
from the same weights: the PyTorch model's state dict, as numpy arrays, loads into the mnn model (strict, so
the layer names must agree), and data come from numpy with a fixed seed.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
SCRIPTS = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in ("__init__", "harness"))
_IMPORT = re.compile(r"^(\s*)(import|from) torch\b", re.M)
_BARE = re.compile(r"^(\s*)import torch\s*$", re.M)


def mnn_source(source: str) -> str:
    """The script with only its import lines changed: `import torch` -> `import mnn_core.torch as torch`,
    `import torch.nn as nn` -> `import mnn_core.torch.nn as nn`, `from torch.x import y` likewise."""
    source = _BARE.sub(r"\1import mnn_core.torch as torch", source)
    return _IMPORT.sub(r"\1\2 mnn_core.torch", source)


def load(name: str, mnn: bool) -> types.ModuleType:
    path = HERE / f"{name}.py"
    source = path.read_text()
    module = types.ModuleType(f"{'mnn' if mnn else 'torch'}_{name}")
    module.__file__ = str(path)
    exec(compile(mnn_source(source) if mnn else source, str(path), "exec"), module.__dict__)
    return module


def missing_data(name: str) -> str | None:
    """Why a script that reads a data set (its DATA_DIR) cannot run here, else None."""
    folder = getattr(load(name, mnn=False), "DATA_DIR", None)
    return None if folder is None or Path(folder).is_dir() else f"{name} reads {folder}, which is not here"


def run_both(name: str, **kwargs) -> tuple[dict, dict]:
    import torch

    import mnn_core.torch as mtorch

    torch.set_num_threads(1)  # the reference run; threads only add contention on a shared CI machine
    tmod, mmod = load(name, mnn=False), load(name, mnn=True)
    torch.manual_seed(0)
    mtorch.manual_seed(0)
    tmodel, mmodel = tmod.build(), mmod.build()
    mmodel.load_state_dict({k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()})
    return tmod.train(tmodel, **kwargs), mmod.train(mmodel, **kwargs)


def changed_lines(name: str) -> list[tuple[str, str]]:
    source = (HERE / f"{name}.py").read_text()
    return [(a, b) for a, b in zip(source.splitlines(), mnn_source(source).splitlines()) if a != b]


def relative_gap(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-3)))
