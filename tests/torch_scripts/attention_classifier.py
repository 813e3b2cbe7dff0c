"""Variable-length token sequences classified with self-attention: Embedding with a padding index,
nn.MultiheadAttention with a key padding mask, masked mean pooling, AdamW with OneCycleLR per batch."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, PAD, LENGTH = 20, 0, 12


class AttentionClassifier(nn.Module):
    def __init__(self, dim=24, classes=3):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim, padding_idx=PAD)
        self.attn = nn.MultiheadAttention(dim, num_heads=4, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens):
        pad = tokens == PAD
        x = self.embed(tokens)
        attended, _ = self.attn(x, x, x, key_padding_mask=pad)
        x = self.norm(x + attended)
        keep = (~pad).float().unsqueeze(-1)
        pooled = (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        return self.out(pooled)


def build():
    return AttentionClassifier()


def make_batch(rng, batch=24):
    lengths = rng.integers(3, LENGTH + 1, batch)
    tokens = rng.integers(1, VOCAB, (batch, LENGTH))
    tokens[np.arange(LENGTH)[None] >= lengths[:, None]] = PAD
    label = np.array([np.bincount(t[t != PAD] % 3, minlength=3).argmax() for t in tokens])
    return torch.from_numpy(tokens), torch.from_numpy(label)


def train(model, steps=30):
    rng = np.random.default_rng(0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=steps)
    losses = []
    for _ in range(steps):
        tokens, labels = make_batch(rng)
        loss = F.cross_entropy(model(tokens), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    tokens, labels = make_batch(np.random.default_rng(1), batch=200)
    with torch.no_grad():
        accuracy = (model(tokens).argmax(-1) == labels).float().mean().item()
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-1]:.4f} accuracy {result['accuracy']:.3f}")
