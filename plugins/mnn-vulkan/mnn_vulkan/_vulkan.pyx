# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Python face of the mvk runtime (csrc/): contexts, buffers, pipelines, programs.

Everything here runs at resize with the GIL held; a Program's C execution is
what the core's run loop calls without the GIL.
"""

from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc


cdef extern from "mnn_core/abi.h":
    const char *MNN_EXECUTION_CAPSULE  # the name the core's run loop accepts

cdef extern from "mvk.h" nogil:
    enum:
        MVK_OK
        MVK_NO_LOADER
        MVK_NO_INSTANCE
        MVK_MAX_PUSH
        MVK_MAX_BINDINGS

    ctypedef struct mvk_device_desc:
        char name[256]
        uint32_t type
        uint32_t vendor_id, device_id, api_version, driver_version
        uint64_t device_local_bytes
        int32_t compute_family
        uint32_t subgroup_size
        uint32_t max_shared_bytes, max_invocations
        uint32_t max_group_count[3]
        uint32_t max_group_size[3]
        uint64_t max_storage_range
        uint32_t min_storage_align
        uint32_t max_push_bytes
        float timestamp_period_ns
        uint32_t timestamp_bits
        uint32_t fp16
        uint32_t coopmat
        uint32_t sm_count

    ctypedef struct mvk_context
    ctypedef struct mvk_buffer
    ctypedef struct mvk_pipeline
    ctypedef struct mvk_program
    ctypedef struct mnn_execution
    ctypedef struct mvk_transfer
    ctypedef struct mvk_copy_stats:
        uint64_t copies[2]
        uint64_t bytes[2]
        uint64_t host_ns[2]
        uint64_t submit_ns[2]
        uint64_t wait_ns[2]

    int mvk_init(const char *library, int validation, char *err, size_t errlen)
    int mvk_device_count()
    int mvk_device_desc_get(int index, mvk_device_desc *out)
    int mvk_validation_active()
    uint64_t mvk_validation_errors(char *last, size_t lastlen)
    mvk_context *mvk_context_create(int device_index, char *err, size_t errlen)
    int mvk_context_cache_load(mvk_context *ctx, const void *data, size_t size, char *err, size_t errlen)
    int mvk_context_cache_data(mvk_context *ctx, void *dst, size_t *size, char *err, size_t errlen)
    void mvk_context_pipeline_stats(mvk_context *ctx, uint64_t *created, uint64_t *ns)
    uint64_t mvk_context_copy_submits(mvk_context *ctx)
    void mvk_context_copy_stats(mvk_context *ctx, mvk_copy_stats *out)
    uint64_t mvk_context_allocations(mvk_context *ctx)
    uint32_t mvk_context_memory_types(mvk_context *ctx, uint32_t *flags, uint64_t *heap_bytes, uint32_t max)
    void mvk_context_staging_flags(mvk_context *ctx, uint32_t *staging, uint32_t *upload)
    mvk_transfer *mvk_transfer_create(mvk_buffer *buf, uint64_t offset, uint64_t size, int half, int to_device)
    mnn_execution *mvk_transfer_execution(mvk_transfer *t)
    void mvk_transfer_destroy(mvk_transfer *t)
    void mvk_context_destroy(mvk_context *ctx)
    mvk_buffer *mvk_buffer_create(mvk_context *ctx, uint64_t size, int host_mapped, char *err, size_t errlen)
    void mvk_buffer_destroy(mvk_buffer *buf)
    void *mvk_buffer_mapping(mvk_buffer *buf)
    int mvk_buffer_write(mvk_buffer *buf, uint64_t offset, const void *src, uint64_t size, char *err, size_t n)
    int mvk_buffer_read(mvk_buffer *buf, uint64_t offset, void *dst, uint64_t size, char *err, size_t n)
    int mvk_buffer_write_as(mvk_buffer *buf, uint64_t offset, const void *src, uint64_t size, int half,
                            char *err, size_t n)
    int mvk_buffer_read_as(mvk_buffer *buf, uint64_t offset, void *dst, uint64_t size, int half,
                           char *err, size_t n)
    int mvk_buffer_write_many(mvk_buffer *buf, uint32_t n, const uint64_t *offsets, const void *const *srcs,
                              const uint64_t *sizes, const unsigned char *halves, char *err, size_t errlen)
    mvk_pipeline *mvk_pipeline_create(mvk_context *ctx, const uint32_t *code, size_t code_bytes, uint32_t n_bindings,
                                      const uint32_t *spec, uint32_t n_spec, char *err, size_t errlen)
    void mvk_pipeline_destroy(mvk_pipeline *pipe)
    mvk_program *mvk_program_create(mvk_context *ctx, char *err, size_t errlen)
    int mvk_program_dispatch(mvk_program *p, mvk_pipeline *pipe, mvk_buffer *const *bufs, const uint64_t *offsets,
                             const uint64_t *ranges,
                             const void *push, uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz,
                             int barrier_before, char *err, size_t errlen)
    int mvk_program_finish(mvk_program *p, int timestamps, char *err, size_t errlen)
    int mvk_program_run(mvk_program *p)
    const char *mvk_program_error(mvk_program *p)
    int mvk_program_times(mvk_program *p, double *ms, uint32_t n)
    uint32_t mvk_program_size(mvk_program *p)
    mnn_execution *mvk_program_execution(mvk_program *p)
    void mvk_program_destroy(mvk_program *p)


class VulkanError(RuntimeError):
    """A Vulkan call failed; the message names the call and the VkResult."""


cdef char _err[512]

cdef _raise(str what):
    raise VulkanError(f"{what}: {(<bytes>_err).decode('utf-8', 'replace')}")


def init(str library, bint validation):
    """Open the loader and create the instance, once per process, without the GIL (device.py may do
    it in a thread while the model is imported). Returns (status, message): status 0 ok, 1 no
    loader, 2 no instance."""
    cdef char err[512]
    cdef bytes name = library.encode()
    cdef const char *c_name = name
    cdef int status
    err[0] = 0
    with nogil:
        status = mvk_init(c_name, validation, err, sizeof(err))
    return status, (<bytes>err).decode("utf-8", "replace")


DEVICE_TYPES = {0: "other", 1: "integrated", 2: "discrete", 3: "virtual", 4: "cpu"}


def devices():
    """A dict per physical device of the instance (after a successful init)."""
    cdef mvk_device_desc d
    out = []
    for i in range(mvk_device_count()):
        if mvk_device_desc_get(i, &d) != MVK_OK:
            continue
        out.append(dict(
            index=i, name=(<bytes>d.name).decode("utf-8", "replace"), type=DEVICE_TYPES.get(d.type, "other"),
            vendor_id=d.vendor_id, device_id=d.device_id,
            api_version=f"{d.api_version >> 22}.{(d.api_version >> 12) & 0x3ff}.{d.api_version & 0xfff}",
            api_version_int=d.api_version, driver_version=d.driver_version,
            device_local_bytes=d.device_local_bytes, compute_family=d.compute_family,
            subgroup_size=d.subgroup_size, max_shared_bytes=d.max_shared_bytes, max_invocations=d.max_invocations,
            max_group_count=tuple(d.max_group_count[k] for k in range(3)),
            max_group_size=tuple(d.max_group_size[k] for k in range(3)),
            max_storage_range=d.max_storage_range, min_storage_align=d.min_storage_align,
            max_push_bytes=d.max_push_bytes, timestamp_period_ns=d.timestamp_period_ns,
            timestamp_bits=d.timestamp_bits, fp16=bool(d.fp16), coopmat=bool(d.coopmat), sm_count=d.sm_count,
        ))
    return out


def validation():
    """(active, error count, last error message) of the Khronos validation layer."""
    cdef char last[2048]
    last[0] = 0
    n = mvk_validation_errors(last, sizeof(last))
    return bool(mvk_validation_active()), n, (<bytes>last).decode("utf-8", "replace")


def _memory_flags(uint32_t flags):
    names = ("DEVICE_LOCAL", "HOST_VISIBLE", "HOST_COHERENT", "HOST_CACHED", "LAZILY_ALLOCATED", "PROTECTED")
    return "|".join(nm for k, nm in enumerate(names) if flags & (1 << k)) or "-"


cdef class Context:
    """One logical device with its compute queue."""

    cdef mvk_context *ctx
    cdef readonly int index

    def __cinit__(self, int index):
        # without the GIL (vkCreateDevice takes a while on a GPU: a thread may open the device while
        # the session plans), so with its own error buffer
        cdef char err[512]
        err[0] = 0
        with nogil:
            self.ctx = mvk_context_create(index, err, sizeof(err))
        self.index = index
        if self.ctx == NULL:
            raise VulkanError(f"cannot open Vulkan device {index}: {(<bytes>err).decode('utf-8', 'replace')}")

    def __dealloc__(self):
        if self.ctx != NULL:
            mvk_context_destroy(self.ctx)

    def load_pipeline_cache(self, bytes data):
        """Start from saved pipeline-cache data; returns "" when taken, else why not (the
        header names another device or driver, or the driver refused it)."""
        _err[0] = 0
        if mvk_context_cache_load(self.ctx, <const char *>data, len(data), _err, sizeof(_err)) == 0:
            return ""
        return (<bytes>_err).decode("utf-8", "replace")

    def pipeline_cache_data(self):
        """The pipeline cache's contents, to save for the next process."""
        cdef size_t size = 0
        _err[0] = 0
        if mvk_context_cache_data(self.ctx, NULL, &size, _err, sizeof(_err)) != 0:
            _raise("cannot read the pipeline cache")
        buf = bytearray(size)
        cdef char *dst = buf
        if size and mvk_context_cache_data(self.ctx, dst, &size, _err, sizeof(_err)) != 0:
            _raise("cannot read the pipeline cache")
        return bytes(buf[:size])

    def copy_submits(self):
        """Host<->device copies submitted through the staging buffer in this context."""
        return int(mvk_context_copy_submits(self.ctx))

    def copy_stats(self):
        """Host copies so far, each direction ("in": host to device, "out"): copies, bytes, and the
        seconds spent in memcpy with staging or the mapping (host), recording and submitting copy
        commands (submit) and waiting for their fences (wait)."""
        cdef mvk_copy_stats st
        mvk_context_copy_stats(self.ctx, &st)
        return {
            way: dict(copies=int(st.copies[k]), bytes=int(st.bytes[k]), host=st.host_ns[k] / 1e9,
                      submit=st.submit_ns[k] / 1e9, wait=st.wait_ns[k] / 1e9)
            for k, way in enumerate(("in", "out"))
        }

    def memory_types(self):
        """The device's memory types: (property names joined by "|", heap bytes) each, in order."""
        cdef uint32_t flags[32]
        cdef uint64_t heaps[32]
        cdef uint32_t n = min(mvk_context_memory_types(self.ctx, flags, heaps, 32), 32)
        return [(_memory_flags(flags[i]), int(heaps[i])) for i in range(n)]

    def staging_memory(self):
        """(staging buffer, runs' uploads): the property names of their memory ("" before any)."""
        cdef uint32_t staging = 0, upload = 0
        mvk_context_staging_flags(self.ctx, &staging, &upload)
        return _memory_flags(staging) if staging else "", _memory_flags(upload) if upload else ""

    def allocations(self):
        """Device memory blocks, command buffers and descriptor pools made in this context so far."""
        return int(mvk_context_allocations(self.ctx))

    def pipeline_stats(self):
        """(pipelines created, seconds spent creating them) in this context."""
        cdef uint64_t n = 0, ns = 0
        mvk_context_pipeline_stats(self.ctx, &n, &ns)
        return int(n), ns / 1e9


