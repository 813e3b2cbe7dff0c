"""The NC16 layout (mnn_x86/layouts.py): tensors kept channel-blocked between the depthwise and the
1x1 convolutions, the element-wise ops between them, and the conversions at the backend's edges.

Each kernel's NC16 side is reached through real graphs: a depthwise or a 1x1 convolution before the
op under test gives it an NC16 input, one after it an NC16 output, and the plan's layouts are
checked to be the ones meant, so a test cannot pass on dense tensors. Results are compared with the
reference backend on every ISA this CPU runs ("on" forces the layout where "auto" would not)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ISAS
from mnn_x86 import isa as x86_isa
from mnn_x86 import layouts

import mnn_core
from mnn_core import GraphBuilder, Session
from mnn_core.errors import BackendError

ON = {"x86.layouts": "on"}
SIDES = [(True, True), (False, True), (True, False)]  # (NC16 input, NC16 output)


def _w(rng, *shape):
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def _dw(g, rng, x, c, k=3, stride=1, act=None, dilation=1):
    attrs = dict(group=c, pads=[k // 2 * dilation] * 4, strides=[stride, stride], dilations=[dilation, dilation])
    y = g.Conv(x, g.const(_w(rng, c, 1, k, k)), g.const(_w(rng, c)), **attrs)
    return g.Clip(y, min=0.0, max=6.0) if act == "relu6" else y


def _pw(g, rng, x, cin, cout, act=None, bias=True):
    y = g.Conv(x, g.const(_w(rng, cout, cin, 1, 1)), g.const(_w(rng, cout)) if bias else None)
    if act == "relu6":
        return g.Clip(y, min=0.0, max=6.0)
    return g.HardSwish(y) if act == "hard_swish" else (g.Relu(y) if act == "relu" else y)


def _check(graph, feeds, isa, threads, options=ON, expect=None, rtol=1e-4, atol=1e-5):
    """Run on x86 and on the reference backend; `expect`: how many tensors must be NC16."""
    want = Session(graph, backend="reference").run(feeds)
    sess = Session(graph, backend="x86", fallback=False, threads=threads, options={"x86.isa": isa, **options})
    if expect is not None:
        assert len(sess.plan.layouts) == expect, str(sess.plan)
        assert set(sess.plan.layouts.values()) <= {layouts.NC16}
    for _ in range(2):  # the second run finds the scratch and the padding lanes dirtied by the first
        got = sess.run(feeds)
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=rtol, atol=atol, err_msg=f"{name} {isa} {options}")
    return sess


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sides", SIDES)
@pytest.mark.parametrize(
    "c,h,w,k,stride",
    [
        (3, 9, 7, 3, 1),
        (17, 13, 13, 3, 2),
        (33, 7, 11, 5, 1),
        (16, 15, 6, 3, 2),
        (40, 5, 5, 3, 1),
        (17, 37, 35, 3, 2),  # 19x18 outputs: a dense input's one strip, cut into row ranges at 2 threads
        (20, 62, 58, 3, 1),  # an NC16 input's strips of 3 rows, shared in whole strips
    ],
)
def test_depthwise_reads_and_writes_nc16(isa, threads, sides, c, h, w, k, stride):
    rng = np.random.default_rng(c * 100 + h)
    g = GraphBuilder("dw")
    x = g.input("x", (2, c, h, w))
    y = _pw(g, rng, x, c, c) if sides[0] else x
    y = _dw(g, rng, y, c, k, stride, act="relu6")  # Clip fused into the depthwise kernel
    y = _pw(g, rng, y, c, c) if sides[1] else y
    g.output(y, "y")
    feeds = {"x": rng.standard_normal((2, c, h, w)).astype(np.float32)}
    _check(g.build(), feeds, isa, threads, expect=sum(sides))


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("c,h,w,stride", [(40, 41, 39, 2), (16, 23, 17, 1)])
def test_depthwise_nc16_row_ranges_at_three_threads(isa, c, h, w, stride):
    """Three threads cut one image's plane into row ranges of every block, the last one short: whole
    strips (21 output rows), and a strip cut into ranges (23 rows in two strips, twelve ranges)."""
    rng = np.random.default_rng(h * w)
    g = GraphBuilder("dw3")
    x = g.input("x", (1, c, h, w))
    y = _dw(g, rng, _pw(g, rng, x, c, c), c, 3, stride, act="relu6")
    g.output(_pw(g, rng, y, c, c), "y")
    _check(g.build(), {"x": rng.standard_normal((1, c, h, w)).astype(np.float32)}, isa, 3, expect=2)


@pytest.mark.parametrize("isa", ISAS)
def test_depthwise_nc16_dilated_and_unfused_activation(isa):
    """A dilated depthwise and a HardSwish the kernel applies after its stores, on NC16 both sides."""
    rng = np.random.default_rng(5)
    g = GraphBuilder("dw_dil")
    x = g.input("x", (1, 21, 12, 10))
    y = _pw(g, rng, x, 21, 21)
    y = g.HardSwish(_dw(g, rng, y, 21, 3, 1, dilation=2))
    g.output(_pw(g, rng, y, 21, 21), "y")
    _check(g.build(), {"x": rng.standard_normal((1, 21, 12, 10)).astype(np.float32)}, isa, 2, expect=2)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sides", SIDES)
@pytest.mark.parametrize(
    "cin,cout,h,w,act",
    [
        (3, 17, 7, 7, "relu6"),
        (17, 33, 5, 11, None),
        (33, 5, 9, 9, "hard_swish"),
        (40, 48, 14, 14, "relu"),
        (64, 100, 3, 3, "relu6"),
        (16, 16, 1, 1, None),
        (5, 40, 31, 33, "relu6"),  # 1023 pixels: at 2 threads the item plan's bigger items
    ],
)
def test_pointwise_reads_and_writes_nc16(isa, threads, sides, cin, cout, h, w, act):
    rng = np.random.default_rng(cin * 1000 + cout)
    g = GraphBuilder("pw")
    x = g.input("x", (2, cin, h, w))
    y = _dw(g, rng, x, cin) if sides[0] else x
    y = _pw(g, rng, y, cin, cout, act=act, bias=cout % 2 == 1)
    y = _dw(g, rng, y, cout) if sides[1] else y
    g.output(y, "y")
    feeds = {"x": rng.standard_normal((2, cin, h, w)).astype(np.float32)}
    _check(g.build(), feeds, isa, threads, expect=sum(sides), atol=3e-5)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cin,cout,h,w", [(16, 96, 23, 19), (24, 40, 7, 7), (5, 33, 31, 33)])
def test_pointwise_streams_its_nc16_output(isa, threads, cin, cout, h, w):
    """x86.stream="on": the NC16 output written by streaming stores is the same as by plain ones
    (every ISA; a partial last block, a partial last pixel tile)."""
    rng = np.random.default_rng(cin * 7 + cout)
    g = GraphBuilder("pw_stream")
    x = g.input("x", (3, cin, h, w))
    y = _pw(g, rng, x, cin, cout, act="relu6")
    g.output(_dw(g, rng, y, cout), "y")
    feeds = {"x": rng.standard_normal((3, cin, h, w)).astype(np.float32)}
    _check(g.build(), feeds, isa, threads, options={**ON, "x86.stream": "on"}, expect=1, atol=3e-5)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sides", SIDES)
@pytest.mark.parametrize(
    "cin,cout,h,w,strides,pads",
    [
        (16, 32, 14, 14, (2, 2), None),
        (17, 40, 13, 11, (2, 2), None),  # odd planes: the last row and column read
        (33, 5, 9, 16, (2, 1), None),
        (24, 48, 10, 10, (3, 3), [0, 0, 1, 2]),  # trailing pads no tap reaches
        (64, 70, 7, 7, (2, 2), None),  # 4x4 outputs: one short pixel tile
    ],
)
def test_strided_pointwise_reads_and_writes_nc16(isa, threads, sides, cin, cout, h, w, strides, pads):
    """An unpadded 1x1 at a stride (ResNet's downsampling shortcuts) gathers the pixels it reads, in
    the input's layout, then runs as the pointwise kernel on either side's layout."""
    rng = np.random.default_rng(cin * 1000 + cout + strides[1])
    g = GraphBuilder("pw_strided")
    x = g.input("x", (2, cin, h, w))
    y = _dw(g, rng, x, cin) if sides[0] else x
    y = g.Conv(
        y, g.const(_w(rng, cout, cin, 1, 1)), g.const(_w(rng, cout)), strides=list(strides), pads=pads or [0] * 4
    )
    y = _dw(g, rng, g.Relu(y), cout) if sides[1] else g.Relu(y)
    g.output(y, "y")
    feeds = {"x": rng.standard_normal((2, cin, h, w)).astype(np.float32)}
    _check(g.build(), feeds, isa, threads, expect=sum(sides), atol=3e-5)


@pytest.mark.parametrize("isa", ISAS)
def test_padded_strided_pointwise_stays_dense(isa):
    """A strided 1x1 whose taps reach padding (a leading pad, or a trailing one an output reads)
    keeps dense sides: the gather reads only the input's own pixels."""
    rng = np.random.default_rng(3)
    for pads in ([1, 1, 1, 1], [0, 0, 1, 1]):
        g = GraphBuilder("pw_padded")
        x = g.input("x", (1, 16, 8, 8))
        y = _dw(g, rng, x, 16)
        y = g.Conv(y, g.const(_w(rng, 32, 16, 1, 1)), g.const(_w(rng, 32)), strides=[2, 2], pads=pads)
        g.output(_dw(g, rng, y, 32), "y")
        _check(g.build(), {"x": rng.standard_normal((1, 16, 8, 8)).astype(np.float32)}, isa, 2, expect=0)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
def test_downsampling_bottleneck_stays_in_nc16(isa, threads):
    """ResNet-50's stage boundary: the sum of two bottlenecks feeds a stride-2 projection shortcut and
    a stride-2 1x1; with those reading NC16, every tensor from the first 1x1 to the last sum is NC16
    (under "auto" on AVX-512 too), and x86.ConvAdd adds the residual in registers."""
    rng = np.random.default_rng(11)
    c, m, o = 32, 16, 64
    g = GraphBuilder("bottleneck")
    x = g.input("x", (1, c, 15, 15))
    s = _pw(g, rng, x, c, c, act="relu")
    for cin, cout, stride in ((c, c, 1), (c, o, 2)):
        b = g.Conv(s, g.const(_w(rng, m, cin, 1, 1)), g.const(_w(rng, m)), strides=[stride, stride])
        b = _wino(g, rng, g.Relu(b), m, m)
        b = g.Conv(b, g.const(_w(rng, cout, m, 1, 1)), g.const(_w(rng, cout)))
        short = s if stride == 1 else g.Conv(s, g.const(_w(rng, cout, cin, 1, 1)), strides=[2, 2])
        s = g.Relu(g.Add(b, short))
    g.output(_pw(g, rng, s, o, 8), "y")
    feeds = {"x": rng.standard_normal((1, c, 15, 15)).astype(np.float32)}
    # NC16: the first 1x1's output, per block its 1x1 and 3x3 outputs and its sum, the projection;
    # on scalar, which fuses nothing, the four Relus' inputs too
    sess = _check(g.build(), feeds, isa, threads, expect=12 if isa == "scalar" else 8, atol=3e-5)
    assert sum(p.op == "x86.ConvAdd" for p in sess.plan.placements) == (0 if isa == "scalar" else 2)
    if x86_isa.best() == "avx512":
        assert len(Session(g.build(), backend="x86", threads=threads).plan.layouts) == 8


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["GlobalAveragePool", "AveragePool", "MaxPool"])
@pytest.mark.parametrize("c,h,w", [(32, 7, 7), (48, 5, 9), (17, 7, 7)])
def test_pooling_to_one_pixel_reads_nc16(isa, threads, op, c, h, w):
    """A pooling down to one pixel of whole blocks (ResNet's last average pooling) reads its NC16
    input and writes the dense output, the same bytes; with a partial last block both stay dense."""
    rng = np.random.default_rng(c + h * w)
    g = GraphBuilder("pool1")
    x = g.input("x", (2, 8, h, w))
    y = _dw(g, rng, _pw(g, rng, x, 8, c, act="relu"), c)  # a depthwise: no 1x1 fused with the pooling
    if op == "GlobalAveragePool":
        y = g.GlobalAveragePool(y)
    else:
        y = getattr(g, op)(y, kernel_shape=[h, w], strides=[1, 1])
    g.output(g.Flatten(y), "y")
    feeds = {"x": rng.standard_normal((2, 8, h, w)).astype(np.float32)}
    _check(g.build(), feeds, isa, threads, expect=2 if c % 16 == 0 else 1)


