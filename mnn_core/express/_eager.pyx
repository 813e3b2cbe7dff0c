"""One prepared C execution called on numpy arrays: the data path of eager dispatch.

A backend's `mnn_execution` (include/mnn_core/abi.h) normally runs inside a
Program whose descriptors point into a plan's arena. An execution that sets
MNN_EXEC_INPUTS_MAY_MOVE reads its tensors' data pointers at every run and
keeps none from prepare, so it can just as well run on the caller's arrays:
`Call` keeps the descriptors (shapes and dtypes fixed when it is made), points
them at the arrays of each call, allocates the outputs, and calls the kernel
without the GIL. Nothing here is per-op Python beyond that one call.

Outputs of 64 KiB and more come from a small cache of freed blocks (exact
sizes, at most `cache_limit()` bytes kept): a training step frees and
allocates the same activation sizes every step, and fresh memory from the
system costs a page fault per 4 KiB on first touch, as much as the kernels
that write it (LeNet: about 600 faults, 1.7 ms of a 4 ms step).
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int32_t
from libc.stdlib cimport calloc, free

from mnn_core.abi cimport MNN_ABI_VERSION, MNN_EXEC_INPUTS_MAY_MOVE, MNN_EXECUTION_CAPSULE, MNN_MAX_DIMS, mnn_execution, mnn_tensor

import numpy as np

from ..errors import BackendError
from ..graph.ir import DTYPES

cnp.import_array()

cdef extern from "<stdlib.h>" nogil:
    void* aligned_alloc(size_t alignment, size_t size)

#: outputs smaller than this come from malloc: its bins serve them without faults
DEF POOL_MIN_BYTES = 65536
DEF POOL_SLOTS = 512
DEF ALIGN = 64
DEF NPY_USERDEF = 256  # numpy type numbers from here on are user-defined dtypes

cdef void* _free_ptr[POOL_SLOTS]  # cached blocks (NULL: an empty slot) and their sizes
cdef size_t _free_size[POOL_SLOTS]
cdef size_t _cached = 0  # bytes held in the cache
cdef size_t _limit = 64 << 20


def cache_limit() -> int:
    """Bytes of freed output blocks kept for reuse (64 MiB unless set)."""
    return _limit


def set_cache_limit(size_t nbytes) -> None:
    """Keep at most `nbytes` of freed output blocks (0: none; the cache is emptied down to it)."""
    global _limit
    _limit = nbytes
    _trim(nbytes)


def cached_bytes() -> int:
    return _cached


def empty_cache() -> None:
    """Give every cached block back to the system."""
    _trim(0)


cdef void _trim(size_t keep) noexcept:
    global _cached
    cdef int i
    for i in range(POOL_SLOTS):
        if _cached <= keep:
            return
        if _free_ptr[i] != NULL:
            free(_free_ptr[i])
            _cached -= _free_size[i]
            _free_ptr[i] = NULL


cdef void* _take(size_t nbytes) noexcept:
    """A block of exactly nbytes (rounded to ALIGN): a cached one, or a new one; NULL if none can be had."""
    global _cached
    cdef int i
    for i in range(POOL_SLOTS):
        if _free_ptr[i] != NULL and _free_size[i] == nbytes:
            p = _free_ptr[i]
            _free_ptr[i] = NULL
            _cached -= nbytes
            return p
    return aligned_alloc(ALIGN, nbytes)


cdef void _give(void* p, size_t nbytes) noexcept:
    global _cached
    cdef int i
    if _cached + nbytes <= _limit:
        for i in range(POOL_SLOTS):
            if _free_ptr[i] == NULL:
                _free_ptr[i] = p
                _free_size[i] = nbytes
                _cached += nbytes
                return
    free(p)


cdef class _Block:
    """The memory of one output array (its base): back to the cache when the array goes."""

    cdef void* ptr
    cdef size_t nbytes

    def __dealloc__(self):
        if self.ptr != NULL:
            _give(self.ptr, self.nbytes)


cdef cnp.ndarray _new_array(tuple shape, cnp.dtype dtype, size_t nbytes):
    """An uninitialised C-contiguous array, from the cache when it is large enough to be worth one."""
    if nbytes < POOL_MIN_BYTES or dtype.type_num >= NPY_USERDEF:  # (ml_dtypes' types: numpy's own path)
        return np.empty(shape, dtype)
    cdef size_t rounded = (nbytes + ALIGN - 1) // ALIGN * ALIGN
    cdef void* p = _take(rounded)
    if p == NULL:
        raise MemoryError()
    cdef _Block block = _Block.__new__(_Block)
    block.ptr, block.nbytes = p, rounded
    cdef cnp.npy_intp dims[MNN_MAX_DIMS]
    cdef int k
    for k in range(len(shape)):
        dims[k] = shape[k]
    arr = cnp.PyArray_SimpleNewFromData(len(shape), dims, dtype.type_num, p)
    cnp.set_array_base(arr, block)
    return arr

#: mnn_dtype codes of abi.h: a dtype's position in DTYPES
DTYPE_CODES = {name: code for code, name in enumerate(DTYPES)}


def movable(execution) -> bool:
    """Whether a CExecution can run on arrays of the caller's (MNN_EXEC_INPUTS_MAY_MOVE)."""
    capsule = getattr(execution, "capsule", None)
    if capsule is None or not PyCapsule_IsValid(capsule, MNN_EXECUTION_CAPSULE):
        return False
    cdef mnn_execution* exe = <mnn_execution*>PyCapsule_GetPointer(capsule, MNN_EXECUTION_CAPSULE)
    return exe.abi_version == MNN_ABI_VERSION and exe.run != NULL and (exe.flags & MNN_EXEC_INPUTS_MAY_MOVE) != 0


