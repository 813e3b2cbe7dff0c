"""One prepared C execution called on numpy arrays: the data path of eager dispatch.

A backend's `mnn_execution` (include/mnn_core/abi.h) normally runs inside a
Program whose descriptors point into a plan's arena. An execution that sets
MNN_EXEC_INPUTS_MAY_MOVE reads its tensors' data pointers at every run and
keeps none from prepare, so it can just as well run on the caller's arrays:
`Call` keeps the descriptors (shapes and dtypes fixed when it is made), points
them at the arrays of each call, allocates the outputs, and calls the kernel
without the GIL. Nothing here is per-op Python beyond that one call.
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
            a = np.empty(self.out_shapes[i], self.out_types[i])
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
