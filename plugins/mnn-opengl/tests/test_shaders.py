"""The GLSL sources: every shader compiles on both APIs, and a broken one fails
with its name and the driver's log."""

from __future__ import annotations

import pytest
from opengl_testing import needs_opengl

pytestmark = needs_opengl


@pytest.mark.parametrize("api", ["gles", "gl"])
def test_every_shader_compiles(api):
    from mnn_opengl import device, shaders

    dev = device.open_device(None, api)
    for name in shaders.names():
        defines = (("OUT_C", 4), ("OUT_X", 4)) if name == "conv2d" else ()
        assert dev.program(name, (("LOCAL_X", 64), ("LOCAL_Y", 1)) + defines).name > 0


def test_programs_are_cached_per_context():
    from mnn_opengl import device

    dev = device.open_device()
    key = (("LOCAL_X", 64), ("LOCAL_Y", 1))
    assert dev.program("unary", key) is dev.program("unary", key)
    assert dev.program("unary", (("LOCAL_X", 32), ("LOCAL_Y", 1))) is not dev.program("unary", key)


def test_compile_error_names_the_shader_and_has_the_log():
    from mnn_opengl import _gl, device
    from mnn_opengl.shaders import HEADERS

    dev = device.open_device()
    bad = HEADERS[dev.props["gles"]] + "layout(local_size_x = 1) in;\nvoid main() { undefined_thing = 1; }\n"
    with pytest.raises(_gl.ShaderError, match=r"shader 'broken'.*compile error.*undefined_thing"):
        _gl.Program(dev.context, bad, "broken")


def test_missing_shader_source_is_clear():
    from mnn_opengl import shaders

    with pytest.raises(FileNotFoundError, match="no shader source nope.comp"):
        shaders.source("nope")
