"""Decoder-only generation: Hugging Face checkpoints (Llama, Qwen2/3, Mistral, Phi-3, Gemma) run as
planned Sessions with a KV cache sized to the context (docs/LLM.md).

    llm = mnn_core.llm.load("checkpoint_dir", backend="x86", threads=2)
    text = llm.generate("Hello", max_tokens=32)
"""

from __future__ import annotations

from .config import LlmConfig, load_config
from .generate import LLM, load
from .model import Decoder
from .sampling import SamplingParams

__all__ = ["LLM", "Decoder", "LlmConfig", "SamplingParams", "load", "load_config"]
