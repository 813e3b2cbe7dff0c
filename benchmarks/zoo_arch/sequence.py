"""Sequence models: a BERT-base encoder, a Whisper-style audio encoder, GRU and LSTM taggers. Layer
structure and sizes follow the originals (BERT-base: 12 layers, hidden 768, 12 heads; Whisper tiny:
two conv1d then 4 layers of width 384); weights are random, seeded by the registry."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .vision import EncoderLayer


class BertLayer(nn.Module):
    """A post-norm layer as BERT has it: separate q, k, v projections, additive mask, erf GELU."""

    def __init__(self, dim: int, heads: int, hidden: int):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(dim, eps=1e-12), nn.LayerNorm(dim, eps=1e-12)
        self.up, self.down = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x, mask):
        b, n, d = x.shape

        def heads(t):
            return t.view(b, n, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + mask
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.down(F.gelu(self.up(x))))


class Bert(nn.Module):
    """BERT-base: token, position and segment embeddings (Gather), 12 post-norm layers, a tanh pooler.
    Inputs input_ids and attention_mask (int64, (batch, sequence)); outputs the last hidden state and
    the pooled first token."""

    def __init__(self, vocab: int = 30522, dim: int = 768, layers: int = 12, heads: int = 12, positions: int = 512):
        super().__init__()
        self.words, self.positions = nn.Embedding(vocab, dim), nn.Embedding(positions, dim)
        self.segments = nn.Embedding(2, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(dim, heads, 4 * dim) for _ in range(layers))
        self.pooler = nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask):
        n = input_ids.shape[1]
        pos = torch.arange(n, device=input_ids.device).unsqueeze(0)
        x = self.words(input_ids) + self.positions(pos) + self.segments(torch.zeros_like(input_ids))
        x = self.ln(x)
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pooler(x[:, 0]))


def sinusoids(length: int, channels: int) -> torch.Tensor:
    """Whisper's fixed positional embedding."""
    inc = math.log(10000) / (channels // 2 - 1)
    t = torch.exp(-inc * torch.arange(channels // 2))
    scaled = torch.arange(length)[:, None] * t[None, :]
    return torch.cat([torch.sin(scaled), torch.cos(scaled)], 1)


class WhisperEncoder(nn.Module):
    """Whisper's audio encoder (tiny: width 384, 4 layers, 6 heads): two conv1d with GELU (the second
    halves the frames), sinusoidal positions, pre-norm layers, a final LayerNorm. Input log-mel
    (batch, 80, frames); output (batch, frames / 2, width)."""

    def __init__(self, mels: int = 80, frames: int = 3000, dim: int = 384, layers: int = 4, heads: int = 6):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, dim, 3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        self.register_buffer("positions", sinusoids(frames // 2, dim))
        self.layers = nn.Sequential(*[EncoderLayer(dim, heads, 4 * dim, eps=1e-5) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)

    def forward(self, mel):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).permute(0, 2, 1)
        return self.ln(self.layers(x + self.positions))


class Tagger(nn.Module):
    """A sequence tagger: embedding, a bidirectional 2-layer GRU or LSTM, a linear layer per token.
    Input token ids (batch, sequence), int64; output tag logits (batch, sequence, tags)."""

    def __init__(self, cell: str = "gru", vocab: int = 20000, embed: int = 128, hidden: int = 256, tags: int = 20):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        rnn = {"gru": nn.GRU, "lstm": nn.LSTM}[cell]
        self.rnn = rnn(embed, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, ids):
        return self.out(self.rnn(self.embed(ids))[0])
