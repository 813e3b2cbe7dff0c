"""A decoder's shape and arithmetic, read from a Hugging Face `config.json`.

One dataclass covers the Llama, Qwen2/Qwen3, Mistral, Phi-3 and Gemma layouts: they differ in
a handful of switches (bias on q/k/v, per-head q/k norms, fused projections, the MLP's
activation, the norm's `1 + w`, embedding scale, tied embeddings, sliding window). Anything
else (Gemma-2's soft-capping, mixtures of experts) is refused by name rather than run wrongly.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MnnError

#: model_type -> the family whose weight names and switches it uses
FAMILIES = {"llama": "llama", "mistral": "llama", "qwen2": "llama", "qwen3": "llama", "phi3": "phi3", "gemma": "gemma"}
#: HF activation names -> the graph's op (and its attributes)
ACTIVATIONS = {
    "silu": ("Silu", {}),
    "swish": ("Silu", {}),
    "gelu": ("Gelu", {}),
    "gelu_pytorch_tanh": ("Gelu", {"approximate": "tanh"}),
    "gelu_new": ("Gelu", {"approximate": "tanh"}),
}
ROPE_TYPES = ("default", "linear", "dynamic", "llama3", "yarn", "longrope")


@dataclass
class LlmConfig:
    model_type: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rms_norm_eps: float
    max_position_embeddings: int
    activation: str = "silu"
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False  # Qwen3: RMSNorm over each head of q and k
    norm_plus_one: bool = False  # Gemma: the norm multiplies by (1 + w)
    embed_scale: float = 1.0  # Gemma: embeddings times sqrt(hidden)
    rotary_dim: int = 0  # the leading dims of a head that rotate (partial_rotary_factor)
    rope_theta: float = 10000.0
    rope: dict = field(default_factory=dict)  # the scaling parameters, "rope_type" included
    sliding_window: list = field(default_factory=list)  # per layer: a window length or None
    bos_token_id: int | None = None
    eos_token_ids: tuple = ()
    raw: dict = field(default_factory=dict, repr=False)  # config.json as read (an export carries it)

    @property
    def family(self) -> str:
        return FAMILIES[self.model_type]

    @property
    def groups(self) -> int:
        return self.num_heads // self.num_kv_heads

    def rope_tables(self, length: int) -> tuple[np.ndarray, np.ndarray]:
        """cos and sin for positions [0, length), each (length, rotary_dim) as HF lays them out
        (the half-frequencies repeated), scaled by the variant's attention factor."""
        inv_freq, factor = _inv_freq(self, length)
        angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
        angles = np.concatenate([angles, angles], axis=1)
        return (np.cos(angles) * factor).astype(np.float32), (np.sin(angles) * factor).astype(np.float32)


def load_config(path: str | Path) -> LlmConfig:
    """Read `path`/config.json (or the file itself)."""
    path = Path(path)
    file = path / "config.json" if path.is_dir() else path
    if not file.is_file():
        raise MnnError(f"{file}: no config.json; an LLM checkpoint is a directory with config.json and *.safetensors")
    try:
        raw = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise MnnError(f"{file}: cannot read it as JSON ({exc})") from None
    return parse_config(raw, str(file))


