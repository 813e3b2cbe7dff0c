# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython glue over the OpenCL entry points of csrc/mnn_cl.h.

Objects here own one OpenCL handle each and release it when collected:
Context (context + in-order queue of one device), Program, Kernel (with its
arguments set once), Buffer, Segment (the recorded list of launches that
the core's run loop calls through an mnn_execution, without the GIL) and
Transfer (a run's copy between host memory and a buffer, the same way).
Everything above this (device choice, caches, tuning, kernels) is Python.
"""

from cpython.bytes cimport PyBytes_AsString, PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from mnn_core.abi cimport (
    MNN_ABI_VERSION,
    MNN_EXEC_INPUTS_MAY_MOVE,
    MNN_EXECUTION_CAPSULE,
    mnn_execution,
    mnn_tensor,
)

import numpy as np

include "_cl_decl.pxi"


class CLError(RuntimeError):
    """An OpenCL call failed; `code` is the CL error code."""

    def __init__(self, what, int code):
        name = mnncl_error_name(code).decode()
        super().__init__(f"{what} failed: {name} ({code})")
        self.code = code


cdef inline void _check(cl_int rc, what) except *:
    if rc != CL_SUCCESS:
        raise CLError(what, rc)


def load(library=None):
    """Load the ICD loader (once per process). Returns "" or why it failed."""
    cdef char err[512]
    err[0] = 0
    lib = (library or "").encode()
    if mnncl_load(lib, err, sizeof(err)) != 0:
        return err.decode(errors="replace")
    return ""


def loaded():
    return bool(mnncl_loaded())


def forked():
    """Why OpenCL cannot be used in this process (a fork after it was initialized), or ""."""
    return FORK_MESSAGE.decode() if mnncl_forked() else ""


class ForkedError(RuntimeError):
    pass


cdef _need_loader():
    if not mnncl_loaded():
        raise CLError("OpenCL loader not loaded; call load()", -1001)
    if mnncl_forked():
        raise ForkedError(FORK_MESSAGE.decode())


# -- discovery ---------------------------------------------------------------------------

cdef str _platform_str(cl_platform_id p, cl_uint what):
    cdef size_t n = 0
    if mnncl.GetPlatformInfo(p, what, 0, NULL, &n) != CL_SUCCESS or n == 0:
        return ""
    buf = bytearray(n)
    cdef char* data = buf
    if mnncl.GetPlatformInfo(p, what, n, data, NULL) != CL_SUCCESS:
        return ""
    return bytes(buf).rstrip(b"\0").decode(errors="replace").strip()


cdef str _device_str(cl_device_id d, cl_uint what):
    cdef size_t n = 0
    if mnncl.GetDeviceInfo(d, what, 0, NULL, &n) != CL_SUCCESS or n == 0:
        return ""
    buf = bytearray(n)
    cdef char* data = buf
    if mnncl.GetDeviceInfo(d, what, n, data, NULL) != CL_SUCCESS:
        return ""
    return bytes(buf).rstrip(b"\0").decode(errors="replace").strip()


cdef cl_ulong _device_ulong(cl_device_id d, cl_uint what, size_t size):
    cdef cl_ulong value = 0
    mnncl.GetDeviceInfo(d, what, size, &value, NULL)
    return value


cdef str _type_name(cl_ulong t):
    if t & CL_DEVICE_TYPE_GPU:
        return "gpu"
    if t & CL_DEVICE_TYPE_ACCELERATOR:
        return "accelerator"
    if t & CL_DEVICE_TYPE_CPU:
        return "cpu"
    return "other"


def platforms():
    """Every platform and its devices: [(platform info dict, [device info dict, ...])].
    Raises CLError when the loader finds no platform (CL_PLATFORM_NOT_FOUND_KHR)."""
    _need_loader()
    cdef cl_uint n = 0, nd = 0, i, j
    cdef cl_int rc = mnncl.GetPlatformIDs(0, NULL, &n)
    if rc == CL_PLATFORM_NOT_FOUND_KHR or (rc == CL_SUCCESS and n == 0):
        return []
    _check(rc, "clGetPlatformIDs")
    cdef cl_platform_id* ids = <cl_platform_id*>calloc(n, sizeof(cl_platform_id))
    cdef cl_device_id* devs
    cdef size_t sizes[3]
    out = []
    try:
        _check(mnncl.GetPlatformIDs(n, ids, NULL), "clGetPlatformIDs")
        for i in range(n):
            pinfo = {"handle": <uintptr_t>ids[i], "name": _platform_str(ids[i], CL_PLATFORM_NAME),
                     "vendor": _platform_str(ids[i], CL_PLATFORM_VENDOR),
                     "version": _platform_str(ids[i], CL_PLATFORM_VERSION)}
            devices = []
            nd = 0
            rc = mnncl.GetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd)
            if rc == CL_SUCCESS and nd > 0:
                devs = <cl_device_id*>calloc(nd, sizeof(cl_device_id))
                try:
                    if mnncl.GetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, nd, devs, NULL) == CL_SUCCESS:
                        for j in range(nd):
                            memset(sizes, 0, sizeof(sizes))
                            mnncl.GetDeviceInfo(devs[j], CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(sizes), sizes, NULL)
                            devices.append({
                                "handle": <uintptr_t>devs[j],
                                "name": _device_str(devs[j], CL_DEVICE_NAME),
                                "vendor": _device_str(devs[j], CL_DEVICE_VENDOR),
                                "version": _device_str(devs[j], CL_DEVICE_VERSION),
                                "driver_version": _device_str(devs[j], CL_DRIVER_VERSION),
                                "opencl_c_version": _device_str(devs[j], CL_DEVICE_OPENCL_C_VERSION),
                                "extensions": _device_str(devs[j], CL_DEVICE_EXTENSIONS).split(),
                                "type": _type_name(_device_ulong(devs[j], CL_DEVICE_TYPE, sizeof(cl_ulong))),
                                "available": bool(_device_ulong(devs[j], CL_DEVICE_AVAILABLE, sizeof(cl_bool))),
                                "compute_units": int(_device_ulong(devs[j], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint))),
                                "clock_mhz": int(_device_ulong(devs[j], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(cl_uint))),
                                "global_mem": int(_device_ulong(devs[j], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong))),
                                "max_alloc": int(_device_ulong(devs[j], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(cl_ulong))),
                                "local_mem": int(_device_ulong(devs[j], CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong))),
                                "max_work_group": int(_device_ulong(devs[j], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t))),
                                "max_work_items": (int(sizes[0]), int(sizes[1]), int(sizes[2])),
                                "base_addr_align_bits": int(_device_ulong(devs[j], CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                                                                          sizeof(cl_uint))),
                            })
                finally:
                    free(devs)
            out.append((pinfo, devices))
    finally:
        free(ids)
    return out


# -- context, programs, kernels, buffers -------------------------------------------------

cdef class Context:
    """A context and an in-order queue on one device (plus a profiling queue for tuning)."""
    cdef cl_context ctx
    cdef cl_command_queue queue
    cdef cl_command_queue timing_queue
    cdef cl_device_id device
    cdef public str name

    def __cinit__(self):
        self.ctx = NULL
        self.queue = NULL
        self.timing_queue = NULL

    def __init__(self, uintptr_t platform, uintptr_t device, str name=""):
        _need_loader()
        cdef cl_int rc = 0
        cdef cl_context_properties props[3]
        props[0] = CL_CONTEXT_PLATFORM
        props[1] = <cl_context_properties>platform
        props[2] = 0
        self.device = <cl_device_id>device
        self.name = name
        self.ctx = mnncl.CreateContext(props, 1, &self.device, NULL, NULL, &rc)
        _check(rc, "clCreateContext")
        self.queue = mnncl.CreateCommandQueue(self.ctx, self.device, 0, &rc)
        _check(rc, "clCreateCommandQueue")

    def __dealloc__(self):
        if mnncl_forked():
            return  # the parent's handles: calling into the driver here would hang
        if self.timing_queue != NULL:
            mnncl.ReleaseCommandQueue(self.timing_queue)
        if self.queue != NULL:
            mnncl.Finish(self.queue)
            mnncl.ReleaseCommandQueue(self.queue)
        if self.ctx != NULL:
            mnncl.ReleaseContext(self.ctx)

    @property
    def queue_handle(self):
        return <uintptr_t>self.queue

    def finish(self):
        with nogil:
            rc = mnncl.Finish(self.queue)
        _check(rc, "clFinish")

    def flush(self):
        _check(mnncl.Flush(self.queue), "clFlush")

    def build_source(self, str source, str options):
        """Compile `source`; raises BuildError with the build log on failure."""
        _need_loader()
        cdef bytes src = source.encode()
        cdef const char* ptr = src
        cdef size_t n = len(src)
        cdef cl_int rc = 0
        cdef cl_program prog = mnncl.CreateProgramWithSource(self.ctx, 1, &ptr, &n, &rc)
        _check(rc, "clCreateProgramWithSource")
        return self._build(prog, options)

    def build_binary(self, bytes binary, str options):
        """Load a program binary from clGetProgramInfo(CL_PROGRAM_BINARIES) and build it."""
        cdef const unsigned char* ptr = <const unsigned char*>PyBytes_AsString(binary)
        cdef size_t n = len(binary)
        cdef cl_int rc = 0, status = 0
        cdef cl_program prog = mnncl.CreateProgramWithBinary(self.ctx, 1, &self.device, &n, &ptr, &status, &rc)
        _check(rc, "clCreateProgramWithBinary")
        if status != CL_SUCCESS:
            mnncl.ReleaseProgram(prog)
            _check(status, "clCreateProgramWithBinary (binary status)")
        return self._build(prog, options)

    cdef Program _build(self, cl_program prog, str options):
        cdef bytes opts = options.encode()
        cdef const char* copts = opts
        cdef cl_int rc
        with nogil:
            rc = mnncl.BuildProgram(prog, 1, &self.device, copts, NULL, NULL)
        cdef Program p = Program.__new__(Program)
        p.prog = prog
        p.context = self
        if rc != CL_SUCCESS:
            log = p.build_log()
            raise BuildError(f"clBuildProgram failed: {mnncl_error_name(rc).decode()} ({rc})", rc, log)
        status = p.build_status()
        if status != CL_SUCCESS:  # (CL_BUILD_SUCCESS is 0): a driver that said yes but built nothing
            raise BuildError(f"clBuildProgram returned success but the build status is {status}",
                             CL_BUILD_PROGRAM_FAILURE, p.build_log())
        return p

    def buffer(self, size_t nbytes):
        _need_loader()
        cdef cl_int rc = 0
        cdef Buffer b = Buffer.__new__(Buffer)
        b.mem = mnncl.CreateBuffer(self.ctx, CL_MEM_READ_WRITE, max(nbytes, 4), NULL, &rc)
        _check(rc, f"clCreateBuffer({nbytes} bytes)")
        b.nbytes = nbytes
        b.context = self
        return b

    def time_kernel(self, Kernel kernel, tuple gws, lws, int reps=3):
        """Median device time in ms of `reps` launches on the profiling queue."""
        cdef cl_int rc = 0
        cdef size_t g[3]
        cdef size_t l[3]
        cdef cl_event ev = NULL
        cdef cl_ulong t0 = 0, t1 = 0
        cdef size_t* lp = NULL
        cdef int i
        cdef cl_uint dims = len(gws)
        if self.timing_queue == NULL:
            self.timing_queue = mnncl.CreateCommandQueue(self.ctx, self.device, CL_QUEUE_PROFILING_ENABLE, &rc)
            _check(rc, "clCreateCommandQueue(profiling)")
        for i in range(dims):
            g[i] = gws[i]
            l[i] = lws[i] if lws is not None else 1
        if lws is not None:
            lp = l
        times = []
        for _ in range(reps + 1):  # the first launch warms up (and may compile, on PoCL)
            rc = mnncl.EnqueueNDRangeKernel(self.timing_queue, kernel.kernel, dims, NULL, g, lp, 0, NULL, &ev)
            if rc != CL_SUCCESS:
                return None  # this work-group size cannot run the kernel
            with nogil:
                mnncl.WaitForEvents(1, &ev)
            mnncl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(cl_ulong), &t0, NULL)
            mnncl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(cl_ulong), &t1, NULL)
            mnncl.ReleaseEvent(ev)
            times.append((t1 - t0) * 1e-6)
        times = sorted(times[1:])
        return times[len(times) // 2]

    def time_span(self, list launches, int reps=3):
        """Median device ms from the start of the first to the end of the last of `launches`
        ([(Kernel, gws, lws or None)]) enqueued back to back on the profiling queue: a run's GPU span."""
        cdef cl_int rc = 0
        cdef size_t g[3]
        cdef size_t l[3]
        cdef cl_event first = NULL, last = NULL
        cdef cl_event* ev
        cdef cl_ulong t0 = 0, t1 = 0
        cdef cl_uint dims
        cdef Kernel k
        if not launches:
            return 0.0
        if self.timing_queue == NULL:
            self.timing_queue = mnncl.CreateCommandQueue(self.ctx, self.device, CL_QUEUE_PROFILING_ENABLE, &rc)
            _check(rc, "clCreateCommandQueue(profiling)")
        spans = []
        for _ in range(reps + 1):  # the first warms up
            for i, (kern, gws, lws) in enumerate(launches):
                k = kern
                dims = len(gws)
                for d in range(dims):
                    g[d] = gws[d]
                    l[d] = lws[d] if lws is not None else 1
                ev = &first if i == 0 else (&last if i == len(launches) - 1 else NULL)
                rc = mnncl.EnqueueNDRangeKernel(self.timing_queue, k.kernel, dims, NULL, g,
                                                l if lws is not None else NULL, 0, NULL, ev)
                _check(rc, "clEnqueueNDRangeKernel(span)")
            if last == NULL:  # one launch: its own span
                last = first
            with nogil:
                mnncl.Finish(self.timing_queue)
            mnncl.GetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof(cl_ulong), &t0, NULL)
            mnncl.GetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof(cl_ulong), &t1, NULL)
            mnncl.ReleaseEvent(first)
            if last != first:
                mnncl.ReleaseEvent(last)
            first = NULL
            last = NULL
            spans.append((t1 - t0) * 1e-6)
        spans = sorted(spans[1:])
        return spans[len(spans) // 2]


class BuildError(CLError):
    def __init__(self, message, code, log):
        RuntimeError.__init__(self, f"{message}\n{log}".rstrip())
        self.code = code
        self.log = log


include "_cl_objects.pxi"
