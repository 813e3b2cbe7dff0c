"""A zoo ONNX export and random inputs for it, for the Vulkan tools (profile, sweep).

`benchmarks/bench_gpu.py` exports the architecture zoo to ~/.cache/mnn/zoo-arch/NAME/legacy.onnx;
the tools take such a NAME (vit-s16, bert-base, convnext-t, ...) or any ONNX path. Inputs follow
the file's declared shapes with every symbolic dimension set to the batch: token ids below 1000
for `*ids*` int64 inputs, ones for other int64 inputs (attention masks), normal floats otherwise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ZOO = Path.home() / ".cache" / "mnn" / "zoo-arch"


def zoo_path(name: str) -> Path:
    """The legacy export of zoo model `name`, or `name` itself when it is a file."""
    path = Path(name) if name.endswith(".onnx") else ZOO / name / "legacy.onnx"
    if not path.is_file():
        raise SystemExit(f"{path} not found: export it first (python benchmarks/bench_gpu.py --model {name} ...)")
    return path


def zoo_feeds(path: Path, batch: int, seed: int = 0) -> dict[str, np.ndarray]:
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