def parse_config(raw: dict, where: str = "config.json") -> LlmConfig:
    model_type = raw.get("model_type")
    if model_type not in FAMILIES:
        raise MnnError(f"{where}: model_type {model_type!r} is not supported; supported: {', '.join(FAMILIES)}")
    for key in ("final_logit_softcapping", "attn_logit_softcapping", "num_experts", "num_local_experts"):
        if raw.get(key):
            raise MnnError(f"{where}: {key} is set; this runtime does not implement it")

    def need(key):
        if key not in raw:
            raise MnnError(f"{where}: {key} is missing")
        return raw[key]

    hidden, heads = int(need("hidden_size")), int(need("num_attention_heads"))
    kv_heads = int(raw.get("num_key_value_heads") or heads)
    head_dim = int(raw.get("head_dim") or hidden // heads)
    if heads % kv_heads:
        raise MnnError(f"{where}: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}")
    act = raw.get("hidden_activation") or raw.get("hidden_act") or "silu"
    if model_type == "gemma" and raw.get("hidden_activation") is None and act == "gelu":
        act = "gelu_pytorch_tanh"  # what HF's Gemma runs for a legacy "gelu" hidden_act
    if act not in ACTIVATIONS:
        raise MnnError(f"{where}: activation {act!r} is not supported; supported: {', '.join(ACTIVATIONS)}")
    rope = dict(raw.get("rope_parameters") or raw.get("rope_scaling") or {})
    rope_type = rope.get("rope_type") or rope.get("type") or "default"
    if rope_type not in ROPE_TYPES:
        raise MnnError(f"{where}: rope type {rope_type!r} is not supported; supported: {', '.join(ROPE_TYPES)}")
    rope["rope_type"] = rope_type
    theta = float(rope.get("rope_theta") or raw.get("rope_theta") or 10000.0)
    partial = float(rope.get("partial_rotary_factor") or raw.get("partial_rotary_factor") or 1.0)
    rotary = int(head_dim * partial)
    if rotary % 2:
        raise MnnError(f"{where}: rotary dimension {rotary} (head_dim x partial_rotary_factor) is odd")
    for key in ("original_max_position_embeddings",):
        if key in raw and key not in rope:
            rope[key] = raw[key]
    layers = int(need("num_hidden_layers"))
    eos = raw.get("eos_token_id")
    eos = tuple(eos) if isinstance(eos, list) else (() if eos is None else (int(eos),))
    return LlmConfig(
        model_type=model_type,
        vocab_size=int(need("vocab_size")),
        hidden_size=hidden,
        intermediate_size=int(need("intermediate_size")),
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        rms_norm_eps=float(raw.get("rms_norm_eps", 1e-6)),
        max_position_embeddings=int(raw.get("max_position_embeddings", 2048)),
        activation=act,
        tie_word_embeddings=bool(raw.get("tie_word_embeddings", model_type == "gemma")),
        qkv_bias=model_type == "qwen2" or bool(raw.get("attention_bias")),
        o_bias=model_type not in ("qwen2",) and bool(raw.get("attention_bias")),
        mlp_bias=bool(raw.get("mlp_bias")),
        qk_norm=model_type == "qwen3",
        norm_plus_one=model_type == "gemma",
        embed_scale=math.sqrt(hidden) if model_type == "gemma" else 1.0,
        rotary_dim=rotary,
        rope_theta=theta,
        rope=rope,
        sliding_window=_windows(raw, model_type, layers),
        bos_token_id=raw.get("bos_token_id"),
        eos_token_ids=eos,
        raw=dict(raw),
    )


def _windows(raw: dict, model_type: str, layers: int) -> list:
    """Each layer's attention window (None: full), as the HF model of this type applies it."""
    window = raw.get("sliding_window")
    if not window:
        return [None] * layers
    if model_type in ("qwen2", "qwen3"):
        types = raw.get("layer_types")
        if types:
            return [window if t == "sliding_attention" else None for t in types]
        if not raw.get("use_sliding_window"):
            return [None] * layers
        first = int(raw.get("max_window_layers", layers))
        return [window if i >= first else None for i in range(layers)]
    return [int(window)] * layers


def _inv_freq(cfg: LlmConfig, length: int) -> tuple[np.ndarray, float]:
    """Inverse frequencies of the rotary dims and the attention factor, per scaling variant."""
    dim, base, rope = cfg.rotary_dim, cfg.rope_theta, cfg.rope
    kind = rope["rope_type"]
    exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
    inv = 1.0 / base**exponents
    if kind in ("default", "dynamic"):  # dynamic equals default up to max_position_embeddings (the cap)
        return inv, 1.0
    factor = float(rope.get("factor", 1.0))
    if kind == "linear":
        return inv / factor, 1.0
    if kind == "llama3":
        old = float(rope["original_max_position_embeddings"])
        low, high = float(rope["low_freq_factor"]), float(rope["high_freq_factor"])
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen > old / low, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        mid = (wavelen >= old / high) & (wavelen <= old / low)
        return np.where(mid, (1 - smooth) * inv / factor + smooth * inv, scaled), 1.0
    if kind == "yarn":
        return _yarn(cfg, inv, factor)
    # longrope (Phi-3): short factors within the original context, long beyond; the choice is made
    # once for the context this runtime is sized to
    old = int(rope.get("original_max_position_embeddings") or cfg.max_position_embeddings)
    ext = np.asarray(rope["long_factor"] if length > old else rope["short_factor"], dtype=np.float64)
    scale = cfg.max_position_embeddings / old
    attn = rope.get("attention_factor") or (math.sqrt(1 + math.log(scale) / math.log(old)) if scale > 1 else 1.0)
    return 1.0 / (ext * base**exponents), float(attn)


def _yarn(cfg: LlmConfig, inv: np.ndarray, factor: float) -> tuple[np.ndarray, float]:
    rope, dim, base = cfg.rope, cfg.rotary_dim, cfg.rope_theta
    old = float(rope.get("original_max_position_embeddings") or cfg.max_position_embeddings / factor)
    attn = rope.get("attention_factor")
    if attn is None:
        mscale, mscale_all = rope.get("mscale"), rope.get("mscale_all_dim")

        def get_mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        attn = (
            get_mscale(factor, mscale) / get_mscale(factor, mscale_all) if mscale and mscale_all else get_mscale(factor)
        )
    fast, slow = float(rope.get("beta_fast") or 32), float(rope.get("beta_slow") or 1)

    def correction(rotations):
        return dim * math.log(old / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction(fast), correction(slow)
    if rope.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    return inv / factor * (1 - extrapolation) + inv * extrapolation, float(attn)
