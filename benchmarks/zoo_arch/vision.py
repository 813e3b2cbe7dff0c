"""Image models, written after the papers' (and torchvision's / ultralytics') layer tables: the same
blocks, widths, depths and activations, so an engine sees the ops and sizes it sees in the real ones.
Weights are random (seeded by the registry); nothing here is trained."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def _divisible(v: float, divisor: int = 8) -> int:
    """torchvision's _make_divisible: round to a multiple of 8, never more than 10% down."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def conv_bn(c_in: int, c_out: int, k: int = 3, stride: int = 1, groups: int = 1, act: type | None = nn.ReLU):
    layers = [nn.Conv2d(c_in, c_out, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(c_out)]
    return nn.Sequential(*layers, act()) if act else nn.Sequential(*layers)


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeeze: int, act=nn.ReLU, gate=nn.Hardsigmoid):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(channels, squeeze, 1), nn.Conv2d(squeeze, channels, 1)
        self.act, self.gate = act(), gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


# -- MobileNetV3-Large -------------------------------------------------------------------------------


class InvertedResidual(nn.Module):
    """MobileNetV3's and EfficientNet's block: 1x1 expand, depthwise kxk, squeeze-excite, 1x1 project."""

    def __init__(self, c_in, expand, c_out, k, stride, se_squeeze, act, se_act=nn.ReLU, se_gate=nn.Hardsigmoid):
        super().__init__()
        layers = [] if expand == c_in else [conv_bn(c_in, expand, 1, act=act)]
        layers.append(conv_bn(expand, expand, k, stride, groups=expand, act=act))
        if se_squeeze:
            layers.append(SqueezeExcite(expand, se_squeeze, se_act, se_gate))
        layers.append(conv_bn(expand, c_out, 1, act=None))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and c_in == c_out

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


#: MobileNetV3-Large (Howard et al. 2019, table 1): kernel, expansion, out, squeeze-excite, h-swish, stride
MOBILENET_V3_LARGE = [
    (3, 16, 16, 0, 0, 1),
    (3, 64, 24, 0, 0, 2),
    (3, 72, 24, 0, 0, 1),
    (5, 72, 40, 1, 0, 2),
    (5, 120, 40, 1, 0, 1),
    (5, 120, 40, 1, 0, 1),
    (3, 240, 80, 0, 1, 2),
    (3, 200, 80, 0, 1, 1),
    (3, 184, 80, 0, 1, 1),
    (3, 184, 80, 0, 1, 1),
    (3, 480, 112, 1, 1, 1),
    (3, 672, 112, 1, 1, 1),
    (5, 672, 160, 1, 1, 2),
    (5, 960, 160, 1, 1, 1),
    (5, 960, 160, 1, 1, 1),
]


