"""Which of its placed ops mnn-x86 runs as one (Backend.fuse; the core's side is mnn_core/fusion.py).

- A convolution the direct kernel runs (the stems: few input channels) and the max pooling that
  alone reads its output, when that pooling is 2 or 3 wide at stride 2 across with dilation 1
  (SqueezeNet's and ResNet-18's 3x3/2): one op, x86.ConvMaxPool (ops_conv.py), that computes the
  convolution band by band and pools each band while it is in cache (csrc/conv_direct_impl.h), so
  the convolution's output (3.2 MB for those stems) is never written out and read back.
- A plain 1x1 convolution the GEMM runs in fp32 and the global average pooling that alone reads its
  output, on planes too big for the GEMM to be turned around (more than 64 pixels): one op,
  x86.ConvGlobalAvgPool, whose GEMM runs a few row panels at a time into a worker's scratch and
  averages each row there (csrc/op_conv.c: conv_gap_task). SqueezeNet's classifier (512 -> 1000 on
  13x13, then the pooling) no longer writes 676 KB and reads it back.

The scalar kernels have no fused op (their pooling has no stride-2 register path), so under
x86.isa="scalar" nothing is fused. `Session(fuse=False)` turns fusions off.
"""

from __future__ import annotations

from mnn_core.fusion import Fusion
from mnn_core.graph.ir import Node
from mnn_core.ops.pool import pool_geometry

from . import _x86
from .ops_conv import CONV_GAP, CONV_MAXPOOL, runs_direct, runs_plain_gemm_1x1


def _pooled_plane(pool: Node, op: str, infos):
    """The input's TensorInfo where `pool` is an `op` of one output over a static NCHW float32
    tensor (what both fused kernels read), else None."""
    x = infos.get(pool.inputs[0])
    if pool.op != op or len(pool.outputs) != 1 or x is None or len(x.shape) != 4:
        return None
    return x if x.dtype == "float32" and x.is_static else None


def _stride2_maxpool(pool: Node, infos) -> bool:
    """A MaxPool the fused kernel takes: NCHW float32, dilation 1, stride 2 across, 2 or 3 wide, and
    padding thinner than the window (every window holds an input row)."""
    x = _pooled_plane(pool, "MaxPool", infos)
    if x is None:
        return False
    try:
        geo = pool_geometry(tuple(int(d) for d in x.shape), pool.attrs, "MaxPool")
    except Exception:  # noqa: BLE001 - a malformed pooling is the schema's to report at prepare, unfused
        return False
    (kh, kw), (_, sw), dil = geo["kernel"], geo["strides"], tuple(geo["dilations"])
    pt, _, pb, _ = geo["pads"]
    return dil == (1, 1) and sw == 2 and kw in (2, 3) and max(pt, pb) < kh


def _global_avgpool(pool: Node, infos) -> bool:
    """A GlobalAveragePool of an NCHW float32 plane bigger than the GEMM would turn around."""
    x = _pooled_plane(pool, "GlobalAveragePool", infos)
    return x is not None and int(x.shape[2]) * int(x.shape[3]) > _x86.TRANSPOSED_1X1_MAX_PIXELS


def fusions(offer, ctx, isa: str) -> list[Fusion]:
    if isa == "scalar":
        return []
    found = []
    for conv in offer.nodes:
        if conv.op != "Conv" or len(conv.outputs) != 1:
            continue
        pool = offer.sole_reader(conv.outputs[0])
        if pool is None:
            continue
        ins = [offer.infos[n] if n else None for n in conv.inputs]
        if _stride2_maxpool(pool, offer.infos) and runs_direct(conv, ins, offer.constants, ctx, isa):
            op, why = CONV_MAXPOOL, "pooled band by band, in cache"
            attrs = {"conv": dict(conv.attrs), "pool": dict(pool.attrs)}
        elif _global_avgpool(pool, offer.infos) and runs_plain_gemm_1x1(conv, ins, offer.constants, ctx, isa):
            op, why, attrs = CONV_GAP, "averaged block by block, in cache", {"conv": dict(conv.attrs)}
        else:
            continue
        node = Node(op, list(conv.inputs), [pool.outputs[0]], attrs, f"{conv.name}+{pool.name}")
        found.append(Fusion(node, (conv.name, pool.name), why))
    return found
