"""Finding OpenGL compute: libEGL, a headless display, a context, and why not.

libEGL (`libEGL.so.1`, or MNN_OPENGL_LIBRARY) is opened on first use. The
display is EGL_PLATFORM_SURFACELESS_MESA, else the first EGL device
(EGL_EXT_platform_device, as NVIDIA's driver offers), else the default
display; MNN_OPENGL_PLATFORM or the session option "opengl.platform" pins one
("surfaceless", "device", "default"). The context is OpenGL ES 3.2/3.1, else
desktop OpenGL 4.6..4.3 core; MNN_OPENGL_API or "opengl.api" pins one
("gles", "gl"). One context per (platform, api) per process, opened once.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

from mnn_core.backend import DeviceInfo
from mnn_core.backend.kit.segments import load_native
from mnn_core.errors import BackendError

_gl, _LOAD_ERROR = load_native(__package__, "_gl", "mnn-opengl")

LIBRARY_ENV = "MNN_OPENGL_LIBRARY"
PLATFORM_ENV = "MNN_OPENGL_PLATFORM"
API_ENV = "MNN_OPENGL_API"
PLATFORM_OPTION = "opengl.platform"
API_OPTION = "opengl.api"
PLATFORMS = ("auto", "surfaceless", "device", "default")
APIS = ("auto", "gles", "gl")
_LOCK = threading.RLock()


@dataclass
class Device:
    """One opened EGL context and what it can do; programs compiled on it are cached here."""

    platform: str
    api: str
    context: object
    programs: dict = field(default_factory=dict, repr=False)

    @property
    def props(self) -> dict:
        return self.context.info

    @property
    def name(self) -> str:
        p = self.props
        api = "OpenGL ES" if p["gles"] else "OpenGL"
        return f"{p['renderer']} ({api} {p['major']}.{p['minor']}, EGL {p['platform']})"

    def program(self, shader: str, defines: tuple):
        """The compiled program of a shader with these compile-time defines, built once."""
        from .shaders import source

        key = (shader, defines)
        prog = self.programs.get(key)
        if prog is None:
            prog = _gl.Program(self.context, source(shader, defines, gles=self.props["gles"]), shader)
            self.programs[key] = prog
        return prog

    def info(self) -> DeviceInfo:
        """Rough roofline numbers: a software renderer is slow, a GPU driver is not."""
        software = any(s in self.props["renderer"].lower() for s in ("llvmpipe", "softpipe", "swrast", "lavapipe"))
        peak, bandwidth, launch = (4.0, 8.0, 60.0) if software else (5000.0, 500.0, 10.0)
        return DeviceInfo(
            name=self.name,
            kind="cpu" if software else "gpu",
            peak_gflops=peak,
            bandwidth_gbs=bandwidth,
            launch_us=launch,
            extra={
                "renderer": self.props["renderer"],
                "vendor": self.props["vendor"],
                "version": self.props["version"],
                "gles": self.props["gles"],
                "egl_platform": self.props["platform"],
                "software": software,
                "max_ssbo_bytes": self.props["max_ssbo_bytes"],
            },
        )


_contexts: dict = {}  # (platform, api) -> Device or the reason it failed


def _after_fork_in_child() -> None:
    """An EGL context does not survive fork (the driver's threads stay in the parent): the
    child of a process that opened one reports OpenGL unavailable instead of hanging."""
    for key, found in list(_contexts.items()):
        if isinstance(found, Device):
            _contexts[key] = (
                "an OpenGL context was opened before this process was forked and cannot be used in the "
                "child; start workers with the 'spawn' method, or open OpenGL only in the workers"
            )


os.register_at_fork(after_in_child=_after_fork_in_child)


def _choice(value, env: str, allowed: tuple, what: str) -> str:
    text = str(value if value not in (None, "") else os.environ.get(env, "") or "auto").strip().lower()
    if text not in allowed:
        raise BackendError(f"{what}={text!r} is not one of {', '.join(allowed)} (session option or {env})")
    return text


def open_device(platform=None, api=None) -> Device:
    """The context for a session's choice (option, else environment, else automatic)."""
    platform = _choice(platform, PLATFORM_ENV, PLATFORMS, PLATFORM_OPTION)
    api = _choice(api, API_ENV, APIS, API_OPTION)
    with _LOCK:
        found = _contexts.get((platform, api))
        if found is None:
            found = _open(platform, api)
            _contexts[(platform, api)] = found
    if isinstance(found, str):
        raise BackendError(f"OpenGL is unavailable: {found}")
    return found


def _open(platform: str, api: str):
    if _gl is None:
        return _LOAD_ERROR
    library = os.environ.get(LIBRARY_ENV) or "libEGL.so.1"
    try:
        return Device(platform, api, _gl.Context(library, platform, api))
    except _gl.GLError as exc:
        status, message = exc.args if len(exc.args) == 2 else (0, str(exc))
        if status == _gl.NO_LIBRARY:
            return (
                f"no EGL library: {message}. Install one (Debian: apt-get install libegl1 libegl-mesa0 "
                f"libgl1-mesa-dri) or set {LIBRARY_ENV} to its path"
            )
        if status == _gl.NO_DISPLAY:
            return (
                f"{message}. Mesa offers the surfaceless platform (apt-get install libegl-mesa0 "
                "libgl1-mesa-dri); an NVIDIA driver offers EGL devices"
            )
        return f"no OpenGL context with compute shaders: {message}"


def unavailable_reason(platform=None, api=None) -> str:
    """Empty when OpenGL compute runs here, else why not."""
    try:
        open_device(platform, api)
    except BackendError as exc:
        return str(exc).removeprefix("OpenGL is unavailable: ")
    return ""
