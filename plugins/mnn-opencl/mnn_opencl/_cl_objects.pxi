# Programs, buffers, kernels and recorded segments (included by _cl.pyx).

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


cdef class Transfer:
    """A run's copy of `nbytes` between host memory and `buffer` at `offset`, run by the core's loop
    through an mnn_execution (csrc/cl_transfer.c): an upload (MNN_EXEC_INPUTS_MAY_MOVE) reads its
    input descriptor's pointer, a download writes its output's; both block."""
    cdef mnncl_transfer t
    cdef public Buffer buffer
    cdef bytes cname

    def __init__(self, Buffer buffer, size_t offset, size_t nbytes, bint to_device):
        if offset + nbytes > buffer.nbytes:
            raise ValueError(f"a copy of {nbytes} bytes at {offset} overruns the {buffer.nbytes}-byte buffer")
        self.buffer = buffer
        self.cname = b"opencl:upload" if to_device else b"opencl:download"
        memset(&self.t, 0, sizeof(mnncl_transfer))
        self.t.queue = buffer.context.queue
        self.t.mem = buffer.mem
        self.t.offset = offset
        self.t.nbytes = nbytes
        self.t.to_device = to_device
        self.t.exe.abi_version = MNN_ABI_VERSION
        self.t.exe.flags = MNN_EXEC_INPUTS_MAY_MOVE if to_device else 0
        self.t.exe.run = mnncl_transfer_run
        self.t.exe.state = &self.t
        self.t.exe.error = mnncl_transfer_error
        self.t.exe.name = self.cname

    def capsule(self):
        return PyCapsule_New(&self.t.exe, MNN_EXECUTION_CAPSULE, NULL)