cdef class Buffer:
    """A VkBuffer with its memory: the plan's arena."""

    cdef mvk_buffer *buf
    cdef readonly Context context
    cdef readonly uint64_t size

    def __cinit__(self, Context context, uint64_t size, bint host_mapped):
        # without the GIL (a large vkAllocateMemory takes milliseconds: the arena is made in a
        # thread, arena.py), so into an error buffer of its own
        cdef char err[512]
        cdef mvk_context *ctx = context.ctx
        cdef mvk_buffer *buf
        err[0] = 0
        self.context = context
        self.size = size
        with nogil:
            buf = mvk_buffer_create(ctx, size, host_mapped, err, sizeof(err))
        self.buf = buf
        if self.buf == NULL:
            raise VulkanError(f"cannot create a {size}-byte Vulkan buffer: {(<bytes>err).decode('utf-8', 'replace')}")

    def __dealloc__(self):
        if self.buf != NULL:
            mvk_buffer_destroy(self.buf)

    @property
    def mapped(self):
        return mvk_buffer_mapping(self.buf) != NULL

    @property
    def address(self):
        """Host address of the mapping, 0 when the memory is not mapped."""
        return <size_t>mvk_buffer_mapping(self.buf)

    def write(self, uint64_t offset, src, bint half=False):
        """Copy a C-contiguous buffer-protocol object into the buffer at offset; half: src
        holds float32, stored as float16 (len(src) // 2 bytes here)."""
        cdef Py_buffer view
        cdef int rc
        PyObject_GetBuffer(src, &view, PyBUF_ANY_CONTIGUOUS)
        try:
            _err[0] = 0
            if half and view.len % 4:
                raise ValueError("a float32 source has a multiple of 4 bytes")
            rc = mvk_buffer_write_as(self.buf, offset, view.buf, view.len // 2 if half else view.len, half,
                                     _err, sizeof(_err))
        finally:
            PyBuffer_Release(&view)
        if rc != MVK_OK:
            _raise("copy to the Vulkan device failed")

    def write_many(self, list pieces):
        """Copy (offset, C-contiguous source, half) pieces in one call: on device-local memory
        through one staging fill per submit (a plan's weights), not one submit and wait each."""
        cdef Py_ssize_t n = len(pieces), i, got = 0
        cdef Py_buffer *views = <Py_buffer *>malloc(max(n, 1) * sizeof(Py_buffer))
        cdef uint64_t *offs = <uint64_t *>malloc(max(n, 1) * sizeof(uint64_t))
        cdef uint64_t *sizes = <uint64_t *>malloc(max(n, 1) * sizeof(uint64_t))
        cdef const void **srcs = <const void **>malloc(max(n, 1) * sizeof(void *))
        cdef unsigned char *halves = <unsigned char *>malloc(max(n, 1))
        cdef int rc = 0
        if not (views and offs and sizes and srcs and halves):
            free(views); free(offs); free(sizes); free(srcs); free(halves)
            raise MemoryError()
        try:
            for i in range(n):
                offset, src, half = pieces[i]
                PyObject_GetBuffer(src, &views[i], PyBUF_ANY_CONTIGUOUS)
                got += 1
                if half and views[i].len % 4:
                    raise ValueError("a float32 source has a multiple of 4 bytes")
                offs[i] = offset
                srcs[i] = views[i].buf
                sizes[i] = views[i].len // 2 if half else views[i].len
                halves[i] = 1 if half else 0
            _err[0] = 0
            rc = mvk_buffer_write_many(self.buf, <uint32_t>n, offs, srcs, sizes, halves, _err, sizeof(_err))
        finally:
            for i in range(got):
                PyBuffer_Release(&views[i])
            free(views); free(offs); free(sizes); free(srcs); free(halves)
        if rc != MVK_OK:
            _raise("copy to the Vulkan device failed")

    def read(self, uint64_t offset, dst, bint half=False):
        """Fill a writable C-contiguous buffer-protocol object from the buffer at offset; half:
        dst is float32, read from float16."""
        cdef Py_buffer view
        cdef int rc
        PyObject_GetBuffer(dst, &view, PyBUF_ANY_CONTIGUOUS | PyBUF_WRITABLE)
        try:
            _err[0] = 0
            if half and view.len % 4:
                raise ValueError("a float32 destination has a multiple of 4 bytes")
            rc = mvk_buffer_read_as(self.buf, offset, view.buf, view.len // 2 if half else view.len, half,
                                    _err, sizeof(_err))
        finally:
            PyBuffer_Release(&view)
        if rc != MVK_OK:
            _raise("copy from the Vulkan device failed")


