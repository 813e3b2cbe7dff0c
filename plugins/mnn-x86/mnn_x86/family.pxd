# What every op module built apart from _x86 cimports (see csrc/family.h): the execution record and
# its constructor from _x86, and the thread pool. A module calls attach_pool() once at import.
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int32_t, int64_t

from mnn_x86._x86 cimport Buffer, Execution, _copy_array, _execution, _floats


cdef extern from "family.h" nogil:
    """
    const x86_pool_api *x86_pool; /* this module's handle on _x86's pool */
    """
    ctypedef struct x86_pool_api:
        pass
    const x86_pool_api* x86_pool

    ctypedef struct x86_op:
        int32_t threads
        const char* error


cdef inline int attach_pool() except -1:
    global x86_pool
    from mnn_x86._x86 import pool_capsule
    x86_pool = <const x86_pool_api*>PyCapsule_GetPointer(pool_capsule(), b"mnn_x86.pool")
    return 0


cdef inline void* _keep(Execution ex, arr, dtype=None):
    """A copy of `arr` (as `dtype`, by default its own) that lives as long as the execution; never
    NULL, an empty one included (a Buffer always holds memory)."""
    cdef Buffer buf = _copy_array(arr, arr.dtype if dtype is None else dtype)
    ex.keep.append(buf)
    return buf.ptr


cdef inline void* _zeros(Execution ex, int64_t nbytes):
    """`nbytes` zeroed bytes that live as long as the execution."""
    cdef Buffer buf = Buffer(nbytes)
    ex.keep.append(buf)
    return buf.ptr
