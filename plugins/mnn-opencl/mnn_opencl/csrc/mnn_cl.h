/* The slice of the OpenCL 1.2 API that mnn-opencl uses, loaded at run time.
 *
 * The package must build and install on machines without OpenCL headers or
 * libraries, so the few types and constants it needs are vendored here (values
 * from the Khronos headers; tests/test_loader.py checks them against
 * /usr/include/CL/cl.h when that exists) and every entry point is a function
 * pointer filled by dlopen("libOpenCL.so.1") + dlsym in cl_loader.c.
 */
#ifndef MNN_OPENCL_CL_H
#define MNN_OPENCL_CL_H

#include <stddef.h>
#include <stdint.h>

#include "mnn_core/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef cl_uint cl_bool;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;
typedef intptr_t cl_context_properties;

#define CL_SUCCESS 0
#define CL_DEVICE_NOT_FOUND (-1)
#define CL_BUILD_PROGRAM_FAILURE (-11)
#define CL_INVALID_BINARY (-42)
#define CL_PLATFORM_NOT_FOUND_KHR (-1001)
#define CL_FALSE 0u
#define CL_TRUE 1u

#define CL_DEVICE_TYPE_CPU (1u << 1)
#define CL_DEVICE_TYPE_GPU (1u << 2)
#define CL_DEVICE_TYPE_ACCELERATOR (1u << 3)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFu

#define CL_PLATFORM_VERSION 0x0901
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VENDOR 0x0903
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_WORK_ITEM_SIZES 0x1005
#define CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_MEM_BASE_ADDR_ALIGN 0x1019
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define CL_DEVICE_AVAILABLE 0x1027
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VENDOR 0x102C
#define CL_DRIVER_VERSION 0x102D
#define CL_DEVICE_VERSION 0x102F
#define CL_DEVICE_EXTENSIONS 0x1030
#define CL_DEVICE_OPENCL_C_VERSION 0x103D
#define CL_CONTEXT_PLATFORM 0x1084
#define CL_QUEUE_PROFILING_ENABLE (1u << 1)
#define CL_MEM_READ_WRITE (1u << 0)
#define CL_MEM_READ_ONLY (1u << 2)
#define CL_PROGRAM_BINARY_SIZES 0x1165
#define CL_PROGRAM_BINARIES 0x1166
#define CL_PROGRAM_BUILD_STATUS 0x1181
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283

/* Every entry point mnn-opencl calls; NULL until mnncl_load() succeeds. */
typedef struct mnncl_api {
    cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
    cl_int (*GetPlatformInfo)(cl_platform_id, cl_uint, size_t, void *, size_t *);
    cl_int (*GetDeviceIDs)(cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *);
    cl_int (*GetDeviceInfo)(cl_device_id, cl_uint, size_t, void *, size_t *);
    cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                void (*)(const char *, const void *, size_t, void *), void *, cl_int *);
    cl_int (*ReleaseContext)(cl_context);
    cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_bitfield, cl_int *);
    cl_int (*ReleaseCommandQueue)(cl_command_queue);
    cl_mem (*CreateBuffer)(cl_context, cl_bitfield, size_t, void *, cl_int *);
    cl_int (*ReleaseMemObject)(cl_mem);
    cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                                 const cl_event *, cl_event *);
    cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                                const cl_event *, cl_event *);
    cl_int (*EnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                                const cl_event *, cl_event *);
    cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
    cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *, const size_t *,
                                          const unsigned char **, cl_int *, cl_int *);
    cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
                           void (*)(cl_program, void *), void *);
    cl_int (*GetProgramInfo)(cl_program, cl_uint, size_t, void *, size_t *);
    cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, size_t, void *, size_t *);
    cl_int (*ReleaseProgram)(cl_program);
    cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
    cl_int (*ReleaseKernel)(cl_kernel);
    cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
    cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_uint, size_t, void *, size_t *);
    cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                                   const size_t *, cl_uint, const cl_event *, cl_event *);
    cl_int (*Finish)(cl_command_queue);
    cl_int (*Flush)(cl_command_queue);
    cl_int (*WaitForEvents)(cl_uint, const cl_event *);
    cl_int (*GetEventProfilingInfo)(cl_event, cl_uint, size_t, void *, size_t *);
    cl_int (*ReleaseEvent)(cl_event);
} mnncl_api;

extern mnncl_api mnncl;

/* dlopen `library` (NULL: libOpenCL.so.1, then libOpenCL.so) and resolve every
 * entry point. Returns 0, or -1 with a message in `err`. Idempotent. */
int mnncl_load(const char *library, char *err, size_t err_len);
int mnncl_loaded(void);
/* 1 in a child forked after mnncl_load: OpenCL must not be used there */
int mnncl_forked(void);
#define FORK_MESSAGE                                                                             \
    "mnn-opencl: this process was forked after OpenCL was initialized in its parent, and OpenCL " \
    "drivers do not survive fork(); start worker processes with 'spawn' or 'forkserver', or "   \
    "create OpenCL sessions only in the workers"
const char *mnncl_error_name(cl_int code);

/* -- a recorded segment: kernels enqueued in order by one mnn_execution ---------- */

typedef struct mnncl_launch {
    cl_kernel kernel;
    cl_uint dims;
    size_t gws[3];
    size_t lws[3];
    int has_lws;
    const char *name; /* owned by the Python side */
} mnncl_launch;

typedef struct mnncl_segment {
    mnn_execution exe;
    cl_command_queue queue;
    int32_t n_launches;
    mnncl_launch *launches;
    int flush; /* clFlush after enqueueing, so the device starts before the host's next call */
    char error[512];
} mnncl_segment;

/* the mnn_execution run function: enqueue every launch, wait for none (fails in a forked child) */
int mnncl_segment_run(void *state, const mnn_tensor *inputs, int32_t n_inputs, mnn_tensor *outputs,
                      int32_t n_outputs);
const char *mnncl_segment_error(void *state);
/* enqueue launches [first, last) of a segment; 0 or a CL error code */
cl_int mnncl_segment_enqueue(mnncl_segment *seg, int32_t first, int32_t last);

/* -- a run's copy between host memory and the arena (cl_transfer.c) ------------------ */

typedef struct mnncl_transfer {
    mnn_execution exe;
    cl_command_queue queue;
    cl_mem mem; /* kept alive by the Python object that owns this */
    size_t offset, nbytes;
    int to_device;
    char error[256];
} mnncl_transfer;

/* the mnn_execution run function: a blocking write of inputs[0] (to_device) or read into outputs[0] */
int mnncl_transfer_run(void *state, const mnn_tensor *inputs, int32_t n_inputs, mnn_tensor *outputs,
                       int32_t n_outputs);
const char *mnncl_transfer_error(void *state);

#ifdef __cplusplus
}
#endif
#endif
