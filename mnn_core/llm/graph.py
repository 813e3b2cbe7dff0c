"""The decoder as one mnn graph, planned per chunk length (prefill) and for one token (decode).

Inputs: `ids` and `pos` [B, S] (int64), an additive mask [B, 1, G*S, C + S] per attention kind
(full, and windowed where a layer slides), per layer the KV cache: `k_cache.i` [B, Hkv, D, C]
(keys stored transposed, as the score MatMul reads them) and `v_cache.i` [B, Hkv, C, D], and
`logit_rows` [B, R] (int64): which of the chunk's B*S rows (row-major) reach the output head.
Outputs: `logits` [B, R, V] and each layer's new keys and values (`k_new.i` [B, Hkv, D, S],
`v_new.i` [B, Hkv, S, D]) for the runtime to write into the cache at the chunk's positions.

Why `logit_rows`: a prompt needs the logits of its last token only, and the head (vocabulary x
hidden) is a quarter of a small model's weights: R = 1 skips its product for the other rows of a
chunk, and the [S, V] logits (a 64-row chunk of a 152k vocabulary: 39 MB) are never made.

Why scores over [cache | chunk] instead of concatenating the chunk into the cache: a Concat would
copy the whole cache every token. Here the cache is only read, by MatMuls (C executions), so a run
reads the caller's cache arrays where they are (Session's movable inputs) and nothing of size C is
copied; the mask hides cache slots not yet written, and slots outside a sliding window.
"""

from __future__ import annotations

import numpy as np

from ..graph.builder import GraphBuilder
from ..graph.ir import Graph
from ..runtime.weights import give_back_freed
from .config import ACTIVATIONS, LlmConfig
from .quantize import WeightQuant, rows_per_slice
from .weights import Checkpoint

NEG = -1e30  # the mask's "hidden": exp underflows to exactly 0, without inf arithmetic


class _Names:
    """Tensor names of the HF checkpoint for this family."""

    def __init__(self, cfg: LlmConfig, ckpt: Checkpoint, quant: WeightQuant | None, batch: int):
        self.prefix = "model." if "model.embed_tokens.weight" in ckpt else ""
        self.cfg, self.ckpt, self.quant, self.batch = cfg, ckpt, quant, batch

    def get(self, name: str) -> np.ndarray:
        return self.ckpt.get(self.prefix + name)

    def mapped(self, name: str, prefixed: bool = True) -> np.ndarray:
        """A float weight as it lies in the file (a read-only map: Checkpoint.view), else a float32 copy."""
        full = (self.prefix if prefixed else "") + name
        arr = self.ckpt.view(full)
        return self.ckpt.get(full) if arr is None else arr

    def has(self, name: str) -> bool:
        return self.prefix + name in self.ckpt


