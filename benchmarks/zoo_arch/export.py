"""ONNX files of the architectures, by torch's default exporter (torch.export + onnxscript, "dynamo")
and its legacy TorchScript exporter ("legacy"), kept in a cache folder.

Layout under the cache (default ~/.cache/mnn/zoo-arch, else $MNN_ZOO_ARCH_CACHE or --cache):
    <model>[-small]/<exporter>.onnx          the batch dimension dynamic (exported with a batch of 2)
    <model>[-small]/<exporter>-b<N>.onnx     batch N, where the exporter could not keep it dynamic
    <model>[-small]/<exporter>*.json         torch version, a hash of zoo_arch's sources, the
                                             exporter's error for a dynamic batch if it failed
A file whose json names other sources or another torch is exported again, so an edit of a model
never meets a stale file. Weights are stored inside the .onnx (all models are far below 2 GB).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import time
import warnings
from pathlib import Path

from . import Arch

EXPORTERS = ("dynamo", "legacy")
#: the batch a dynamic export traces with: 1 would let the exporters specialize it
TRACE_BATCH = 2


class ExportError(RuntimeError):
    """The exporter failed; the message is its own last line, prefixed with the model and exporter."""


def cache_dir(arg: str | os.PathLike | None = None) -> Path:
    if arg:
        return Path(arg).expanduser()
    env = os.environ.get("MNN_ZOO_ARCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "mnn" / "zoo-arch"


def _stamp() -> dict:
    import torch

    h = hashlib.sha256()
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.read_bytes())
    return {"torch": torch.__version__, "sources": h.hexdigest()[:16]}


def _folder(arch: Arch, cache: Path, small: bool) -> Path:
    return cache / (arch.name + ("-small" if small else ""))


def _fresh(meta: Path, stamp: dict) -> dict | None:
    try:
        info = json.loads(meta.read_text())
    except (OSError, ValueError):
        return None
    return info if all(info.get(k) == v for k, v in stamp.items()) else None


def onnx_file(
    arch: Arch, exporter: str, batch: int, cache: str | os.PathLike | None = None, small: bool = False
) -> Path:
    """A file that runs `batch`: the dynamic-batch export, or where the exporter cannot make one, a
    static export at that batch. Exports what the cache lacks; raises ExportError."""
    if exporter not in EXPORTERS:
        raise ExportError(f"unknown exporter {exporter!r}; one of {', '.join(EXPORTERS)}")
    folder, stamp = _folder(arch, cache_dir(cache), small), _stamp()
    dynamic = folder / f"{exporter}.onnx"
    info = _fresh(dynamic.with_suffix(".json"), stamp)
    if info is None:
        try:
            _export(arch, exporter, dynamic, None, small)
            info = {**stamp, "dynamic_batch": True}
        except ExportError as e:
            info = {**stamp, "dynamic_batch": False, "dynamic_error": str(e)}
        dynamic.with_suffix(".json").write_text(json.dumps(info, indent=1))
    if info["dynamic_batch"]:
        return dynamic
    static = folder / f"{exporter}-b{batch}.onnx"
    if _fresh(static.with_suffix(".json"), stamp) is None:
        _export(arch, exporter, static, batch, small)
        static.with_suffix(".json").write_text(json.dumps({**stamp, "dynamic_batch": False}, indent=1))
    return static


def export_info(arch: Arch, exporter: str, cache=None, small: bool = False) -> dict:
    """What the cache's json says of the dynamic-batch export ({} before the first export)."""
    meta = _folder(arch, cache_dir(cache), small) / f"{exporter}.json"
    return _fresh(meta, _stamp()) or {}


def _export(arch: Arch, exporter: str, path: Path, batch: int | None, small: bool) -> None:
    """Write `path`: batch None exports a dynamic batch dimension (traced at TRACE_BATCH)."""
    import torch

    model = arch.module(small)
    feeds = arch.make_feeds(batch or TRACE_BATCH, small)
    args = tuple(torch.from_numpy(x) for x in feeds.values())
    names, outputs = list(feeds), list(arch.outputs)
    kw: dict = {"input_names": names, "output_names": outputs}
    if exporter == "dynamo":
        kw.update(dynamo=True, external_data=False)
        if batch is None:
            dim = torch.export.Dim("batch", min=1, max=1024)
            kw["dynamic_shapes"] = tuple({0: dim} for _ in names)
    else:
        kw.update(dynamo=False)
        if batch is None:
            kw["dynamic_axes"] = {n: {0: "batch"} for n in names + outputs}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)  # "torchvision is not installed. Skipping ..."
    log = io.StringIO()  # the exporters' progress lines: kept for the error message only
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            warnings.simplefilter("ignore")
            with torch.no_grad():
                torch.onnx.export(model, args, str(tmp), **kw)
    except Exception as e:  # noqa: BLE001 - whatever the exporter raises is its verdict on the model
        tmp.unlink(missing_ok=True)
        lines = [ln for ln in str(e).strip().splitlines() if ln.strip()] or [type(e).__name__]
        what = "dynamic batch" if batch is None else f"batch {batch}"
        raise ExportError(f"{arch.name}, {exporter} exporter, {what}: {type(e).__name__}: {lines[0][:300]}") from e
    os.replace(tmp, path)
    seconds = time.perf_counter() - t0
    if os.environ.get("MNN_ZOO_ARCH_VERBOSE"):
        print(f"exported {path} in {seconds:.1f} s")
