"""torch.save / torch.load without pickle: a .npz file (numpy's zip of .npy arrays).

What a training script saves is a state dict, or a checkpoint dict nesting
state dicts, an optimizer's state and plain numbers. Every array (numpy, Var,
torch tensor) becomes one .npy member; the nesting around them is JSON in the
member `__structure__.npy` (as bytes), where dicts keep non-string keys and
tuples stay tuples. Loading runs no code from the file (np.load with
allow_pickle=False), so a file from anyone is safe to open.
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import Any

import numpy as np

from ..errors import MnnError

_STRUCTURE = "__structure__"


def _to_array(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        return value.detach().cpu().numpy()
    if hasattr(value, "_data") and hasattr(value, "numpy"):  # a Var
        return value.numpy()
    return None


def _encode(obj: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    arr = _to_array(obj)
    if arr is not None:
        name = f"a{len(arrays)}"
        arrays[name] = np.ascontiguousarray(arr)
        return {"__array__": name}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, dict):
        return {"__dict__": [[_key(k, where), _encode(v, arrays, f"{where}[{k!r}]")] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        items = [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]
        return {"__tuple__": items} if isinstance(obj, tuple) else items
    raise MnnError(
        f"save: {where} is a {type(obj).__name__}; mnn saves arrays, tensors, numbers, strings, None "
        "and dicts/lists/tuples of them (never pickled objects)"
    )


def _key(k: Any, where: str) -> Any:
    if isinstance(k, (str, int, bool)) or k is None:
        return k
    raise MnnError(f"save: a key of {where} is a {type(k).__name__}; keys must be strings or ints")


def _decode(obj: Any, arrays) -> Any:
    if isinstance(obj, list):
        return [_decode(v, arrays) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__array__" in obj:
        return arrays[obj["__array__"]]
    if "__tuple__" in obj:
        return tuple(_decode(v, arrays) for v in obj["__tuple__"])
    return {k: _decode(v, arrays) for k, v in obj["__dict__"]}


def save(obj: Any, f) -> None:
    """Write a state dict (or any nesting of dicts, lists, arrays and numbers) to a path or binary file."""
    arrays: dict[str, np.ndarray] = {}
    structure = json.dumps(_encode(obj, arrays, "the object"))
    arrays[_STRUCTURE] = np.frombuffer(structure.encode(), np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:  # a file object, so numpy adds no ".npz" to the name
            np.savez(fh, **arrays)
    else:
        np.savez(f, **arrays)


def load(f, map_location=None, weights_only: bool | None = None, mmap=None) -> Any:
    """Read what `save` wrote: arrays come back as numpy arrays (what Module.state_dict() gives).

    `map_location` and `weights_only` are accepted for PyTorch's sake: data always load to host memory,
    and a file can only hold data."""
    try:
        with np.load(f, allow_pickle=False) as z:
            if any(n.endswith("data.pkl") for n in z.files):
                raise MnnError(
                    f"load: {_name(f)} is a PyTorch (pickle) checkpoint, which mnn does not unpickle; "
                    "convert it once with PyTorch: mnn_core.torch.save({k: v.numpy() for k, v in "
                    "torch.load(path).items()}, new_path)"
                )
            if _STRUCTURE not in z.files:
                raise MnnError(
                    f"load: {_name(f)} is an .npz without mnn's {_STRUCTURE} member; read it with numpy.load"
                )
            arrays = {k: z[k] for k in z.files if k != _STRUCTURE}
            structure = json.loads(bytes(z[_STRUCTURE]).decode())
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise MnnError(f"load: no such file {_name(f)}") from None
        raise MnnError(f"load: {_name(f)} is not a file written by mnn_core.torch.save ({e})") from None
    return _decode(structure, arrays)


def _name(f) -> str:
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file object"


__all__ = ["load", "save"]
