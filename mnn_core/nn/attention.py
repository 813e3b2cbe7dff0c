"""Multi-head attention, as torch.nn.MultiheadAttention (same parameters and layout)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import MnnError
from ..express import Var, apply
from ..express import functional as F
from . import init
from .layers import Linear
from .module import Module, Parameter


def _heads(x: Var, num_heads: int) -> Var:
    """(N, L, E) -> (N, H, L, E/H); 0 in a Reshape keeps that dim, so a symbolic batch survives."""
    head_dim = x.shape[-1] // num_heads
    return F.transpose(apply("Reshape", x, shape=[0, 0, num_heads, head_dim]), [0, 2, 1, 3])


class MultiheadAttention(Module):
    def __init__(
        self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, batch_first: bool = False
    ):
        super().__init__()
        if embed_dim % num_heads:
            raise MnnError(f"MultiheadAttention: embed_dim {embed_dim} must divide by num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.in_proj_weight = Parameter(np.empty((3 * embed_dim, embed_dim), np.float32))
        init.xavier_uniform_(self.in_proj_weight)
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, np.float32)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights: bool = True,
        attn_mask=None,
        average_attn_weights: bool = True,
    ):
        if not self.batch_first:  # (L, N, E) -> (N, L, E)
            query, key, value = (F.transpose(t, [1, 0, 2]) for t in (query, key, value))
        e, h = self.embed_dim, self.num_heads
        w, b = self.in_proj_weight, self.in_proj_bias
        q, k, v = (
            F.linear(t, w[i * e : (i + 1) * e], None if b is None else b[i * e : (i + 1) * e])
            for i, t in enumerate((query, key, value))
        )
        q, k, v = _heads(q, h), _heads(k, h), _heads(v, h)
        scores = (q @ F.transpose(k, [0, 1, 3, 2])) * (1.0 / math.sqrt(e // h))  # (N, H, L, S)
        if attn_mask is not None:
            scores = scores + self._bias(attn_mask, scores)
        if key_padding_mask is not None:  # (N, S) -> (N, 1, 1, S)
            scores = scores + F.unsqueeze(self._bias(key_padding_mask, scores), [1, 2])
        attn = F.softmax(scores, -1)
        attn = F.dropout(attn, self.dropout, self.training)
        out = F.transpose(attn @ v, [0, 2, 1, 3])  # (N, L, H, D)
        out = self.out_proj(apply("Reshape", out, shape=[0, 0, e]))
        if not self.batch_first:
            out = F.transpose(out, [1, 0, 2])
        if not need_weights:
            return out, None
        return out, (F.mean(attn, axis=1) if average_attn_weights else attn)

    @staticmethod
    def _bias(mask, like: Var) -> Var:
        m = mask if isinstance(mask, Var) else Var(np.asarray(mask))
        if m.dtype == np.bool_:
            neg = np.full(m.shape, -np.inf, like.dtype)
            zero = np.zeros(m.shape, like.dtype)
            return F.where(m, Var(neg), Var(zero))
        return m.astype(like.dtype) if m.dtype != like.dtype else m
