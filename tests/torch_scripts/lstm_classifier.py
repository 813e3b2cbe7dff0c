"""An LSTM sequence classifier: is the count of 'signal' tokens above half? Embedding, a 2-layer LSTM
(batch_first), the last hidden state into a linear head, Adam."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

VOCAB, LENGTH = 12, 20


class Classifier(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embed(tokens))
        return self.head(h[-1])


def build():
    return Classifier()


def make_data(n=384):
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, (n, LENGTH))
    labels = ((tokens < 3).sum(axis=1) > LENGTH * 3 / VOCAB).astype(np.int64)
    return TensorDataset(torch.from_numpy(tokens), torch.from_numpy(labels))


def train(model, epochs=2):
    data = make_data()
    loader = DataLoader(data, batch_size=32)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    criterion = nn.CrossEntropyLoss()
    losses, correct, seen = [], 0, 0
    for _ in range(epochs):
        for tokens, labels in loader:
            logits = model(tokens)
            loss = criterion(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            correct += (logits.argmax(-1) == labels).sum().item()
            seen += labels.shape[0]
    return {"losses": losses, "accuracy": correct / seen}


if __name__ == "__main__":
    torch.manual_seed(0)
    result = train(build())
    print(f"final loss {result['losses'][-1]:.4f} accuracy {result['accuracy']:.3f}")
