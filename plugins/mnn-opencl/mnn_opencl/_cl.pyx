# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython glue over the OpenCL entry points of csrc/mnn_cl.h.

Objects here own one OpenCL handle each and release it when collected:
Context (context + in-order queue of one device), Program, Kernel (with its
arguments set once), Buffer, and Segment (the recorded list of launches that
the core's run loop calls through an mnn_execution, without the GIL).
Everything above this (device choice, caches, tuning, kernels) is Python.
"""

from cpython.bytes cimport PyBytes_AsString, PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from mnn_core.abi cimport MNN_ABI_VERSION, MNN_EXECUTION_CAPSULE, mnn_execution, mnn_tensor

import numpy as np

cdef extern from "mnn_cl.h" nogil:
    ctypedef int32_t cl_int
    ctypedef unsigned int cl_uint
    ctypedef uint64_t cl_ulong
    ctypedef cl_ulong cl_bitfield
    ctypedef cl_uint cl_bool
    ctypedef void* cl_platform_id
    ctypedef void* cl_device_id
    ctypedef void* cl_context
    ctypedef void* cl_command_queue
    ctypedef void* cl_mem
    ctypedef void* cl_program
    ctypedef void* cl_kernel
    ctypedef void* cl_event
    ctypedef Py_ssize_t cl_context_properties

    enum:
        CL_SUCCESS
        CL_BUILD_PROGRAM_FAILURE
        CL_DEVICE_NOT_FOUND
        CL_PLATFORM_NOT_FOUND_KHR
        CL_TRUE
        CL_FALSE
        CL_DEVICE_TYPE_ALL
        CL_DEVICE_TYPE_CPU
        CL_DEVICE_TYPE_GPU
        CL_DEVICE_TYPE_ACCELERATOR
        CL_PLATFORM_VERSION
        CL_PLATFORM_NAME
        CL_PLATFORM_VENDOR
        CL_DEVICE_TYPE
        CL_DEVICE_MAX_COMPUTE_UNITS
        CL_DEVICE_MAX_WORK_GROUP_SIZE
        CL_DEVICE_MAX_WORK_ITEM_SIZES
        CL_DEVICE_MAX_CLOCK_FREQUENCY
        CL_DEVICE_MAX_MEM_ALLOC_SIZE
        CL_DEVICE_MEM_BASE_ADDR_ALIGN
        CL_DEVICE_GLOBAL_MEM_SIZE
        CL_DEVICE_LOCAL_MEM_SIZE
        CL_DEVICE_AVAILABLE
        CL_DEVICE_NAME
        CL_DEVICE_VENDOR
        CL_DRIVER_VERSION
        CL_DEVICE_VERSION
        CL_DEVICE_EXTENSIONS
        CL_DEVICE_OPENCL_C_VERSION
        CL_CONTEXT_PLATFORM
        CL_QUEUE_PROFILING_ENABLE
        CL_MEM_READ_WRITE
        CL_PROGRAM_BINARY_SIZES
        CL_PROGRAM_BINARIES
        CL_PROGRAM_BUILD_LOG
        CL_PROGRAM_BUILD_STATUS
        CL_KERNEL_WORK_GROUP_SIZE
        CL_PROFILING_COMMAND_START
        CL_PROFILING_COMMAND_END

    ctypedef struct mnncl_api:
        cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*) noexcept nogil
        cl_int (*GetPlatformInfo)(cl_platform_id, cl_uint, size_t, void*, size_t*) noexcept nogil
        cl_int (*GetDeviceIDs)(cl_platform_id, cl_bitfield, cl_uint, cl_device_id*, cl_uint*) noexcept nogil
        cl_int (*GetDeviceInfo)(cl_device_id, cl_uint, size_t, void*, size_t*) noexcept nogil
        cl_context (*CreateContext)(const cl_context_properties*, cl_uint, const cl_device_id*, void*, void*, cl_int*) noexcept nogil
        cl_int (*ReleaseContext)(cl_context) noexcept nogil
        cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_bitfield, cl_int*) noexcept nogil
        cl_int (*ReleaseCommandQueue)(cl_command_queue) noexcept nogil
        cl_mem (*CreateBuffer)(cl_context, cl_bitfield, size_t, void*, cl_int*) noexcept nogil
        cl_int (*ReleaseMemObject)(cl_mem) noexcept nogil
        cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint, const cl_event*, cl_event*) noexcept nogil
        cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint, const cl_event*, cl_event*) noexcept nogil
        cl_int (*EnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event*, cl_event*) noexcept nogil
        cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char**, const size_t*, cl_int*) noexcept nogil
        cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**, cl_int*, cl_int*) noexcept nogil
        cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*, void*, void*) noexcept nogil
        cl_int (*GetProgramInfo)(cl_program, cl_uint, size_t, void*, size_t*) noexcept nogil
        cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, size_t, void*, size_t*) noexcept nogil
        cl_int (*ReleaseProgram)(cl_program) noexcept nogil
        cl_kernel (*CreateKernel)(cl_program, const char*, cl_int*) noexcept nogil
        cl_int (*ReleaseKernel)(cl_kernel) noexcept nogil
        cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void*) noexcept nogil
        cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_uint, size_t, void*, size_t*) noexcept nogil
        cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint, const cl_event*, cl_event*) noexcept nogil
        cl_int (*Finish)(cl_command_queue) noexcept nogil
        cl_int (*Flush)(cl_command_queue) noexcept nogil
        cl_int (*WaitForEvents)(cl_uint, const cl_event*) noexcept nogil
        cl_int (*GetEventProfilingInfo)(cl_event, cl_uint, size_t, void*, size_t*) noexcept nogil
        cl_int (*ReleaseEvent)(cl_event) noexcept nogil

    mnncl_api mnncl
    int mnncl_load(const char* library, char* err, size_t err_len)
    int mnncl_loaded()
    int mnncl_forked()
    const char* FORK_MESSAGE
    const char* mnncl_error_name(cl_int code)

    ctypedef struct mnncl_launch:
        cl_kernel kernel
        cl_uint dims
        size_t gws[3]
        size_t lws[3]
        int has_lws
        const char* name

    ctypedef struct mnncl_segment:
        mnn_execution exe
        cl_command_queue queue
        int32_t n_launches
        mnncl_launch* launches
        int flush
        char error[512]

    int mnncl_segment_run(void* state, const mnn_tensor* inputs, int32_t n_inputs, mnn_tensor* outputs,
                          int32_t n_outputs) noexcept
    const char* mnncl_segment_error(void* state) noexcept
    cl_int mnncl_segment_enqueue(mnncl_segment* seg, int32_t first, int32_t last)


#: the vendored constants, for tests/test_loader.py to compare with the Khronos headers
CONSTANTS = {
    "CL_DEVICE_TYPE_GPU": CL_DEVICE_TYPE_GPU, "CL_DEVICE_TYPE_CPU": CL_DEVICE_TYPE_CPU,
    "CL_PLATFORM_NAME": CL_PLATFORM_NAME, "CL_PLATFORM_VERSION": CL_PLATFORM_VERSION,
    "CL_DEVICE_NAME": CL_DEVICE_NAME, "CL_DRIVER_VERSION": CL_DRIVER_VERSION,
    "CL_DEVICE_EXTENSIONS": CL_DEVICE_EXTENSIONS, "CL_DEVICE_MEM_BASE_ADDR_ALIGN": CL_DEVICE_MEM_BASE_ADDR_ALIGN,
    "CL_CONTEXT_PLATFORM": CL_CONTEXT_PLATFORM, "CL_PROGRAM_BINARIES": CL_PROGRAM_BINARIES,
    "CL_PROGRAM_BINARY_SIZES": CL_PROGRAM_BINARY_SIZES, "CL_PROGRAM_BUILD_LOG": CL_PROGRAM_BUILD_LOG,
    "CL_KERNEL_WORK_GROUP_SIZE": CL_KERNEL_WORK_GROUP_SIZE, "CL_QUEUE_PROFILING_ENABLE": CL_QUEUE_PROFILING_ENABLE,
    "CL_PROFILING_COMMAND_START": CL_PROFILING_COMMAND_START, "CL_DEVICE_LOCAL_MEM_SIZE": CL_DEVICE_LOCAL_MEM_SIZE,
}


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


class BuildError(CLError):
    def __init__(self, message, code, log):
        RuntimeError.__init__(self, f"{message}\n{log}".rstrip())
        self.code = code
        self.log = log


cdef class Program:
    cdef cl_program prog
    cdef public Context context

    def __dealloc__(self):
        if self.prog != NULL and not mnncl_forked():
            mnncl.ReleaseProgram(self.prog)

    def build_status(self):
        """clGetProgramBuildInfo(CL_PROGRAM_BUILD_STATUS) on the context's device: 0 is CL_BUILD_SUCCESS."""
        cdef cl_int status = -1
        _check(mnncl.GetProgramBuildInfo(self.prog, self.context.device, CL_PROGRAM_BUILD_STATUS, sizeof(cl_int),
                                         &status, NULL), "clGetProgramBuildInfo(CL_PROGRAM_BUILD_STATUS)")
        return status

    def build_log(self):
        cdef size_t n = 0
        if mnncl.GetProgramBuildInfo(self.prog, self.context.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS:
            return ""
        buf = bytearray(n + 1)
        cdef char* data = buf
        mnncl.GetProgramBuildInfo(self.prog, self.context.device, CL_PROGRAM_BUILD_LOG, n, data, NULL)
        return bytes(buf).rstrip(b"\0").decode(errors="replace")

    def binary(self):
        """The device binary (for the on-disk cache), or b"" when the driver gives none."""
        cdef size_t n = 0
        _check(mnncl.GetProgramInfo(self.prog, CL_PROGRAM_BINARY_SIZES, sizeof(size_t), &n, NULL),
               "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)")
        if n == 0:
            return b""
        out = PyBytes_FromStringAndSize(NULL, n)
        cdef unsigned char* ptr = <unsigned char*>PyBytes_AsString(out)
        _check(mnncl.GetProgramInfo(self.prog, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, NULL),
               "clGetProgramInfo(CL_PROGRAM_BINARIES)")
        return out

    def kernel(self, str name):
        cdef cl_int rc = 0
        cdef bytes bname = name.encode()
        cdef Kernel k = Kernel.__new__(Kernel)
        k.kernel = mnncl.CreateKernel(self.prog, bname, &rc)
        _check(rc, f"clCreateKernel({name})")
        k.program = self
        k.name = name
        k.cname = bname
        return k


cdef class Buffer:
    cdef cl_mem mem
    cdef public size_t nbytes
    cdef public Context context

    def __cinit__(self):
        self.mem = NULL

    def __dealloc__(self):
        if self.mem != NULL and not mnncl_forked():
            mnncl.ReleaseMemObject(self.mem)

    @property
    def handle(self):
        return <uintptr_t>self.mem

    def write(self, size_t offset, arr, bint blocking):
        """Copy a C-contiguous array into the buffer at `offset` (bytes). A non-blocking
        write reads `arr` later: the caller keeps it alive and unchanged until a sync."""
        _need_loader()
        cdef const unsigned char[::1] view = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        cdef size_t n = view.shape[0]
        if n == 0:
            return
        if offset + n > self.nbytes:
            raise ValueError(f"write of {n} bytes at {offset} overruns the {self.nbytes}-byte buffer")
        cdef cl_int rc
        with nogil:
            rc = mnncl.EnqueueWriteBuffer(self.context.queue, self.mem, CL_TRUE if blocking else CL_FALSE,
                                          offset, n, &view[0], 0, NULL, NULL)
        _check(rc, "clEnqueueWriteBuffer")

    def read(self, size_t offset, out):
        """Blocking copy into the C-contiguous array `out` (this waits for the queue)."""
        _need_loader()
        cdef unsigned char[::1] view = out.reshape(-1).view(np.uint8)
        cdef size_t n = view.shape[0]
        if n == 0:
            return
        if offset + n > self.nbytes:
            raise ValueError(f"read of {n} bytes at {offset} overruns the {self.nbytes}-byte buffer")
        cdef cl_int rc
        with nogil:
            rc = mnncl.EnqueueReadBuffer(self.context.queue, self.mem, CL_TRUE, offset, n, &view[0], 0, NULL, NULL)
        _check(rc, "clEnqueueReadBuffer")

    def copy_to(self, Buffer dst, size_t src_offset, size_t dst_offset, size_t nbytes):
        if nbytes == 0:
            return
        _check(mnncl.EnqueueCopyBuffer(self.context.queue, self.mem, dst.mem, src_offset, dst_offset, nbytes,
                                       0, NULL, NULL), "clEnqueueCopyBuffer")


cdef class LocalMem:
    """A __local kernel argument of `nbytes`."""
    cdef public size_t nbytes

    def __init__(self, size_t nbytes):
        self.nbytes = nbytes


cdef class Kernel:
    """One cl_kernel; its arguments are set once (set_args) and stay."""
    cdef cl_kernel kernel
    cdef public Program program
    cdef public str name
    cdef bytes cname
    cdef public list keep  # buffers its arguments point to

    def __dealloc__(self):
        if self.kernel != NULL and not mnncl_forked():
            mnncl.ReleaseKernel(self.kernel)

    def set_args(self, *args):
        """Buffer -> __global pointer, int -> int, float -> float, LocalMem -> __local,
        tuple of 8 ints -> int8. (Pass Python floats for float arguments.)"""
        cdef cl_uint i
        cdef cl_int iv
        cdef float fv
        cdef cl_mem mem
        cdef int32_t v8[8]
        cdef cl_int rc
        self.keep = []
        for i, a in enumerate(args):
            if isinstance(a, Buffer):
                mem = (<Buffer>a).mem
                rc = mnncl.SetKernelArg(self.kernel, i, sizeof(cl_mem), &mem)
                self.keep.append(a)
            elif isinstance(a, bool):
                raise TypeError(f"kernel {self.name} argument {i}: pass int, not bool")
            elif isinstance(a, int):
                if not -2**31 <= a < 2**31:
                    raise OverflowError(f"kernel {self.name} argument {i} = {a} does not fit in a 32-bit int")
                iv = a
                rc = mnncl.SetKernelArg(self.kernel, i, sizeof(cl_int), &iv)
            elif isinstance(a, float):
                fv = a
                rc = mnncl.SetKernelArg(self.kernel, i, sizeof(float), &fv)
            elif isinstance(a, LocalMem):
                rc = mnncl.SetKernelArg(self.kernel, i, (<LocalMem>a).nbytes, NULL)
            elif isinstance(a, tuple) and len(a) == 8:
                for k in range(8):
                    v8[k] = a[k]
                rc = mnncl.SetKernelArg(self.kernel, i, sizeof(v8), v8)
            else:
                raise TypeError(f"kernel {self.name} argument {i}: cannot pass {type(a).__name__}")
            _check(rc, f"clSetKernelArg({self.name}, {i})")

    def max_work_group_size(self):
        cdef size_t n = 0
        _check(mnncl.GetKernelWorkGroupInfo(self.kernel, self.program.context.device, CL_KERNEL_WORK_GROUP_SIZE,
                                            sizeof(size_t), &n, NULL), "clGetKernelWorkGroupInfo")
        return n


cdef class Segment:
    """A recorded list of launches, run by the core's loop through an mnn_execution."""
    cdef mnncl_segment* seg
    cdef public list kernels
    cdef public Context context
    cdef bytes cname

    def __cinit__(self):
        self.seg = NULL

    def __init__(self, Context context, list launches, str name="opencl", bint flush=True):
        """launches: [(Kernel, gws tuple, lws tuple or None)], gws already a multiple of lws."""
        self.context = context
        self.kernels = []
        self.cname = name.encode()
        self.seg = <mnncl_segment*>calloc(1, sizeof(mnncl_segment))
        if self.seg == NULL:
            raise MemoryError()
        self.seg.launches = <mnncl_launch*>calloc(max(len(launches), 1), sizeof(mnncl_launch))
        if self.seg.launches == NULL:
            raise MemoryError()
        cdef Kernel k
        cdef mnncl_launch* l
        for i, (kern, gws, lws) in enumerate(launches):
            k = kern
            l = &self.seg.launches[i]
            l.kernel = k.kernel
            l.dims = len(gws)
            for d in range(l.dims):
                l.gws[d] = gws[d]
                l.lws[d] = lws[d] if lws is not None else 1
            l.has_lws = lws is not None
            l.name = k.cname
            self.kernels.append(k)
        self.seg.n_launches = len(launches)
        self.seg.queue = context.queue
        self.seg.flush = flush
        self.seg.exe.abi_version = MNN_ABI_VERSION
        self.seg.exe.flags = 0
        self.seg.exe.run = mnncl_segment_run
        self.seg.exe.state = self.seg
        self.seg.exe.error = mnncl_segment_error
        self.seg.exe.name = self.cname

    def __dealloc__(self):
        if self.seg != NULL:
            free(self.seg.launches)
            free(self.seg)

    def __len__(self):
        return self.seg.n_launches

    def capsule(self):
        return PyCapsule_New(&self.seg.exe, MNN_EXECUTION_CAPSULE, NULL)

    def enqueue(self):
        """Enqueue every launch now (what a run does), without waiting."""
        _need_loader()
        cdef cl_int rc = mnncl_segment_enqueue(self.seg, 0, self.seg.n_launches)
        if rc != CL_SUCCESS:
            raise CLError(self.seg.error.decode(errors="replace"), rc)
