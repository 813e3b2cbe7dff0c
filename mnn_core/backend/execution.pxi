# The memory and the execution record a compiled CPU backend's Cython glue builds its ops from,
# written once for every backend: the backend's extension includes this file textually
#
#     include "mnn_core/backend/execution.pxi"   (cythonize's include_path: backend.build.get_cython_include())
#
# and its .pxd declares the fields, so it may add its own (and its other modules may cimport them):
#
#     cdef class Buffer:
#         cdef void* ptr
#         cdef readonly int64_t nbytes
#
#     cdef class ExecutionRecord:
#         cdef mnn_execution exe
#         cdef void* state
#         cdef list keep
#         cdef bytes _name
#
# Textual, not a class cimported from the core: the layout of a cdef class is never part of the
# contract between packages (abi.h is), so each backend compiles its own copy of these classes.
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset
from posix.stdlib cimport posix_memalign

from mnn_core.abi cimport MNN_ABI_VERSION, MNN_EXECUTION_CAPSULE, mnn_execution, mnn_run_fn

import numpy as np


cdef class Buffer:
    """Zeroed, 64-byte aligned memory for packed weights, scratch or tables (panels start on cache
    lines), with 64 bytes to spare past the end for a kernel's last vector load."""

    def __cinit__(self, int64_t nbytes):
        cdef size_t size = <size_t>max(nbytes, 64) + 64
        self.nbytes = nbytes
        if posix_memalign(&self.ptr, 64, size) != 0:
            self.ptr = NULL
            raise MemoryError(f"{__name__}: cannot allocate {nbytes} bytes")
        memset(self.ptr, 0, size)

    def __dealloc__(self):
        free(self.ptr)


cdef Buffer _copy_array(arr, dtype):
    """A Buffer holding a C-contiguous copy of `arr` as `dtype`."""
    a = np.ascontiguousarray(arr, dtype=dtype)
    cdef Buffer buf = Buffer(a.nbytes)
    if a.nbytes:
        memcpy(buf.ptr, <void*><size_t>a.ctypes.data, a.nbytes)
    return buf


cdef class ExecutionRecord:
    """One prepared op: an mnn_execution, its state (freed with the record) and the objects the
    state points into (`keep`), alive as long as the core holds the capsule's owner."""

    def __cinit__(self):
        self.keep = []

    def __dealloc__(self):
        free(self.state)

    def capsule(self):
        """The mnn_execution as the core's CExecution takes it (abi.h's MNN_EXECUTION_CAPSULE)."""
        return PyCapsule_New(&self.exe, MNN_EXECUTION_CAPSULE, NULL)

    @property
    def name(self):
        return self._name.decode()


cdef void* _start_execution(ExecutionRecord ex, bytes name, size_t state_size, mnn_run_fn run,
                            const char* (*error)(void* state) noexcept nogil, uint32_t flags) except NULL:
    """Gives `ex` a zeroed state of `state_size` bytes and points its mnn_execution at it, `run` and
    `error`; returns the state for the backend to fill."""
    ex.state = calloc(1, state_size)
    if ex.state == NULL:
        raise MemoryError(f"{__name__}: cannot allocate the state of {name.decode()}")
    ex._name = name
    ex.exe.abi_version = MNN_ABI_VERSION
    ex.exe.flags = flags
    ex.exe.run = run
    ex.exe.state = ex.state
    ex.exe.error = error
    ex.exe.name = ex._name
    return ex.state