cdef void _fill(mnn_tensor* t, tuple shape, str dtype) except *:
    if len(shape) > MNN_MAX_DIMS:
        raise BackendError(f"tensor of rank {len(shape)} exceeds the C ABI's {MNN_MAX_DIMS} dimensions")
    t.data = NULL
    t.byte_offset = 0
    t.ndim = len(shape)
    for i, d in enumerate(shape):
        t.shape[i] = d
    t.dtype = DTYPE_CODES[dtype]
    t.layout = 0
    t.reserved = 0


cdef class Call:
    """`execution` (a CExecution that may move) run on arrays of fixed shapes and dtypes.

    call(arrays) -> list of new output arrays. The arrays must have the shapes and dtypes
    given here (the caller's cache key guarantees it); any that is not C-contiguous and
    aligned is copied first."""

    cdef mnn_execution* exe
    cdef mnn_tensor* descs
    cdef int n_in
    cdef int n_out
    cdef object owner
    cdef list out_shapes
    cdef list out_types
    cdef list out_nbytes
    cdef readonly str backend

    def __cinit__(self):
        self.descs = NULL

    def __init__(self, execution, list in_infos, list out_infos, str backend=""):
        """in_infos / out_infos: (shape tuple, dtype name) of each present input and each output;
        backend: the name of the backend that prepared it (for placement reports)."""
        if not movable(execution):
            raise BackendError(f"execution {getattr(execution, 'name', '?')} cannot run on the caller's arrays "
                               "(it does not set MNN_EXEC_INPUTS_MAY_MOVE)")
        self.exe = <mnn_execution*>PyCapsule_GetPointer(execution.capsule, MNN_EXECUTION_CAPSULE)
        self.owner = execution
        self.backend = backend
        self.n_in, self.n_out = len(in_infos), len(out_infos)
        self.descs = <mnn_tensor*>calloc(max(self.n_in + self.n_out, 1), sizeof(mnn_tensor))
        if self.descs == NULL:
            raise MemoryError()
        cdef int i = 0
        for shape, dtype in list(in_infos) + list(out_infos):
            _fill(self.descs + i, tuple(shape), dtype)
            i += 1
        self.out_shapes = [tuple(int(d) for d in shape) for shape, _ in out_infos]
        self.out_types = [np.dtype(dtype) for _, dtype in out_infos]
        self.out_nbytes = [int(np.prod(shape, dtype=np.int64)) * t.itemsize
                           for (shape, _), t in zip(out_infos, self.out_types)]

    def __dealloc__(self):
        free(self.descs)

    def __call__(self, list arrays):
        cdef int i, rc
        cdef cnp.ndarray a
        cdef list held = []  # the arrays whose data the descriptors point at, alive through the run
        for i in range(self.n_in):
            a = arrays[i]
            if not (cnp.PyArray_IS_C_CONTIGUOUS(a) and cnp.PyArray_ISALIGNED(a)):
                a = np.ascontiguousarray(a)
            held.append(a)
            self.descs[i].data = cnp.PyArray_DATA(a)
        outs = []
        for i in range(self.n_out):
            a = _new_array(self.out_shapes[i], self.out_types[i], self.out_nbytes[i])
            outs.append(a)
            self.descs[self.n_in + i].data = cnp.PyArray_DATA(a)
        with nogil:
            rc = self.exe.run(self.exe.state, self.descs, <int32_t>self.n_in, self.descs + self.n_in,
                              <int32_t>self.n_out)
        if rc != 0:
            msg = ""
            if self.exe.error != NULL:
                c_msg = self.exe.error(self.exe.state)
                if c_msg != NULL:
                    msg = ": " + (<bytes>c_msg).decode("utf-8", "replace")
            name = (<bytes>self.exe.name).decode("utf-8", "replace") if self.exe.name != NULL else "?"
            raise BackendError(f"{name} failed with code {rc}{msg}")
        return outs
