"""Per-layer error of a quantized model against its float original, on the same inputs.

Each int8 layer's output is dequantized and compared with the float model's value at the
same place, with all the quantization upstream of it included: this is the error a user
sees accumulate through the network, layer by layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graph.ir import Graph
from .calibrate import run_values
from .rewrite import Rewrite


@dataclass
class LayerError:
    node: str
    op: str
    value: str
    sqnr_db: float  # 10 log10(|float|^2 / |quant - float|^2); higher is better, inf when exact
    rel_err: float  # |quant - float| / |float|
    max_abs_err: float
    cosine: float

    def row(self) -> tuple:
        sq = "inf" if np.isinf(self.sqnr_db) else f"{self.sqnr_db:.1f}"
        return (self.node, self.op, sq, f"{self.rel_err:.4f}", f"{self.max_abs_err:.4g}", f"{self.cosine:.5f}")


HEADER = ("layer", "op", "SQNR dB", "rel err", "max |err|", "cosine")


def compare(ref: np.ndarray, got: np.ndarray, node: str, op: str, value: str) -> LayerError:
    ref = ref.astype(np.float64).ravel()
    got = got.astype(np.float64).ravel()
    err = got - ref
    e2, r2 = float(err @ err), float(ref @ ref)
    sqnr = np.inf if e2 == 0 else 10 * np.log10(max(r2, 1e-30) / e2)
    denom = np.sqrt(r2 * float(got @ got))
    cos = float(ref @ got / denom) if denom > 0 else float(e2 == 0)
    return LayerError(
        node,
        op,
        value,
        float(sqnr),
        float(np.sqrt(e2 / max(r2, 1e-30))),
        float(np.abs(err).max()) if err.size else 0.0,
        cos,
    )


def layer_errors(float_graph: Graph, rw: Rewrite, feeds_list: list[dict]) -> list[LayerError]:
    """Errors per int8 layer, plus the graph outputs, over the given batches."""
    refs: dict[str, list] = {}
    gots: dict[str, list] = {}
    wanted_f = {layer.float_value for layer in rw.layers} | set(float_graph.outputs)
    wanted_q = {layer.q_value for layer in rw.layers} | set(float_graph.outputs)
    for feeds in feeds_list:
        fv = run_values(float_graph, feeds, wanted_f)
        qv = run_values(rw.graph, feeds, wanted_q)
        for layer in rw.layers:
            refs.setdefault(layer.float_value, []).append(fv[layer.float_value])
            got = qv[layer.q_value]
            if got.dtype != np.float32:
                got = (got.astype(np.float32) - np.float32(layer.zero_point)) * np.float32(layer.scale)
            gots.setdefault(layer.float_value, []).append(got)
        for name in float_graph.outputs:
            refs.setdefault("output:" + name, []).append(fv[name])
            gots.setdefault("output:" + name, []).append(qv[name])
    rows = [
        compare(
            np.concatenate(refs[layer.float_value]),
            np.concatenate(gots[layer.float_value]),
            layer.node,
            layer.op,
            layer.float_value,
        )
        for layer in rw.layers
    ]
    rows += [
        compare(np.concatenate(refs["output:" + n]), np.concatenate(gots["output:" + n]), f"output {n}", "(model)", n)
        for n in float_graph.outputs
    ]
    return rows


def format_table(rows: list[LayerError]) -> str:
    table = [HEADER] + [r.row() for r in rows]
    widths = [max(len(str(r[i])) for r in table) for i in range(len(HEADER))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