def test_stream_choice_follows_the_l3_cache():
    from mnn_x86 import ops_conv

    l3 = x86_isa.l3_cache_bytes()
    assert l3 >= 1 << 20
    big = int(ops_conv.STREAM_MIN_L3_FRACTION * l3)
    assert ops_conv._use_stream(big, {}) and not ops_conv._use_stream(big - 1, {})
    assert ops_conv._use_stream(64, {"x86.stream": "on"}) and not ops_conv._use_stream(big, {"x86.stream": "off"})
    with pytest.raises(BackendError, match="x86.stream"):
        ops_conv._use_stream(64, {"x86.stream": "always"})


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
def test_elementwise_ops_between_nc16_tensors(isa, threads):
    """A residual Add of two NC16 tensors and a stand-alone Relu keep the blocks; the Add whose other
    input is a graph input stays dense, and so do the tensors it reads."""
    rng = np.random.default_rng(9)
    c = 19
    g = GraphBuilder("add")
    x = g.input("x", (1, c, 9, 9))
    a = _pw(g, rng, _dw(g, rng, x, c), c, c)  # a: NC16 candidates dw -> pw
    b = _dw(g, rng, a, c)
    s = g.Relu(g.Add(a, b))  # the Add's and Relu's tensors NC16
    t = _pw(g, rng, s, c, c)
    u = g.Add(t, x)  # x is a graph input: t stays dense
    g.output(_dw(g, rng, u, c), "y")
    # NC16: the first dw's and pw's outputs, b, the Add's and the Relu's outputs; not t nor u
    _check(g.build(), {"x": rng.standard_normal((1, c, 9, 9)).astype(np.float32)}, isa, threads, expect=5)


