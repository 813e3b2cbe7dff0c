"""Extra random cases for the GPU backends' ConvTranspose and recurrent kernels, beyond the op
schemas' samples: larger and odd sizes, every direction with sequence lengths and initial states,
GRU's linear_before_reset, LSTM's peepholes and input_forget, clip, layout 1; GatherND with
batch_dims and negative indices, OneHot with out-of-range indices, ReduceSumSquare. `gpu_cases()` gives
them as mnn_core.testing conformance cases (one-node graphs with the reference's outputs)."""

from __future__ import annotations

import numpy as np

G = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32) * 0.5


def _recurrent(rng):
    for op in ("RNN", "GRU", "LSTM"):
        g = G[op]
        for seq, batch, inp, hid, attrs, extras in [
            (7, 3, 5, 9, {"direction": "bidirectional"}, ("lens", "h0", "c0")),
            (11, 2, 13, 17, {"direction": "reverse"}, ("lens",)),
            (5, 4, 3, 6, {"layout": 1, "direction": "bidirectional"}, ("h0", "c0")),
            (6, 1, 33, 31, {"clip": 1.5}, ("h0",)),
            (9, 5, 8, 7, {"direction": "bidirectional"}, ("lens64", "peep")),
        ]:
            dirs = 2 if attrs.get("direction") == "bidirectional" else 1
            layout = attrs.get("layout", 0)
            x = _rand(rng, batch, seq, inp) if layout else _rand(rng, seq, batch, inp)
            ins = [x, _rand(rng, dirs, g * hid, inp), _rand(rng, dirs, g * hid, hid), _rand(rng, dirs, 2 * g * hid)]
            lens = None
            if "lens" in extras or "lens64" in extras:
                lens = rng.integers(0, seq + 1, batch).astype(np.int64 if "lens64" in extras else np.int32)
                lens[0] = seq
            state = (batch, dirs, hid) if layout else (dirs, batch, hid)
            ins += [lens, _rand(rng, *state) if "h0" in extras else None]
            if op == "LSTM":
                ins += [
                    _rand(rng, *state) if "c0" in extras else None,
                    _rand(rng, dirs, 3 * hid) if "peep" in extras else None,
                ]
            while ins[-1] is None:
                ins.pop()
            variants = [{}]
            if op == "GRU":
                variants.append({"linear_before_reset": 1})
            if op == "LSTM":
                variants.append({"input_forget": 1})
            for extra in variants:
                yield (
                    op,
                    ins,
                    {"hidden_size": hid, **attrs, **extra},
                    f"seq{seq} batch{batch} in{inp} hid{hid} {attrs} {extra} {'+'.join(extras)}",
                )


def _deconv(rng):
    for x, (m, kh, kw), attrs in [
        ((2, 5, 7, 9), (3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
        ((1, 6, 13, 11), (4, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ((1, 8, 5, 6), (3, 2, 5), {"group": 4, "strides": [3, 2], "dilations": [2, 1], "pads": [0, 2, 1, 0]}),
        ((3, 3, 4, 4), (5, 3, 3), {"pads": [3, 3, 2, 2], "dilations": [1, 2]}),  # crop beyond the kernel
        ((1, 4, 17), (3, 5, 0), {"strides": [3], "pads": [2, 1], "output_padding": [2]}),  # 1-D (no kw)
    ]:
        c = x[1]
        g = attrs.get("group", 1)
        w = (c, m, kh, kw) if kw else (c, m, kh)
        yield "ConvTranspose", [_rand(rng, *x), _rand(rng, *w), _rand(rng, m * g)], attrs, f"{x} {w} {attrs}"


def _indexing(rng):
    for x, idx, b in [
        ((5, 7, 3), (4, 2), 0),
        ((3, 5, 7, 2), (3, 6, 1), 1),
        ((2, 3, 5), (2, 3, 4, 2), 1),
        ((9,), (11, 1), 0),
        ((4, 6), (5, 2), 0),
    ]:
        data = _rand(rng, *x)
        dims = np.array(x[b : b + idx[-1]])
        ids = rng.integers(-dims, dims, idx).astype(np.int64)
        yield "GatherND", [data, ids], {"batch_dims": b}, f"{x} {idx} batch_dims={b}"
        yield (
            "GatherND",
            [rng.integers(-9, 9, x).astype(np.int64), ids.astype(np.int32)],
            {"batch_dims": b},
            f"int64 data {x} {idx} batch_dims={b}",
        )
        yield "GatherND", [rng.random(x) > 0.5, ids], {"batch_dims": b}, f"bool data {x} {idx} batch_dims={b}"
    for shape, depth, axis, dtype in [
        ((7,), 5, -1, np.float32),
        ((3, 5), 4, 0, np.int64),
        ((2, 3, 5), 9, 1, np.int32),
        ((13,), 3, 0, np.float32),
    ]:
        idx = rng.integers(-depth - 1, depth + 1, shape).astype(np.int64)
        yield "OneHot", [idx, np.array([2, 7], dtype)], {"depth": depth, "axis": axis}, f"{shape} depth {depth}"
        yield (
            "OneHot",
            [idx.astype(np.int32), np.array([-1.5, 3.0], np.float32)],
            {"depth": depth, "axis": axis},
            f"int32 indices {shape} depth {depth}",
        )
    for shape, axes, keep in [((3, 5, 7), [1], 1), ((2, 9, 4, 3), [0, 2], 0), ((17,), [0], 1), ((4, 6, 5), [-1], 0)]:
        yield "ReduceSumSquare", [_rand(rng, *shape)], {"axes": axes, "keepdims": keep}, f"{shape} {axes}"
    for shape in [(7,), (3, 5), (2, 3, 5)]:  # 1-byte views, odd byte counts
        yield "Identity", [rng.random(shape) > 0.5], {}, f"bool {shape}"
        yield "Flatten", [rng.random(shape) > 0.5], {"axis": 1 if len(shape) > 1 else 0}, f"bool {shape}"


def gpu_cases(seed: int = 0) -> list:
    """The cases, as mnn_core.testing.conformance.ConformanceCase (run them with run_case)."""
    from ..ops import run_reference
    from .conformance import ConformanceCase, conformance_graph

    rng = np.random.default_rng(seed)
    cases = []
    for op, ins, attrs, label in [*_recurrent(rng), *_deconv(rng), *_indexing(rng)]:
        graph, feeds = conformance_graph(op, ins, attrs, op == "ConvTranspose")
        cases.append(ConformanceCase(op, len(cases), graph, feeds, run_reference(op, list(ins), attrs), label))
    return cases
