"""A GAN on a 2-D ring of Gaussians: generator and discriminator, one optimizer each, detach() for the
discriminator's step, BCEWithLogitsLoss against ones and zeros, Adam with betas (0.5, 0.999)."""

import numpy as np
import torch
import torch.nn as nn


class GAN(nn.Module):
    def __init__(self, noise=4, hidden=32):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(noise, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 2))
        self.discriminator = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))


def build():
    return GAN()


def train(model, steps=25, batch=64):
    rng = np.random.default_rng(0)
    g_opt = torch.optim.Adam(model.generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(model.discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(batch, 1), torch.zeros(batch, 1)
    losses = []
    for _ in range(steps):
        angle = rng.integers(0, 8, batch) * np.pi / 4
        real = np.stack([np.cos(angle), np.sin(angle)], 1) * 2 + rng.normal(0, 0.05, (batch, 2))
        real = torch.from_numpy(real.astype(np.float32))
        noise = torch.from_numpy(rng.standard_normal((batch, 4)).astype(np.float32))
        fake = model.generator(noise)

        d_loss = bce(model.discriminator(real), ones) + bce(model.discriminator(fake.detach()), zeros)
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()

        g_loss = bce(model.discriminator(fake), ones)
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        losses += [d_loss.item(), g_loss.item()]
    return {"losses": losses}


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"final losses {train(build())['losses'][-2:]}")
