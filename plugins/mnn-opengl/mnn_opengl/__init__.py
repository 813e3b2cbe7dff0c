"""mnn-opengl: the OpenGL compute backend of mnn.

GLSL compute shaders (OpenGL ES 3.1 / desktop OpenGL 4.3) over a headless EGL
context: Mesa's llvmpipe on a plain CPU machine, or a GPU driver (NVIDIA's
EGL device platform). libEGL and every GL entry point are looked up at run
time, so the package installs anywhere and `mnnx backends` says why OpenGL is
unavailable.

A run of consecutive ops placed here is one *segment*: at resize its
dispatches are recorded (programs compiled once per context and cached,
parameters uploaded once) against the plan's single storage buffer, where the
core also uploads the weights once; each run replays the dispatches with
glMemoryBarrier between dependent ones. Host copies are glBufferSubData in and
one glMapBufferRange read-back per output.

    sess = mnn_core.Session(model, backend="opengl", options={"opengl.api": "gl"})

Session options: "opengl.platform" ("surfaceless", "device", "default"; also
MNN_OPENGL_PLATFORM) and "opengl.api" ("gles", "gl"; also MNN_OPENGL_API).
MNN_OPENGL_LIBRARY names the EGL library (default libEGL.so.1).
"""

from __future__ import annotations

import weakref

from mnn_core.backend import CExecution, DeviceInfo, hookimpl
from mnn_core.backend.kit.segments import SegmentBackend, segment_name

from . import device as _device

__version__ = "0.1.0"

try:
    from .arena import OpenGLArena
    from .kernels import KERNELS
    from .recorder import Recorder
except ImportError:  # the compiled runtime is missing: availability() says so
    KERNELS = {}

_SEGMENTS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class Segment:
    """What a prepared segment keeps alive: its recorded dispatches, the arena, the context."""

    def __init__(self, program, arena, device, names, shaders, barriers):
        self.program = program
        self.arena = arena
        self.device = device
        self.names = names
        self.shaders = shaders  # every dispatch's shader, in order
        self.barriers = barriers


def _device_for(ctx):
    options = (ctx.options or {}) if ctx is not None else {}
    return _device.open_device(options.get(_device.PLATFORM_OPTION), options.get(_device.API_OPTION))


class OpenGLBackend(SegmentBackend):
    name = "opengl"
    options = (
        _device.PLATFORM_OPTION,
        _device.API_OPTION,
        "opengl.conv_path",
        "opengl.conv_tile",
        "opengl.conv_tiles",
        "opengl.gemm_path",
        "opengl.gpu_tiling",
        "opengl.splitk",
    )
    memory_domain = "opengl"
    priority = 4
    kernel_table = KERNELS

    def unavailable_reason(self) -> str | None:
        return _device.unavailable_reason()

    def device_info(self) -> DeviceInfo:
        return _device.open_device().info()

    def allocate_arena(self, nbytes: int, ctx=None):
        arena = OpenGLArena(nbytes)
        if ctx is not None:
            arena.bind(_device_for(ctx))
        return arena

    def tensor_nbytes(self, info, ctx=None) -> int:
        """Whole 32-bit words, so every tensor starts word-aligned in the arena."""
        return -(-info.nbytes // 4) * 4

    def prepare_segment(self, ops, arena, ctx):
        dev = _device_for(ctx)
        arena.bind(dev)
        rec = Recorder(dev, arena, options=ctx.options or {})
        for op in ops:
            rec.op_name = op.node.name
            KERNELS[op.node.op].impl(op, rec)
        program = rec.finish()
        name = segment_name("opengl", ops)
        segment = Segment(
            program,
            arena,
            dev,
            [op.node.name for op in ops],
            [d[4].split(":")[-1] for d in rec.dispatches],
            rec.barriers,
        )
        _SEGMENTS[name] = segment
        return CExecution(program.capsule(), owner=segment, name=name)


def segments() -> dict[str, Segment]:
    """Every live prepared segment by name (its shaders, op names, barrier count), for tests and tools."""
    return dict(_SEGMENTS.items())


@hookimpl
def mnn_register_backends(register):
    register(OpenGLBackend())
