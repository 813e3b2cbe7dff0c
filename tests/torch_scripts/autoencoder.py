"""A convolutional autoencoder: strided convolutions down, transposed convolutions up, a sigmoid output,
MSE reconstruction loss, Adam with weight decay."""

import numpy as np
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),
            nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1),
            nn.ReLU(),
            nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def build():
    return AutoEncoder()


def train(model, steps=20):
    rng = np.random.default_rng(0)
    blobs = np.exp(-((np.arange(16)[:, None] - 8) ** 2 + (np.arange(16)[None] - 8) ** 2) / 20.0)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=1e-5)
    criterion = nn.MSELoss()
    losses = []
    for _ in range(steps):
        shift = rng.integers(-4, 5, (16, 2))
        images = np.stack([np.roll(blobs, tuple(s), axis=(0, 1)) for s in shift])[:, None]
        x = torch.from_numpy(images.astype(np.float32))
        loss = criterion(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses}


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"final loss {train(build())['losses'][-1]:.4f}")
