# The fields of the memory and execution record classes that _arm.pyx takes from the core
# (mnn_core/backend/execution.pxi implements them; a .pxd declares what each backend keeps in them).
from libc.stdint cimport int64_t

from mnn_core.abi cimport mnn_execution


cdef class Buffer:
    cdef void* ptr
    cdef readonly int64_t nbytes


cdef class ExecutionRecord:
    cdef mnn_execution exe
    cdef void* state
    cdef list keep
    cdef bytes _name
