# cython: language_level=3, boundscheck=False, wraparound=False
"""Python face of the mgl runtime (csrc/mgl.c): contexts, buffers, programs, segments.

Everything here runs at resize with the GIL held; a Segment's C execution is
what the core's run loop calls without the GIL.
"""

from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, int64_t, uint32_t


cdef extern from "mnn_core/abi.h":
    const char *MNN_EXECUTION_CAPSULE  # the name the core's run loop accepts

cdef extern from "mgl.h" nogil:
    enum:
        MGL_OK
        MGL_NO_LIBRARY
        MGL_NO_DISPLAY
        MGL_NO_CONTEXT

    ctypedef struct mgl_info:
        int gles
        int major, minor
        char platform[32]
        char vendor[128]
        char renderer[256]
        char version[256]
        int64_t max_ssbo_bytes
        int32_t max_group_count[3]
        int32_t max_invocations
        int32_t ssbo_align

    ctypedef struct mgl_context
    ctypedef struct mgl_segment
    ctypedef struct mnn_execution

    mgl_context *mgl_context_create(const char *library, int platform, int api, int *status, char *err, size_t n)
    void mgl_context_destroy(mgl_context *ctx)
    void mgl_context_info(mgl_context *ctx, mgl_info *out)
    uint32_t mgl_buffer_create(mgl_context *ctx, int64_t nbytes, char *err, size_t n)
    void mgl_buffer_destroy(mgl_context *ctx, uint32_t buf)
    int mgl_buffer_write(mgl_context *ctx, uint32_t buf, int64_t off, const void *src, int64_t nb, char *err, size_t n)
    int mgl_buffer_read(mgl_context *ctx, uint32_t buf, int64_t off, void *dst, int64_t nb, char *err, size_t n)
    uint32_t mgl_program_create(mgl_context *ctx, const char *source, char *err, size_t n)
    void mgl_program_destroy(mgl_context *ctx, uint32_t prog)
    mgl_segment *mgl_segment_create(mgl_context *ctx, uint32_t arena, uint32_t params, int n)
    int mgl_segment_set(mgl_segment *s, int i, uint32_t prog, int32_t base, uint32_t gx, uint32_t gy, uint32_t gz,
                        int barrier)
    int mgl_segment_run(mgl_segment *s)
    const char *mgl_segment_error(mgl_segment *s)
    mnn_execution *mgl_segment_execution(mgl_segment *s)
    void mgl_segment_destroy(mgl_segment *s)


PLATFORMS = {"auto": 0, "surfaceless": 1, "device": 2, "default": 3}
APIS = {"auto": 0, "gles": 1, "gl": 2}
NO_LIBRARY, NO_DISPLAY, NO_CONTEXT = MGL_NO_LIBRARY, MGL_NO_DISPLAY, MGL_NO_CONTEXT


class GLError(RuntimeError):
    """An OpenGL or EGL call failed; the message names it."""


class ShaderError(GLError):
    """A compute shader failed to compile or link; the message has the driver's log."""


cdef char _err[8192]


cdef class Context:
    """One headless EGL context (GLES 3.1+ or GL 4.3+ core)."""

    cdef mgl_context *ctx
    cdef readonly dict info

    def __cinit__(self, str library, str platform="auto", str api="auto"):
        cdef int status = 0
        cdef bytes lib = library.encode()
        _err[0] = 0
        self.ctx = mgl_context_create(lib, PLATFORMS[platform], APIS[api], &status, _err, sizeof(_err))
        if self.ctx == NULL:
            raise GLError(status, _err.decode(errors="replace"))
        cdef mgl_info i
        mgl_context_info(self.ctx, &i)
        self.info = {"gles": bool(i.gles), "major": i.major, "minor": i.minor,
                     "platform": i.platform.decode(), "vendor": i.vendor.decode(errors="replace"),
                     "renderer": i.renderer.decode(errors="replace"), "version": i.version.decode(errors="replace"),
                     "max_ssbo_bytes": i.max_ssbo_bytes,
                     "max_group_count": (i.max_group_count[0], i.max_group_count[1], i.max_group_count[2]),
                     "max_invocations": i.max_invocations, "ssbo_align": i.ssbo_align}

    def __dealloc__(self):
        if self.ctx != NULL:
            mgl_context_destroy(self.ctx)
            self.ctx = NULL