cdef class Transfer:
    """A run's copy between host memory and a Buffer, as an execution of the mnn C ABI: to_device
    copies its input tensor (the caller's array, where the session moves it) to `offset`, else
    `offset`'s bytes into its output tensor; size counts the Buffer's bytes (half: float16 there)."""

    cdef mvk_transfer *t
    cdef readonly Buffer buffer

    def __cinit__(self, Buffer buffer, uint64_t offset, uint64_t size, bint half, bint to_device):
        if offset > buffer.size or size > buffer.size - offset:
            raise ValueError(f"a copy of {size} bytes at {offset} is outside the {buffer.size}-byte buffer")
        self.buffer = buffer
        self.t = mvk_transfer_create(buffer.buf, offset, size, half, to_device)
        if self.t == NULL:
            raise MemoryError()

    def __dealloc__(self):
        if self.t != NULL:
            mvk_transfer_destroy(self.t)

    def capsule(self):
        """The mnn_execution (C ABI) of this copy, in a PyCapsule."""
        return PyCapsule_New(<void *>mvk_transfer_execution(self.t), MNN_EXECUTION_CAPSULE, NULL)


cdef class Pipeline:
    """A compute pipeline: SPIR-V, its binding count and specialization constants."""

    cdef mvk_pipeline *pipe
    cdef readonly Context context
    cdef readonly int n_bindings
    cdef readonly str name

    def __cinit__(self, Context context, bytes code, int n_bindings, tuple spec=(), str name=""):
        cdef uint32_t values[16]
        if len(spec) > 16:
            raise ValueError("at most 16 specialization constants")
        for i, v in enumerate(spec):
            values[i] = <uint32_t>v
        if len(code) % 4:
            raise ValueError(f"SPIR-V of {name} is {len(code)} bytes, not whole words")
        _err[0] = 0
        self.context = context
        self.n_bindings = n_bindings
        self.name = name
        self.pipe = mvk_pipeline_create(context.ctx, <const uint32_t *><const char *>code, len(code), n_bindings,
                                        values, len(spec), _err, sizeof(_err))
        if self.pipe == NULL:
            _raise(f"cannot create the {name} pipeline")

    def __dealloc__(self):
        if self.pipe != NULL:
            mvk_pipeline_destroy(self.pipe)