def _wino(g, rng, x, cin, cout, pad=1):
    """A 3x3 convolution Winograd takes (stride 1, constant weights), with a fused relu."""
    return g.Relu(g.Conv(x, g.const(_w(rng, cout, cin, 3, 3)), g.const(_w(rng, cout)), pads=[pad] * 4))


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,cin,cout,h,w,pad",
    [
        (1, 16, 64, 27, 27, 1),  # SqueezeNet's fire 4: chunks a thread each, of nearly equal tiles
        (1, 16, 32, 55, 55, 1),  # 196 tiles
        (1, 24, 40, 13, 13, 1),  # a partial last block on both sides; one chunk the threads share
        (2, 33, 17, 8, 12, 1),  # two images, one tile sequence; edge tiles 5 and 1 pixels inside
        (1, 16, 24, 10, 12, 0),  # no padding
        (1, 48, 192, 13, 13, 1),  # 1.3 MB of transformed weights: the usual chunks, tiles as rows
    ],
)
def test_winograd_reads_and_writes_nc16(isa, threads, n, cin, cout, h, w, pad):
    """A 1x1 writes the Winograd convolution's input NC16 and another reads its output NC16: the
    transforms run along the blocks' channels (padding lanes of a partial block are never read as
    channels) and the output's blocks are stored whole."""
    rng = np.random.default_rng(cin * 100 + cout)
    g = GraphBuilder("wino")
    x = g.input("x", (n, 8, h, w))
    y = _pw(g, rng, x, 8, cin, act="relu")
    y = _wino(g, rng, y, cin, cout, pad)
    g.output(_pw(g, rng, y, cout, 5), "y")
    feeds = {"x": rng.standard_normal((n, 8, h, w)).astype(np.float32)}
    _check(g.build(), feeds, isa, threads, expect=2, atol=3e-5)


