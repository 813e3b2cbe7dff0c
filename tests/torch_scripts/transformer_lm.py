"""A small causal transformer language model on random token sequences that follow a rule (each token is
the previous one plus a per-sequence step, modulo the vocabulary): AdamW, a cosine schedule, gradient
clipping, a causal mask."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CONTEXT, D_MODEL = 32, 16, 32


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(CONTEXT, D_MODEL)
        layer = nn.TransformerEncoderLayer(D_MODEL, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        t = tokens.size(1)
        positions = torch.arange(t)
        x = self.tok(tokens) * math.sqrt(D_MODEL) + self.pos(positions)
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        x = self.encoder(x, mask=mask)
        return self.head(self.norm(x))


def build():
    return TinyLM()


def batches(steps, batch=16):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        start = rng.integers(0, VOCAB, (batch, 1))
        stride = rng.integers(1, 4, (batch, 1))
        seq = (start + stride * np.arange(CONTEXT + 1)) % VOCAB
        yield torch.from_numpy(seq[:, :-1]), torch.from_numpy(seq[:, 1:])


def train(model, steps=30):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    losses = []
    for inputs, targets in batches(steps):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    return {"losses": losses}


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"final loss {train(build())['losses'][-1]:.4f}")