class MobileNetV3(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        layers, c = [conv_bn(3, 16, 3, 2, act=nn.Hardswish)], 16
        for k, exp, out, se, hs, stride in MOBILENET_V3_LARGE:
            layers.append(
                InvertedResidual(
                    c, exp, out, k, stride, _divisible(exp // 4) if se else 0, nn.Hardswish if hs else nn.ReLU
                )
            )
            c = out
        layers.append(conv_bn(c, 960, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(960, 1280), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# -- EfficientNet-B0 ---------------------------------------------------------------------------------

#: EfficientNet-B0 (Tan & Le 2019, table 1): expansion, kernel, stride, in, out, layers
EFFICIENTNET_B0 = [
    (1, 3, 1, 32, 16, 1),
    (6, 3, 2, 16, 24, 2),
    (6, 5, 2, 24, 40, 2),
    (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3),
    (6, 5, 2, 112, 192, 4),
    (6, 3, 1, 192, 320, 1),
]


class EfficientNetB0(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        layers = [conv_bn(3, 32, 3, 2, act=nn.SiLU)]
        for expand, k, stride, c_in, c_out, n in EFFICIENTNET_B0:
            for i in range(n):
                c = c_in if i == 0 else c_out
                layers.append(
                    InvertedResidual(
                        c, c * expand, c_out, k, stride if i == 0 else 1, max(1, c // 4), nn.SiLU, nn.SiLU, nn.Sigmoid
                    )
                )
        layers.append(conv_bn(320, 1280, 1, act=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# -- ResNet-50 ---------------------------------------------------------------------------------------


class Bottleneck(nn.Module):
    def __init__(self, c_in: int, width: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(
            conv_bn(c_in, width, 1), conv_bn(width, width, 3, stride), conv_bn(width, width * 4, 1, act=None)
        )
        self.down = conv_bn(c_in, width * 4, 1, stride, act=None) if stride != 1 or c_in != width * 4 else None

    def forward(self, x):
        return F.relu(self.body(x) + (self.down(x) if self.down is not None else x))


class ResNet50(nn.Module):
    def __init__(self, classes: int = 1000, depths=(3, 4, 6, 3)):
        super().__init__()
        layers, c = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)], 64
        for stage, n in enumerate(depths):
            width = 64 << stage
            for i in range(n):
                layers.append(Bottleneck(c, width, 2 if i == 0 and stage > 0 else 1))
                c = width * 4
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# -- ConvNeXt-T --------------------------------------------------------------------------------------


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of NCHW, as torchvision writes it: to channels-last and back."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int, layer_scale: float = 1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.gamma = nn.Parameter(torch.full((dim,), layer_scale))

    def forward(self, x):
        y = self.mlp(self.norm(self.dwconv(x).permute(0, 2, 3, 1)))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXtT(nn.Module):
    def __init__(self, classes: int = 1000, depths=(3, 3, 9, 3), dims=(96, 192, 384, 768)):
        super().__init__()
        layers = [nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0], eps=1e-6)]
        for i, (n, dim) in enumerate(zip(depths, dims)):
            if i:
                layers += [LayerNorm2d(dims[i - 1], eps=1e-6), nn.Conv2d(dims[i - 1], dim, 2, 2)]
            layers += [ConvNeXtBlock(dim) for _ in range(n)]
        self.features = nn.Sequential(*layers)
        self.norm, self.head = nn.LayerNorm(dims[-1], eps=1e-6), nn.Linear(dims[-1], classes)

    def forward(self, x):
        return self.head(self.norm(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1)))


# -- ViT-S/16 ----------------------------------------------------------------------------------------


class Attention(nn.Module):
    """Multi-head self-attention with one fused qkv projection, as timm writes it."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.qkv, self.proj = heads, nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        if mask is not None:
            attn = attn + mask
        y = attn.softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, n, d))


class EncoderLayer(nn.Module):
    """A pre-norm transformer layer (ViT, Whisper): x + attn(ln(x)), x + mlp(ln(x)) with GELU."""

    def __init__(self, dim: int, heads: int, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(dim, eps=eps), Attention(dim, heads)
        self.ln2, self.mlp = (
            nn.LayerNorm(dim, eps=eps),
            nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    def __init__(
        self, image: int = 224, patch: int = 16, dim: int = 384, depth: int = 12, heads: int = 6, classes: int = 1000
    ):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        self.layers = nn.Sequential(*[EncoderLayer(dim, heads, 4 * dim) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        return self.head(self.norm(self.layers(x))[:, 0])


# -- YOLOv8n -----------------------------------------------------------------------------------------


def cbs(c_in: int, c_out: int, k: int = 1, stride: int = 1):
    """ultralytics' Conv: convolution, batch norm, SiLU."""
    return conv_bn(c_in, c_out, k, stride, act=nn.SiLU)


class C2f(nn.Module):
    """Split the 1x1 conv's output in two, run n bottlenecks on the second half, concatenate them all."""

    def __init__(self, c_in: int, c_out: int, n: int = 1, shortcut: bool = False):
        super().__init__()
        self.c = c_out // 2
        self.cv1, self.cv2 = cbs(c_in, 2 * self.c), cbs((2 + n) * self.c, c_out)
        self.m = nn.ModuleList(nn.Sequential(cbs(self.c, self.c, 3), cbs(self.c, self.c, 3)) for _ in range(n))
        self.shortcut = shortcut

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]) if self.shortcut else m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.cv1, self.cv2 = cbs(c_in, c_in // 2), cbs(c_in // 2 * 4, c_out)

    def forward(self, x):
        y = [self.cv1(x)]
        for _ in range(3):
            y.append(F.max_pool2d(y[-1], 5, 1, 2))
        return self.cv2(torch.cat(y, 1))


class YOLOv8n(nn.Module):
    """YOLOv8n (width 0.25, depth 0.33): C2f backbone, SPPF, PAN neck with nearest upsampling and
    concatenation, a decoupled head with DFL box decoding at a fixed image size (anchors are constants,
    as ultralytics exports them). Output (batch, 4 + classes, anchors)."""

    def __init__(self, image: int = 320, classes: int = 80, reg_max: int = 16):
        super().__init__()
        self.b1 = nn.Sequential(
            cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), C2f(32, 32, 1, True), cbs(32, 64, 3, 2), C2f(64, 64, 2, True)
        )
        self.b2 = nn.Sequential(cbs(64, 128, 3, 2), C2f(128, 128, 2, True))
        self.b3 = nn.Sequential(cbs(128, 256, 3, 2), C2f(256, 256, 1, True), SPPF(256, 256))
        self.n1, self.n2 = C2f(384, 128), C2f(192, 64)
        self.d1, self.n3 = cbs(64, 64, 3, 2), C2f(192, 128)
        self.d2, self.n4 = cbs(128, 128, 3, 2), C2f(384, 256)
        c2, c3 = 64, max(64, min(classes, 100))
        self.box = nn.ModuleList(
            nn.Sequential(cbs(c, c2, 3), cbs(c2, c2, 3), nn.Conv2d(c2, 4 * reg_max, 1)) for c in (64, 128, 256)
        )
        self.cls = nn.ModuleList(
            nn.Sequential(cbs(c, c3, 3), cbs(c3, c3, 3), nn.Conv2d(c3, classes, 1)) for c in (64, 128, 256)
        )
        self.dfl = nn.Conv2d(reg_max, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(reg_max, dtype=torch.float).view(1, reg_max, 1, 1)
        anchors, strides = [], []
        for s in (8, 16, 32):
            n = image // s
            ys, xs = torch.meshgrid(torch.arange(n) + 0.5, torch.arange(n) + 0.5, indexing="ij")
            anchors.append(torch.stack([xs, ys], -1).view(-1, 2))
            strides.append(torch.full((n * n, 1), float(s)))
        self.register_buffer("anchors", torch.cat(anchors).T.contiguous())  # (2, anchors)
        self.register_buffer("strides", torch.cat(strides).T.contiguous())  # (1, anchors)
        self.reg_max, self.classes = reg_max, classes

    def forward(self, x):
        p3 = self.b1(x)
        p4 = self.b2(p3)
        p5 = self.b3(p4)
        h4 = self.n1(torch.cat([F.interpolate(p5, scale_factor=2.0, mode="nearest"), p4], 1))
        o3 = self.n2(torch.cat([F.interpolate(h4, scale_factor=2.0, mode="nearest"), p3], 1))
        o4 = self.n3(torch.cat([self.d1(o3), h4], 1))
        o5 = self.n4(torch.cat([self.d2(o4), p5], 1))
        b = x.shape[0]
        y = torch.cat(
            [
                torch.cat([bx(o), cl(o)], 1).view(b, 4 * self.reg_max + self.classes, -1)
                for o, bx, cl in zip((o3, o4, o5), self.box, self.cls)
            ],
            2,
        )
        box, cls = y.split((4 * self.reg_max, self.classes), 1)
        dist = self.dfl(box.view(b, 4, self.reg_max, -1).transpose(2, 1).softmax(1)).view(b, 4, -1)
        lt, rb = dist.chunk(2, 1)
        xy, wh = self.anchors + (rb - lt) / 2, rb + lt  # dist2bbox, as centre and size
        return torch.cat([torch.cat([xy, wh], 1) * self.strides, cls.sigmoid()], 1)


# -- U-Net -------------------------------------------------------------------------------------------


def double_conv(c_in: int, c_out: int):
    return nn.Sequential(conv_bn(c_in, c_out), conv_bn(c_out, c_out))


class UNet(nn.Module):
    """Ronneberger et al.'s U-Net at a small width: max-pool down, ConvTranspose (2x2, stride 2) up,
    concatenated skips, a 1x1 classifier per pixel."""

    def __init__(self, base: int = 16, levels: int = 4, classes: int = 2):
        super().__init__()
        widths = [base << i for i in range(levels + 1)]
        self.down = nn.ModuleList(
            [double_conv(3, widths[0])] + [double_conv(widths[i], widths[i + 1]) for i in range(levels)]
        )
        self.up = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 2, 2) for i in reversed(range(levels)))
        self.merge = nn.ModuleList(double_conv(2 * widths[i], widths[i]) for i in reversed(range(levels)))
        self.out = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, down in enumerate(self.down):
            x = down(F.max_pool2d(x, 2) if i else x)
            skips.append(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips[:-1])):
            x = merge(torch.cat([up(x), skip], 1))
        return self.out(x)


__all__ = [
    "MobileNetV3",
    "EfficientNetB0",
    "ResNet50",
    "ConvNeXtT",
    "ViT",
    "YOLOv8n",
    "UNet",
    "EncoderLayer",
    "Attention",
]
