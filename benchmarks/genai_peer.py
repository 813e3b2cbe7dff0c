"""ONNX Runtime GenAI as a peer of bench_llm.py: the same random checkpoint, built by GenAI's own model
builder (`onnxruntime_genai.models.builder`, CPU, int4 blocks of 32 with the head at int4 too, or fp32)
into a folder beside it, once, and decoded greedily from the same ids.

onnxruntime-genai is a benchmark-only dependency: without it the engine is skipped with a message.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

#: mnn's weight format -> the builder's precision (GenAI has no int8 CPU build to compare with)
PRECISIONS = {"fp32": "fp32", "int4": "int4"}


def missing() -> str | None:
    """Why the engine cannot run here, or None."""
    try:
        import onnxruntime_genai  # noqa: F401
    except ImportError as e:
        return f"onnxruntime-genai is not importable ({e}; pip install onnxruntime-genai)"
    return None


def model_dir(checkpoint: Path, weights: str, threads: list[int]) -> Path:
    """GenAI's build of `checkpoint` at `weights`, made once beside it, and its folder for each thread
    count (threads_dir), written here so that the children only read them."""
    out = checkpoint.parent / f"{checkpoint.name}-genai-{weights}"
    if not (out / "genai_config.json").exists():
        builder = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-m", str(checkpoint)]
        builder += ["-i", str(checkpoint), "-o", str(out), "-p", PRECISIONS[weights], "-e", "cpu"]
        res = subprocess.run([*builder, "-c", f"{out}.cache"], capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"GenAI's builder failed on {checkpoint}:\n{res.stderr[-2000:]}")
    config = json.loads((out / "genai_config.json").read_text())
    for n in threads:
        folder = threads_dir(out, n)
        folder.mkdir(exist_ok=True)
        for f in out.iterdir():
            if f.name != "genai_config.json" and not (folder / f.name).exists():
                (folder / f.name).symlink_to(f.resolve())
        config["model"]["decoder"].setdefault("session_options", {})["intra_op_num_threads"] = n
        (folder / "genai_config.json").write_text(json.dumps(config, indent=1))
    return out


def threads_dir(folder: Path, threads: int) -> Path:
    """A build's folder for `threads` threads: links to its files, and its genai_config.json with that
    thread count (GenAI reads the count from the model's config file)."""
    return folder.parent / f"{folder.name}-t{threads}"


def measure(folder: Path, ids: list[int], threads: int, decode: int, repeat: int):
    """(load s, prefill s, decode s for the tokens after the first, greedy tokens), the best of `repeat`,
    of the build in `folder` (model_dir, given these threads)."""
    import numpy as np
    import onnxruntime_genai as og

    t = time.perf_counter()
    model = og.Model(str(threads_dir(folder, threads)))
    load_s = time.perf_counter() - t
    length = len(ids) + decode
    prefill_s = decode_s = float("inf")
    for _ in range(repeat):
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=length, min_length=length)
        gen = og.Generator(model, params)
        t = time.perf_counter()
        gen.append_tokens(np.asarray(ids, dtype=np.int32))
        gen.generate_next_token()
        prefill_s = min(prefill_s, time.perf_counter() - t)
        t = time.perf_counter()
        for _ in range(decode - 1):
            gen.generate_next_token()
        decode_s = min(decode_s, time.perf_counter() - t)
    tokens = [int(x) for x in gen.get_sequence(0)[len(ids) :]]
    return load_s, prefill_s, decode_s, tokens