cdef class Buffer:
    """A shader storage buffer of `nbytes` bytes."""

    cdef readonly Context context
    cdef readonly uint32_t name
    cdef readonly int64_t nbytes

    def __cinit__(self, Context context, int64_t nbytes):
        self.context = context
        self.nbytes = nbytes
        _err[0] = 0
        self.name = mgl_buffer_create(context.ctx, nbytes, _err, sizeof(_err))
        if self.name == 0:
            raise GLError(f"cannot allocate an OpenGL buffer of {nbytes} bytes: {_err.decode(errors='replace')}")

    def __dealloc__(self):
        if self.name and self.context is not None:
            mgl_buffer_destroy(self.context.ctx, self.name)

    def write(self, int64_t offset, array):
        cdef Py_buffer view
        PyObject_GetBuffer(array, &view, PyBUF_ANY_CONTIGUOUS)
        try:
            if offset < 0 or offset + view.len > self.nbytes:
                raise ValueError(f"write of {view.len} bytes at {offset} is outside the {self.nbytes}-byte buffer")
            if mgl_buffer_write(self.context.ctx, self.name, offset, view.buf, view.len, _err, sizeof(_err)):
                raise GLError(_err.decode(errors="replace"))
        finally:
            PyBuffer_Release(&view)

    def read(self, int64_t offset, out):
        cdef Py_buffer view
        PyObject_GetBuffer(out, &view, PyBUF_ANY_CONTIGUOUS | PyBUF_WRITABLE)
        try:
            if offset < 0 or offset + view.len > self.nbytes:
                raise ValueError(f"read of {view.len} bytes at {offset} is outside the {self.nbytes}-byte buffer")
            if mgl_buffer_read(self.context.ctx, self.name, offset, view.buf, view.len, _err, sizeof(_err)):
                raise GLError(_err.decode(errors="replace"))
        finally:
            PyBuffer_Release(&view)


cdef class Program:
    """A compiled and linked compute shader."""

    cdef readonly Context context
    cdef readonly uint32_t name
    cdef readonly str shader

    def __cinit__(self, Context context, str source, str shader):
        self.context = context
        self.shader = shader
        _err[0] = 0
        self.name = mgl_program_create(context.ctx, source.encode(), _err, sizeof(_err))
        if self.name == 0:
            raise ShaderError(f"OpenGL shader {shader!r}: {_err.decode(errors='replace').strip()}")

    def __dealloc__(self):
        if self.name and self.context is not None:
            mgl_program_destroy(self.context.ctx, self.name)


cdef class Segment:
    """Dispatches replayed in order by each run: (program, parameter base, groups, barrier)."""

    cdef mgl_segment *seg
    cdef readonly Context context
    cdef list keep

    def __cinit__(self, Context context, Buffer arena, Buffer params, list dispatches):
        self.context = context
        self.keep = [arena, params] + [d[0] for d in dispatches]
        self.seg = mgl_segment_create(context.ctx, arena.name, params.name, len(dispatches))
        if self.seg == NULL:
            raise MemoryError("cannot allocate an OpenGL segment")
        cdef Program prog
        for i, (prog, base, groups, barrier) in enumerate(dispatches):
            mgl_segment_set(self.seg, i, prog.name, base, groups[0], groups[1], groups[2], 1 if barrier else 0)

    def __dealloc__(self):
        if self.seg != NULL:
            mgl_segment_destroy(self.seg)

    def run(self):
        """Replay once (for tests and tools; sessions call through the capsule)."""
        cdef int rc
        with nogil:
            rc = mgl_segment_run(self.seg)
        if rc:
            raise GLError(mgl_segment_error(self.seg).decode(errors="replace"))

    def capsule(self):
        return PyCapsule_New(<void *>mgl_segment_execution(self.seg), MNN_EXECUTION_CAPSULE, NULL)