@pytest.mark.parametrize("isa", ISAS)
def test_winograd_keeps_one_layout_on_both_sides(isa):
    """A Winograd convolution whose input is dense (a graph input) keeps its output dense too, though a
    1x1 reads it: an NC16 side against a dense one runs its slower transposed output transform."""
    rng = np.random.default_rng(5)
    g = GraphBuilder("wino_edge")
    x = g.input("x", (1, 16, 20, 20))
    g.output(_pw(g, rng, _wino(g, rng, x, 16, 32), 32, 8), "y")
    graph = g.build()
    feeds = {"x": rng.standard_normal((1, 16, 20, 20)).astype(np.float32)}
    _check(graph, feeds, isa, 2, expect=0)


def _fire(g, rng, x, cin, squeeze, e1, e3):
    """SqueezeNet's fire module: a 1x1 squeeze, then a 1x1 and a 3x3 expand concatenated."""
    s = _pw(g, rng, x, cin, squeeze, act="relu")
    return g.Concat(_pw(g, rng, s, squeeze, e1, act="relu"), _wino(g, rng, s, squeeze, e3), axis=1)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 2])
def test_fire_modules_concatenate_nc16(isa, threads, batch):
    """Fire modules and a max pooling between them, all NC16: at batch 1 each Concat's inputs are
    written where they belong in its output (the core elides it: X86Backend.concat_in_place), at batch
    2 the Concat copies whole blocks. A Concat whose first input is not whole blocks stays dense (and
    at batch 1 is written in place as dense tensors are)."""
    rng = np.random.default_rng(batch * 10 + threads)
    g = GraphBuilder("fire")
    x = g.input("x", (batch, 8, 17, 17))  # pooled to 8x8: Winograd still takes the 3x3s
    y = _pw(g, rng, x, 8, 32, act="relu")
    first = _fire(g, rng, y, 32, 16, 32, 32)
    pooled = g.MaxPool(first, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    second = _fire(g, rng, pooled, 64, 16, 48, 24)  # 72 channels: a partial last block
    third = _fire(g, rng, second, 72, 16, 24, 16)  # its first input, 24 channels, ends inside a block
    g.output(_pw(g, rng, third, 40, 5), "y")
    graph = g.build()
    feeds = {"x": rng.standard_normal((batch, 8, 17, 17)).astype(np.float32)}
    sess = _check(graph, feeds, isa, threads, atol=3e-5)
    assert {first, pooled, second} <= set(sess.plan.layouts) and third not in sess.plan.layouts, str(sess.plan)
    concats = [p.node for p in sess.plan if p.op == "Concat"]
    assert [c in sess.plan.elided for c in concats] == [batch == 1] * 3  # the dense one too, at batch 1


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "op,c,h,w,k,stride,pads,dilation,ceil",
    [
        ("MaxPool", 24, 15, 13, 3, 2, [1, 1, 1, 1], 1, 0),
        ("MaxPool", 16, 55, 55, 3, 2, [0, 0, 0, 0], 1, 1),  # SqueezeNet's, with the ceil_mode overhang
        ("MaxPool", 20, 12, 9, 3, 1, [2, 0, 1, 2], 2, 0),  # dilated, uneven padding
        ("MaxPool", 24, 16, 17, 2, 2, [0, 0, 0, 0], 1, 0),  # 2x2/2: not the NCHW-only path (ops_pool_train.py)
        ("AveragePool", 40, 9, 8, 2, 2, [0, 0, 1, 1], 1, 0),
        ("AveragePool", 17, 7, 7, 3, 1, [1, 1, 1, 1], 1, 0),
    ],
)
def test_pooling_reads_and_writes_nc16(isa, threads, op, c, h, w, k, stride, pads, dilation, ceil):
    """Pooling between two 1x1s: each output pixel's block from its window's pixel vectors. A NaN in
    the input comes out in every max window that holds it."""
    rng = np.random.default_rng(c * h)
    g = GraphBuilder("pool")
    x = g.input("x", (2, 8, h, w))
    y = _pw(g, rng, x, 8, c)
    attrs = dict(kernel_shape=[k, k], strides=[stride, stride], pads=pads, ceil_mode=ceil)
    if op == "MaxPool":
        attrs["dilations"] = [dilation, dilation]
    y = getattr(g, op)(y, **attrs)
    g.output(_pw(g, rng, y, c, 5), "y")
    feeds = {"x": rng.standard_normal((2, 8, h, w)).astype(np.float32)}
    feeds["x"][1, 3, h // 2, w // 3] = np.nan  # every channel of that pixel NaN after the first 1x1
    sess = _check(g.build(), feeds, isa, threads, expect=2, atol=3e-5)
    assert np.isnan(sess.run(feeds)["y"][1]).any() and not np.isnan(sess.run(feeds)["y"][0]).any()


def _inverted_residual_net(rng, c=16, size=24):
    """MobileNetV2's pattern at a small size: stem conv, blocks of expand 1x1 / depthwise / project
    1x1 with residual Adds, a last 1x1 and a pooled classifier."""
    g = GraphBuilder("ir")
    x = g.input("x", (1, 3, size, size))
    y = g.Clip(
        g.Conv(x, g.const(_w(rng, c, 3, 3, 3)), g.const(_w(rng, c)), pads=[1] * 4, strides=[2, 2]), min=0.0, max=6.0
    )
    y = _pw(g, rng, _dw(g, rng, y, c, act="relu6"), c, 24)
    cin = 24
    for cout, stride in [(24, 1), (40, 2), (40, 1)]:
        hidden = cin * 6
        z = _pw(g, rng, y, cin, hidden, act="relu6")
        z = _dw(g, rng, z, hidden, stride=stride, act="relu6")
        z = _pw(g, rng, z, hidden, cout)
        y = g.Add(z, y) if stride == 1 and cin == cout else z
        cin = cout
    y = _pw(g, rng, y, cin, 96, act="relu6")
    y = g.Flatten(g.GlobalAveragePool(y), axis=1)
    g.output(g.Gemm(y, g.const(_w(rng, 10, 96)), g.const(_w(rng, 10)), transB=1), "logits")
    return g.build()


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
def test_inverted_residual_net_layouts_on_off_and_reference(isa, threads):
    rng = np.random.default_rng(11)
    graph = _inverted_residual_net(rng)
    feeds = {"x": rng.standard_normal((1, 3, 24, 24)).astype(np.float32)}
    on = _check(graph, feeds, isa, threads)
    off = _check(graph, feeds, isa, threads, options={"x86.layouts": "off"}, expect=0)
    # NC16: the first block's depthwise output, then each block's expand, depthwise and project
    # outputs (3 x 3; the Add's output too), not the stem's output (read by a depthwise but written by
    # an im2col conv) nor the pooled output of the last 1x1 (x86.ConvGlobalAvgPool)
    assert len(on.plan.layouts) >= 10, str(on.plan)
    np.testing.assert_allclose(on.run(feeds)["logits"], off.run(feeds)["logits"], rtol=1e-4, atol=1e-5)


def _needs_auto_nc16():
    if "avx512" not in x86_isa.supported():
        pytest.skip("this CPU does not run AVX-512, the ISA under which auto chooses NC16")


def test_auto_keeps_inverted_residual_blocks_in_nc16():
    """The layout must not silently turn off: under auto, with no option, the blocks' tensors are NC16."""
    _needs_auto_nc16()
    graph = _inverted_residual_net(np.random.default_rng(3))
    sess = Session(graph, backend="x86", fallback=False, options={"x86.isa": "avx512"})
    assert len(sess.plan.layouts) >= 10, str(sess.plan)


def test_no_nc16_under_bf16_gemms():
    """precision="low" with AVX-512 BF16 runs the 1x1s as bf16 GEMMs on NCHW, faster than the fp32
    pointwise kernel: auto keeps every tensor dense there, "on" still forces NC16 (fp32 1x1s)."""
    _needs_auto_nc16()
    from mnn_x86 import _x86

    if not _x86.bf16_runs("avx512"):
        pytest.skip("this CPU has no AVX-512 BF16")
    graph = _inverted_residual_net(np.random.default_rng(3))
    low = Session(graph, backend="x86", precision="low", options={"x86.isa": "avx512"})
    assert low.plan.layouts == {}
    forced = Session(graph, backend="x86", precision="low", options={"x86.isa": "avx512", "x86.layouts": "on"})
    assert len(forced.plan.layouts) >= 10
    feeds = {"x": np.random.default_rng(4).standard_normal((1, 3, 24, 24)).astype(np.float32)}
    # the stem and the classifier run on bf16 in both: only the 1x1s' precision differs
    np.testing.assert_allclose(forced.run(feeds)["logits"], low.run(feeds)["logits"], rtol=0.05, atol=0.05)


def _mobilenet_v2():
    """examples/build_models.py's MobileNetV2, found beside the core when it is installed from its
    checkout (editable, as .ci/run does)."""
    examples = Path(mnn_core.__file__).resolve().parents[1] / "examples"
    if not (examples / "build_models.py").exists():
        pytest.skip(f"examples/build_models.py is not in {examples.parent} (mnn-core not installed from a checkout)")
    sys.path.insert(0, str(examples))
    try:
        from build_models import mobilenet_v2
    finally:
        sys.path.pop(0)
    return mobilenet_v2(batch=1)


def test_mobilenet_v2_plan_keeps_its_blocks_in_nc16():
    """MobileNetV2 under auto: the tensors between its depthwise and 1x1 convolutions (and its
    residual sums) are NC16, the output of every convolution but the stem (the last 1x1, fused with
    the pooling, reads NC16 and writes the pooled values); the results match the dense plan's."""
    _needs_auto_nc16()
    graph = _mobilenet_v2()
    sess = Session(graph, backend="x86", fallback=False, threads=1, options={"x86.isa": "avx512"})
    # 52 convolutions (10 with their Add: x86.ConvAdd, the last with the pooling, the three largest
    # expansions with their depthwise: x86.ConvDepthwise), batch norms and activations fused
    writers = [p for p in sess.plan if p.op in ("Conv", "Add", "x86.ConvAdd", "x86.ConvDepthwise")]
    assert [p.op for p in sess.plan].count("x86.ConvGlobalAvgPool") == 1
    assert [p.op for p in sess.plan].count("x86.ConvDepthwise") == 3
    assert len(sess.plan.layouts) == len(writers) - 1, str(sess.plan)
    image = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    off = Session(graph, backend="x86", fallback=False, threads=1, options={"x86.isa": "avx512", "x86.layouts": "off"})
    assert off.plan.layouts == {}
    np.testing.assert_allclose(
        sess.run({"input": image})["logits"], off.run({"input": image})["logits"], rtol=1e-3, atol=1e-4
    )


def test_layouts_option_is_checked():
    g = GraphBuilder("bad")
    x = g.input("x", (1, 4, 5, 5))
    g.output(g.Relu(x), "y")
    with pytest.raises(BackendError, match="x86.layouts"):
        Session(g.build(), backend="x86", fallback=False, options={"x86.layouts": "maybe"}).run(
            {"x": np.zeros((1, 4, 5, 5), np.float32)}
        )


def test_layouts_env_var_applies_when_the_option_is_absent(monkeypatch):
    _needs_auto_nc16()
    graph = _inverted_residual_net(np.random.default_rng(3))
    monkeypatch.setenv(layouts.ENV_VAR, "off")
    assert Session(graph, backend="x86", options={"x86.isa": "avx512"}).plan.layouts == {}
    on = Session(graph, backend="x86", options={"x86.isa": "avx512", "x86.layouts": "on"})
    assert len(on.plan.layouts) >= 10  # the option wins over the environment
    monkeypatch.setenv(layouts.ENV_VAR, "sometimes")
    with pytest.raises(BackendError, match=layouts.ENV_VAR):
        Session(graph, backend="x86", options={"x86.isa": "avx512"})


def test_nc16_sizes_round_channels_up_to_blocks():
    from mnn_core.graph.ir import TensorInfo

    assert layouts.nbytes(TensorInfo((2, 17, 3, 5), "float32", layouts.NC16)) == 2 * 32 * 3 * 5 * 4
    assert layouts.nbytes(TensorInfo((1, 32, 7, 7), "float32", layouts.NC16)) == 32 * 49 * 4
