"""The data path: walk prepared executions without the GIL.

A Program is built once per plan. Each step is either a C execution (an
`mnn_execution*` from a backend's PyCapsule, called through its function
pointer with tensor descriptors fixed at resize) or a Python execution (the
GIL is taken for that call only). `run` allocates nothing.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free
from libc.time cimport clock_t

from mnn_core.abi cimport MNN_ABI_VERSION, MNN_MAX_DIMS, mnn_execution, mnn_tensor

from ..errors import BackendError

cdef extern from "<time.h>" nogil:
    ctypedef int clockid_t
    cdef struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(clockid_t clk, timespec* tp)
    enum: CLOCK_MONOTONIC

cdef inline double _now_ms() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6


cdef struct Step:
    mnn_execution* exe  # NULL: a Python step
    mnn_tensor* inputs
    mnn_tensor* outputs
    int32_t n_inputs
    int32_t n_outputs
    int32_t py_index


from ..graph.ir import DTYPES

#: mnn_dtype codes of abi.h: a dtype's position in DTYPES
DTYPE_CODES = {name: code for code, name in enumerate(DTYPES)}


cdef void _fill(mnn_tensor* t, tuple desc) except *:
    data, byte_offset, shape, dtype, layout = desc
    if len(shape) > MNN_MAX_DIMS:
        raise BackendError(f"tensor of rank {len(shape)} exceeds the C ABI's {MNN_MAX_DIMS} dimensions")
    t.data = <void*><size_t>data
    t.byte_offset = byte_offset
    t.ndim = len(shape)
    for i, d in enumerate(shape):
        t.shape[i] = d
    t.dtype = DTYPE_CODES[dtype]
    t.layout = layout
    t.reserved = 0


cdef class Program:
    cdef Step* steps
    cdef int n_steps
    cdef mnn_tensor* descs
    cdef double* times
    cdef list py_calls
    cdef list names
    cdef list keep  # owners of C state and capsules: alive as long as the program

    def __cinit__(self):
        self.steps = NULL
        self.descs = NULL
        self.times = NULL

    def __init__(self, list steps):
        """steps: (name, execution, input descs, output descs); a desc is
        (data pointer, byte offset, shape, dtype name, layout). An execution is
        a CExecution-like object (`.capsule`) or a callable (Python step)."""
        cdef int n_desc = 0
        cdef int i, k, base
        cdef mnn_execution* exe
        self.n_steps = len(steps)
        self.py_calls = []
        self.names = []
        self.keep = []
        for s in steps:
            n_desc += len(s[2]) + len(s[3])
        self.steps = <Step*>calloc(max(self.n_steps, 1), sizeof(Step))
        self.descs = <mnn_tensor*>calloc(max(n_desc, 1), sizeof(mnn_tensor))
        self.times = <double*>calloc(max(self.n_steps, 1), sizeof(double))
        if self.steps == NULL or self.descs == NULL or self.times == NULL:
            raise MemoryError()
        base = 0
        for i, (name, execution, ins, outs) in enumerate(steps):
            self.names.append(name)
            self.steps[i].inputs = self.descs + base
            for k, d in enumerate(ins):
                _fill(self.descs + base + k, d)
            base += len(ins)
            self.steps[i].outputs = self.descs + base
            for k, d in enumerate(outs):
                _fill(self.descs + base + k, d)
            base += len(outs)
            self.steps[i].n_inputs = len(ins)
            self.steps[i].n_outputs = len(outs)
            capsule = getattr(execution, "capsule", None)
            if capsule is not None:
                if not PyCapsule_IsValid(capsule, b"mnn_core.execution"):
                    raise BackendError(f"step {name}: the backend's capsule is not an mnn_core.execution")
                exe = <mnn_execution*>PyCapsule_GetPointer(capsule, b"mnn_core.execution")
                if exe.abi_version != MNN_ABI_VERSION:
                    raise BackendError(
                        f"step {name}: execution built for C ABI version {exe.abi_version}, "
                        f"this mnn-core speaks {MNN_ABI_VERSION}; rebuild the backend package"
                    )
                if exe.run == NULL:
                    raise BackendError(f"step {name}: execution has no run function")
                self.steps[i].exe = exe
                self.steps[i].py_index = -1
            else:
                self.steps[i].exe = NULL
                self.steps[i].py_index = len(self.py_calls)
                self.py_calls.append(execution)
            self.keep.append(execution)

    def __dealloc__(self):
        free(self.steps)
        free(self.descs)
        free(self.times)

    def __len__(self):
        return self.n_steps

    def run(self, bint profile=False):
        """Run every step once, in order."""
        cdef int i, rc = 0, failed = -1
        cdef Step* s
        cdef double t0 = 0
        with nogil:
            for i in range(self.n_steps):
                s = &self.steps[i]
                if profile:
                    t0 = _now_ms()
                if s.exe != NULL:
                    rc = s.exe.run(s.exe.state, s.inputs, s.n_inputs, s.outputs, s.n_outputs)
                    if rc != 0:
                        failed = i
                        break
                else:
                    with gil:
                        self._call_python(i, s.py_index)
                if profile:
                    self.times[i] = _now_ms() - t0
        if failed >= 0:
            self._raise_failure(failed, rc)

    cdef _call_python(self, int i, int index):
        try:
            self.py_calls[index]()
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError(f"step {self.names[i]} failed: {type(exc).__name__}: {exc}") from exc

    cdef _raise_failure(self, int i, int rc):
        cdef mnn_execution* exe = self.steps[i].exe
        msg = ""
        if exe.error != NULL:
            c_msg = exe.error(exe.state)
            if c_msg != NULL:
                msg = ": " + (<bytes>c_msg).decode("utf-8", "replace")
        raise BackendError(f"step {self.names[i]} failed with code {rc}{msg}")

    def profile(self):
        """(step name, milliseconds) of the last run(profile=True)."""
        return [(self.names[i], self.times[i]) for i in range(self.n_steps)]
