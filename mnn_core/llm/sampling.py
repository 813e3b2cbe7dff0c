"""Choosing the next token from logits: greedy, or sampled after Hugging Face's processors.

The order is HF's: repetition penalty on the raw logits, then temperature, top-k and top-p
(nucleus), then a draw from the softmax with the generator's seed. temperature=0 is greedy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MnnError


@dataclass
class SamplingParams:
    temperature: float = 0.0
    top_k: int = 0  # 0: off
    top_p: float = 1.0  # 1: off
    repetition_penalty: float = 1.0  # 1: off
    seed: int | None = None

    def check(self) -> None:
        if self.temperature < 0:
            raise MnnError(f"temperature must be >= 0 (0 is greedy), got {self.temperature}")
        if self.top_k < 0:
            raise MnnError(f"top_k must be >= 0 (0 is off), got {self.top_k}")
        if not 0 < self.top_p <= 1:
            raise MnnError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.repetition_penalty <= 0:
            raise MnnError(f"repetition_penalty must be > 0 (1 is off), got {self.repetition_penalty}")


class Sampler:
    def __init__(self, params: SamplingParams):
        params.check()
        self.params = params
        self.rng = np.random.default_rng(params.seed)

    def __call__(self, logits: np.ndarray, history: np.ndarray) -> int:
        p = self.params
        logits = np.asarray(logits, dtype=np.float64).copy()
        if p.repetition_penalty != 1.0 and len(history):
            seen = np.unique(history)
            vals = logits[seen]
            logits[seen] = np.where(vals < 0, vals * p.repetition_penalty, vals / p.repetition_penalty)
        if p.temperature == 0:
            return int(np.argmax(logits))
        logits /= p.temperature
        if p.top_k and p.top_k < len(logits):
            kth = np.partition(logits, -p.top_k)[-p.top_k]
            logits[logits < kth] = -np.inf
        if p.top_p < 1.0:
            order = np.argsort(-logits, kind="stable")
            probs = _softmax(logits[order])
            # keep the smallest prefix whose mass reaches top_p (the first token always stays)
            drop = np.cumsum(probs) - probs >= p.top_p
            logits[order[drop]] = -np.inf
        probs = _softmax(logits)
        return int(self.rng.choice(len(probs), p=probs))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x))
    return e / e.sum()