def build_decoder(
    cfg: LlmConfig, ckpt: Checkpoint, context: int, batch: int = 1, quant: WeightQuant | None = None
) -> Graph:
    """The decoder graph for a cache of `context` positions; S (tokens per run) stays symbolic.
    `quant`: the projections' weights (and the head) quantized as MatMulNBits operands (quantize.py);
    None keeps them float32."""
    w = _Names(cfg, ckpt, quant, batch)
    b = GraphBuilder(f"{cfg.model_type}_decoder")
    H, Hkv, D = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
    ids = b.input("ids", (batch, "S"), "int64")
    pos = b.input("pos", (batch, "S"), "int64")
    logit_rows = b.input("logit_rows", (batch, "R"), "int64")
    windowed = any(cfg.sliding_window)
    masks = {None: b.input("mask", (batch, 1, "GS", "C_S"), "float32")}
    if windowed:
        masks["window"] = b.input("mask_window", (batch, 1, "GS", "C_S"), "float32")
    caches = []
    for i in range(cfg.num_layers):
        caches.append(
            (b.input(f"k_cache.{i}", (batch, Hkv, D, context)), b.input(f"v_cache.{i}", (batch, Hkv, context, D)))
        )

    tied = cfg.tie_word_embeddings or "lm_head.weight" not in ckpt
    head_bits = quant.head_bits if quant is not None else None
    head = None
    if head_bits and tied:  # the table once, quantized: the head multiplies it, the embedding gathers from it
        head, head_shape = _nbits_from_checkpoint(b, quant, w, "embed_tokens.weight", head_bits)
        x = _gather_rows(b, head, ids, cfg.hidden_size, quant.group, head_bits)
    else:
        x = b.Gather(b.const(w.mapped("embed_tokens.weight"), "embed"), ids, axis=0)
    if cfg.embed_scale != 1.0:
        x = b.Mul(x, b.const(np.float32(cfg.embed_scale), "embed_scale"))
    cos, sin = cfg.rope_tables(context)
    half = cfg.rotary_dim // 2
    sin = np.concatenate([-sin[:, :half], sin[:, half:]], axis=1)  # rotate_half's sign, folded in
    shape4 = [0, 0, 1, cfg.rotary_dim]
    cos_p = b.Reshape(b.Gather(b.const(cos, "rope_cos"), pos, axis=0), shape=shape4)
    sin_p = b.Reshape(b.Gather(b.const(sin, "rope_sin"), pos, axis=0), shape=shape4)
    rope = (cos_p, sin_p)

    for i in range(cfg.num_layers):
        p = f"layers.{i}."
        h = _rms_norm(b, cfg, x, w.get(p + "input_layernorm.weight"))
        q, k, v = _qkv(b, cfg, w, p, h)
        q = b.Reshape(q, shape=[0, 0, H, D])
        k = b.Reshape(k, shape=[0, 0, Hkv, D])
        if cfg.qk_norm:
            q = _rms_norm(b, cfg, q, w.get(p + "self_attn.q_norm.weight"))
            k = _rms_norm(b, cfg, k, w.get(p + "self_attn.k_norm.weight"))
        q, k = _rotary(b, cfg, q, rope), _rotary(b, cfg, k, rope)
        q = b.Mul(q, b.const(np.float32(D**-0.5), "scale"))
        k_new = b.Transpose(k, perm=[0, 2, 3, 1])  # [B, Hkv, D, S]
        v_new = b.Transpose(b.Reshape(v, shape=[0, 0, Hkv, D]), perm=[0, 2, 1, 3])  # [B, Hkv, S, D]
        b.output(k_new, f"k_new.{i}")
        b.output(v_new, f"v_new.{i}")
        mask = masks["window" if cfg.sliding_window[i] else None]
        attn = _attention(b, cfg, q, f"k_new.{i}", f"v_new.{i}", caches[i], mask, context)
        o = _linear(b, w, p + "self_attn.o_proj", attn, cfg.o_bias)
        x = b.Add(x, o)
        h = _rms_norm(b, cfg, x, w.get(p + "post_attention_layernorm.weight"))
        x = b.Add(x, _mlp(b, cfg, w, p, h))
        if quant is not None:  # quantizing's float temporaries leave holes that glibc's heap keeps
            give_back_freed()

    x = b.Gather(b.Reshape(x, shape=[-1, cfg.hidden_size]), logit_rows, axis=0)  # [B, R, hidden]
    x = _rms_norm(b, cfg, x, w.get("norm.weight"))
    if head is None and head_bits:  # untied: a head of its own, quantized as it is read
        head, head_shape = _nbits_from_checkpoint(b, quant, w, "lm_head.weight", head_bits, prefixed=False)
    if head is not None:
        logits = _nbits_matmul(b, quant, x, head, head_shape, head_bits)
    else:  # a map of its own, even when tied: its pages are handed back once packed, the Gather's are not
        table = w.mapped("embed_tokens.weight") if tied else w.mapped("lm_head.weight", prefixed=False)
        logits = _dense(b, w, x, table, "lm_head")
    b.output(logits, "logits")
    return b.build()


def _nbits_operands(b: GraphBuilder, quant: WeightQuant, weight: np.ndarray, name: str, bits: int) -> tuple:
    """MatMulNBits' B, scales and zero points (None: symmetric) of an [out, in] weight, as constants."""
    packed, scale, zero = quant.pack(np.asarray(weight, np.float32), bits)
    return (
        b.const(packed, name + ".q"),
        b.const(scale, name + ".scale"),
        None if zero is None else b.const(zero, name + ".zero"),
    )


def _nbits_from_checkpoint(
    b: GraphBuilder, quant: WeightQuant, w: _Names, name: str, bits: int, prefixed: bool = True
) -> tuple[tuple, tuple]:
    """The head's MatMulNBits operands (symmetric) and its [out, in] shape, quantized a slice of rows at a
    time as they are read: a vocabulary-sized float table is never held whole."""
    full = (w.prefix if prefixed else "") + name
    shape = w.ckpt.shape(full)
    q = WeightQuant(bits, quant.group, True)
    packed, scale, _ = q.pack_slices(w.ckpt.rows(full, rows_per_slice(shape[1])), shape, bits)
    return (b.const(packed, "lm_head.q"), b.const(scale, "lm_head.scale"), None), shape


