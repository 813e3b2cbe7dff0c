"""Calibration: read the data, run the float model, and turn observed values into ranges.

Methods (`method=`):
- minmax:     the smallest and largest value seen.
- percentile: clip |x| at the given percentile (default 99.99) of its histogram.
- kl:         the clipping threshold whose quantized histogram is closest (Kullback-Leibler)
              to the observed one, searched over a 2048-bin histogram of |x|.
A tensor that never goes negative (e.g. after ReLU) is clipped on [0, t] with 256 levels;
a signed tensor on [-t, t] with 128 levels per side. Exact zeros are left out of the histogram:
zero is exact at any scale, and a ReLU's many zeros would otherwise pull the KL threshold down.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import MnnError
from ..graph.evaluate import run_node
from ..graph.ir import Graph

METHODS = ("minmax", "percentile", "kl")
HIST_BINS = 2048


# -- the data ---------------------------------------------------------------------------------------


def load_calibration(data, graph: Graph) -> dict[str, np.ndarray]:
    """Calibration samples keyed by input name, each with the samples along axis 0.

    `data`: a dict of arrays, an .npz keyed by input name, or a folder of .npy files (NAME.npy,
    or NAME_<anything>.npy concatenated in name order; with one model input any *.npy is taken)."""
    if isinstance(data, dict):
        arrays, where = dict(data), "calibration data"
    else:
        path = Path(os.fspath(data))
        where = str(path)
        if path.is_dir():
            arrays = _read_folder(path, graph)
        elif path.is_file():
            try:
                z = np.load(path, allow_pickle=False)
                if not hasattr(z, "files"):  # an .npy: np.load gave the array itself
                    raise MnnError(
                        f"{path} holds one array; calibration data is an .npz keyed by input name "
                        f"({', '.join(graph.inputs)}) or a folder of .npy files"
                    )
                with z:
                    arrays = {k: z[k] for k in z.files}
            except (OSError, ValueError) as exc:
                raise MnnError(
                    f"{path} is not a readable .npz file ({exc}); write one with "
                    f"numpy.savez(path, {next(iter(graph.inputs), 'input')}=samples)"
                ) from None
        else:
            raise MnnError(
                f"calibration data {path} does not exist; give an .npz keyed by input name or a folder of .npy files"
            )
    return _check(arrays, graph, where)


def _read_folder(path: Path, graph: Graph) -> dict[str, np.ndarray]:
    files = sorted(p for p in path.iterdir() if p.suffix == ".npy")
    if not files:
        raise MnnError(
            f"{path} has no .npy files; put NAME.npy (samples along axis 0) there for each model input "
            f"({', '.join(graph.inputs)})"
        )
    groups: dict[str, list[Path]] = {}
    for p in files:
        name = next((n for n in graph.inputs if p.stem == n or p.stem.startswith(n + "_")), None)
        if name is None and len(graph.inputs) == 1:
            name = next(iter(graph.inputs))
        if name is None:
            raise MnnError(
                f"{p} does not name a model input; name it INPUT.npy or INPUT_k.npy, inputs: {', '.join(graph.inputs)}"
            )
        groups.setdefault(name, []).append(p)
    out = {}
    for name, paths in groups.items():
        rank = len(graph.inputs[name].shape)
        parts = []
        for p in paths:
            try:
                a = np.load(p, allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise MnnError(f"{p} is not a readable .npy file ({exc})") from None
            parts.append(a[None] if a.ndim == rank - 1 else a)  # one sample without its batch axis
        try:
            out[name] = np.concatenate(parts)
        except ValueError as exc:
            raise MnnError(f"the .npy files for input {name!r} in {path} do not stack: {exc}") from None
    return out


def _check(arrays: dict, graph: Graph, where: str) -> dict[str, np.ndarray]:
    missing = [n for n in graph.inputs if n not in arrays]
    if missing:
        raise MnnError(
            f"{where} has no samples for model input(s) {', '.join(map(repr, missing))} "
            f"(it has {', '.join(map(repr, arrays)) or 'nothing'}); key the arrays by input name"
        )
    extra = [k for k in arrays if k not in graph.inputs]
    if extra:
        raise MnnError(
            f"{where} has array(s) {', '.join(map(repr, extra))} that are not model inputs "
            f"(inputs: {', '.join(graph.inputs)})"
        )
    out, count = {}, None
    for name, info in graph.inputs.items():
        a = np.asarray(arrays[name])
        if a.dtype.kind not in "fiub":
            raise MnnError(f"{where}: input {name!r} has dtype {a.dtype}; expected numbers ({info.dtype})")
        if a.ndim != len(info.shape):
            raise MnnError(
                f"{where}: input {name!r} has shape {a.shape}, but the model takes rank {len(info.shape)} "
                f"({info}); put the samples along axis 0"
            )
        for i, (got, want) in enumerate(zip(a.shape, info.shape)):
            if i and isinstance(want, (int, np.integer)) and got != want:
                raise MnnError(f"{where}: input {name!r} has shape {a.shape}, the model takes {info} (dim {i} differs)")
        if a.shape[0] == 0:
            raise MnnError(f"{where}: input {name!r} has no samples")
        if count is not None and a.shape[0] != count:
            raise MnnError(f"{where}: inputs have different sample counts ({count} and {a.shape[0]} for {name!r})")
        count = a.shape[0]
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise MnnError(f"{where}: input {name!r} holds inf or nan")
        out[name] = a.astype(info.dtype, copy=False)
    return out


def batches(samples: dict[str, np.ndarray], graph: Graph, batch_size: int = 32):
    """Feed dicts of `batch_size` samples (or the model's fixed batch size)."""
    count = next(iter(samples.values())).shape[0]
    fixed = {info.shape[0] for info in graph.inputs.values() if info.shape and isinstance(info.shape[0], int)}
    if len(fixed) > 1:
        raise MnnError(f"model inputs have different fixed batch sizes {sorted(fixed)}")
    if not fixed:  # a dynamic batch: the last batch may be short
        return [{k: v[i : i + batch_size] for k, v in samples.items()} for i in range(0, count, batch_size)]
    size = fixed.pop()
    if count < size:
        raise MnnError(f"the model takes batches of {size}, but the calibration data has {count} samples")
    return [{k: v[i : i + size] for k, v in samples.items()} for i in range(0, count - size + 1, size)]


# -- running the float model ------------------------------------------------------------------------


def run_values(graph: Graph, feeds: dict[str, np.ndarray], keep=None) -> dict[str, np.ndarray]:
    """Every value of the graph (or those in `keep`, plus the outputs) on the reference kernels."""
    env = dict(graph.initializers)
    env.update(feeds)
    last_use: dict[str, int] = {}
    for i, node in enumerate(graph.nodes):
        for n in node.inputs:
            last_use[n] = i
    wanted = None if keep is None else set(keep) | set(graph.outputs)
    out = {}
    for i, node in enumerate(graph.nodes):
        results = run_node(node, env)  # shapes computed in the graph (Reshape's, Slice's) bound as attributes
        for name, value in zip(node.outputs, results):
            env[name] = value
            if wanted is None or name in wanted:
                out[name] = value
        for n in node.inputs:  # free what no later node reads
            if n and last_use.get(n) == i and n not in graph.initializers and n not in out:
                env.pop(n, None)
    for name in feeds:
        if wanted is None or name in wanted:
            out[name] = feeds[name]
    return out


# -- observers --------------------------------------------------------------------------------------


class RangeObserver:
    """Min and max in a first pass; a histogram of |x| in a second (percentile and kl)."""

    def __init__(self):
        self.lo, self.hi = np.inf, -np.inf
        self.hist = None
        self.amax = 0.0

    def observe_minmax(self, x: np.ndarray) -> None:
        if x.size:
            self.lo, self.hi = min(self.lo, float(x.min())), max(self.hi, float(x.max()))

    def observe_hist(self, x: np.ndarray) -> None:
        if self.hist is None:
            self.amax = max(abs(self.lo), abs(self.hi), 1e-12)
            self.hist = np.zeros(HIST_BINS, np.float64)
        a = np.abs(x.astype(np.float32))
        h, _ = np.histogram(a, bins=HIST_BINS, range=(0.0, self.amax))
        h[0] -= np.count_nonzero(a == 0)  # exact zeros (ReLU's, padding's) are exact at any scale: they do not vote
        self.hist += h

    def range(self, method: str, percentile: float = 99.99) -> tuple[float, float]:
        if not np.isfinite(self.lo):
            raise MnnError("an observed tensor was empty in every calibration batch")
        if method == "minmax" or self.hist is None or self.hist.sum() == 0:
            return self.lo, self.hi
        signed = self.lo < 0
        width = self.amax / HIST_BINS
        if method == "percentile":
            cdf = np.cumsum(self.hist) / self.hist.sum()
            t = (int(np.searchsorted(cdf, percentile / 100.0)) + 1) * width
        elif method == "kl":
            levels = 128 if signed else 256
            t = kl_threshold_bins(self.hist, levels) * width
            # KL compares the shapes of two distributions, not the size of the errors: on a long, thin tail
            # it can cut far into the values (a MobileNetV2-style net's first ReLU6 output, max 4.9, cut at
            # 0.9: 6 points of accuracy lost). Its threshold stands only where it lowers the squared error
            # against keeping the whole range.
            if squared_error(self.hist, width, t, levels) > squared_error(self.hist, width, self.amax, levels):
                t = self.amax
        else:
            raise MnnError(f"unknown calibration method {method!r}; choose one of {', '.join(METHODS)}")
        return max(self.lo, -t), min(self.hi, t)


def squared_error(hist: np.ndarray, width: float, t: float, levels: int) -> float:
    """The summed squared error of quantizing the |x| histogram (bins of `width`) to `levels` steps up to
    `t`: a rounding error of step^2 / 12 per value inside, the distance to t for each value clipped."""
    centers = (np.arange(len(hist)) + 0.5) * width
    inside = centers < t
    step = t / levels
    return float(hist[inside].sum() * step * step / 12 + np.sum(hist[~inside] * (centers[~inside] - t) ** 2))


def kl_threshold_bins(hist: np.ndarray, levels: int, stride: int = 8) -> int:
    """The number of leading histogram bins to keep, minimizing KL(observed || quantized to `levels`)."""
    hist = np.asarray(hist, np.float64)
    n = len(hist)
    nonzero = np.nonzero(hist)[0]
    if len(nonzero) == 0 or nonzero[-1] < levels:
        return n if len(nonzero) == 0 else int(nonzero[-1]) + 1  # fits with no clipping: keep it all
    best, best_kl = n, np.inf
    for i in list(range(levels, n, stride)) + [n]:
        ref = hist[:i].copy()
        ref[-1] += hist[i:].sum()  # the clipped tail lands in the last kept bin
        group = (np.arange(i) * levels) // i
        used = hist[:i] > 0
        sums = np.bincount(group, weights=hist[:i], minlength=levels)
        counts = np.bincount(group, weights=used, minlength=levels)
        q = np.where(used, sums[group] / np.maximum(counts[group], 1), 0.0)
        p = ref / ref.sum()
        qs = q.sum()
        if qs == 0:
            continue
        q = q / qs
        mask = p > 0
        kl = float(np.sum(p[mask] * np.log(p[mask] / np.maximum(q[mask], 1e-12))))
        if kl < best_kl:
            best, best_kl = i, kl
    return best