cdef class Program:
    """The dispatches of one segment, recorded into one command buffer."""

    cdef mvk_program *prog
    cdef readonly Context context
    cdef list keep  # pipelines and buffers live as long as the command buffer
    cdef readonly list names

    def __cinit__(self, Context context):
        _err[0] = 0
        self.context = context
        self.keep = []
        self.names = []
        self.prog = mvk_program_create(context.ctx, _err, sizeof(_err))
        if self.prog == NULL:
            _raise("cannot create a Vulkan program")

    def __dealloc__(self):
        if self.prog != NULL:
            mvk_program_destroy(self.prog)

    def dispatch(self, Pipeline pipeline, list bindings, bytes push, tuple groups, bint barrier, str name=""):
        """bindings: (Buffer, byte offset, byte size) per binding of the pipeline."""
        cdef mvk_buffer *bufs[MVK_MAX_BINDINGS]
        cdef uint64_t offs[MVK_MAX_BINDINGS]
        cdef uint64_t rngs[MVK_MAX_BINDINGS]
        cdef Buffer buf
        cdef int rc
        if len(bindings) != pipeline.n_bindings:
            raise ValueError(f"{pipeline.name} takes {pipeline.n_bindings} bindings, got {len(bindings)}")
        for i, (buffer, offset, size) in enumerate(bindings):
            buf = buffer
            bufs[i] = buf.buf
            offs[i] = offset
            rngs[i] = size
            self.keep.append(buf)
        gx, gy, gz = groups
        _err[0] = 0
        rc = mvk_program_dispatch(self.prog, pipeline.pipe, bufs, offs, rngs, <const char *>push, len(push),
                                  gx, gy, gz, barrier, _err, sizeof(_err))
        if rc != MVK_OK:
            _raise(f"cannot record {name or pipeline.name}")
        self.keep.append(pipeline)
        self.names.append(name or pipeline.name)

    def finish(self, bint timestamps=False):
        _err[0] = 0
        if mvk_program_finish(self.prog, timestamps, _err, sizeof(_err)) != MVK_OK:
            _raise("cannot record the Vulkan command buffer")

    def run(self):
        """Submit and wait (for tests and tools; sessions call through the capsule)."""
        cdef int rc
        with nogil:
            rc = mvk_program_run(self.prog)
        if rc != MVK_OK:
            msg = mvk_program_error(self.prog)
            raise VulkanError(msg.decode("utf-8", "replace") if msg != NULL else "run failed")

    def times(self):
        """Per-dispatch GPU milliseconds of the last run (programs finished with timestamps)."""
        cdef uint32_t n = mvk_program_size(self.prog)
        cdef double *ms = <double *>malloc(max(n, 1) * sizeof(double))
        try:
            if mvk_program_times(self.prog, ms, n) != MVK_OK:
                return []
            return [(self.names[i], ms[i]) for i in range(n)]
        finally:
            free(ms)

    def __len__(self):
        return mvk_program_size(self.prog)

    def capsule(self):
        """The mnn_execution (C ABI) that runs this program, in a PyCapsule."""
        return PyCapsule_New(<void *>mvk_program_execution(self.prog), MNN_EXECUTION_CAPSULE, NULL)
