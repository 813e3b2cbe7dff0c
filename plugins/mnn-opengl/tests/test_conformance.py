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


class TestOpenGLConformanceConvNoTile(BackendConformance):
    """One output per invocation (the plainest form of the shader)."""

    backend = "opengl"
    options = {"opengl.conv_tile": (1, 1)}
    ops = ("Conv",)