def _nbits_matmul(b: GraphBuilder, quant: WeightQuant, x: str, operands: tuple, shape, bits: int, bias=None) -> str:
    n, k = shape
    qb, scale, zero = operands
    inputs = [x, qb, scale, zero] + ([None, bias] if bias is not None else [])
    return b.MatMulNBits(
        *inputs, K=int(k), N=int(n), bits=bits, block_size=quant.group, accuracy_level=quant.accuracy_level
    )


def _gather_rows(b: GraphBuilder, operands: tuple, ids: str, k: int, group: int, bits: int) -> str:
    """Rows `ids` of a symmetric MatMulNBits weight, dequantized: (q - 2^(bits-1)) * scale per group."""
    qb, scale, _ = operands
    rows = b.Gather(qb, ids, axis=0)  # [B, S, blocks, bytes]
    if bits == 4:  # the even element in the low nibble: [..., bytes, 2] -> [..., group]
        lo = b.BitwiseAnd(rows, b.const(np.uint8(15), "nibble"))
        hi = b.BitShift(rows, b.const(np.uint8(4), "four"), direction="RIGHT")
        rows = b.Reshape(b.Concat(b.Unsqueeze(lo, axes=[-1]), b.Unsqueeze(hi, axes=[-1]), axis=-1), shape=[0, 0, 0, -1])
    vals = b.Sub(b.Cast(rows, to="float32"), b.const(np.float32(1 << (bits - 1)), "zero"))
    vals = b.Mul(vals, b.Unsqueeze(b.Gather(scale, ids, axis=0), axes=[-1]))  # [B, S, blocks, group]
    vals = b.Reshape(vals, shape=[0, 0, -1])
    return vals if -(-k // group) * group == k else b.Slice(vals, starts=[0], ends=[k], axes=[-1])


def _linear(b: GraphBuilder, w: _Names, name: str, x: str, bias: bool) -> str:
    if w.quant is not None:
        weight = w.get(name + ".weight")
        operands = _nbits_operands(b, w.quant, weight, name, w.quant.bits)
        bias_c = b.const(w.get(name + ".bias"), name + ".bias") if bias else None
        return _nbits_matmul(b, w.quant, x, operands, weight.shape, w.quant.bits, bias_c)
    bias_c = b.const(w.get(name + ".bias"), name + ".bias") if bias else None
    return _dense(b, w, x, w.mapped(name + ".weight"), name, bias_c)


def _dense(b: GraphBuilder, w: _Names, x: str, weight: np.ndarray, name: str, bias: str | None = None) -> str:
    """x [B, S, in] @ weight^T (+ bias) of a float [out, in] weight: a Gemm with transB reads the weight in
    the checkpoint's own layout, so the graph holds the file's map of it and no transposed copy."""
    n, k = weight.shape
    y = b.Gemm(b.Reshape(x, shape=[-1, k]), b.const(weight, name), *([bias] if bias else []), transB=1)
    return b.Reshape(y, shape=[w.batch, -1, n])


def _projection(b: GraphBuilder, w: _Names, x: str, weight: np.ndarray, name: str) -> str:
    """x @ weight^T of an [out, in] weight without bias, float or MatMulNBits."""
    if w.quant is None:
        return _dense(b, w, x, weight, name)
    operands = _nbits_operands(b, w.quant, weight, name, w.quant.bits)
    return _nbits_matmul(b, w.quant, x, operands, weight.shape, w.quant.bits)


def _qkv(b: GraphBuilder, cfg: LlmConfig, w: _Names, p: str, h: str) -> tuple[str, str, str]:
    if cfg.family != "phi3":
        return tuple(_linear(b, w, p + f"self_attn.{n}_proj", h, cfg.qkv_bias) for n in "qkv")
    # Phi-3 stores q, k and v as one matrix: one MatMul, then three slices of its columns
    weight = w.mapped(p + "self_attn.qkv_proj.weight") if w.quant is None else w.get(p + "self_attn.qkv_proj.weight")
    y = _projection(b, w, h, weight, p + "qkv_proj")
    nq, nk = cfg.num_heads * cfg.head_dim, cfg.num_kv_heads * cfg.head_dim
    return tuple(
        b.Slice(y, starts=[lo], ends=[hi], axes=[-1]) for lo, hi in ((0, nq), (nq, nq + nk), (nq + nk, nq + 2 * nk))
    )


def _mlp(b: GraphBuilder, cfg: LlmConfig, w: _Names, p: str, h: str) -> str:
    if cfg.family == "phi3":
        name = p + "mlp.gate_up_proj.weight"
        y = _projection(b, w, h, w.mapped(name) if w.quant is None else w.get(name), p + "gate_up")
        n = cfg.intermediate_size
        gate, up = b.Slice(y, starts=[0], ends=[n], axes=[-1]), b.Slice(y, starts=[n], ends=[2 * n], axes=[-1])
    else:
        gate = _linear(b, w, p + "mlp.gate_proj", h, cfg.mlp_bias)
        up = _linear(b, w, p + "mlp.up_proj", h, cfg.mlp_bias)
    return _linear(b, w, p + "mlp.down_proj", b.Mul(_activation(b, cfg, gate), up), cfg.mlp_bias)


def _activation(b: GraphBuilder, cfg: LlmConfig, x: str) -> str:
    op, attrs = ACTIVATIONS[cfg.activation]
    if op == "Gelu" and attrs.get("approximate") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): the op set's Gelu is the erf form
        cube = b.Mul(b.Mul(x, x), x)
        inner = b.Mul(
            b.Add(x, b.Mul(cube, b.const(np.float32(0.044715), "gelu_c"))),
            b.const(np.float32(np.sqrt(2 / np.pi)), "gelu_k"),
        )
        return b.Mul(b.Mul(x, b.const(np.float32(0.5), "half")), b.Add(b.Tanh(inner), b.const(np.float32(1), "one")))
    return b.op(op, x, **attrs)


