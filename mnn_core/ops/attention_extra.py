"""Recurrent-state ops of decoder models: LinearAttention (linear, gated, delta and
gated-delta rules, grouped-query heads) and TensorScatter (writing into a KV cache)."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


def _heads(x: np.ndarray, heads: int) -> np.ndarray:
    b, t, hd = x.shape
    return x.reshape(b, t, heads, hd // heads).transpose(0, 2, 1, 3)  # B, H, T, D


def _linear_attention_infer(ins, attrs):
    q, k, v = ins[:3]
    hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
    if len(q.shape) != 3 or hq < 1 or hkv < 1 or hq % hkv or q.shape[2] % hq or v.shape[2] % hkv:
        raise GraphError(
            f"LinearAttention: query {q.shape} / value {v.shape} do not split into {hq} query and {hkv} key/value heads"
        )
    gating = attrs["update_rule"] in ("gated", "gated_delta")
    delta = attrs["update_rule"] in ("delta", "gated_delta")
    if gating != (len(ins) > 4 and ins[4] is not None) or delta != (len(ins) > 5 and ins[5] is not None):
        raise GraphError(
            f"LinearAttention: update_rule {attrs['update_rule']!r} needs "
            f"{'decay' if gating else 'no decay'} and {'beta' if delta else 'no beta'}"
        )
    b, t = q.shape[:2]
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    state_dtype = ins[3].dtype if len(ins) > 3 and ins[3] is not None else q.dtype
    return [TensorInfo((b, t, hq * dv), q.dtype), TensorInfo((b, hkv, dk, dv), state_dtype)]


def _linear_attention(ins, attrs):
    q, k, v = ins[:3]
    past = ins[3] if len(ins) > 3 else None
    decay = ins[4] if len(ins) > 4 else None
    beta = ins[5] if len(ins) > 5 else None
    hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
    b, t, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    q4, k4, v4 = (_heads(a.astype(np.float64), h) for a, h in ((q, hq), (k, hkv), (v, hkv)))
    if decay is not None:  # per head (B, T, H) or per key dimension (B, T, H*dk), in log space
        g4 = (
            decay.reshape(b, t, hkv, 1).transpose(0, 2, 1, 3) if decay.shape[-1] == hkv else _heads(decay, hkv)
        ).astype(np.float64)
    if beta is not None:
        b4 = beta.reshape(b, t, beta.shape[-1], 1).transpose(0, 2, 1, 3).astype(np.float64)
    state = np.zeros((b, hkv, dk, dv)) if past is None else past.astype(np.float64).copy()
    scale = attrs["scale"] or 1.0 / np.sqrt(dk)
    out = np.zeros((b, hq, t, dv))
    for i in range(t):
        kt, vt = k4[:, :, i], v4[:, :, i]
        if decay is not None:
            state = state * np.exp(g4[:, :, i])[..., None]
        if beta is not None:
            vt = b4[:, :, i] * (vt - np.einsum("bhdm,bhd->bhm", state, kt))
        state = state + kt[..., :, None] * vt[..., None, :]
        shared = np.repeat(state, hq // hkv, axis=1)  # grouped-query heads read one state
        out[:, :, i] = scale * np.einsum("bhd,bhdm->bhm", q4[:, :, i], shared)
    y = out.transpose(0, 2, 1, 3).reshape(b, t, hq * dv).astype(q.dtype)
    return [y, state.astype(past.dtype if past is not None else q.dtype)]


def _linear_attention_samples(rng):
    b, t, hq, hkv, d = 2, 3, 4, 2, 3
    q, k, v = rand(rng, b, t, hq * d), rand(rng, b, t, hkv * d), rand(rng, b, t, hkv * d)
    yield Sample([q, k, v], {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": "linear"})
    yield Sample(
        [q, k, v, rand(rng, b, hkv, d, d), rand(rng, b, t, hkv, low=-1, high=0), rand(rng, b, t, hkv, low=0, high=1)],
        {"q_num_heads": hq, "kv_num_heads": hkv},
    )


register(
    OpSchema(
        "LinearAttention",
        infer=_linear_attention_infer,
        reference=_linear_attention,
        n_inputs=(3, 6),
        n_outputs=2,
        attrs={
            "q_num_heads": Attr("int"),
            "kv_num_heads": Attr("int"),
            "scale": Attr("float", 0.0),
            "update_rule": Attr("str", "gated_delta", UPDATE_RULES),
            "chunk_size": Attr("int", 64),
        },
        samples=_linear_attention_samples,
        doc="Linear attention over packed heads [B, T, H*D] with a recurrent state [B, H_kv, d_k, d_v].",
    )
)


def _tensor_scatter_infer(ins, attrs):
    cache, update = ins[0], ins[1]
    axis = attrs["axis"] % len(cache.shape)
    ok = len(update.shape) == len(cache.shape) and all(
        u == c if i != axis else u <= c for i, (u, c) in enumerate(zip(update.shape, cache.shape))
    )
    if not ok or axis == 0:
        raise GraphError(f"TensorScatter: update {update.shape} does not fit cache {cache.shape} on axis {axis}")
    return [cache]


def _tensor_scatter(ins, attrs):
    cache, update = ins[0], ins[1]
    idx = ins[2] if len(ins) > 2 and ins[2] is not None else np.zeros(cache.shape[0], np.int64)
    axis = attrs["axis"] % cache.ndim
    out = cache.copy()
    length, steps = cache.shape[axis], update.shape[axis]
    for b in range(cache.shape[0]):
        pos = int(idx[b]) + np.arange(steps)
        if attrs["mode"] == "circular":
            pos = pos % length
        view = np.moveaxis(out[b], axis - 1, 0)  # a view: writing it writes `out`
        view[pos] = np.moveaxis(update[b], axis - 1, 0)
    return [out]


register(
    OpSchema(
        "TensorScatter",
        infer=_tensor_scatter_infer,
        reference=_tensor_scatter,
        n_inputs=(2, 3),
        attrs={"axis": Attr("int", -2), "mode": Attr("str", "linear", ("linear", "circular"))},
        doc="Write update into a cache along the sequence axis at each batch entry's write index.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 2, 3, 5, 4), rand(rng, 2, 3, 2, 4), np.array([1, 3])]),
                Sample([rand(rng, 2, 6, 2), rand(rng, 2, 3, 2), np.array([4, 0])], {"axis": 1, "mode": "circular"}),
            ]
        ),
    )
)
