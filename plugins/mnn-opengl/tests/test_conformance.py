"""The core's conformance suite for every op the opengl backend claims, against
the numpy reference (fp32: rtol 1e-4, atol 1e-5), on the context chosen by
default (GLES 3.2 on Mesa llvmpipe here) and on desktop GL core."""

from opengl_testing import needs_opengl

from mnn_core.testing import BackendConformance

pytestmark = needs_opengl


class TestOpenGLConformance(BackendConformance):
    backend = "opengl"
    rtol = 1e-4
    atol = 1e-5


class TestOpenGLConformanceDesktopGL(BackendConformance):
    """The same shaders compiled as `#version 430 core` on a desktop GL context."""

    backend = "opengl"
    options = {"opengl.api": "gl"}
    rtol = 1e-4
    atol = 1e-5
    ops = ("Conv", "MatMul", "Gemm", "Add", "MaxPool", "Softmax", "Concat", "Transpose")


class TestOpenGLConformanceConvTiles(BackendConformance):
    """Convolution register tiles forced to odd sizes (3 channels x 3 columns), so partial
    channel blocks and partial column tiles are exercised on every sample."""

    backend = "opengl"
    options = {"opengl.conv_tile": (3, 3)}
    ops = ("Conv",)


class TestOpenGLConformanceConvGpuTiles(BackendConformance):
    """The direct shader's register tiles a GPU picks (4x4, 2x2 or 1x1 by the invocations they give), here."""

    backend = "opengl"
    options = {"opengl.gpu_tiling": True, "opengl.conv_path": "direct"}
    ops = ("Conv",)


class TestOpenGLConformanceConvTiledGpu(BackendConformance):
    """What a GPU runs: the tiled implicit GEMM with a GPU's tilings (conv2d_tiled.comp)."""

    backend = "opengl"
    options = {"opengl.gpu_tiling": True}
    ops = ("Conv",)


class TestOpenGLConformanceConvTiledOdd(BackendConformance):
    """The tiled convolution with odd tiles (18x8 blocks, 3x2 outputs each, 5-deep slices)."""

    backend = "opengl"
    options = {"opengl.conv_path": "tiled", "opengl.conv_tiles": "4x6x3x2x5"}
    ops = ("Conv",)


class TestOpenGLConformanceConvBlkGpu(BackendConformance):
    """conv2d_blk.comp (llvmpipe's default) with a GPU's split-K: slices of K summed by splitk_reduce.comp."""

    backend = "opengl"
    options = {"opengl.gpu_tiling": True, "opengl.conv_path": "blk"}
    ops = ("Conv",)


class TestOpenGLConformanceConvSplitK(BackendConformance):
    """The tiled convolution with K cut in two slices, summed by splitk_reduce.comp."""

    backend = "opengl"
    options = {"opengl.conv_path": "tiled", "opengl.splitk": 2}
    ops = ("Conv",)


class TestOpenGLConformanceMatMulTiled(BackendConformance):
    """MatMul on the tiled convolution where its operands allow (conv_tiled.gemm), as on a GPU."""

    backend = "opengl"
    options = {"opengl.gemm_path": "tiled"}
    ops = ("MatMul",)


def test_gpu_tile_shrinks_until_the_gpu_is_filled():
    from mnn_opengl.kernels.conv import GPU_INVOCATIONS, tile

    def work(total_at_1x1):
        return lambda c, x: total_at_1x1 // (c * x)

    assert tile(64, 56, gpu_work=work(64 * GPU_INVOCATIONS)) == (4, 4)
    assert tile(64, 56, gpu_work=work(4 * GPU_INVOCATIONS)) == (2, 2)
    assert tile(64, 56, gpu_work=work(GPU_INVOCATIONS)) == (1, 1)
    assert tile(3, 2, gpu_work=work(64 * GPU_INVOCATIONS)) == (3, 2)  # no wider than the layer
    assert tile(64, 56) == (8, 4) and tile(64, 56, forced=(3, 3)) == (3, 3)  # CPU devices, forced


class TestOpenGLConformanceConvNoTile(BackendConformance):
    """One output per invocation (the plainest form of the shader)."""

    backend = "opengl"
    options = {"opengl.conv_tile": (1, 1)}
    ops = ("Conv",)


def test_pow_of_negative_bases_and_softplus_far_below_zero():
    """What the core's samples miss and NVIDIA's GLSL got wrong (the ONNX node suite on the H200):
    pow() of a negative base is undefined in GLSL (GELU's tanh form cubes negative inputs), and
    log(1 + exp(x)) loses Softplus's (and Mish's) relative precision for x << 0."""
    import numpy as np

    import mnn_core as mnn

    b = mnn.GraphBuilder("pow_softplus")
    x = b.input("x", (64,))
    e = b.input("e", (64,))
    b.output(b.Pow(x, e), "pow")
    b.output(b.Softplus(x), "softplus")
    graph = b.build()
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.uniform(-3, 3, 48), -rng.uniform(10, 30, 16)]).astype("float32")
    es = rng.choice([0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5], size=64).astype("float32")
    es[xs < 0] = np.where(es[xs < 0] == 0.5, 3.0, es[xs < 0])  # a fractional power of x < 0 is NaN
    feeds = {"x": xs, "e": es}
    want = mnn.Session(graph, backend="reference").run(feeds)
    got = mnn.Session(graph, backend="opengl", fallback=False).run(feeds)
    np.testing.assert_allclose(got["pow"], want["pow"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["softplus"], want["softplus"], rtol=1e-4, atol=0)
