"""The data path: walk prepared executions without the GIL.

A Program is built once per plan. Each step is either a C execution (an
`mnn_execution*` from a backend's PyCapsule, called through its function
pointer with tensor descriptors fixed at resize) or a Python execution (the
GIL is taken for that call only). `run` allocates nothing.

A graph input read only by C executions that set MNN_EXEC_INPUTS_MAY_MOVE is
"movable": `run` can point its descriptors at the caller's array for one run
(and back after), which spares the copy into the arena.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport calloc, free
from libc.time cimport clock_t

cimport numpy as cnp

from mnn_core.abi cimport (MNN_ABI_VERSION, MNN_EXEC_INPUTS_MAY_MOVE, MNN_EXECUTION_CAPSULE, MNN_MAX_DIMS,
                           mnn_execution, mnn_tensor)

from ..errors import BackendError, RunCancelled, RunTimeout

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
    const uint8_t* guard  # a bool the step runs on only while it equals guard_when; NULL: always runs
    uint8_t guard_when


from ..graph.ir import DTYPES

#: mnn_dtype codes of abi.h: a dtype's position in DTYPES
DTYPE_CODES = {name: code for code, name in enumerate(DTYPES)}

cnp.import_array()


def bind_inputs(tuple arrays, tuple views, tuple move_at, size_t lo, size_t hi, int n_movable):
    """The repeated part of Session.run for inputs already checked: arrays[i] is an ndarray of
    views[i]'s shape; move_at[i] its position in Program.run's `moved` where its dtype is the
    view's and the input is movable, else -1. A movable array that is C-contiguous, aligned and
    outside the arena [lo, hi) is read in place (its address goes into the returned tuple), every
    other one is copied (cast) into its view. Returns `moved`, or None when no input moved."""
    cdef Py_ssize_t i
    cdef int j
    cdef size_t a, nb
    cdef cnp.ndarray arr
    cdef list moved = None
    for i in range(len(arrays)):
        arr = arrays[i]
        j = move_at[i]
        if j >= 0 and cnp.PyArray_ISCARRAY_RO(arr):
            a = <size_t>cnp.PyArray_DATA(arr)
            nb = <size_t>cnp.PyArray_NBYTES(arr)
            if hi <= a or a + nb <= lo:  # the bounds test of np.may_share_memory
                if moved is None:
                    moved = [0] * n_movable
                moved[j] = a
                continue
        if cnp.PyArray_CopyInto(<cnp.ndarray>views[i], arr) < 0:
            raise RuntimeError("copying an input into the arena failed")
    return None if moved is None else tuple(moved)


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
    cdef int* moves  # descriptor indices of the movable inputs, input by input (move_start)
    cdef int* move_start  # input j's indices are moves[move_start[j]:move_start[j + 1]]
    cdef void** homes  # each moved descriptor's arena pointer, restored after the run
    cdef int n_moves
    cdef readonly tuple movable  # per graph input passed to __init__: whether run() may move it

    def __cinit__(self):
        self.steps = NULL
        self.descs = NULL
        self.times = NULL
        self.moves = NULL
        self.move_start = NULL
        self.homes = NULL

    def __init__(self, list steps, inputs=(), dict guards=None):
        """steps: (name, execution, input descs, output descs, input names); a desc is
        (data pointer, byte offset, shape, dtype name, layout); the names (optional) are the
        values of the input descs. An execution is a CExecution-like object (`.capsule`) or a
        callable (Python step). inputs: the graph inputs run() may move (None for one it may not);
        each is movable where every step that reads it is a C execution with
        MNN_EXEC_INPUTS_MAY_MOVE and names what it reads. guards: {step index: (address of a
        bool, value)}: that step runs only while the bool holds the value (an inlined If's branch,
        program_steps.py), else it is skipped."""
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
        for i, (name, execution, ins, outs, *_) in enumerate(steps):
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
                if not PyCapsule_IsValid(capsule, MNN_EXECUTION_CAPSULE):
                    raise BackendError(f"step {name}: the backend's capsule is not an mnn_core.execution")
                exe = <mnn_execution*>PyCapsule_GetPointer(capsule, MNN_EXECUTION_CAPSULE)
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
        for i, (address, when) in (guards or {}).items():
            if not 0 <= i < self.n_steps or not address:
                raise ValueError(f"guard of step {i}: no such step or no address")
            self.steps[i].guard = <const uint8_t*><size_t>address
            self.steps[i].guard_when = 1 if when else 0
        self._find_moves(steps, list(inputs))

    cdef _find_moves(self, list steps, list inputs):
        """Fill moves / homes / movable: each input's descriptors, where all its readers allow a move."""
        index = {name: j for j, name in enumerate(inputs) if name is not None}
        found = [[] for _ in inputs]
        ok = [name is not None for name in inputs]
        cdef int i, k, first
        for i, s in enumerate(steps):
            names = s[4] if len(s) > 4 else None
            if names is None:  # a step that does not say what it reads may read any input
                ok = [False] * len(inputs)
                break
            first = <int>(self.steps[i].inputs - self.descs)
            for k, name in enumerate(names):
                j = index.get(name)
                if j is None:
                    continue
                if (self.steps[i].exe == NULL or not (self.steps[i].exe.flags & MNN_EXEC_INPUTS_MAY_MOVE)
                        or k >= self.steps[i].n_inputs):
                    ok[j] = False
                else:
                    found[j].append(first + k)
        self.movable = tuple(ok)
        flat = [d for j, ds in enumerate(found) if ok[j] for d in ds]
        self.n_moves = len(flat)
        self.moves = <int*>calloc(max(len(flat), 1), sizeof(int))
        self.homes = <void**>calloc(max(len(flat), 1), sizeof(void*))
        self.move_start = <int*>calloc(len(inputs) + 1, sizeof(int))
        if self.moves == NULL or self.homes == NULL or self.move_start == NULL:
            raise MemoryError()
        at = 0
        for j in range(len(inputs)):
            self.move_start[j] = at
            for d in (found[j] if ok[j] else ()):
                self.moves[at] = d
                self.homes[at] = self.descs[d].data
                at += 1
        self.move_start[len(inputs)] = at

    def __dealloc__(self):
        free(self.steps)
        free(self.descs)
        free(self.times)
        free(self.moves)
        free(self.move_start)
        free(self.homes)

    def __len__(self):
        return self.n_steps

    def run(self, bint profile=False, tuple moved=None, size_t stop_flag=0, double deadline_ms=0):
        """Run every step once, in order. moved: per input of __init__, the address of the
        caller's array to read it from in this run, or 0 for the arena's copy; only for movable
        inputs, each array C-contiguous, of the input's shape and dtype, aligned to its element
        size, outside the arena, and alive until run returns. stop_flag: the address of an int32
        (a CancelToken's) read before each step, nonzero: stop; deadline_ms: stop once
        CLOCK_MONOTONIC passes it (0: no deadline). A stop raises RunCancelled or RunTimeout."""
        cdef int i, j
        cdef size_t address
        if moved is not None:
            if len(moved) != len(self.movable):
                raise ValueError(f"moved: {len(moved)} addresses for {len(self.movable)} inputs")
            for j, address in enumerate(moved):  # all checked before any descriptor moves
                if address and not self.movable[j]:
                    raise ValueError(f"input {j} is not movable")
            for j, address in enumerate(moved):
                for i in range(self.move_start[j], self.move_start[j + 1]):
                    self.descs[self.moves[i]].data = <void*>address if address else self.homes[i]
        try:
            self._run(profile, <volatile int32_t*>stop_flag, deadline_ms)
        finally:
            if moved is not None:
                for i in range(self.n_moves):
                    self.descs[self.moves[i]].data = self.homes[i]

    cdef _run(self, bint profile, volatile int32_t* stop, double deadline_ms):
        cdef int i, rc = 0, failed = -1, stopped = -1, timed_out = 0
        cdef Step* s
        cdef double t0 = 0
        with nogil:
            for i in range(self.n_steps):
                if stop != NULL and stop[0] != 0:
                    stopped = i
                    break
                if deadline_ms > 0 and _now_ms() > deadline_ms:
                    stopped, timed_out = i, 1
                    break
                s = &self.steps[i]
                if s.guard != NULL and (s.guard[0] != 0) != s.guard_when:
                    if profile:
                        self.times[i] = 0
                    continue
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
        if stopped >= 0:
            where = f"step {self.names[stopped]} ({stopped + 1} of {self.n_steps})"
            if timed_out:
                raise RunTimeout(f"run timed out before {where}")
            raise RunCancelled(f"run cancelled before {where}")

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