def _rms_norm(b: GraphBuilder, cfg: LlmConfig, x: str, weight: np.ndarray) -> str:
    mean = b.ReduceMean(b.Mul(x, x), axes=[-1], keepdims=1)
    inv = b.Reciprocal(b.Sqrt(b.Add(mean, b.const(np.float32(cfg.rms_norm_eps), "eps"))))
    scale = weight + 1.0 if cfg.norm_plus_one else weight
    return b.Mul(b.Mul(x, inv), b.const(scale.astype(np.float32), "norm"))


def _rotary(b: GraphBuilder, cfg: LlmConfig, x: str, rope: tuple[str, str]) -> str:
    """HF's x * cos + rotate_half(x) * sin over the first rotary_dim dims of each head [B, S, h, D]."""
    r, half, D = cfg.rotary_dim, cfg.rotary_dim // 2, cfg.head_dim
    cos, sin = rope
    rot_in = x if r == D else b.Slice(x, starts=[0], ends=[r], axes=[-1])
    x1 = b.Slice(rot_in, starts=[0], ends=[half], axes=[-1])
    x2 = b.Slice(rot_in, starts=[half], ends=[r], axes=[-1])
    out = b.Add(b.Mul(rot_in, cos), b.Mul(b.Concat(x2, x1, axis=-1), sin))
    return out if r == D else b.Concat(out, b.Slice(x, starts=[r], ends=[D], axes=[-1]), axis=-1)


def _attention(b: GraphBuilder, cfg: LlmConfig, q: str, k_new: str, v_new: str, cache, mask: str, context: int) -> str:
    """softmax(q [cache | chunk]^T + mask) [cache | chunk], heads grouped over the KV heads."""
    Hkv, G, D = cfg.num_kv_heads, cfg.groups, cfg.head_dim
    k_cache, v_cache = cache
    q = b.Transpose(b.Reshape(q, shape=[0, 0, Hkv, G, D]), perm=[0, 2, 3, 1, 4])  # [B, Hkv, G, S, D]
    q = b.Reshape(q, shape=[0, Hkv, -1, D])  # [B, Hkv, G*S, D]
    scores = b.Concat(b.MatMul(q, k_cache), b.MatMul(q, k_new), axis=-1)  # [B, Hkv, G*S, C+S]
    probs = b.Softmax(b.Add(scores, mask), axis=-1)  # the mask's rows repeat per group: [B, 1, G*S, C+S]
    p_cache = b.Slice(probs, starts=[0], ends=[context], axes=[-1])
    p_new = b.Slice(probs, starts=[context], ends=[2**62], axes=[-1])
    out = b.Add(b.MatMul(p_cache, v_cache), b.MatMul(p_new, v_new))  # [B, Hkv, G*S, D]
    out = b.Transpose(b.Reshape(out, shape=[0, Hkv, G, -1, D]), perm=[0, 3, 1, 2, 4])  # [B, S, Hkv, G, D]
    return b.Reshape(out, shape=[0, 0, Hkv * G * D])
