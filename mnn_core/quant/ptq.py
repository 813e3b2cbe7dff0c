"""Post-training quantization: calibrate a float model, rewrite it to int8, report the error."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MnnError
from ..graph.ir import Graph
from ..graph.passes import eliminate_dead, fold_batchnorm, fold_constants, remove_identities
from ..progress import Progress
from .calibrate import METHODS, RangeObserver, batches, load_calibration, run_values
from .report import LayerError, format_table, layer_errors
from .rewrite import Rewrite, quantizable, to_int8
from .rewrite import weight_only as weight_only_rewrite


@dataclass
class QuantResult:
    graph: Graph  # the int8 model
    float_graph: Graph  # the float model it came from (batch norms folded)
    ranges: dict = field(default_factory=dict)  # value -> (lo, hi) used for its uint8 scale
    errors: list[LayerError] = field(default_factory=list)
    rewrite: Rewrite | None = None

    @property
    def float_reasons(self) -> dict[str, str]:
        """Conv, Gemm and MatMul nodes that stayed float, and why."""
        return {} if self.rewrite is None else dict(self.rewrite.float_reasons)

    def report(self) -> str:
        kept = [f"kept float: {node}: {why}" for node, why in self.float_reasons.items()]
        return "\n".join([format_table(self.errors)] + kept)


def prepare_float(graph: Graph) -> Graph:
    """The float graph quantization starts from: constants folded, batch norms folded into convs."""
    g = graph.copy()
    for fn in (fold_constants, fold_batchnorm, remove_identities, eliminate_dead):
        g = fn(g)
    g.validate()
    return g


def quantize(
    model,
    calibration=None,
    method: str = "minmax",
    per_channel: bool = True,
    exclude=(),
    weight_only: bool = False,
    percentile: float = 99.99,
    batch_size: int = 32,
    report_batches: int = 4,
    progress: bool | None = None,
    ranges: dict | None = None,
    fuse_add: bool = True,
) -> QuantResult:
    """Quantize a float model to int8.

    model: a Graph or a path to a model file. calibration: an .npz keyed by input name, a folder of
    .npy files or a dict of arrays (samples along axis 0). method: minmax | percentile | kl.
    per_channel: one weight scale per output channel (else one per tensor). exclude: node names that
    stay float. weight_only: int8 weights, float compute (no calibration needed). ranges: activation
    ranges {value: (lo, hi)} to use instead of calibrating (quantization-aware training supplies them).
    fuse_add: residual adds of two int8 values become QLinearAdd (False keeps them float; for comparisons).
    """
    from .. import load

    if method not in METHODS:
        raise MnnError(f"unknown calibration method {method!r}; choose one of {', '.join(METHODS)}")
    graph = load(model) if not isinstance(model, Graph) else model
    fgraph = prepare_float(graph)
    samples = None if calibration is None else load_calibration(calibration, fgraph)
    if weight_only:
        rw = weight_only_rewrite(fgraph, per_channel, exclude)
        res = QuantResult(rw.graph, fgraph, rewrite=rw)
        if samples is not None:
            res.errors = layer_errors(fgraph, rw, batches(samples, fgraph, batch_size)[:report_batches])
        return res
    if samples is None and ranges is None:
        raise MnnError(
            "int8 quantization needs calibration data (an .npz keyed by input name or a folder of .npy "
            "files); or use weight_only=True (--weight-only) for int8 weights with float compute"
        )
    feeds = batches(samples, fgraph, batch_size) if samples is not None else []
    if ranges is None:
        ranges = calibrate(fgraph, feeds, method, percentile, progress)
    rw = to_int8(fgraph, ranges, per_channel, exclude, fuse_add)
    res = QuantResult(rw.graph, fgraph, ranges, rewrite=rw)
    if feeds:
        res.errors = layer_errors(fgraph, rw, feeds[:report_batches])
    return res


def observed_values(graph: Graph) -> set[str]:
    """Values whose range a quantized model may need: inputs and outputs of quantizable layers and of
    the activations after them."""
    shapes = {k: tuple(v.shape) for k, v in graph.infer().items()}
    consumers = graph.consumers()
    out = set()
    for node in graph.nodes:
        if quantizable(graph, node, shapes):
            out.add(node.inputs[0])
            out.add(node.outputs[0])
            for user in consumers.get(node.outputs[0], []):
                out.update(user.outputs)
    return out


def calibrate(
    graph: Graph, feeds: list[dict], method: str = "minmax", percentile: float = 99.99, progress: bool | None = None
) -> dict[str, tuple[float, float]]:
    """Run the float graph over the calibration batches; the (lo, hi) range of every observed value."""
    wanted = observed_values(graph)
    obs = {v: RangeObserver() for v in wanted}
    passes = 1 if method == "minmax" else 2
    with Progress(len(feeds) * passes, f"calibrating ({method})", enabled=progress) as bar:
        for feed in feeds:
            for name, value in run_values(graph, feed, wanted).items():
                if name in obs:
                    obs[name].observe_minmax(value)
            bar.update()
        if passes == 2:
            for feed in feeds:
                for name, value in run_values(graph, feed, wanted).items():
                    if name in obs:
                        obs[name].observe_hist(value)
                bar.update()
    return {v: o.range(method, percentile) for v, o in obs.items()}
