# The OpenCL entry points and constants of csrc/mnn_cl.h (included by _cl.pyx).

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

    ctypedef struct mnncl_transfer:
        mnn_execution exe
        cl_command_queue queue
        cl_mem mem
        size_t offset
        size_t nbytes
        int to_device
        char error[256]

    int mnncl_transfer_run(void* state, const mnn_tensor* inputs, int32_t n_inputs, mnn_tensor* outputs,
                           int32_t n_outputs) noexcept
    const char* mnncl_transfer_error(void* state) noexcept


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
