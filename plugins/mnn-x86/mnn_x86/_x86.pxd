# What the op modules compiled apart from _x86 (mnn_x86/_<family>.pyx, see family.pxd) cimport:
# the execution and buffer types and their constructors, so every op hands the core the same record.
from libc.stdint cimport int64_t

from mnn_core.abi cimport mnn_execution, mnn_run_fn


cdef class Buffer:  # its methods: mnn_core/backend/execution.pxi
    cdef void* ptr
    cdef readonly int64_t nbytes
    cdef object source  # packed weights: a weak reference to the array they were packed from (_packed_cache)
    cdef object checksum  # ... and its bytes' CRC-32 then
    cdef object __weakref__


cdef class ExecutionRecord:  # its methods: mnn_core/backend/execution.pxi
    cdef mnn_execution exe
    cdef void* state
    cdef list keep
    cdef bytes _name


cdef class Execution(ExecutionRecord):
    cdef public tuple packed  # node input positions of constants copied at prepare (CExecution.packed)


cdef Buffer _floats(int64_t n)
cdef Buffer _copy_array(arr, dtype)
cdef Execution _execution(str name, size_t state_size, mnn_run_fn fn, str isa, int threads, int64_t depth=*,
                          int64_t rows=*, int64_t cols=*)
