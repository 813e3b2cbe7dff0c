"""A zoo model's ONNX file and its inputs, for the Vulkan tools (profile, sweep, dispatch counts).

A name of the architecture zoo (benchmarks/zoo_arch: vit-s16, bert-base, convnext-t, ...) gives its
legacy export that runs the batch (exported into ~/.cache/mnn/zoo-arch when missing, as bench_zoo.py
and bench_gpu.py do) and the inputs the zoo feeds it. Any other ONNX path gets random inputs of its
declared shapes, every symbolic dimension set to the batch: token ids below 1000 for `*ids*` int64
inputs, ones for other int64 inputs (attention masks), normal floats otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]


def zoo_model(name: str, batch: int) -> tuple[Path, dict[str, np.ndarray]]:
    """(ONNX file, inputs at `batch`) of zoo architecture `name`, or of the ONNX file `name`."""
    if name.endswith(".onnx"):
        path = Path(name)
        if not path.is_file():
            raise SystemExit(f"{path} not found")
        return path, _random_feeds(path, batch)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from zoo_arch import ARCHES
    from zoo_arch.export import onnx_file

    if name not in ARCHES:
        raise SystemExit(f"{name!r} is neither an ONNX file nor a zoo architecture ({', '.join(sorted(ARCHES))})")
    return onnx_file(ARCHES[name], "legacy", batch), ARCHES[name].make_feeds(batch)


def _random_feeds(path: Path, batch: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for every graph input of the ONNX file at `path`."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in graph.input:
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else batch for d in tensor.shape.dim]
        if tensor.elem_type == onnx.TensorProto.INT64:
            ids = "ids" in value.name
            feeds[value.name] = (rng.integers(0, 1000, shape) if ids else np.ones(shape)).astype("int64")
        else:
            feeds[value.name] = rng.standard_normal(shape).astype("float32")
    return feeds
